"""Benchmark: `upgradeplan fleet` over 100 and 1,000 generated snapshots.

The snapshots are the eight reference scenarios' states with varied names and versions
(tests/support/fleet_corpus.py): upgradeplan's own format in YAML and JSON and plain kubectl
dumps in YAML and JSON, a fifth of them gzipped. Each run is the installed console script as a user
runs it (`upgradeplan fleet DIR --to latest -o json > /dev/null`), so the figures include
start-up and the knowledge load. Reported per size and per -j: median wall time of the
rounds, installations per second, CPU seconds (user + sys, workers included) and the
command's own peak RSS (from wait4; a forked worker's RSS is not in it). Memory growth is
the peak RSS at 1,000 minus at 100 with -j1 (one process reads, judges and holds it all).

    python -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install '.[s3]'
    /tmp/bench-venv/bin/python bench/fleet.py [--rounds 3] [--sizes 100,1000] [--jobs 1,2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support import fleet_corpus  # type: ignore[import-not-found,unused-ignore]  # noqa: E402

from upgradeplan import api  # noqa: E402


def _command() -> list[str]:
    script = Path(sys.executable).parent / "upgradeplan"
    return [str(script)] if script.exists() else [sys.executable, "-m", "upgradeplan"]


def run_once(directory: Path, jobs: int) -> tuple[float, int, int, float]:
    """Wall seconds, exit code, the command's peak RSS (KiB) and CPU seconds (user + sys,
    the workers it waited for included)."""
    cmd = [*_command(), "fleet", str(directory), "--to", "latest", "-o", "json", "-j", str(jobs)]
    start = time.perf_counter()
    with open(os.devnull, "w") as sink, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if code not in (0, 3, 4):
            err.seek(0)
            raise SystemExit(f"fleet failed ({code}): {err.read().decode()}")
    return wall, code, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--jobs", default="1,2")
    args = parser.parse_args()
    start_load = os.getloadavg()[0]
    kb = api.load_kb()
    sizes = [int(s) for s in args.sizes.split(",")]
    jobs = [int(j) for j in args.jobs.split(",")]
    peak: dict[tuple[int, int], int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        for n in sizes:
            dirs[n] = Path(tmp) / f"fleet-{n}"
            made = fleet_corpus.generate(kb, dirs[n], n, seed=1000 + n, malformed=False)
            forms: dict[str, int] = {}
            for g in made:
                key = g.form + (".gz" if g.gz else "")
                forms[key] = forms.get(key, 0) + 1
            size = sum(g.path.stat().st_size for g in made)
            print(f"{n} snapshots, {size / 1e6:.1f} MB: {dict(sorted(forms.items()))}")
        runs: dict[tuple[int, int], list[tuple[float, int, int, float]]] = {}
        for _ in range(args.rounds):  # round after round, so that load falls on each alike
            for n in sizes:
                for j in jobs:
                    runs.setdefault((n, j), []).append(run_once(dirs[n], j))
    print(
        f"{'size':>6} {'-j':>3} {'median s':>9} {'inst/s':>8} {'inst/CPU-s':>11}"
        f" {'RSS MiB':>8} {'CPU s':>6}"
    )
    walls: dict[tuple[int, int], float] = {}
    for (n, j), got in runs.items():
        wall = walls[(n, j)] = statistics.median(r[0] for r in got)
        rss = max(r[2] for r in got)
        cpu = statistics.median(r[3] for r in got)
        peak[(n, j)] = rss
        print(
            f"{n:>6} {j:>3} {wall:>9.2f} {n / wall:>8.0f} {n / cpu:>11.0f}"
            f" {rss / 1024:>8.1f} {cpu:>6.2f}"
        )
    if 1 in jobs and len(sizes) >= 2:
        growth = (peak[(sizes[-1], 1)] - peak[(sizes[0], 1)]) / 1024
        print(f"memory growth {sizes[0]} -> {sizes[-1]} snapshots (-j1): {growth:.1f} MiB")
    for n in sizes:
        for j in jobs:
            if j != 1 and 1 in jobs:
                ratio = walls[(n, j)] / walls[(n, 1)]
                print(f"{n} snapshots: -j{j} takes {ratio:.2f}x the wall time of -j1")
    print(f"load average: {start_load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
