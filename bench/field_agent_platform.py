"""Add an agent-platform installation to a public Flux repository in its own layout, and
replay its upgrades through the PR gate as the documented CI job runs it.

In a scratch branch of a local clone (never the project), the script writes an
``agent-platform`` app beside the repository's other apps: a Flux ``Kustomization``
(``ks.yaml``, its ``sourceRef`` copied from a sibling app's), and an ``app/`` directory with
the meta chart's OCIRepository, its HelmRelease and the BOM ConfigMap pinning the connectivity
chart. Then, one commit per step, it runs ``upgradeplan check --gitops . --base HEAD~1``:

- in order, 4.7.18 → 4.7.19 → 4.8.0 → 4.8.1, the connectivity pin moved with the meta chart;
- the skip 4.7.18 → 4.8.0 with the connectivity pin left at 4.7.18.

Usage::

    python bench/field_agent_platform.py /tmp/field/onedr0p+home-ops kubernetes/apps/default
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

OCI = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: agent-platform
spec:
  interval: 30m
  url: oci://gsoci.azurecr.io/charts/giantswarm/agent-platform
  layerSelector:
    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
    operation: copy
  ref:
    semver: "{meta}"
"""
RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: agent-platform
spec:
  interval: 30m
  chartRef:
    kind: OCIRepository
    name: agent-platform
  valuesFrom:
    - kind: ConfigMap
      name: agent-platform-bom
      valuesKey: values.yaml
"""
BOM = """\
gitops:
  namespace: flux-giantswarm
  interval: 30m
components:
  agent-platform-connectivity:
    versionRange: "{connectivity}"
  kagent:
    versionRange: "0.11.0-gs.6"
    driftDetection:
      mode: enabled
  kagent-crds:
    versionRange: "0.11.0-gs.6"
"""
KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ./ocirepository.yaml
  - ./helmrelease.yaml
configMapGenerator:
  - name: agent-platform-bom
    files:
      - values.yaml=bom.yaml
generatorOptions:
  disableNameSuffixHash: true
"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


_KS_NAMES = ("ks.yaml", "install.yaml", "flux-sync.yaml")  # as home-ops repositories name it


def _sibling(repo: Path, ns_dir: str) -> Path:
    """A sibling app's Flux Kustomization file (``ks.yaml``, ``install.yaml``…)."""
    return next(p for name in _KS_NAMES for p in sorted((repo / ns_dir).glob(f"*/{name}")))


def _ks(repo: Path, ns_dir: str) -> str:
    """The app's Flux Kustomization, written like a sibling app's (its sourceRef kept)."""
    sibling = _sibling(repo, ns_dir)
    text = sibling.read_text(encoding="utf-8")
    ref = re.search(r"\n  sourceRef:\n(    .*\n)+", text)
    source = (
        ref.group(0) if ref else "\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
    return (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n"
        "  name: agent-platform\n  namespace: flux-system\nspec:\n  interval: 1h\n"
        f"  path: ./{ns_dir}/agent-platform/app\n  prune: true\n"
        f"  targetNamespace: flux-giantswarm{source}"
    )


def _write(repo: Path, ns_dir: str, meta: str, connectivity: str) -> None:
    app = repo / ns_dir / "agent-platform" / "app"
    app.mkdir(parents=True, exist_ok=True)
    (app / "ocirepository.yaml").write_text(OCI.format(meta=meta))
    (app / "helmrelease.yaml").write_text(RELEASE)
    (app / "bom.yaml").write_text(BOM.format(connectivity=connectivity))
    (app / "kustomization.yaml").write_text(KUSTOMIZATION)
    ks = repo / ns_dir / "agent-platform" / _sibling(repo, ns_dir).name
    if not ks.exists():
        ks.write_text(_ks(repo, ns_dir))
        index = repo / ns_dir / "kustomization.yaml"
        if index.exists():
            text = index.read_text(encoding="utf-8")
            anchor = re.search(r"\nresources:\n", text)
            assert anchor is not None, f"{index}: no resources list"
            cut = anchor.end()
            index.write_text(text[:cut] + f"  - ./agent-platform/{ks.name}\n" + text[cut:])


def _gate(repo: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "upgradeplan", "check", "--gitops", ".", "--base", "HEAD~1",
         "-o", "json"],
        cwd=repo, capture_output=True, text=True, check=False,
    )  # fmt: skip
    doc = json.loads(done.stdout)
    said: list[str] = []
    for r in doc["results"]:
        failing = [f["hazard"] for f in r.get("findings", []) if f["status"] == "applies"]
        missing = sorted(
            {m["key"] for f in r.get("findings", []) if f["status"] == "may-apply"
             for m in f.get("missing", [])}
        )  # fmt: skip
        moved = [f"{m['name']} {m['before']} → {m['after']}" for m in r.get("moved", [])]
        if moved or failing or missing:
            where = {f.get("location") for f in r.get("findings", []) if f["status"] == "applies"}
            said.append(
                f"{r['name']}: {r['verdict']}; moved {', '.join(moved) or '-'}"
                + (f"; applies {', '.join(failing)} at {', '.join(sorted(map(str, where)))}"
                   if failing else "")
                + (f"; missing {', '.join(missing)}" if missing else "")
            )  # fmt: skip
    return done.returncode, " | ".join(said)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("repo", type=Path)
    p.add_argument("ns_dir", help="the directory of apps the new one joins (kubernetes/apps/x)")
    args = p.parse_args(argv)
    repo: Path = args.repo
    _git(repo, "checkout", "-q", "-B", "upgradeplan-field")
    _write(repo, args.ns_dir, "4.7.18", "4.7.18")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "agent-platform 4.7.18")
    start = _git(repo, "rev-parse", "HEAD").strip()
    for meta in ("4.7.19", "4.8.0", "4.8.1"):
        _write(repo, args.ns_dir, meta, meta)
        _git(repo, "commit", "-q", "-am", f"agent-platform {meta}")
        code, said = _gate(repo)
        print(f"in order → {meta}: exit {code}: {said}")
    _git(repo, "checkout", "-q", "-B", "upgradeplan-field-skip", start)
    _write(repo, args.ns_dir, "4.8.0", "4.7.18")
    _git(repo, "commit", "-q", "-am", "agent-platform 4.8.0, connectivity left behind")
    code, said = _gate(repo)
    print(f"skip 4.7.18 → 4.8.0 (connectivity 4.7.18): exit {code}: {said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
