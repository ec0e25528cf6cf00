"""The console script's fast path for ``check`` (upgradeplan.commands.fast) against click.

Whatever the fast path takes, click would have parsed to the same settings and values; whatever
it does not, it leaves untouched for click. And what the console script prints is byte for byte
what click's entry point prints, on plain runs and on errors.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.scenarios import S1_STATED

from upgradeplan.cli import cli
from upgradeplan.commands import fast, judging
from upgradeplan.errors import ExitCode

TABLE = fast.build(cli, "upgradeplan")


class Called(BaseException):  # not an Exception: the error boundary lets it through
    """What the check was called with (raised so that nothing runs)."""


def _capture(obj: Any, **values: Any) -> tuple[str, int]:
    raise Called(dict(obj or {}), values)


def _by_click(args: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(settings, values) click calls the check with, or None when it does something else."""
    try:
        cli.main(args=args, prog_name="upgradeplan", standalone_mode=False)
    except Called as called:
        return called.args[0], called.args[1]
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        return None
    return None


def _by_fast(args: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    assert TABLE is not None
    parsed = fast.parse(TABLE, args)
    if parsed is None:
        return None
    _, group_values, values, later = parsed
    obj = judging.root_settings(group_values)
    if obj["debug"] or any(key == "debug" for key, *_ in later):
        return None
    for key, value, multiple, count in later:
        judging.remember(obj, key, value, multiple=multiple, count=count)
    return obj, values


@pytest.fixture(autouse=True)
def _no_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judging, "check", _capture)
    monkeypatch.delenv("UPGRADEPLAN_KB", raising=False)


def test_the_table_is_derived_from_the_click_options() -> None:
    assert TABLE is not None
    check = cli.get_command(click.Context(cli), "check")
    assert check is not None
    names = {o for p in check.params for o in (*p.opts, *p.secondary_opts)}
    assert names | {"-h", "--help"} == {o for rec in TABLE["commands"]["check"] for o in rec[0]}


def test_the_shipped_table_is_the_derived_one() -> None:
    """Regenerate with ``python -m upgradeplan.commands.clidoc --argtable
    upgradeplan/commands/argtable.py`` when an option changed."""
    from upgradeplan.commands import argtable

    assert argtable.TABLE == TABLE
    assert fast.sources_digest() == argtable.SOURCES


def test_a_changed_option_module_is_not_parsed_from_the_shipped_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert fast._read() is not None
    monkeypatch.setattr(fast, "DEFINED_IN", (*fast.DEFINED_IN, "api.py"))
    assert fast._read() is None  # nor kept in the cache yet: click's, which keeps it


PLAIN = [
    ["check", "--to", "agent-platform=4.8.0", *S1_STATED],
    ["check", "--installed", "agent-platform=4.7.18"],
    ["check", "--installed=agent-platform=4.7.18", "--to=4.8.0", "-ojson"],
    ["check", "--installed", "agent-platform=4.7.18", "-o", "sarif", "--fail-on", "never"],
    ["--color", "never", "check", "--installed", "x=1", "--color", "always"],
    ["check", "--no-color", "--installed", "x=1", "--color", "always", "-vv", "-v"],
    ["-v", "check", "--installed", "x=1", "--verbose", "-n", "ns", "--context", "a"],
    ["--context", "a", "check", "--context", "b", "--context", "a", "--installed", "x=1"],
    ["--no-color", "-n", "flux", "check", "--gitops", ".", "--base", "main", "--accept", "h"],
    ["check", "--state", "-", "--snapshot", "s.yaml", "--accept-file", "", "--hold", "p"],
    ["check", "--fact", "", "--fact", "-x", "--fact", "--to", "--pin", "p="],
    ["check"],
]


@pytest.mark.parametrize("args", PLAIN, ids=lambda a: " ".join(a)[:60])
def test_plain_argv_is_taken_and_parsed_as_click_parses_it(args: list[str]) -> None:
    mine = _by_fast(args)
    assert mine is not None, "the fast path should take this"
    assert mine == _by_click(args)


REFUSED = [
    ["check", "--help"],
    ["check", "-h", "--installed", "x=1"],
    ["--help", "check"],
    ["--version", "check"],
    ["check", "--installed"],
    ["check", "--bogus", "x"],
    ["check", "--installed", "x=1", "extra"],
    ["check", "--", "--installed", "x=1"],
    ["check", "-o", "xml", "--installed", "x=1"],
    ["check", "--fail-on=sometimes", "--installed", "x=1"],
    ["check", "--debug", "--installed", "x=1"],
    ["--debug", "check", "--installed", "x=1"],
    ["--kb", "dir", "check", "--installed", "x=1"],
    ["check", "--request-timeout", "3", "--installed", "x=1"],
    ["check", "--gitops", "a", "--gitops", "b"],
    ["check", "--no-color=yes", "--installed", "x=1"],
    ["check", "-vx", "--installed", "x=1"],
    ["check", "-", "--installed", "x=1"],
    ["plan", "--installed", "x=1"],
    ["chek", "--installed", "x=1"],
]


