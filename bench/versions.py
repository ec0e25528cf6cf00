"""Benchmark upgradeplan.versions on a realistic mix of chart constraints and versions.

Run: python bench/versions.py [--checks N]

Figures printed (best of 3 runs each):
* warm checks/s: constraints and versions parsed once, as the planner does;
* string checks/s: ``Constraint.check(str)`` through the cached version parser;
* cold checks/s: every check parses its constraint and version from scratch (no cache);
* constraint parses/s and version parses/s, uncached;
* the in-process peer, when ``packaging`` is installed: ``packaging.version.Version``
  parses/s on the versions of the mix it accepts (PEP 440 refuses ``0.11.5-gs.2``-style
  prereleases), against ``Version.parse`` on the same strings.

Run from the repository root against an installed package (``python bench/versions.py``
imports the installed ``upgradeplan``, not ``./upgradeplan``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

from upgradeplan.versions import Constraint, Version

CONSTRAINTS = [
    ">=0.0.30-gs.4 <0.0.31-0",
    ">=0.11.0-gs.1 <0.12.0-0",
    "~4.7",
    "~4.7.0",
    "^4.8.0",
    "^0.5.2",
    "4.7.18",
    "=4.7.18",
    "1.x",
    "2.3.x",
    "*",
    ">=5.12.0 <6.0.0",
    ">=5.12.0, <6.0.0",
    "v1.3.0",
    ">=v1.3.0",
    "1.2 - 1.4.5",
    "v1.0.0 - v2.0.0",
    "^1.0.0 || ^2.0.0",
    ">=1.0.0-0 <2.0.0 || >=3.0.0",
    "<2.0.0-0",
    "*-0",
    ">0.0.0-0",
    "!=1.4.2",
    ">= 1.1, <2, !=1.2.3 || > 3",
    "~> 3.2",
    "<=2.3",
]

VERSIONS = [
    "0.0.30-gs.4",
    "0.0.30-gs.10",
    "0.0.30",
    "0.0.31-0",
    "0.11.5-gs.2",
    "0.5.9",
    "1.0.0",
    "1.2.3",
    "1.3.0",
    "v1.3.0",
    "1.3.0-rc.1",
    "1.4.5",
    "1.5.0-rc.1",
    "2.0.0",
    "2.3.7",
    "3.1.0-beta.2",
    "4.7.0",
    "4.7.18",
    "4.7.18+build.1",
    "4.7.19-rc.1",
    "4.8.0",
    "4.9.0-beta.1",
    "5.12.3",
    "5.99.0",
    "6.0.0",
    "2025.01.15",
    "v2025.07.03",
]


def _best(runs: int, fn: Callable[[], int]) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(runs):
        start = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - start)
    return best, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--checks", type=int, default=100_000)
    args = parser.parse_args(argv)
    rng = random.Random(20261129)
    pairs = [(rng.choice(CONSTRAINTS), rng.choice(VERSIONS)) for _ in range(args.checks)]

    parsed_c = {c: Constraint.parse(c) for c in CONSTRAINTS}
    parsed_v = {v: Version.parse(v) for v in VERSIONS}
    warm_pairs = [(parsed_c[c], parsed_v[v]) for c, v in pairs]
    str_pairs = [(parsed_c[c], v) for c, v in pairs]

    def warm() -> int:
        return sum(c.check(v) for c, v in warm_pairs)

    def strings() -> int:
        return sum(c.check(v) for c, v in str_pairs)

    def cold() -> int:
        return sum(Constraint.parse(c).check(Version.parse(v)) for c, v in pairs)

    def parse_constraints() -> int:
        for c, _ in pairs:
            Constraint.parse(c)
        return 0

    def parse_versions() -> int:
        for _, v in pairs:
            Version.parse(v)
        return 0

    n = len(pairs)
    t_warm, matched = _best(3, warm)
    t_str, _ = _best(3, strings)
    t_cold, _ = _best(3, cold)
    t_pc, _ = _best(3, parse_constraints)
    t_pv, _ = _best(3, parse_versions)
    print(
        f"python {sys.version.split()[0]}; {n} checks over {len(CONSTRAINTS)} constraints"
        f" x {len(VERSIONS)} versions ({matched} matched)"
    )
    print(f"warm checks (pre-parsed constraint and version): {n / t_warm:12,.0f} checks/s")
    print(f"string checks (pre-parsed constraint, cached)  : {n / t_str:12,.0f} checks/s")
    print(f"cold checks (parse both every time, no cache)  : {n / t_cold:12,.0f} checks/s")
    print(f"constraint parses (uncached)                   : {n / t_pc:12,.0f} parses/s")
    print(f"version parses (uncached)                      : {n / t_pv:12,.0f} parses/s")
    _peer(pairs)
    return 0


def _peer(pairs: list[tuple[str, str]]) -> None:
    try:
        from packaging.version import InvalidVersion as PeerInvalid
        from packaging.version import Version as PeerVersion
    except ImportError:
        print("packaging not installed: no in-process peer figure")
        return
    accepted = set()
    for text in VERSIONS:
        try:
            PeerVersion(text)
        except PeerInvalid:
            continue
        accepted.add(text)
    texts = [v for _, v in pairs if v in accepted]

    def ours() -> int:
        for text in texts:
            Version.parse(text)
        return 0

    def peer() -> int:
        for text in texts:
            PeerVersion(text)
        return 0

    t_ours, _ = _best(3, ours)
    t_peer, _ = _best(3, peer)
    print(
        f"on the {len(accepted)} of {len(VERSIONS)} versions packaging accepts "
        f"({len(texts)} parses): Version.parse {len(texts) / t_ours:,.0f}/s, "
        f"packaging.version.Version {len(texts) / t_peer:,.0f}/s (ours / packaging: "
        f"{t_peer / t_ours:.2f})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
