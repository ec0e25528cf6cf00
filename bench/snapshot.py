"""Snapshot replay: ``upgradeplan check --snapshot FILE`` on snapshots of growing clusters.

The snapshot is the tool's own format as ``upgradeplan snapshot`` writes it: the objects of
the S1 cluster fixture (tests/fixtures/cluster/s1) plus N extra HelmReleases (with their
OCIRepositories), turned into facts by the cluster reader's object code and dumped by
``readers.snapshot.dump``. Each size is replayed as a subprocess of the installed console
script (start-up and knowledge loading included, as a user runs it); the median wall time of
a few rounds is printed with the time per 1,000 HelmReleases, which stays flat when the
replay is linear, and so is the replay's CPU time (user + system), which depends far less on
what else the machine runs. ``--kubectl`` also replays the same objects as a ``kubectl get -o json``
list.

    python bench/snapshot.py [--sizes 5000,10000,20000] [--rounds 3] [--upgradeplan PATH]

Target (docs/performance.md): 5,000 HelmReleases under 3 s, growing linearly to 20,000.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "cluster" / "s1" / "objects.yaml"
NS = "flux-apps"


def objects(extra: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(FIXTURE.read_text(encoding="utf-8")):
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            out.extend(i for i in doc["items"] if isinstance(i, dict))
        elif isinstance(doc, dict):
            out.append(doc)
    for i in range(extra):
        name = f"app-{i:05d}"
        out.append(
            {
                "apiVersion": "source.toolkit.fluxcd.io/v1",
                "kind": "OCIRepository",
                "metadata": {"name": name, "namespace": NS},
                "spec": {"url": f"oci://registry.example/{name}", "ref": {"semver": "1.x"}},
            }
        )
        out.append(
            {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": name, "namespace": NS},
                "spec": {
                    "interval": "10m",
                    "chartRef": {"kind": "OCIRepository", "name": name},
                    "driftDetection": {"mode": "enabled"} if i % 2 else {},
                    "values": {"replicas": 2},
                },
                "status": {"history": [{"chartName": name, "chartVersion": "1.0.0", "version": 1}]},
            }
        )
    return out


def write_snapshot(path: Path, extra: int) -> None:
    from upgradeplan.kb.loader import load
    from upgradeplan.readers import snapshot
    from upgradeplan.readers.kube.objects import server_version_object, state_from_objects

    objs = [server_version_object({"gitVersion": "v1.35.0"}), *objects(extra)]
    kinds = {"HelmRelease", "OCIRepository", "HelmChart", "Deployment", "Harness"}
    state = state_from_objects(
        load(), objs, source_prefix="cluster bench", name="bench", listed=kinds
    )
    path.write_text(snapshot.dump(state, "yaml"), encoding="utf-8")


def write_kubectl_list(path: Path, extra: int) -> None:
    doc = {"apiVersion": "v1", "kind": "List", "items": objects(extra)}
    path.write_text(json.dumps(doc), encoding="utf-8")


def replay(exe: str, path: Path, rounds: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system) of the replay's process:
    the CPU time hardly depends on what else the machine runs, the wall time does."""
    args = [exe, "check", "--snapshot", str(path), "--to", "agent-platform=4.8.1", "-o", "json"]
    times, cpu = [], []
    for _ in range(rounds):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=600)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode not in (0, 3, 4):
            raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr}")
    return statistics.median(times), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,10000,20000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--upgradeplan", default=shutil.which("upgradeplan") or "upgradeplan")
    parser.add_argument("--kubectl", action="store_true", help="also replay kubectl lists")
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="upgradeplan-bench-") as tmp:
        print(
            f"{'form':<10} {'HelmReleases':>12} {'bytes':>11} {'median s':>9} {'s/1000':>7} "
            f"{'cpu s':>6} {'cpu/1000':>8}"
        )
        for size in sizes:
            forms = [("snapshot", write_snapshot)]
            if opts.kubectl:
                forms.append(("kubectl", write_kubectl_list))
            for form, write in forms:
                path = Path(tmp) / f"{form}-{size}.{'yaml' if form == 'snapshot' else 'json'}"
                write(path, size)
                seconds, cpu = replay(opts.upgradeplan, path, opts.rounds)
                per, cpu_per = seconds / size * 1000, cpu / size * 1000
                size_b = path.stat().st_size
                print(
                    f"{form:<10} {size:>12} {size_b:>11} {seconds:>9.2f} {per:>7.3f} "
                    f"{cpu:>6.2f} {cpu_per:>8.3f}"
                )
                sys.stdout.flush()


if __name__ == "__main__":
    main()
