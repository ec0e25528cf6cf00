"""Benchmark: `scan --gitops` on a generated Flux repository against a bare YAML parse.

The tree: a cluster entry point (``clusters/prod/flux-system/gotk-sync.yaml``) whose
Kustomization applies ``./apps``, 500 files there holding 2,000 HelmReleases (4 a file, each
with a chart version and nested values) and the agent-platform installation of the test
fixtures. Timed in one process, best of ``--rounds``:

- ``bare``: ``yaml.load_all(..., Loader=yaml.CSafeLoader)`` over the same 500 files (read
  from disk each round), what any reader has to pay at least;
- ``scan``: what ``upgradeplan scan --gitops ROOT`` does before printing: the knowledge base
  loaded once beforehand, then ``api.gather`` (entry points, the Kustomization graph, the
  kustomize build with lines, the facts).

The ratio scan / bare is the figure in docs/performance.md (target: at most 1.3).

    python bench/gitops_scan.py [--rounds 7] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.flux_yaml import git_repository, kustomization, stream  # type: ignore[import-not-found,unused-ignore]

FILES = 500
PER_FILE = 4

SYNC = stream(
    git_repository("ssh://git@example.org/fleet", interval="1m", branch="main"),
    kustomization("flux-system", "./clusters/prod", interval="10m"),
)
APPS = kustomization("apps", "./apps", interval="1h")

RELEASE = """\
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app-{n:04d}
  namespace: team-{team}
  labels:
    app.kubernetes.io/part-of: fleet
spec:
  interval: 30m
  chart:
    spec:
      chart: app-{n:04d}
      version: "1.{minor}.{patch}"
      sourceRef:
        kind: HelmRepository
        name: charts
        namespace: flux-system
  install:
    crds: CreateReplace
  upgrade:
    remediation:
      retries: 3
  values:
    replicaCount: 2
    image:
      repository: registry.example.org/team-{team}/app-{n:04d}
      tag: "1.{minor}.{patch}"
    resources:
      requests: {{cpu: 100m, memory: 128Mi}}
      limits: {{memory: 256Mi}}
    ingress:
      enabled: true
      hosts:
        - host: app-{n:04d}.example.org
          paths: [{{path: /, pathType: Prefix}}]
"""


def generate(root: Path) -> list[Path]:
    """Write the tree; the 500 files of HelmReleases."""
    (root / "clusters/prod/flux-system").mkdir(parents=True)
    (root / "clusters/prod/flux-system/gotk-sync.yaml").write_text(SYNC)
    (root / "clusters/prod/apps.yaml").write_text(APPS)
    apps = root / "apps"
    apps.mkdir()
    files: list[Path] = []
    n = 0
    for f in range(FILES):
        text = ""
        for _ in range(PER_FILE):
            text += RELEASE.format(n=n, team=n % 20, minor=n % 17, patch=n % 5)
            n += 1
        path = apps / f"team-{f % 20:02d}-{f:03d}.yaml"
        path.write_text(text)
        files.append(path)
    fixture = Path(__file__).resolve().parents[1] / "tests/fixtures/gitops-layouts"
    shutil.copy(fixture / "multi-tenant/teams/platform/production/agent-platform.yaml", apps)
    return files


def bare(files: list[Path]) -> int:
    count = 0
    for path in files:
        for doc in yaml.load_all(path.read_bytes(), Loader=yaml.CSafeLoader):
            count += doc is not None
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = parser.parse_args()

    from upgradeplan import api

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gitops-bench-"))
    try:
        files = generate(tmp)
        kb = api.load_kb()
        inputs = api.Inputs(gitops=str(tmp))
        bare_times: list[float] = []
        scan_times: list[float] = []
        bare_cpu: list[float] = []  # CPU seconds: on a shared machine wall time also
        scan_cpu: list[float] = []  # counts the time other processes hold the CPU
        releases = 0
        for _ in range(args.rounds):
            t0, c0 = time.perf_counter(), time.process_time()
            docs = bare(files)
            bare_times.append(time.perf_counter() - t0)
            bare_cpu.append(time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            gathered = api.gather(kb, inputs)
            scan_times.append(time.perf_counter() - t0)
            scan_cpu.append(time.process_time() - c0)
            state = gathered[0].state
            assert state is not None
            releases = sum(
                1
                for f in state
                if f.key.startswith("helmrelease.app-") and f.key.endswith(".drift-detection")
            )
        assert docs == FILES * PER_FILE, docs
        assert releases == FILES * PER_FILE, releases
        b, s = min(bare_times), min(scan_times)
        paired = statistics.median(x / y for x, y in zip(scan_times, bare_times, strict=True))
        print(f"tree: {FILES} files, {FILES * PER_FILE} HelmReleases (all read: {releases})")
        print(f"bare yaml.load_all(CSafeLoader): {b * 1000:.0f} ms (best of {args.rounds})")
        print(f"scan --gitops (api.gather):      {s * 1000:.0f} ms (best of {args.rounds})")
        print(f"ratio scan / bare: best {s / b:.2f}, median of rounds {paired:.2f} (target <= 1.3)")
        bc, sc = min(bare_cpu), min(scan_cpu)
        print(f"CPU: bare {bc * 1000:.0f} ms, scan {sc * 1000:.0f} ms, ratio {sc / bc:.2f} (best)")
        return 0 if s / b <= 1.3 else 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
