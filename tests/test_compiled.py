"""upgradeplan.compiled: record classes' __init__ kept between console runs, never trusted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from upgradeplan import compiled

RUN = """
import sys
from upgradeplan import compiled, usercache

usercache.defer_writes()
compiled.keep_between_runs()
if sys.argv[1] == "kept":  # any compiling now is a miss of the kept code

    def compile(*args, **kwargs):
        raise SystemExit("compiled again")

    compiled.compile = compile
from upgradeplan.frozen import frozen


@frozen
class Rec:
    a: int
    b: str = "x"


print(Rec(1), Rec(2, b="y") == Rec(2, "y"))
usercache.run_later()
"""


def _run(xdg: Path, mode: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg)}
    env.pop("UPGRADEPLAN_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-c", RUN, mode], capture_output=True, text=True, env=env, check=False
    )


def _files(xdg: Path) -> list[Path]:
    return sorted((xdg / "upgradeplan").glob("inits-*.marshal"))


def test_a_library_call_compiles_once_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = "def f(a, b=1):\n    return a + b\n"
    one = compiled.code(source, "<test f>")
    assert compiled.code(source, "<test f>") is one
    scope: dict[str, object] = {}
    exec(one, scope)
    assert scope["f"](1) == 2  # type: ignore[operator]
    assert not (tmp_path / "upgradeplan").exists()


def test_the_console_script_keeps_compiled_code_between_runs(tmp_path: Path) -> None:
    first = _run(tmp_path, "compile")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Rec(a=1, b='x') True\n"
    (kept,) = _files(tmp_path)
    assert kept.stat().st_mode & 0o777 == 0o600
    again = _run(tmp_path, "kept")  # nothing compiled: the same output from the kept code
    assert (again.returncode, again.stdout) == (0, first.stdout), again.stderr


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "shared"])
def test_a_damaged_or_shared_file_is_ignored_and_rewritten(tmp_path: Path, damage: str) -> None:
    assert _run(tmp_path, "compile").returncode == 0
    (kept,) = _files(tmp_path)
    blob = kept.read_bytes()
    if damage == "flip":
        kept.write_bytes(blob[:-20] + bytes([blob[-20] ^ 0xFF]) + blob[-19:])
    elif damage == "truncate":
        kept.write_bytes(blob[: len(blob) // 2])
    elif damage == "garbage":
        kept.write_bytes(compiled.MAGIC + b"\x00" * 64)
    else:
        kept.chmod(0o666)  # others could have written it: not read
    refused = _run(tmp_path, "kept")
    assert refused.returncode != 0 and "compiled again" in refused.stderr
    kept.chmod(0o600)
    redone = _run(tmp_path, "compile")  # compiles, and writes the file again
    assert redone.returncode == 0 and redone.stdout.startswith("Rec(a=1")
    assert _run(tmp_path, "kept").returncode == 0
