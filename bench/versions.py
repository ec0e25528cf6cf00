"""Benchmark upgradeplan.versions on a realistic mix of chart constraints and versions.

Run: python bench/versions.py [--checks N] [--no-go]

Figures printed (best of 3 runs each):
* warm checks/s: constraints and versions parsed once, as the planner does;
* string checks/s: ``Constraint.check(str)`` through the cached version parser;
* cold checks/s: every check parses its constraint and version from scratch (no cache);
* constraint parses/s and version parses/s, uncached;
* the in-process peer, when ``packaging`` is installed: ``packaging.version.Version``
  parses/s on the versions of the mix it accepts (PEP 440 refuses ``0.11.5-gs.2``-style
  prereleases), against ``Version.parse`` on the same strings;
* the Go library Helm and Flux use, github.com/Masterminds/semver/v3, on the same mix in the
  same order (``bench/versions_go/main.go``, built and run when ``go`` is on PATH; the
  module comes from the Go module cache or proxy, or from a source directory named by
  ``SEMVER_SRC``, e.g. Debian's golang-github-masterminds-semver-dev at
  /usr/share/gocode/src/github.com/Masterminds/semver, used offline); our rates as a
  fraction of Go's. Without ``go``, the figure recorded in docs/performance.md is printed,
  marked as not measured in this run.

Run from the repository root against an installed package (``python bench/versions.py``
imports the installed ``upgradeplan``, not ``./upgradeplan``).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def _ours(pairs: list[tuple[str, str]]) -> tuple[dict[str, float], int]:
    """upgradeplan's rates on the mix (best of 3 each), and how many checks matched."""
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
    rates = {
        "warm_checks": n / t_warm,
        "string_checks": n / _best(3, strings)[0],
        "cold_checks": n / _best(3, cold)[0],
        "constraint_parses": n / _best(3, parse_constraints)[0],
        "version_parses": n / _best(3, parse_versions)[0],
    }
    return rates, matched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--checks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="alternations of ours and Go's")
    parser.add_argument("--no-go", action="store_true", help="skip the Go comparison")
    args = parser.parse_args(argv)
    rng = random.Random(20261129)
    pairs = [(rng.choice(CONSTRAINTS), rng.choice(VERSIONS)) for _ in range(args.checks)]
    go_run = None if args.no_go else _go_runner(pairs)
    ours: dict[str, float] = {}
    go: dict[str, float] = {}
    ratios: dict[str, list[float]] = {k: [] for k in LABELS}
    matched = 0
    for _ in range(max(1, args.rounds)):  # alternately, so that load falls on both alike
        rates, matched = _ours(pairs)
        ours = {k: max(v, ours.get(k, 0.0)) for k, v in rates.items()}
        if go_run is not None:
            figures = go_run()
            go = {k: max(float(figures[k]), go.get(k, 0.0)) for k in LABELS}
            for k in LABELS:
                ratios[k].append(rates[k] / float(figures[k]))
    n = len(pairs)
    print(
        f"python {sys.version.split()[0]}; {n} checks over {len(CONSTRAINTS)} constraints"
        f" x {len(VERSIONS)} versions ({matched} matched); best of {args.rounds} rounds"
    )
    for key, label in OUR_LABELS.items():
        print(f"{label:47}: {ours[key]:12,.0f} {'parses' if 'parses' in key else 'checks'}/s")
    _peer(pairs)
    if not args.no_go:
        _against_go(ours, go or None, ratios)
    print(f"load average: {os.getloadavg()[0]:.2f}")
    return 0


