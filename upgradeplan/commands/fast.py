"""The console script's fast path: ``check`` with its options parsed without importing click.

Importing click with what it imports is about two and a half interpreter starts, more than an
offline check's own work. The options stay defined once, by the click decorators: when click
has run a command, :func:`keep` derives from them a table of the group's and the command's
options (their strings, destination, kind, choices, defaults as click computed them) and keeps
it in the user cache directory, ``argv-<key>.marshal`` (key: the Python version, the stamp of
the installed code and where click is installed and when it changed; read only when private to
the user and its payload hash checks out, as :mod:`upgradeplan.compiled` keeps code). A later
run parses argv against it (:func:`parse`) and calls what the click command calls
(:func:`upgradeplan.commands.judging.check`), with the same error boundary as the group's.

Only what the table answers exactly is taken here; anything else goes to click, so its
messages and behaviour are what they always were: an unknown option, a missing value, a value
not among an option's choices, a positional argument or ``--``, ``-h``/``--help``,
``--version``, ``--debug`` (its traceback shows click's frames), an option of a type other than
a string, a choice, a flag or a count (``--kb``, ``--request-timeout``), an option's value given
twice where it is not repeatable, an environment variable an option reads, shell completion,
output streams not UTF-8, and every command but ``check``. ``tests/test_commands_fast.py`` holds
the parse to click's on many argv.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from upgradeplan import usercache

MAGIC = b"upgradeplan argv table 1\n"
COMMANDS = ("check",)  # the commands taken here (their function: judging.<name>)

# One option: (option strings, destination, exposed, kind, multiple, choices, global, envvars,
# default). kind: "value" (a string, or one of ``choices``), "flag", "count", or "click" (when
# given, click parses). global: (key, multiple, count) of a global option given after the
# command (global_options.inject), else None.
Record = tuple[
    tuple[str, ...],
    str,
    bool,
    str,
    bool,
    "tuple[str, ...] | None",
    "tuple[str, bool, bool] | None",
    tuple[str, ...],
    Any,
]
Table = dict[str, Any]  # {"group": [Record], "commands": {name: [Record]}}

_STATE: dict[str, bool] = {}  # "missing": the run looked for the table and found none


# --------------------------------------------------------------------------- the fast path


def run(args: Sequence[str]) -> int | None:
    """The exit code of ``args`` run here, or None when click is to run them (nothing done)."""
    if not _plain_streams() or not any(name in args for name in COMMANDS):
        return None
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return None  # shell completion: click's
    table = _read()
    if table is None:
        _STATE["missing"] = True
        return None
    parsed = parse(table, args)
    if parsed is None:
        return None
    name, group_values, values, later = parsed
    from upgradeplan.commands import judging

    obj = judging.root_settings(group_values)
    if obj["debug"] or any(key == "debug" for key, *_ in later):
        return None  # a traceback would show click's frames
    return _invoke(name, obj, values, later)


def parse(
    table: Table, args: Sequence[str]
) -> tuple[str, dict[str, Any], dict[str, Any], list[tuple[str, Any, bool, bool]]] | None:
    """(command, the group's values, the command's values, the global options given after the
    command in click's processing order), or None when click is to parse ``args``."""
    group: list[Record] = table["group"]
    given, rest = _scan(group, args, stop_at_command=True)
    if given is None or not rest or rest[0] not in table["commands"]:
        return None
    name = rest[0]
    records: list[Record] = table["commands"][name]
    cmd_given, left = _scan(records, rest[1:], stop_at_command=False)
    if cmd_given is None or left:
        return None
    group_values = _values(group, given)
    values = _values(records, cmd_given)
    if group_values is None or values is None:
        return None
    later: list[tuple[str, Any, bool, bool]] = []
    for index in cmd_given:  # dicts keep the order options first appeared: click's order
        rec = records[index]
        glob = rec[6]
        if glob is not None:
            later.append((glob[0], values.pop(rec[1]), glob[1], glob[2]))
    for rec in records:
        if not rec[2]:
            values.pop(rec[1], None)
    for rec in group:
        if not rec[2]:
            group_values.pop(rec[1], None)
    return name, group_values, values, later


def _scan(
    records: Sequence[Record], args: Sequence[str], *, stop_at_command: bool
) -> tuple[dict[int, list[Any]] | None, list[str]]:
    """The values given per option (by record index, in the order first given) and the
    arguments after the group's options; None when click is to parse them."""
    names = {opt: i for i, rec in enumerate(records) for opt in rec[0]}
    given: dict[int, list[Any]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--" or arg[:1] != "-" or len(arg) == 1:
            if stop_at_command and arg != "--":
                return given, list(args[i:])
            return None, []
        i += 1
        if arg.startswith("--"):
            opt, eq, explicit = arg.partition("=")
            index = names.get(opt)
            if index is None:
                return None, []
            kind = records[index][3]
            if kind == "value":
                if eq:
                    value = explicit
                elif i < len(args):
                    value, i = args[i], i + 1
                else:
                    return None, []
                given.setdefault(index, []).append(value)
            elif kind in ("flag", "count") and not eq:
                given.setdefault(index, []).append(True)
            else:
                return None, []
            continue
        for at in range(1, len(arg)):  # -v, -vv, -o json, -ojson: as click's short options
            index = names.get(f"-{arg[at]}")
            if index is None:
                return None, []
            kind = records[index][3]
            if kind == "value":
                if at + 1 < len(arg):
                    value = arg[at + 1 :]
                elif i < len(args):
                    value, i = args[i], i + 1
                else:
                    return None, []
                given.setdefault(index, []).append(value)
                break
            if kind not in ("flag", "count"):
                return None, []
            given.setdefault(index, []).append(True)
    return given, []


def _values(records: Sequence[Record], given: Mapping[int, list[Any]]) -> dict[str, Any] | None:
    """Every option's value as click hands it to the command (None: click's to judge)."""
    out: dict[str, Any] = {}
    for index, rec in enumerate(records):
        _, dest, _, kind, multiple, choices, _, envvars, default = rec
        found = given.get(index)
        if found is None:
            if any(os.environ.get(name) for name in envvars):
                return None
            out[dest] = default
            continue
        if kind == "flag":
            out[dest] = True
        elif kind == "count":
            out[dest] = len(found)
        elif multiple:
            if choices is not None and any(v not in choices for v in found):
                return None
            out[dest] = tuple(found)
        else:
            if len(found) > 1 or (choices is not None and found[0] not in choices):
                return None  # given twice: which one counts is click's to say
            out[dest] = found[0]
    return out


def _invoke(
    name: str, obj: dict[str, Any], values: dict[str, Any], later: list[tuple[str, Any, bool, bool]]
) -> int:
    """Run command ``name`` as the group would: its settings, then the one error boundary."""
    from upgradeplan import errors, progress
    from upgradeplan.commands import judging

    progress.install(progress.Reporter(sys.stderr, verbose=obj["verbose"]))
    try:
        for key, value, multiple, count in later:
            judging.remember(obj, key, value, multiple=multiple, count=count)
        return _check(obj, values)
    except errors.UpgradeplanError as exc:
        from upgradeplan.redact import clean  # secrets a reader registered never shown

        _echo(f"upgradeplan: error: {clean(exc.one_line())}\n", err=True)
        return int(exc.exit_code)
    except BrokenPipeError:
        return int(errors.ExitCode.SAFE)
    except Exception as exc:
        _echo(
            f"upgradeplan: unexpected error: {type(exc).__name__}: {exc} "
            "(run with --debug for the traceback)\n",
            err=True,
        )
        return int(errors.ExitCode.ERROR)
    except KeyboardInterrupt:  # as click's main: a blank line, then cli.run's message
        _echo("\n", err=True)
        _echo("upgradeplan: aborted\n", err=True)
        return int(errors.ExitCode.ERROR)
    finally:
        progress.install(None)


def _check(obj: dict[str, Any], values: dict[str, Any]) -> int:
    """What the click command ``check`` does (upgradeplan.commands.check), without click."""
    from upgradeplan import errors
    from upgradeplan.commands import judging

    try:
        text, code = judging.check(obj, **values)
    except errors.UpgradeplanError as exc:
        shown = judging.error_text(values["output"], exc, values)
        if shown is not None:
            _echo(shown)
        raise
    _echo(text, color=judging.use_color(obj))
    return code


def _echo(text: str, *, err: bool = False, color: bool | None = None) -> None:
    """``click.echo(text, nl=False)``: written and flushed; with an escape sequence in it,
    click itself (it strips them unless colour is on)."""
    if "\x1b" in text:
        import click

        click.echo(text, nl=False, err=err, color=color)
        return
    stream = sys.stderr if err else sys.stdout
    stream.write(text)
    stream.flush()


def _plain_streams() -> bool:
    """stdout and stderr are text streams click would write to as they are (UTF-8, POSIX)."""
    if os.name != "posix":
        return False
    import io

    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper):
            return False
        if str(stream.encoding).lower().replace("_", "-") not in ("utf-8", "utf8"):
            return False
    return True


# --------------------------------------------------------------------------- the table


def wanted() -> bool:
    """Whether this run looked for the table and found none (click should keep it)."""
    return bool(_STATE.get("missing"))


def _path() -> str | None:
    from upgradeplan.compiled import kept_path

    return kept_path(
        "argv-",
        lambda: f"{sys.version}\0{usercache.code_stamp()}\0{usercache.module_stamp('click')}",
    )


def _read() -> Table | None:
    """The shipped table when the modules it was derived from are those it was derived from,
    else the one kept in the user cache (derived from this code by an earlier run)."""
    from upgradeplan.commands import argtable

    if sources_digest() == argtable.SOURCES:
        shipped: Table = argtable.TABLE
        return shipped
    path = _path()
    if path is None:
        return None
    from upgradeplan.compiled import load_kept

    value = load_kept(path, MAGIC)
    if not isinstance(value, dict) or not isinstance(value.get("commands"), dict):
        return None
    return value


# The modules whose text defines the options (the group, check's and the shared ones, the
# global options, the --fail-on choices): the shipped table holds their digest.
DEFINED_IN = (
    "cli.py",
    "commands/check.py",
    "commands/gate.py",
    "commands/global_options.py",
    "commands/options.py",
    "results.py",
)


def sources_digest() -> str:
    """A hash of the text of :data:`DEFINED_IN` ("" when one cannot be read)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts: list[bytes] = []
    try:
        for rel in DEFINED_IN:
            with open(os.path.join(package, rel), "rb") as fh:
                data = fh.read()
            parts.append(f"{rel}\0{len(data)}\0".encode())
            parts.append(data)
    except OSError:
        return ""
    h = usercache.hasher(sum(map(len, parts)))
    for part in parts:
        h.update(part)
    return h.hexdigest()


def shipped_source(group: Any) -> str:
    """The text of ``upgradeplan/commands/argtable.py`` for the options of ``group``."""
    table = build(group, "upgradeplan")
    return (
        '"""The option table of :mod:`upgradeplan.commands.fast`, derived from the click\n'
        "definitions: generated by ``python -m upgradeplan.commands.clidoc --argtable\n"
        "upgradeplan/commands/argtable.py``, do not edit (tests/test_commands_fast.py fails when\n"
        "it is stale). Used only while :data:`SOURCES` is the digest of the modules that define\n"
        'the options (:func:`upgradeplan.commands.fast.sources_digest`)."""\n\n'
        "from typing import Any\n\n"
        f"SOURCES = {sources_digest()!r}\n"
        f"TABLE: Any = {table!r}\n"
    )


