"""upgradeplan.compiled: record classes' __init__ and regular expressions' programs kept between
console runs, never trusted."""

from __future__ import annotations
import __future__

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from upgradeplan import compiled

if TYPE_CHECKING:
    from typing import Any

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


def _run(xdg: Path, mode: str, script: str = RUN) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(xdg)}
    env.pop("UPGRADEPLAN_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-c", script, mode], capture_output=True, text=True, env=env, check=False
    )


def _files(xdg: Path, prefix: str = "inits-") -> list[Path]:
    return sorted((xdg / "upgradeplan").glob(f"{prefix}*.marshal"))


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


def _damage(kept: Path, damage: str, magic: bytes) -> None:
    """Spoil the kept file as ``damage`` says: a flipped byte, cut short, a payload that is not
    the hash's, or writable by others."""
    blob = kept.read_bytes()
    if damage == "flip":
        kept.write_bytes(blob[:-20] + bytes([blob[-20] ^ 0xFF]) + blob[-19:])
    elif damage == "truncate":
        kept.write_bytes(blob[: len(blob) // 2])
    elif damage == "garbage":
        kept.write_bytes(magic + b"\x00" * 64)
    else:
        kept.chmod(0o666)  # others could have written it: not read


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "shared"])
def test_a_damaged_or_shared_file_is_ignored_and_rewritten(tmp_path: Path, damage: str) -> None:
    assert _run(tmp_path, "compile").returncode == 0
    (kept,) = _files(tmp_path)
    _damage(kept, damage, compiled.MAGIC)
    refused = _run(tmp_path, "kept")
    assert refused.returncode != 0 and "compiled again" in refused.stderr
    kept.chmod(0o600)
    redone = _run(tmp_path, "compile")  # compiles, and writes the file again
    assert redone.returncode == 0 and redone.stdout.startswith("Rec(a=1")
    assert _run(tmp_path, "kept").returncode == 0


