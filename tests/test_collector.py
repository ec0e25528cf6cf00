"""Freezing after a pause: only in a one-shot console command, never for a library caller or
``fleet`` (where what a read built becomes garbage and must still be collected)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

from support.scenarios import S1_STATED

from upgradeplan import api, collector

FIXTURES = Path(__file__).resolve().parent / "fixtures"

# The console script with its exit replaced: prints how many objects are frozen at the end.
_CONSOLE = (
    "import gc, sys; from upgradeplan import __main__ as m; "
    "m.end = lambda code: print('frozen', gc.get_freeze_count()); "
    "sys.argv[0] = 'upgradeplan'; m.main()"
)


def _frozen_by_console(args: list[str], cache: Path) -> int:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-c", _CONSOLE, *args], capture_output=True, text=True, env=env
    )
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("frozen "), proc.stdout + proc.stderr
    return int(last.split()[1])


def test_a_library_caller_never_has_objects_frozen() -> None:
    before = gc.get_freeze_count()
    assert api.load_kb() is not None
    assert gc.get_freeze_count() == before
    with collector.paused():
        kept = [{"n": n} for n in range(1000)]
    assert gc.get_freeze_count() == before and gc.isenabled() and kept


def test_only_the_pause_that_turns_the_collector_on_again_freezes() -> None:
    collector.freeze_on_resume(True)
    try:
        with collector.paused():
            with collector.paused():
                kept = [{"n": n} for n in range(1000)]
            assert not gc.isenabled() and gc.get_freeze_count() == 0
        assert gc.isenabled() and gc.get_freeze_count() >= len(kept)
    finally:
        collector.freeze_on_resume(False)
        gc.unfreeze()
    assert gc.get_freeze_count() == 0


def test_a_console_check_freezes_what_it_read(tmp_path: Path) -> None:
    args = ["check", "--to", "agent-platform=4.8.0", *S1_STATED]
    assert _frozen_by_console(args, tmp_path) > 10_000


def test_the_fleet_command_never_freezes(tmp_path: Path) -> None:
    tree = FIXTURES / "gitops" / "s1"
    args = ["fleet", "--gitops", str(tree), "--to", "agent-platform=4.8.1", "-j", "1"]
    assert _frozen_by_console(args, tmp_path) == 0


def test_only_a_one_shot_command_keeps_a_read_until_the_exit() -> None:
    import weakref

    class Read:
        pass

    read = Read()
    gone = weakref.ref(read)
    collector.keep_until_exit(read)  # a library caller: nothing kept
    del read
    assert gone() is None
    collector.freeze_on_resume(True)
    try:
        read = Read()
        kept = weakref.ref(read)
        collector.keep_until_exit(read)
        del read
        assert kept() is not None
    finally:
        collector.freeze_on_resume(False)
        collector._kept.clear()
    assert kept() is None