@pytest.mark.parametrize("args", REFUSED, ids=lambda a: " ".join(a)[:60])
def test_what_the_fast_path_does_not_answer_exactly_is_left_to_click(args: list[str]) -> None:
    assert _by_fast(args) is None


def _tokens() -> st.SearchStrategy[str]:
    assert TABLE is not None
    names = sorted({o for rec in TABLE["commands"]["check"] + TABLE["group"] for o in rec[0]})
    values = ["x=1", "agent-platform=4.8.0", "text", "json", "never", "always", "", "-", "--", "a"]
    option = st.sampled_from(names)
    return st.one_of(
        option,
        st.sampled_from(values),
        st.builds(lambda o, v: f"{o}={v}", option, st.sampled_from(values)),
        st.builds(
            lambda s, v: f"{s}{v}",
            st.sampled_from(["-o", "-n", "-v", "-vv"]),
            st.sampled_from(values),
        ),
        st.text(alphabet="-=ovnx", max_size=4),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=st.lists(_tokens(), max_size=4),
    after=st.lists(_tokens(), max_size=8),
)
def test_whatever_the_fast_path_takes_click_parses_the_same(
    before: list[str], after: list[str]
) -> None:
    args = [*before, "check", *after]
    mine = _by_fast(args)
    if mine is not None:
        assert mine == _by_click(args), args


# --------------------------------------------------------------------------- whole runs


def _console(args: list[str], cache: Path, **env: str) -> tuple[int, str, str]:
    full = {**os.environ, "XDG_CACHE_HOME": str(cache), **env}
    full.pop("UPGRADEPLAN_NO_CACHE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "upgradeplan", *args], capture_output=True, text=True, env=full
    )
    return proc.returncode, proc.stdout, proc.stderr


def _click(args: list[str]) -> tuple[int, str, str]:
    code = "import sys; sys.argv[0] = 'upgradeplan'; from upgradeplan.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "UPGRADEPLAN_NO_CACHE": "1"},
    )
    return proc.returncode, proc.stdout, proc.stderr


S1 = ["check", "--to", "agent-platform=4.8.0", *S1_STATED]
RUNS = [
    S1,
    [*S1, "-o", "json"],
    [*S1, "-o", "sarif", "--fail-on", "never"],
    [*S1, "--color", "always"],
    ["check", "--installed", "agent-platform=4.7.18", "--to", "agent-platform=9.9.9"],
    [
        "check",
        "--installed",
        "agent-platform=4.7.18",
        "--to",
        "agent-platform=4.8.0",
        "-o",
        "github",
    ],
    ["check", "--installed", "nosuch=1.0.0", "-o", "sarif"],
    ["check", "--to", "agent-platform=4.8.0"],
    ["check", "--installed", "agent-platform=4.7.18", "--to"],
    ["check", "--installed", "agent-platform=4.7.18", "--too", "4.8.0"],
    ["check", "--installed", "agent-platform=4.7.18", "-o", "xml"],
    ["check", "--state", "does-not-exist.yaml"],
]


def test_the_console_script_answers_as_click_does(tmp_path: Path) -> None:
    for args in RUNS:
        assert _console(args, tmp_path) == _click(args), args


def test_a_check_does_not_import_click(tmp_path: Path) -> None:
    code, _, err = _console(S1, tmp_path, PYTHONPROFILEIMPORTTIME="1")
    assert code == int(ExitCode.HAZARD)
    assert " click" not in err and "upgradeplan.cli" not in err
    code, _, err = _console([*S1, "--debug"], tmp_path, PYTHONPROFILEIMPORTTIME="1")
    assert " click" in err  # --debug: click's, for its traceback


def test_a_damaged_kept_table_is_ignored_and_rewritten(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(fast, "DEFINED_IN", ())  # the shipped table not taken
    fast.keep(cli, "upgradeplan")
    (kept,) = (p for p in (tmp_path / "upgradeplan").iterdir() if p.name.startswith("argv-"))
    assert fast._read() == TABLE
    data = kept.read_bytes()
    kept.write_bytes(data[:-3] + b"xyz")
    assert fast._read() is None
    fast.keep(cli, "upgradeplan")
    assert kept.read_bytes() == data
