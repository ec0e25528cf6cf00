"""Benchmark what the knowledge's growth costs: two knowledge directories loaded alone.

Run: python bench/kb_growth.py [--runs N] BEFORE AFTER

BEFORE and AFTER are knowledge directories (the bundled one of two commits, say:
``git archive main knowledge | tar -x -C /tmp/before``). Each is loaded with the code
installed (``upgradeplan.kb.loader.load([DIR], bundled=False)``: uncached, the load-time
semantic checks included), every run in a fresh interpreter started with ``-P`` from ``/``, the
two alternately; the median of --runs is printed, in CPU seconds (the measure a busy machine
disturbs least) and wall seconds, with the ratio AFTER / BEFORE. The same code reads both, so
the ratio is the growth of the knowledge alone. Target: at most 1.2.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

CHILD = (
    "import sys, time\n"
    "w, c = time.perf_counter(), time.process_time()\n"
    "from upgradeplan.kb.loader import load\n"
    "kb = load([sys.argv[1]], bundled=False)\n"
    "n = sum(len(v) for v in kb.releases.values())\n"
    "print(time.process_time() - c, time.perf_counter() - w, n, len(kb.hazards))\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    dirs = (args.before, args.after)
    cpu: dict[str, list[float]] = {d: [] for d in dirs}
    wall: dict[str, list[float]] = {d: [] for d in dirs}
    size: dict[str, str] = {}
    for _ in range(args.runs):
        for d in dirs:
            out = subprocess.run(
                [sys.executable, "-P", "-c", CHILD, d],
                capture_output=True,
                text=True,
                check=True,
                cwd="/",
                env={"UPGRADEPLAN_NO_CACHE": "1", "PATH": "/usr/bin:/bin"},
            ).stdout.split()
            cpu[d].append(float(out[0]))
            wall[d].append(float(out[1]))
            size[d] = f"{out[2]} releases, {out[3]} hazards"
    for d in dirs:
        print(
            f"{d}: {size[d]}: median {statistics.median(cpu[d]) * 1000:.1f} ms CPU, "
            f"{statistics.median(wall[d]) * 1000:.1f} ms wall ({args.runs} runs)"
        )
    ratio_cpu = statistics.median(cpu[args.after]) / statistics.median(cpu[args.before])
    ratio_wall = statistics.median(wall[args.after]) / statistics.median(wall[args.before])
    print(f"after/before: {ratio_cpu:.3f} CPU, {ratio_wall:.3f} wall (target <= 1.2)")


if __name__ == "__main__":
    main()
