"""Start-up cost of the commands users wait on, as ratios to a bare interpreter start.

Alternating runs (round-robin, so load on a shared machine hits every command alike) of
``python -c pass`` (the interpreter of the venv the console script lives in) and, through the
installed console script:

- ``check`` of reference scenario 1 on stated facts (4.7.18 -> 4.8.0);
- the same with ``XDG_CACHE_HOME`` pointed at an emptied directory (``check-cold``: the same
  as ``check`` for an install that keeps no cache; an earlier install kept one there);
- ``--help`` and ``--version``.

Run from the repository root against a plain install, e.g.
``/tmp/perf-venv/bin/python bench/startup.py --rounds 21``. Targets (issue 29): check and
cold check <= 8x, --help <= 6x (--version is timed for information). Wall-clock medians and
their ratios are the targets; the CPU time of each run (user + system) is printed beside them,
the steadier figure on a machine other work keeps busy.

``--before SCRIPT`` (the console script of another plain install, e.g. of the commit before a
change) runs its commands in the same rounds, alternately with this install's, so a
before/after comparison sees the same load; its rows are marked ``before``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.scenarios import S1_STATED  # type: ignore[import-not-found,unused-ignore]

S1 = ["check", "--to", "agent-platform=4.8.0", *S1_STATED]  # reference scenario 1, stated
TARGETS = {"check": 8.0, "check-cold": 8.0, "--help": 6.0}


def _script() -> str:
    found = Path(sys.executable).with_name("upgradeplan")
    if found.exists():
        return str(found)
    which = shutil.which("upgradeplan")
    if which is None:
        sys.exit("bench/startup.py: no upgradeplan console script next to this python")
    return which


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, from wait4) of one run."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code not in (0, 3, 4):
        sys.exit(f"{' '.join(argv[:3])}…: exit {code}: {err.decode()[:400]}")
    return took, usage.ru_utime + usage.ru_stime


Commands = dict[str, tuple[list[str], dict[str, str], str | None]]  # argv, env, dir emptied


def _commands(script: str, tmp: str, label: str) -> Commands:
    """The four timed commands of one install (warm and cold caches under ``tmp``)."""
    warm_env = {**os.environ, "XDG_CACHE_HOME": os.path.join(tmp, f"warm{label}")}
    cold_dir = os.path.join(tmp, f"cold{label}")
    cold_env = {**os.environ, "XDG_CACHE_HOME": cold_dir}
    _run([script, *S1], warm_env)  # fill the warm cache
    return {
        f"check{label}": ([script, *S1], warm_env, None),
        f"check-cold{label}": ([script, *S1], cold_env, cold_dir),
        f"--help{label}": ([script, "--help"], warm_env, None),
        f"--version{label}": ([script, "--version"], warm_env, None),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--before", metavar="SCRIPT", help="another install's console script")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        commands: Commands = {"python -c pass": ([sys.executable, "-c", "pass"], {}, None)}
        commands.update(_commands(_script(), tmp, ""))
        if args.before:
            commands.update(_commands(args.before, tmp, " before"))
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (argv, env, emptied) in commands.items():
                if emptied is not None:
                    shutil.rmtree(emptied, ignore_errors=True)
                wall, cpu = _run(argv, env or dict(os.environ))
                times[name].append(wall)
                cpus[name].append(cpu)
    base = statistics.median(times["python -c pass"])
    cpu_base = statistics.median(cpus["python -c pass"])
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'command':<23} {'median':>9} {'ratio':>6} {'CPU':>9} {'ratio':>6}  target (wall)")
    for name, samples in times.items():
        med, cpu = statistics.median(samples), statistics.median(cpus[name])
        target = TARGETS.get(name)
        verdict = (
            "" if target is None else f"<= {target:.0f}x {'OK' if med / base <= target else 'OVER'}"
        )
        print(
            f"{name:<23} {1000 * med:7.1f}ms {med / base:6.2f} {1000 * cpu:7.1f}ms "
            f"{cpu / cpu_base:6.2f}  {verdict}"
        )


if __name__ == "__main__":
    main()