OUR_LABELS = {
    "warm_checks": "warm checks (pre-parsed constraint and version)",
    "string_checks": "string checks (pre-parsed constraint, cached)",
    "cold_checks": "cold checks (parse both every time, no cache)",
    "constraint_parses": "constraint parses (uncached)",
    "version_parses": "version parses (uncached)",
}
GO_DIR = Path(__file__).resolve().parent / "versions_go"
SEMVER = "github.com/Masterminds/semver/v3"
SEMVER_VERSION = "v3.2.0"
# the last measured Go figures (docs/performance.md, Version constraints): printed, marked as
# not measured, when this machine has no Go toolchain
RECORDED_WHEN = "2026-12-01 17:08 UTC (go1.19.8, semver v3.2.0, best of 7, load 1.1-1.3)"
RECORDED_GO = {
    "version_parses": 957_317.0,
    "constraint_parses": 104_108.0,
    "warm_checks": 1_219_523.0,
    "cold_checks": 67_058.0,
}
LABELS = {
    "version_parses": "version parses/s",
    "constraint_parses": "constraint parses/s",
    "warm_checks": "warm checks/s",
    "cold_checks": "cold checks/s",
}


def _go_runner(pairs: list[tuple[str, str]]) -> Callable[[], dict[str, Any]] | None:
    """Build bench/versions_go for the mix; a function that runs it once (its rates, best
    of 3 each). None when there is no Go toolchain or the build fails."""
    go = shutil.which("go")
    if go is None:
        return None
    build = Path(tempfile.mkdtemp(prefix="versions-go-"))
    atexit.register(shutil.rmtree, build, True)
    shutil.copy(GO_DIR / "main.go", build / "main.go")
    mod = f"module versionsbench\n\ngo 1.19\n\nrequire {SEMVER} {SEMVER_VERSION}\n"
    env = dict(os.environ)
    source = os.environ.get("SEMVER_SRC")
    if source:  # a source directory (e.g. a distribution's package), used offline
        mod += f"\nreplace {SEMVER} => {source}\n"
        env.update(GOFLAGS="-mod=mod", GOPROXY="off")
    (build / "go.mod").write_text(mod, encoding="utf-8")
    binary = build / "versions_go"
    built = subprocess.run(
        [go, "build", "-o", str(binary), "."], cwd=build, env=env, capture_output=True, text=True
    )
    if built.returncode != 0:
        print(f"go build failed, no Go figure:\n{built.stderr.strip()}")
        return None
    index_c = {c: i for i, c in enumerate(CONSTRAINTS)}
    index_v = {v: i for i, v in enumerate(VERSIONS)}
    pairs_ix = [[index_c[c], index_v[v]] for c, v in pairs]
    mix = {"constraints": CONSTRAINTS, "versions": VERSIONS, "pairs": pairs_ix, "rounds": 3}
    (build / "mix.json").write_text(json.dumps(mix), encoding="utf-8")
    version = subprocess.run([go, "version"], capture_output=True, text=True).stdout.strip()
    where = f" from {source}" if source else ""
    said: list[bool] = []

    def run() -> dict[str, Any]:
        ran = subprocess.run(
            [str(binary), str(build / "mix.json")], capture_output=True, text=True, check=True
        )
        figures: dict[str, Any] = json.loads(ran.stdout)
        if not said:
            said.append(True)
            print(
                f"Go: {version}; {SEMVER} {SEMVER_VERSION}{where}; it could not parse "
                f"{figures['unparsed_constraints']} constraints and "
                f"{figures['unparsed_versions']} versions of the mix "
                f"({figures['matched']} checks matched)"
            )
        return figures

    return run


def _against_go(
    ours: dict[str, float], measured: dict[str, float] | None, ratios: dict[str, list[float]]
) -> None:
    """Each rate against Go's: the best of each, and the median (and range) of the ratios
    of the rounds, each round's figures taken one right after the other."""
    figures = measured
    if figures is None:
        figures = RECORDED_GO
        print(f"Go not measured in this run (no Go toolchain): recorded figures of {RECORDED_WHEN}")
    for key, label in LABELS.items():
        go = figures[key]
        line = f"{label:20}: upgradeplan {ours[key]:12,.0f}   Go {go:12,.0f}"
        line += f"   best/best {ours[key] / go:.2f}"
        if ratios.get(key):
            r = sorted(ratios[key])
            line += f"; per round median {statistics.median(r):.2f} ({r[0]:.2f}-{r[-1]:.2f})"
        print(line)


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
