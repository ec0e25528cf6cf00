"""Benchmark: `upgradeplan diagnose` on a 50 MB paste and on a pattern-bait paste.

The large paste is helm-controller's JSON log lines for 400 releases, `kubectl get events`
rows and `kubectl get -o yaml` conditions, repeated to 50 MB, with a drift event (a message
over two lines) near the end; it is fed once as a FILE and once on stdin through a pipe. The
failing paste is 50 MB of distinct helm-controller error lines each holding several symptoms'
words (the worst case for matching: every message is looked at, none repeats another). The
bait paste (1.8 MB) is what made backtracking patterns hang: long runs of quoted keys that
never end in "not allowed", a run of one letter, an unclosed quote over many lines. Each run
is a fresh process of the installed code (`python -m upgradeplan diagnose … -o json`); the
wall time, the CPU time (user + system) and the peak resident memory of the child (wait4's
ru_utime, ru_stime, ru_maxrss) are printed, median (and max) over the rounds. The targets:
under 5 s for 50 MB with bounded memory, under 1 s for the bait.

    python bench/diagnose.py [--rounds 5] [--megabytes 50]
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

JSON_LINE = (
    '{{"level":"info","ts":"2026-11-30T10:{m:02d}:{s:02d}.{n:03d}Z","msg":"release in-sync with '
    'desired state","controller":"helmrelease","controllerGroup":"helm.toolkit.fluxcd.io",'
    '"controllerKind":"HelmRelease","HelmRelease":{{"name":"app-{r}","namespace":"apps"}},'
    '"namespace":"apps","name":"app-{r}","reconcileID":"5d0f7c1e-2b1a-4c8e-9d1f-{n:012d}"}}\n'
)
EVENT = (
    "apps   {m}m   Normal   ReconciliationSucceeded   helmrelease/app-{r}   "
    "Release reconciliation succeeded\n"
)
CONDITION = (
    '  - lastTransitionTime: "2026-11-30T10:00:00Z"\n'
    "    message: 'Helm upgrade succeeded for release apps/app-{r}.v{n} with chart\n"
    "      app@1.{r}.0'\n"
    "    reason: UpgradeSucceeded\n"
)
DRIFT = (
    "flux-giantswarm   2m   Warning   DriftDetected   helmrelease/kagent   Cluster state of "
    "release flux-giantswarm/kagent.v3 has drifted from the desired state:\n"
    "Harness/kagent/kagent removed\n"
)


def large(path: Path, megabytes: int) -> None:
    target = megabytes * 1024 * 1024
    block = []
    for n in range(400):
        block.append(JSON_LINE.format(m=n % 60, s=n % 60, n=n, r=n))
        if n % 4 == 0:
            block.append(EVENT.format(m=n % 60, r=n))
        if n % 10 == 0:
            block.append(CONDITION.format(r=n, n=n))
    chunk = "".join(block).encode()
    written = 0
    with path.open("wb") as fh:
        while written + len(chunk) < target - 4096:
            fh.write(chunk)
            written += len(chunk)
        fh.write(DRIFT.encode())
        fh.write(chunk[: max(0, target - written - len(DRIFT))])


ERROR_LINE = (
    '{{"level":"error","ts":"2026-11-30T10:{m:02d}:{s:02d}.{n:03d}Z","msg":"Reconciler error",'
    '"controller":"helmrelease","controllerGroup":"helm.toolkit.fluxcd.io","controllerKind":'
    '"HelmRelease","HelmRelease":{{"name":"app-{r}","namespace":"apps"}},"namespace":"apps",'
    '"name":"app-{r}","reconcileID":"{n:036d}","error":"Helm upgrade failed for release '
    "apps/app-{r} with chart app@1.{r}.0: values don't meet the specifications of the "
    "schema(s) in the following chart(s):\\napp-{r}:\\n- at '': additional properties "
    "'podAnnotations', 'crd' not allowed\\nOOMKilled dial tcp 10.0.0.1:443: i/o timeout "
    'RetriesExceeded"}}\n'
)


def failing(path: Path, megabytes: int) -> None:
    """Every line a distinct failure whose words are symptoms' (generic ones): the worst case
    for the matching, where no message can be skipped and none repeats another."""
    target = megabytes * 1024 * 1024
    written = n = 0
    with path.open("wb") as fh:
        while written < target:
            line = ERROR_LINE.format(m=n % 60, s=n % 60, n=n, r=n).encode()
            fh.write(line)
            written += len(line)
            n += 1


def bait(path: Path) -> None:
    parts = []
    for _ in range(4):
        parts.append("additional properties " + "'podAnnotations', " * 15000 + "\n")
        parts.append("a" * 100000 + "!\n")
        parts.append("  message: 'Cluster state of release " + "x " * 20000 + "\n")
        parts.append("dial tcp " + "1" * 50000 + "\n")
    path.write_text("".join(parts))


def run(args: list[str], stdin: Path | None = None) -> tuple[float, float, int, dict[str, object]]:
    """(wall seconds, CPU seconds, peak RSS in KiB, the JSON output) of one diagnose process."""
    cmd = [sys.executable, "-m", "upgradeplan", "diagnose", *args, "-o", "json"]
    fh = stdin.open("rb") if stdin is not None else subprocess.DEVNULL
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read() if proc.stdout is not None else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if stdin is not None:
        fh.close()  # type: ignore[union-attr]
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode() if proc.stderr is not None else ""
        raise SystemExit(f"diagnose exited {proc.returncode}: {err}")
    doc: dict[str, object] = json.loads(out)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--megabytes", type=int, default=50)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big, baited = Path(tmp) / "big.log", Path(tmp) / "bait.txt"
        hot = Path(tmp) / "failing.log"
        large(big, opts.megabytes)
        failing(hot, opts.megabytes)
        bait(baited)
        cases = {
            f"{opts.megabytes} MB FILE": (lambda: run([str(big)])),
            f"{opts.megabytes} MB stdin": (lambda: run([], stdin=big)),
            f"{opts.megabytes} MB failing FILE": (lambda: run([str(hot)])),
            "bait FILE": (lambda: run([str(baited)])),
            "empty stdin (start-up)": (lambda: run([], stdin=Path(os.devnull))),
        }
        print(
            f"paste {big.stat().st_size / 1e6:.1f} MB, bait {baited.stat().st_size / 1e6:.1f} MB,"
            f" {opts.rounds} rounds each (alternating)"
        )
        walls: dict[str, list[float]] = {k: [] for k in cases}
        rss: dict[str, list[int]] = {k: [] for k in cases}
        cpu: dict[str, list[float]] = {k: [] for k in cases}
        first: dict[str, list[str]] = {}
        for _ in range(opts.rounds):
            for name, case in cases.items():
                wall, used, peak, doc = case()
                walls[name].append(wall)
                cpu[name].append(used)
                rss[name].append(peak)
                matches = doc.get("matches")
                if isinstance(matches, list):
                    first[name] = [str(m["hazard"]) for m in matches[:1]]
        for name in cases:
            print(
                f"{name:24s} wall median {statistics.median(walls[name]):.2f} s "
                f"(max {max(walls[name]):.2f} s), CPU median {statistics.median(cpu[name]):.2f} s"
                f", peak RSS median "
                f"{statistics.median(rss[name]) / 1024:.0f} MiB "
                f"(max {max(rss[name]) / 1024:.0f} MiB), first match {first.get(name, [])}"
            )


if __name__ == "__main__":
    main()
