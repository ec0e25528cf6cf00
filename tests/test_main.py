"""The console script's fast answers: ``--version`` and ``--help`` as click gives them, without
importing click once the help text has been rendered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.scenarios import S1_STATED

from upgradeplan import __version__
from upgradeplan.cli import cli


def _run(
    args: list[str], cache: Path, columns: int, *, importtime: bool = False
) -> tuple[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": str(columns)}
    env.pop("UPGRADEPLAN_NO_CACHE", None)
    flags = ["-X", "importtime"] if importtime else []
    proc = subprocess.run(
        [sys.executable, *flags, "-m", "upgradeplan", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return proc.stdout, proc.stderr


def _click_help(columns: int) -> str:
    """``upgradeplan --help`` straight through click (the CLI's own entry point)."""
    code = "import sys; sys.argv[0] = 'upgradeplan'; from upgradeplan.cli import main; main()"
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, env=env, check=True
    )
    return proc.stdout


def test_version_is_what_click_prints(tmp_path: Path) -> None:
    out, _ = _run(["--version"], tmp_path, 80)
    assert out == f"upgradeplan {__version__}\n"
    assert CliRunner().invoke(cli, ["--version"]).stdout == out


@pytest.mark.parametrize("columns", [60, 100])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_what_click_renders_cold_and_warm(tmp_path: Path, columns: int, flag: str) -> None:
    expected = _click_help(columns)
    cold, _ = _run([flag], tmp_path, columns)
    warm, imports = _run([flag], tmp_path, columns, importtime=True)
    assert cold == warm == expected
    assert " click" not in imports and "upgradeplan.cli" not in imports
    (entry,) = (tmp_path / "upgradeplan").glob("help-*.txt")
    assert entry.stat().st_mode & 0o777 == 0o600


def test_another_width_is_rendered_again(tmp_path: Path) -> None:
    narrow, _ = _run(["--help"], tmp_path, 60)
    wide, _ = _run(["--help"], tmp_path, 100)
    assert narrow != wide
    assert len(list((tmp_path / "upgradeplan").glob("help-*.txt"))) == 2


def test_a_damaged_or_foreign_help_entry_is_not_shown(tmp_path: Path) -> None:
    expected, _ = _run(["--help"], tmp_path, 80)
    (entry,) = (tmp_path / "upgradeplan").glob("help-*.txt")
    entry.write_bytes(b"\xff\xfe not text")
    assert _run(["--help"], tmp_path, 80)[0] == expected
    assert entry.read_text() == expected  # rewritten
    entry.write_text("Usage: someone else's text\n")
    entry.chmod(0o666)  # writable by others: never read
    assert _run(["--help"], tmp_path, 80)[0] == expected


def test_the_kubectl_plugin_name_is_in_its_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from upgradeplan import __main__ as entry

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    text = entry.help_text("kubectl upgradeplan")
    assert text.startswith("Usage: kubectl upgradeplan [OPTIONS] COMMAND [ARGS]...")
    assert entry.help_text("kubectl upgradeplan") == text  # the cached one
    assert entry.help_text("upgradeplan") != text


# --------------------------------------------------------------------------- the exit


def _script(args: list[str], cache: Path, out: Path, err: Path) -> int:
    """The console script's exit code; its stdout and stderr go to the files ``out``, ``err``."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    with out.open("wb") as stdout, err.open("wb") as stderr:
        argv = [sys.executable, "-m", "upgradeplan", *args]
        return subprocess.run(argv, stdout=stdout, stderr=stderr, env=env).returncode


def _through_click(args: list[str]) -> tuple[int, str, str]:
    """The same command through cli.main (sys.exit, the interpreter's teardown)."""
    code = "import sys; sys.argv[0] = 'upgradeplan'; from upgradeplan.cli import main; main()"
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--to", "agent-platform=4.8.0", *S1_STATED],  # exit 3
        ["check", "--to", "agent-platform=4.8.0", *S1_STATED, "-o", "json"],
        ["plan", "--to", "agent-platform=4.8.1", *S1_STATED, "-o", "markdown"],
        ["check", "--to", "agent-platform=9.9.9", *S1_STATED],  # bad input: exit 2, stderr
        ["docs", "upgrade-md"],  # 40 KB, more than a pipe buffer
    ],
)
def test_output_to_a_file_is_complete_and_the_exit_code_unchanged(
    tmp_path: Path, args: list[str]
) -> None:
    code, out, err = _through_click(args)
    assert _script(args, tmp_path / "cache", tmp_path / "out", tmp_path / "err") == code
    assert (tmp_path / "out").read_text() == out
    assert (tmp_path / "err").read_text() == err


def test_the_exit_runs_atexit_functions_and_waits_for_threads() -> None:
    thread = "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
    code = (
        "import atexit, threading, time\n"
        "from upgradeplan.__main__ import end\n"
        "atexit.register(print, 'atexit ran')\n"
        "THREAD"
        "print('partial line', end='')\n"
        "end(4)\n"
    )
    for started, expected in ((thread, "partial linethread done\natexit ran\n"), ("", None)):
        proc = subprocess.run(
            [sys.executable, "-c", code.replace("THREAD", started)], capture_output=True, text=True
        )
        assert proc.returncode == 4
        assert proc.stdout == (expected or "partial lineatexit ran\n")
