"""Benchmark loading the knowledge base.

Run: python bench/kb_load.py [--runs N] [--products P] [--releases R] [--hazards H]

Cases (each run in a fresh interpreter, so no parse cache is warm; median of --runs):
* bundled: the knowledge shipped with upgradeplan (``load()``);
* generated: a knowledge base written by bench/genkb.py (default 50 products x 100
  releases = 5,000 releases, 1,000 hazards of all four scopes, 100 migrations), loaded with
  ``load([dir], bundled=False)``, which includes the load-time semantic checks.
Both wall-clock and CPU seconds are printed: on a busy machine wall time also counts the
time other processes hold the CPU. Lint of the generated base (full JSON Schema validation
and template rendering) is timed once for information. Target: generated load < 2 s.
"""

from __future__ import annotations

import argparse
import json
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
from upgradeplan.kb.{module} import {func}
result = {func}({args})
wall, cpu = time.perf_counter() - w, time.process_time() - c
print(json.dumps({{"wall": wall, "cpu": cpu}}))
"""


def timed(module: str, func: str, args: str) -> tuple[float, float]:
    """Run ``func(args)`` in a fresh interpreter; (wall, cpu) seconds including its import."""
    code = CHILD.format(module=module, func=func, args=args)
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    data = json.loads(out.strip().splitlines()[-1])
    return float(data["wall"]), float(data["cpu"])


def median_of(runs: int, module: str, func: str, args: str) -> tuple[float, float]:
    results = [timed(module, func, args) for _ in range(runs)]
    return (
        statistics.median(r[0] for r in results),
        statistics.median(r[1] for r in results),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--products", type=int, default=50)
    parser.add_argument("--releases", type=int, default=100)
    parser.add_argument("--hazards", type=int, default=1000)
    args = parser.parse_args()

    from genkb import generate

    wall, cpu = median_of(args.runs, "loader", "load", "")
    print(f"bundled knowledge: load median {wall:.3f} s wall, {cpu:.3f} s CPU ({args.runs} runs)")

    with tempfile.TemporaryDirectory() as tmp:
        root = generate(Path(tmp) / "knowledge", args.products, args.releases, args.hazards)
        files = sum(1 for _ in root.rglob("*.yaml"))
        n_rel = args.products * args.releases
        wall, cpu = median_of(args.runs, "loader", "load", f"[{str(root)!r}], bundled=False")
        verdict = "ok" if wall < 2.0 else "SLOW"
        print(
            f"generated ({n_rel} releases, {args.hazards} hazards, {files} files): load median "
            f"{wall:.3f} s wall, {cpu:.3f} s CPU ({args.runs} runs; target < 2 s: {verdict})"
        )
        wall, cpu = timed("lint", "lint", f"[{str(root)!r}], bundled=False")
        print(f"generated: kb lint (schema + templates) {wall:.3f} s wall, {cpu:.3f} s CPU (1 run)")


if __name__ == "__main__":
    main()
