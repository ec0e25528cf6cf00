"""The checks computed from the charts on real Renovate bumps, with archives built from source.

For each (repository, commit, chart, chart source, old tag, new tag) below: the two chart
archives are built from the chart's source repository at the two release tags (``git archive``
of the chart folder under a top folder named after the chart, the layout ``helm package``
writes; subcharts fetched from other repositories are not there, and .helmignore is not
applied), then the commit is checked out in a detached worktree and judged as the gate does,
``upgradeplan check --gitops . --base <sha>~1 --charts DIR -o json``. Clones stay under /tmp::

    python bench/field_charts.py /tmp/field /tmp/chart-sources

``/tmp/field/<owner+name>`` are clones of the Flux repositories (as for field_replay.py) and
``/tmp/chart-sources/<owner+name>`` clones of the chart sources. Prints what each check said.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

KPS = ("kube-prometheus-stack", "prometheus-community+helm-charts", "charts/kube-prometheus-stack")
# (Flux repository, commit, chart, chart source, chart folder, tag prefix, old, new, more args)
CASES: list[tuple[str, ...]] = [
    (
        "onedr0p+home-ops",
        "f81912891e",
        "kube-prometheus-stack",
        "prometheus-community+helm-charts",
        "charts/kube-prometheus-stack",
        "kube-prometheus-stack-",
        "87.21.0",
        "88.0.0",
    ),
    (
        "onedr0p+home-ops",
        "680b50156f",
        "kube-prometheus-stack",
        "prometheus-community+helm-charts",
        "charts/kube-prometheus-stack",
        "kube-prometheus-stack-",
        "86.2.3",
        "87.0.0",
    ),
    ("szinn+k8s-homelab", "724f1818c", *KPS, "kube-prometheus-stack-", "88.0.0", "88.1.3"),
    ("ahinko+home-ops", "0c6055f7a", *KPS, "kube-prometheus-stack-", "84.5.0", "85.0.1"),
    # the onedr0p bump again, as if its HelmReleases kept helm-controller's default policy
    # (its cluster Kustomization patches every HelmRelease to CreateReplace)
    (
        "onedr0p+home-ops",
        "f81912891e",
        *KPS,
        "kube-prometheus-stack-",
        "87.21.0",
        "88.0.0",
        "--fact",
        "helmrelease.kube-prometheus-stack.crds=install=Create,upgrade=Create",
    ),
]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, check=False)


def build(source: Path, folder: str, chart: str, tag: str, out: Path) -> Path:
    """``<chart>-<version>.tgz`` from the chart folder at ``tag``."""
    version = tag.rsplit("-", 1)[-1]
    target = out / f"{chart}-{version}.tgz"
    with target.open("wb") as fh:
        archive = subprocess.run(
            ["git", "-C", str(source), "archive", "--format=tar.gz", f"--prefix={chart}/",
             f"{tag}:{folder}"],
            stdout=fh,
            check=True,
        )  # fmt: skip
        assert archive.returncode == 0
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("field", type=Path)
    parser.add_argument("sources", type=Path)
    args = parser.parse_args()
    for repo, sha, chart, source, folder, prefix, old, new, *more in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            charts = Path(tmp) / "charts"
            charts.mkdir()
            for version in (old, new):
                build(args.sources / source, folder, chart, prefix + version, charts)
            tree = Path(tmp) / "tree"
            _run("git", "-C", str(args.field / repo), "worktree", "add", "--detach", str(tree), sha)
            try:
                done = _run(
                    sys.executable, "-m", "upgradeplan", "check", "--gitops", ".", "--base",
                    f"{sha}~1", "--charts", str(charts), *more, "-o", "json", cwd=tree,
                )  # fmt: skip
            finally:
                _run(
                    "git", "-C", str(args.field / repo), "worktree", "remove", "--force", str(tree)
                )
        said = f" ({' '.join(more)})" if more else ""
        print(f"## {repo} {sha} {chart} {old} → {new}{said}: exit {done.returncode}")
        try:
            doc = json.loads(done.stdout)
        except ValueError:
            print(done.stderr.strip()[-400:])
            continue
        for result in doc["results"]:
            for f in result["findings"]:
                if f["hazard"].startswith("chart."):
                    print(f"- {f['hazard']} {f['status']} ({f['severity']}): {f['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
