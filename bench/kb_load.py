"""Benchmark loading the knowledge base.

Run: python bench/kb_load.py [--runs N] [--products P] [--releases R] [--hazards H]

Run from the repository root against an installed package (the children run with ``-P``,
so ``./upgradeplan`` of the checkout is never imported instead of the installed one).

Knowledge bases: the bundled one, and one written by bench/genkb.py (default 50 products x
100 releases = 5,000 releases, 1,000 hazards of all four scopes, 100 migrations), both loaded
with the load-time semantic checks. Each is loaded three ways, alternately, every run in a
fresh interpreter (imports included; median of --runs):
* ``yaml``: ``upgradeplan.kb.loader.load`` (no cache: parse every file);
* ``cold``: ``upgradeplan.kb.cache.load`` with an empty cache directory (parse, then write);
* ``cold, write after``: the same as the console script does it (``usercache.defer_writes``):
  the load returns before the entry is written; the write after it is timed apart;
* ``warm``: ``upgradeplan.kb.cache.load`` with the entry already written (what a command
  run the second time does).
Both wall-clock and CPU seconds are printed: on a busy machine wall time also counts the
time other processes hold the CPU. Lint of the generated base (full JSON Schema validation
and template rendering) is timed once for information. Targets (generated base): warm at most
0.5x the uncached load, cold no slower than it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = """
import json, sys, time
w, c = time.perf_counter(), time.process_time()
{prelude}
from upgradeplan.kb.{module} import {func}
result = {func}({args})
wall, cpu = time.perf_counter() - w, time.process_time() - c
w, c = time.perf_counter(), time.process_time()
{after}
print(json.dumps({{"wall": wall, "cpu": cpu,
                  "after_wall": time.perf_counter() - w, "after_cpu": time.process_time() - c}}))
"""
# what the console script does: the cache entry of a cold load is written after the answer
DEFERRED = ("from upgradeplan import usercache; usercache.defer_writes()", "usercache.run_later()")
AFTER: dict[str, tuple[float, float]] = {}  # way -> the deferred write (wall, cpu) of its last run


def timed(
    module: str, func: str, args: str, cache: str = "", deferred: bool = False
) -> tuple[float, float]:
    """Run ``func(args)`` in a fresh interpreter; (wall, cpu) seconds including its import.

    ``deferred``: as the console script, the cache write waits until after the load (timed
    apart, into AFTER["deferred"])."""
    prelude, after = DEFERRED if deferred else ("", "")
    code = CHILD.format(module=module, func=func, args=args, prelude=prelude, after=after)
    env = {k: v for k, v in os.environ.items() if k != "UPGRADEPLAN_NO_CACHE"}
    if cache:
        env["XDG_CACHE_HOME"] = cache
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    data = json.loads(out.strip().splitlines()[-1])
    if deferred:
        AFTER["deferred"] = (float(data["after_wall"]), float(data["after_cpu"]))
    return float(data["wall"]), float(data["cpu"])


def three_ways(runs: int, args: str, tmp: str) -> dict[str, tuple[float, float]]:
    """Median (wall, cpu) of the uncached, cold-cache and warm-cache loads, run alternately."""
    cold, warm = os.path.join(tmp, "cold"), os.path.join(tmp, "warm")
    timed("cache", "load", args, warm)  # write the warm entry
    samples: dict[str, list[tuple[float, float]]] = {
        "yaml": [],
        "cold": [],
        "cold, write after": [],
        "warm": [],
    }
    writes: list[tuple[float, float]] = []
    for _ in range(runs):
        samples["yaml"].append(timed("loader", "load", args))
        shutil.rmtree(cold, ignore_errors=True)
        samples["cold"].append(timed("cache", "load", args, cold))
        shutil.rmtree(cold, ignore_errors=True)
        samples["cold, write after"].append(timed("cache", "load", args, cold, deferred=True))
        writes.append(AFTER["deferred"])
        samples["warm"].append(timed("cache", "load", args, warm))
    AFTER["write"] = (
        statistics.median(w for w, _ in writes),
        statistics.median(c for _, c in writes),
    )
    return {
        way: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
        for way, rs in samples.items()
    }


def report(name: str, results: dict[str, tuple[float, float]]) -> None:
    base = results["yaml"][0]
    for way, (wall, cpu) in results.items():
        print(
            f"{name}: {way:<17} median {wall:.3f} s wall, {cpu:.3f} s CPU "
            f"({wall / base:.2f}x the uncached load, {cpu / results['yaml'][1]:.2f}x its CPU)"
        )
    wall, cpu = AFTER["write"]
    print(f"{name}: the deferred write after the answer: {wall:.3f} s wall, {cpu:.3f} s CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--products", type=int, default=50)
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--hazards", type=int, default=1000)
    args = parser.parse_args()

    from genkb import generate

    with tempfile.TemporaryDirectory() as tmp:
        report("bundled", three_ways(args.runs, "", os.path.join(tmp, "b")))
        root = generate(Path(tmp) / "knowledge", args.products, args.releases, args.hazards)
        files = sum(1 for _ in root.rglob("*.yaml"))
        n_rel = args.products * args.releases
        gen_args = f"[{str(root)!r}], bundled=False"
        results = three_ways(args.runs, gen_args, os.path.join(tmp, "g"))
        report(f"generated ({n_rel} releases, {args.hazards} hazards, {files} files)", results)
        warm, cold, after, yaml = (
            results[w][0] for w in ("warm", "cold", "cold, write after", "yaml")
        )
        print(
            f"generated: warm/uncached {warm / yaml:.2f} (target <= 0.5), cold/uncached "
            f"{cold / yaml:.2f}, cold with the write after the answer (the console script) "
            f"{after / yaml:.2f} (target <= 1.0, within the noise)"
        )
        wall, cpu = timed("lint", "lint", gen_args)
        print(f"generated: kb lint (schema + templates) {wall:.3f} s wall, {cpu:.3f} s CPU (1 run)")


if __name__ == "__main__":
    main()
