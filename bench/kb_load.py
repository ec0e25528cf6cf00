"""Benchmark loading the knowledge base.

Run: python bench/kb_load.py [--runs N] [--products P] [--releases R] [--hazards H]
                             [--other PYTHON]

Run from the repository root against an installed package (the children run with ``-P``,
so ``./upgradeplan`` of the checkout is never imported instead of the installed one).

Knowledge bases: the bundled one, and one written by bench/genkb.py (default 50 products x
100 releases = 5,000 releases, 1,000 hazards of all four scopes, 100 migrations), both loaded
with the load-time semantic checks. Each is loaded three ways, alternately, every run in a
fresh interpreter (imports included; median of --runs):
* ``yaml``: ``upgradeplan.kb.loader.load`` (no cache: parse every file);
* ``cold``: ``upgradeplan.kb.cache.load`` with an empty cache directory, as the console
  script does it (``usercache.defer_writes``): the load returns before the entry is written,
  the write follows (what a command run the first time does);
* ``warm``: ``upgradeplan.kb.cache.load`` with the entry already written (what a command
  run the second time does).
Each way is timed as a whole process (start to exit, the cold write included: what a user
waits for) and, beside it, inside the process until the load returned (the answer). Wall
clock and CPU seconds are printed: on a busy machine wall time also counts the time other
processes hold the CPU. With ``--other PYTHON`` (the interpreter of another install, say of
the commit before the knowledge cache existed), that install's uncached load of the generated
base runs in the same rounds as ``today``, so the cold path is compared with it under the
same load. Lint of the
generated base (full JSON Schema validation and template rendering) is timed once for
information. Targets (generated base): warm at most 0.5x the uncached load, cold (the whole
process) no slower than it.
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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = """
import json, os, sys, time
w, c = time.perf_counter(), time.process_time()
{prelude}
from upgradeplan.kb.{module} import {func}
result = {func}({args})
wall, cpu = time.perf_counter() - w, time.process_time() - c
{after}
sys.stdout.write(json.dumps({{"wall": wall, "cpu": cpu}}) + "\\n")
sys.stdout.flush()
os._exit(0)
"""
# what the console script does: the cache entry of a cold load is written after the answer
DEFERRED = ("from upgradeplan import usercache; usercache.defer_writes()", "usercache.run_later()")
Sample = tuple[float, float, float, float]  # process wall, process CPU, answer wall, answer CPU


def timed(python: str, module: str, func: str, args: str, cache: str = "") -> Sample:
    """Run ``func(args)`` in a fresh interpreter: (wall, CPU) of the whole process and of
    the load until it returned (imports included). With ``cache``, the cache lives there and
    its write is deferred until after the load, as the console script defers it."""
    prelude, after = DEFERRED if module == "cache" else ("", "")
    code = CHILD.format(module=module, func=func, args=args, prelude=prelude, after=after)
    env = {k: v for k, v in os.environ.items() if k != "UPGRADEPLAN_NO_CACHE"}
    if cache:
        env["XDG_CACHE_HOME"] = cache
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-P", "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = proc.communicate()  # until the child exits
    wall = time.perf_counter() - start
    cpu = _children_cpu()
    if proc.returncode != 0 or not out.strip():
        raise SystemExit(f"bench/kb_load.py: {module}.{func}: {err.decode()[-600:]}")
    data = json.loads(out.decode().strip().splitlines()[-1])
    return wall, cpu, float(data["wall"]), float(data["cpu"])


_CPU_SEEN = [0.0]


def _children_cpu() -> float:
    """CPU seconds (user + system) of the child just waited for: the growth of the waited-for
    children's total since the last call (one child runs at a time)."""
    import resource

    total = resource.getrusage(resource.RUSAGE_CHILDREN)
    now = total.ru_utime + total.ru_stime
    spent, _CPU_SEEN[0] = now - _CPU_SEEN[0], now
    return spent


def three_ways(runs: int, args: str, tmp: str, other: str | None) -> dict[str, list[Sample]]:
    """Every run's sample of the uncached, cold-cache and warm-cache loads, run alternately
    (and ``today``, another install's uncached load, when ``other`` is given)."""
    cold, warm = os.path.join(tmp, "cold"), os.path.join(tmp, "warm")
    here = sys.executable
    timed(here, "cache", "load", args, warm)  # write the warm entry
    samples: dict[str, list[Sample]] = {"yaml": [], "cold": [], "warm": []}
    if other:
        samples["today"] = []
    for _ in range(runs):
        if other:
            samples["today"].append(timed(other, "loader", "load", args))
        samples["yaml"].append(timed(here, "loader", "load", args))
        shutil.rmtree(cold, ignore_errors=True)
        samples["cold"].append(timed(here, "cache", "load", args, cold))
        samples["warm"].append(timed(here, "cache", "load", args, warm))
    return samples


def _median(samples: list[Sample], i: int) -> float:
    return statistics.median(s[i] for s in samples)


def report(name: str, results: dict[str, list[Sample]]) -> None:
    base, base_cpu = _median(results["yaml"], 0), _median(results["yaml"], 1)
    for way, samples in results.items():
        wall, cpu = _median(samples, 0), _median(samples, 1)
        answer = f"until the answer {_median(samples, 2):.3f} s, {_median(samples, 3):.3f} s CPU"
        print(
            f"{name}: {way:<5} process median {wall:.3f} s wall, {cpu:.3f} s CPU "
            f"({wall / base:.2f}x the uncached load, {cpu / base_cpu:.2f}x its CPU); {answer}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--products", type=int, default=50)
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--hazards", type=int, default=1000)
    parser.add_argument("--other", help="another install's python: its uncached load as 'today'")
    args = parser.parse_args()

    from genkb import generate

    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} (start)")
    with tempfile.TemporaryDirectory() as tmp:
        # (another install's bundled knowledge is its own: only the generated base is shared)
        report("bundled", three_ways(args.runs, "", os.path.join(tmp, "b"), None))
        root = generate(Path(tmp) / "knowledge", args.products, args.releases, args.hazards)
        files = sum(1 for _ in root.rglob("*.yaml"))
        n_rel = args.products * args.releases
        gen_args = f"[{str(root)!r}], bundled=False"
        results = three_ways(args.runs, gen_args, os.path.join(tmp, "g"), args.other)
        report(f"generated ({n_rel} releases, {args.hazards} hazards, {files} files)", results)
        warm, cold, yaml = (_median(results[w], 0) for w in ("warm", "cold", "yaml"))
        line = (
            f"generated: warm/uncached {warm / yaml:.2f} (target <= 0.5), cold/uncached "
            f"{cold / yaml:.2f} (whole processes; target <= 1.0)"
        )
        if args.other:
            today, today_cpu = _median(results["today"], 0), _median(results["today"], 1)
            cpu = _median(results["cold"], 1)
            line += f", cold/today {cold / today:.2f} ({cpu / today_cpu:.2f} CPU)"
        print(line)
        wall, cpu, _, _ = timed(sys.executable, "lint", "lint", gen_args)
        print(f"generated: kb lint (schema + templates) {wall:.3f} s wall, {cpu:.3f} s CPU (1 run)")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} (end)")


if __name__ == "__main__":
    main()
