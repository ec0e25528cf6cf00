"""Benchmark: the PR gate against ``scan --gitops`` on a repository of 150 HelmReleases.

The tree is a home-ops layout in a git repository: a FluxInstance-less bootstrap sync
(``clusters/main/flux-system/gotk-sync.yaml``) applying ``./apps``, one app directory per
HelmRelease (a Flux ``Kustomization`` ``ks.yaml`` and an ``app/`` holding the HelmRelease and
its kustomization), plus the agent-platform installation of the test fixtures. One commit; then
the working tree bumps one chart version, as a Renovate pull request does. Timed as CI runs
them, each a subprocess (start-up included), median of ``--rounds``:

- ``scan``: ``upgradeplan scan --gitops .``
- ``gate``: ``upgradeplan check --gitops . --base HEAD``

Target (docs/performance.md, "PR gate"): gate / scan below 1.5.

    python bench/pr_gate.py [--rounds 7] [--releases 150]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.flux_yaml import kustomization, stream  # type: ignore[import-not-found,unused-ignore]

SYNC = stream(
    kustomization("flux-system", "./clusters/main", interval="10m"),
    kustomization("apps", "./apps", interval="1h"),
)
RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app-{n:03d}
spec:
  interval: 30m
  chart:
    spec:
      chart: app-{n:03d}
      version: "1.{minor}.0"
      sourceRef:
        kind: HelmRepository
        name: charts
        namespace: flux-system
  values:
    replicaCount: 2
    image:
      repository: registry.example.org/team-{team}/app-{n:03d}
      tag: "1.{minor}.0"
"""
APP_KUSTOMIZATION = (
    "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
    "resources:\n  - ./helmrelease.yaml\n"
)


def generate(root: Path, releases: int) -> None:
    (root / "clusters/main/flux-system").mkdir(parents=True)
    (root / "clusters/main/flux-system/gotk-sync.yaml").write_text(SYNC)
    index = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization", "resources:"]
    for n in range(releases):
        app = root / f"apps/app-{n:03d}"
        (app / "app").mkdir(parents=True)
        ks = kustomization(
            f"app-{n:03d}",
            f"./apps/app-{n:03d}/app",
            interval="1h",
            target_namespace=f"team-{n % 10}",
        )
        (app / "ks.yaml").write_text(ks)
        (app / "app/helmrelease.yaml").write_text(RELEASE.format(n=n, team=n % 10, minor=n % 7))
        (app / "app/kustomization.yaml").write_text(APP_KUSTOMIZATION)
        index.append(f"  - ./app-{n:03d}/ks.yaml")
    (root / "apps/kustomization.yaml").write_text("\n".join(index) + "\n")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run(
            ["git", "-c", "user.email=b@x", "-c", "user.name=b", *cmd], cwd=root, check=True
        )
    bumped = root / "apps/app-007/app/helmrelease.yaml"
    bumped.write_text(bumped.read_text().replace('version: "1.0.0"', 'version: "1.0.1"'))


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds, and CPU seconds (user + system, the command and what it runs, git
    included): the CPU figure does not grow with what else the machine runs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, (cmd, done.returncode, done.stderr[-500:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--releases", type=int, default=150)
    args = parser.parse_args()
    exe = [sys.executable, "-m", "upgradeplan"]
    tmp = Path(tempfile.mkdtemp(prefix="pr-gate-bench-"))
    try:
        generate(tmp, args.releases)
        gate_out = subprocess.run(
            [*exe, "check", "--gitops", ".", "--base", "HEAD"],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        assert "app-007 1.0.0 → 1.0.1" in gate_out, gate_out
        scan_runs, gate_runs = [], []
        for _ in range(args.rounds):
            scan_runs.append(timed([*exe, "scan", "--gitops", "."], tmp))
            gate_runs.append(timed([*exe, "check", "--gitops", ".", "--base", "HEAD"], tmp))
        scans, gates = [w for w, _ in scan_runs], [w for w, _ in gate_runs]
        s, g = statistics.median(scans), statistics.median(gates)
        paired = statistics.median(y / x for x, y in zip(scans, gates, strict=True))
        s_cpu = statistics.median(c for _, c in scan_runs)
        g_cpu = statistics.median(c for _, c in gate_runs)
        print(f"tree: {args.releases} HelmReleases in one installation, one chart bumped")
        print(f"scan --gitops .:             {s * 1000:.0f} ms (median of {args.rounds})")
        print(f"check --gitops . --base HEAD: {g * 1000:.0f} ms (median of {args.rounds})")
        print(f"ratio gate / scan: {g / s:.2f}, median of paired rounds {paired:.2f} (< 1.5)")
        print(f"CPU seconds: scan {s_cpu:.2f}, gate {g_cpu:.2f}, ratio {g_cpu / s_cpu:.2f}")
        return 0 if g / s < 1.5 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
