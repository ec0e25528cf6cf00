"""Benchmark loading the knowledge base.

Run: python bench/kb_load.py [--runs N] [--products P] [--releases R] [--hazards H]
                             [--before PYTHON]

Run from the repository root against an installed package (the children run with ``-P``,
so ``./upgradeplan`` of the checkout is never imported instead of the installed one).

Knowledge bases: the bundled one, and one written by bench/genkb.py (default 50 products x
100 releases = 5,000 releases, 1,000 hazards of all four scopes, 100 migrations), both loaded
with the load-time semantic checks by ``upgradeplan.kb.loader.load``, every run in a fresh
interpreter (imports included; median of --runs). With ``--before PYTHON`` (the interpreter
of another install, e.g. of an earlier commit), that install's loads run in the same rounds,
alternately: its ``kb.loader.load`` and, where it has one, its ``kb.cache.load`` with the
cache entry already written (what its commands did from the second run on). Each load is
timed as a whole process and, beside it, inside the process until the load returned. Wall
clock and CPU seconds are printed: on a busy machine wall time also counts the time other
processes hold the CPU. Lint of the generated base (full JSON Schema validation and template
rendering) is timed once for information. Target (issue 29): the bundled load no slower than
the earlier install's command load +20%.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = """
import json, sys, time
w, c = time.perf_counter(), time.process_time()
from upgradeplan.kb.{module} import {func}
result = {func}({args})
wall, cpu = time.perf_counter() - w, time.process_time() - c
sys.stdout.write(json.dumps({{"wall": wall, "cpu": cpu}}) + "\\n")
"""
Sample = tuple[float, float, float, float]  # process wall, process CPU, answer wall, answer CPU


def timed(python: str, module: str, func: str, args: str, cache: str = "") -> Sample:
    """Run ``func(args)`` in a fresh interpreter: (wall, CPU) of the whole process and of
    the load until it returned (imports included). With ``cache``, the cache lives there."""
    code = CHILD.format(module=module, func=func, args=args)
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


def rounds(runs: int, args: str, tmp: str, before: str | None) -> dict[str, list[Sample]]:
    """Every run's sample of this install's load and, with ``before``, that install's uncached
    and warm-cache loads, run alternately."""
    here = sys.executable
    samples: dict[str, list[Sample]] = {"load": []}
    warm = os.path.join(tmp, "warm")
    if before:
        samples["before"] = []
        if _has_cache(before):
            samples["before-warm"] = []
            timed(before, "cache", "load", args, warm)  # write the warm entry
    for _ in range(runs):
        samples["load"].append(timed(here, "loader", "load", args))
        if before:
            samples["before"].append(timed(before, "loader", "load", args))
            if "before-warm" in samples:
                samples["before-warm"].append(timed(before, "cache", "load", args, warm))
    return samples


def _has_cache(python: str) -> bool:
    spec = "importlib.util.find_spec('upgradeplan.kb.cache')"
    code = f"import importlib.util, sys; sys.exit({spec} is None)"
    return subprocess.run([python, "-P", "-c", code], check=False).returncode == 0


def _median(samples: list[Sample], i: int) -> float:
    return statistics.median(s[i] for s in samples)


def report(name: str, results: dict[str, list[Sample]]) -> None:
    base, base_cpu = _median(results["load"], 0), _median(results["load"], 1)
    for way, samples in results.items():
        wall, cpu = _median(samples, 0), _median(samples, 1)
        answer = f"until the answer {_median(samples, 2):.3f} s, {_median(samples, 3):.3f} s CPU"
        print(
            f"{name}: {way:<11} process median {wall:.3f} s wall, {cpu:.3f} s CPU "
            f"(this load is {base / wall:.2f}x its wall, {base_cpu / cpu:.2f}x its CPU); {answer}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--products", type=int, default=50)
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--hazards", type=int, default=1000)
    parser.add_argument("--before", help="another install's python, timed alternately")
    args = parser.parse_args()

    from genkb import generate

    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} (start)")
    with tempfile.TemporaryDirectory() as tmp:
        report("bundled", rounds(args.runs, "", os.path.join(tmp, "b"), args.before))
        root = generate(Path(tmp) / "knowledge", args.products, args.releases, args.hazards)
        files = sum(1 for _ in root.rglob("*.yaml"))
        n_rel = args.products * args.releases
        gen_args = f"[{str(root)!r}], bundled=False"
        results = rounds(args.runs, gen_args, os.path.join(tmp, "g"), args.before)
        report(f"generated ({n_rel} releases, {args.hazards} hazards, {files} files)", results)
        wall, cpu, _, _ = timed(sys.executable, "lint", "lint", gen_args)
        print(f"generated: kb lint (schema + templates) {wall:.3f} s wall, {cpu:.3f} s CPU (1 run)")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} (end)")


if __name__ == "__main__":
    main()