def keep(group: Any, prog: str) -> None:
    """Derive the table from ``group`` (the click group) and keep it for later runs."""
    path = _path()
    table = build(group, prog)
    if path is None or table is None:
        return
    from upgradeplan.compiled import keep_file

    keep_file(path, MAGIC, table, "argv-")


def build(group: Any, prog: str) -> Table | None:
    """The table of the group's options and of each of :data:`COMMANDS`, as click defines and
    defaults them; None when one of them has something the fast path does not parse."""
    import click

    gctx = group.make_context(prog, list(COMMANDS[:1]))
    group_records = _records(group, gctx, interspersed=False)
    if group_records is None or getattr(group, "chain", False):
        return None
    commands: dict[str, list[Record]] = {}
    for name in COMMANDS:
        cmd = group.get_command(gctx, name)
        if not isinstance(cmd, click.Command) or isinstance(cmd, click.Group):
            return None
        if cmd.no_args_is_help:
            return None
        cctx = cmd.make_context(name, [], parent=gctx)
        records = _records(cmd, cctx, interspersed=True)
        if records is None:
            return None
        commands[name] = records
    return {"group": group_records, "commands": commands}


def _records(command: Any, ctx: Any, *, interspersed: bool) -> list[Record] | None:
    import click
    from click.types import BoolParamType, StringParamType

    if (
        ctx.ignore_unknown_options
        or ctx.allow_extra_args is interspersed  # a group's extra arguments: the command's
        or ctx.token_normalize_func is not None
        or ctx.default_map
        or ctx.auto_envvar_prefix is not None
        or ctx.allow_interspersed_args is not interspersed
    ):
        return None
    records: list[Record] = []
    for p in command.get_params(ctx):
        if not isinstance(p, click.Option) or p.prompt is not None or p.required:
            return None
        opts = (*p.opts, *p.secondary_opts)
        if not all(
            (o.startswith("--") and len(o) > 2 and o[2] != "-")
            or (len(o) == 2 and o[0] == "-" and o[1] != "-")
            for o in opts
        ):
            return None
        glob = getattr(p.callback, "upgradeplan_global", None)
        kind, choices = "click", None
        if p.is_eager or p.nargs != 1 or getattr(p, "deprecated", False):
            pass  # --help, --version: click's
        elif p.count and not p.multiple:
            kind = "count"
        elif p.is_flag:
            if (
                not p.secondary_opts
                and (p.flag_value is True or repr(p.flag_value) == "Sentinel.UNSET")  # click 8.3+
                and not p.multiple
                and isinstance(p.type, BoolParamType)
            ):
                kind = "flag"
        elif getattr(p, "_flag_needs_value", False):
            pass
        elif type(p.type) is StringParamType:
            kind = "value"
        elif (
            type(p.type) is click.Choice
            and p.type.case_sensitive
            and all(isinstance(c, str) for c in p.type.choices)
        ):
            kind, choices = "value", tuple(p.type.choices)
        if kind != "click" and p.callback is not None and glob is None:
            return None  # a callback whose effect the fast path does not know
        if not p.expose_value and glob is None and kind != "click":
            return None
        envvar = p.envvar
        envvars = (envvar,) if isinstance(envvar, str) else tuple(envvar or ())
        default = ctx.params.get(p.name) if p.expose_value else None
        if not _plain(default):
            return None
        records.append(
            (
                opts,
                str(p.name),
                bool(p.expose_value),
                kind,
                bool(p.multiple),
                choices,
                None if glob is None else tuple(glob),
                envvars,
                default,
            )
        )
    return records


def _plain(value: Any) -> bool:
    """A value marshal keeps as it is (and the command gets as click gives it)."""
    if value is None or isinstance(value, bool | int | str):
        return True
    return isinstance(value, tuple) and all(isinstance(v, str) for v in value)