def test_the_written_out_inits_are_generated_as_the_package_is_now() -> None:
    """upgradeplan/inits.py is what `python -m upgradeplan.compiled` writes for today's classes.

    A stale file is only slower (a class whose source changed is compiled as before, and the
    test below still holds), so a change to a record class does not fail here: it warns, and
    the file is regenerated with that command."""
    fresh = subprocess.run(
        [sys.executable, "-c", "from upgradeplan.compiled import generate; print(generate())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert fresh.startswith('"""The ``__init__`` of every') and "\nCODE = {\n" in fresh
    shipped = (Path(compiled.__file__).parent / "inits.py").read_text(encoding="utf-8")
    if fresh != shipped + "\n":
        warnings.warn(
            "upgradeplan/inits.py is stale: run `python -m upgradeplan.compiled`", stacklevel=1
        )


SAME = (  # all but the line table: the written-out body is on one line
    *("co_code", "co_consts", "co_names", "co_varnames", "co_argcount", "co_posonlyargcount"),
    *("co_kwonlyargcount", "co_flags", "co_name", "co_qualname", "co_filename", "co_freevars"),
    *("co_cellvars", "co_stacksize", "co_exceptiontable", "co_nlocals"),
)
# compiled.code compiles with the future flags of upgradeplan/compiled.py
FLAGS = __future__.annotations.compiler_flag


def test_each_written_out_init_is_the_code_compile_gives() -> None:
    from types import CodeType, FunctionType

    from upgradeplan.inits import CODE

    assert len(CODE) > 50
    for key, maker in CODE.items():
        filename, _, source = key.partition("\0")
        wanted = compile(source, filename, "exec", FLAGS, True)
        (want,) = [c for c in wanted.co_consts if type(c) is CodeType]
        (got,) = [
            c for c in compiled.as_module_code(maker, filename).co_consts if type(c) is CodeType
        ]
        for attr in SAME:
            assert getattr(got, attr) == getattr(want, attr), (filename, attr)
        defaults = {"_set": object.__setattr__, "_FACTORY": object()}
        for i in range(source.count(",") + 1):
            defaults[f"_d{i}"] = defaults[f"_f{i}"] = i
        mine, theirs = dict(defaults), dict(defaults)
        exec(compiled.as_module_code(maker, filename), mine)
        exec(compile(source, filename, "exec", FLAGS, True), theirs)
        made, compiled_ = mine["__init__"], theirs["__init__"]
        assert isinstance(made, FunctionType) and isinstance(compiled_, FunctionType)
        assert made.__defaults__ == compiled_.__defaults__, filename
        assert made.__annotations__ == compiled_.__annotations__, filename
        assert made.__globals__ is mine, filename


def test_a_first_run_compiles_no_init_of_the_package(tmp_path: Path) -> None:
    """With an empty cache directory, the console script's check (the bundled knowledge loaded
    from its YAML: every knowledge class built) compiles no record class's __init__."""
    run = """
import sys
from upgradeplan import __main__, compiled

def compile(source, filename, mode):
    raise SystemExit(f"compiled {filename}")

compiled.compile = compile
sys.argv = ["upgradeplan", "check", "--to", "agent-platform=4.8.0",
            "--installed", "agent-platform=4.7.18", "--fact", "kubernetes=1.35.0"]
__main__.main()
"""
    done = _run(tmp_path, "first", run)  # (the script sets its own sys.argv)
    assert done.returncode in (0, 3, 4) and "compiled" not in done.stderr, done.stderr
    assert "agent-platform" in done.stdout
    assert not _files(tmp_path)  # nothing compiled, nothing kept
    assert list((tmp_path / "upgradeplan").glob("kb-*.pickle"))  # the knowledge was loaded


PATTERNS = """
import re, sys
from upgradeplan import compiled, usercache

usercache.defer_writes()
compiled.keep_between_runs()
if sys.argv[1] == "kept":  # any parsing now is a miss of the kept programs

    def parse(*args, **kwargs):
        raise SystemExit("parsed again")

    re._parser.parse = parse
made = [
    re.compile(r"(?P<major>[0-9]+)\\.([0-9]+)(?:-(?P<pre>[a-z]+))?$"),
    re.compile(rb"a+b", re.I),
    re.compile("x | y # either", re.M | re.X),
]
print([(p.pattern, p.flags, p.groups, dict(p.groupindex)) for p in made])
print(made[0].match("1.22-rc").groupdict(), bool(made[1].match(b"AAb")), made[2].findall("xzy"))
usercache.run_later()
"""


def _run_patterns(xdg: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return _run(xdg, mode, PATTERNS)


def _pattern_files(xdg: Path) -> list[Path]:
    return _files(xdg, "patterns-")


def test_the_console_script_keeps_regular_expression_programs_between_runs(
    tmp_path: Path,
) -> None:
    first = _run_patterns(tmp_path, "compile")
    assert first.returncode == 0, first.stderr
    assert "'major': 1" in first.stdout and "{'major': '1', 'pre': 'rc'} True ['x', 'y']" in (
        first.stdout
    )
    (kept,) = _pattern_files(tmp_path)
    assert kept.stat().st_mode & 0o777 == 0o600
    again = _run_patterns(tmp_path, "kept")  # nothing parsed: the same patterns from the file
    assert (again.returncode, again.stdout) == (0, first.stdout), again.stderr


def test_each_kept_program_makes_the_pattern_compiling_makes(tmp_path: Path) -> None:
    import importlib

    compiler: Any = importlib.import_module("re._compiler")
    assert _run_patterns(tmp_path, "compile").returncode == 0
    (kept,) = _pattern_files(tmp_path)
    table = compiled._read_patterns(str(kept))
    assert len(table) == 3
    engine = compiler._sre
    for (pattern, flags), args in table.items():
        fresh = compiler.compile(pattern, flags)
        made = engine.compile(pattern, *args)
        assert made == fresh and (made.flags, made.groups) == (fresh.flags, fresh.groups)
        assert made.groupindex == fresh.groupindex


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "shared"])
def test_a_damaged_or_shared_patterns_file_is_ignored_and_rewritten(
    tmp_path: Path, damage: str
) -> None:
    assert _run_patterns(tmp_path, "compile").returncode == 0
    (kept,) = _pattern_files(tmp_path)
    _damage(kept, damage, compiled.PATTERNS_MAGIC)
    refused = _run_patterns(tmp_path, "kept")
    assert refused.returncode != 0 and "parsed again" in refused.stderr
    kept.chmod(0o600)
    assert _run_patterns(tmp_path, "compile").returncode == 0  # compiles, writes it again
    assert _run_patterns(tmp_path, "kept").returncode == 0


def test_a_kept_program_the_engine_refuses_is_compiled_afresh(tmp_path: Path) -> None:
    """A well-formed file whose program is not one (written by other code) is never used."""
    import marshal

    from upgradeplan import usercache

    assert _run_patterns(tmp_path, "compile").returncode == 0
    (kept,) = _pattern_files(tmp_path)
    entries = [(p, f, (a[0], [999999] * len(a[1]), *a[2:])) for p, f, a in _entries(kept)]
    payload = marshal.dumps(entries)
    kept.write_bytes(compiled.PATTERNS_MAGIC + usercache.digest(payload) + payload)
    again = _run_patterns(tmp_path, "compile")
    assert again.returncode == 0 and "{'major': '1', 'pre': 'rc'}" in again.stdout, again.stderr
    assert _run_patterns(tmp_path, "kept").returncode == 0  # rewritten with the real programs


def _entries(kept: Path) -> list[tuple[str | bytes, int, tuple[Any, ...]]]:
    return [(p, f, a) for (p, f), a in compiled._read_patterns(str(kept)).items()]
