"""The console script: ``--version``, ``--help`` and every command go through click, and the
process ends with the command's exit code and its whole output."""

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


def _run(args: list[str], columns: int = 80) -> str:
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run(
        [sys.executable, "-m", "upgradeplan", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return proc.stdout


def _click_help(columns: int) -> str:
    """``upgradeplan --help`` straight through click (the CLI's own entry point)."""
    code = "import sys; sys.argv[0] = 'upgradeplan'; from upgradeplan.cli import main; main()"
    env = {**os.environ, "COLUMNS": str(columns)}
    proc = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, env=env, check=True
    )
    return proc.stdout


def test_version_is_what_click_prints() -> None:
    out = _run(["--version"])
    assert out == f"upgradeplan {__version__}\n"
    assert CliRunner().invoke(cli, ["--version"]).stdout == out


@pytest.mark.parametrize("columns", [60, 100])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_what_click_renders(columns: int, flag: str) -> None:
    assert _run([flag], columns) == _click_help(columns)


def test_the_kubectl_plugin_name_is_in_its_usage(tmp_path: Path) -> None:
    plugin = tmp_path / "kubectl-upgradeplan"
    plugin.write_text(f"#!{sys.executable}\nfrom upgradeplan.__main__ import main\nmain()\n")
    plugin.chmod(0o755)
    proc = subprocess.run([str(plugin), "--help"], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("Usage: kubectl upgradeplan [OPTIONS] COMMAND [ARGS]...")


# --------------------------------------------------------------------------- the exit


def _script(args: list[str], out: Path, err: Path) -> int:
    """The console script's exit code; its stdout and stderr go to the files ``out``, ``err``."""
    with out.open("wb") as stdout, err.open("wb") as stderr:
        argv = [sys.executable, "-m", "upgradeplan", *args]
        return subprocess.run(argv, stdout=stdout, stderr=stderr).returncode


def _through_click(args: list[str]) -> tuple[int, str, str]:
    """The same command through cli.main."""
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
    assert _script(args, tmp_path / "out", tmp_path / "err") == code
    assert (tmp_path / "out").read_text() == out
    assert (tmp_path / "err").read_text() == err
