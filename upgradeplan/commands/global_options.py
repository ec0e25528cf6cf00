"""Global options, accepted before or after the command as kubectl, helm and flux accept them.

``upgradeplan --context prod scan`` and ``upgradeplan scan --context prod`` are the same: the
group takes every global option, and :func:`inject` gives each subcommand the ones it does not
declare itself (hidden from its ``--help``; the group's help lists them). Both land in the
root context's ``obj``; :func:`setting` reads them back, and
:func:`upgradeplan.commands.options.inputs_from` merges the cluster ones into the inputs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

import click

from upgradeplan import progress
from upgradeplan.commands import complete, settings
from upgradeplan.commands.settings import remember, root_settings
from upgradeplan.suggest import nearest

# One global option: where its value lives in the root context's obj, its flags, click's
# keywords. A table of tuples, not records: ``--help`` runs through here and imports nothing
# it does not need.
Global = tuple[str, tuple[str, ...], Mapping[str, Any]]


GLOBALS: tuple[Global, ...] = (
    (
        "kb_dirs",
        ("--kb",),
        {
            "multiple": True,
            "type": click.Path(file_okay=False),
            "metavar": "DIRECTORY",
            "help": "Extra knowledge directory, merged with the bundled one "
            "(repeatable; also UPGRADEPLAN_KB).",
        },
    ),
    (
        "packs",
        ("--pack",),
        {
            "multiple": True,
            "metavar": "NAME",
            "shell_complete": complete.packs,
            "help": "Enable a knowledge pack shipped with upgradeplan (repeatable; also "
            "UPGRADEPLAN_PACKS=a,b and 'packs:' in .upgradeplan.yaml; 'kb packs' lists them).",
        },
    ),
    (
        "kubeconfig",
        ("--kubeconfig",),
        {"metavar": "PATH", "help": "Kubeconfig to read live clusters through (read-only)."},
    ),
    (
        "contexts",
        ("--context",),
        {
            "multiple": True,
            "metavar": "NAME",
            "shell_complete": complete.contexts,
            "help": "Kubeconfig context to read (repeatable; one result per context).",
        },
    ),
    (
        "namespace",
        ("-n", "--namespace"),
        {
            "metavar": "NAMESPACE",
            "help": "Read only this namespace of a cluster (cluster-scoped objects such as "
            "nodes are still read); what lives elsewhere is unknown, never absent.",
        },
    ),
    (
        "request_timeout",
        ("--request-timeout",),
        {
            "type": click.FloatRange(min=0.05, max=3600),
            "metavar": "SECONDS",
            "help": "With a cluster: each request's whole answer within SECONDS (default 10, "
            "or $UPGRADEPLAN_KUBE_TIMEOUT).",
        },
    ),
    (
        "color",
        ("--color",),
        {
            "type": click.Choice(["auto", "always", "never"]),
            "help": "Colour in text output: auto (a terminal, and NO_COLOR unset), always, never.",
        },
    ),
    ("no_color", ("--no-color",), {"is_flag": True, "help": "Same as --color never."}),
    (
        "verbose",
        ("-v", "--verbose"),
        {"count": True, "help": "Say on stderr what is read and how long it took."},
    ),
    ("debug", ("--debug",), {"is_flag": True, "help": "Show tracebacks for errors."}),
)


def group_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The global options as the group's own (shown in ``upgradeplan --help``)."""
    for key, decls, kwargs in reversed(GLOBALS):
        f = click.option(*decls, key, **dict(kwargs))(f)
    return f


def start(ctx: click.Context, options: Mapping[str, Any]) -> None:
    """The root obj from the group's options (and UPGRADEPLAN_KB)."""
    ctx.obj = root_settings(options, ctx.obj)  # with values a completion run stored already
    progress.install(progress.Reporter(sys.stderr, verbose=ctx.obj["verbose"]))
    ctx.call_on_close(lambda: progress.install(None))


def _root_obj(ctx: click.Context) -> dict[str, Any]:
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    obj: dict[str, Any] = root.obj
    return obj


def _remember(opt: Global) -> Callable[[click.Context, click.Parameter, Any], None]:
    """Store a value given after the command where the group's own would be."""
    key, _, kwargs = opt
    multiple, count = bool(kwargs.get("multiple")), bool(kwargs.get("count"))

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value in (None, False, (), 0):
            return
        remember(_root_obj(ctx), key, value, multiple=multiple, count=count)

    callback.upgradeplan_global = (key, multiple, count)  # type: ignore[attr-defined]
    return callback


def inject(cmd: click.Command) -> None:
    """Give ``cmd`` (and a group's subcommands) the global options it does not declare."""
    if getattr(cmd, "_upgradeplan_globals", False):
        return
    taken = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    for opt in GLOBALS:
        _, decls, given = opt
        if taken.intersection(decls):
            continue
        kwargs = {k: v for k, v in given.items() if k != "help"}
        cmd.params.append(
            click.Option(
                list(decls),
                expose_value=False,
                hidden=True,
                callback=_remember(opt),
                **kwargs,
            )
        )
    cmd._upgradeplan_globals = True  # type: ignore[attr-defined]
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            inject(sub)


def setting(ctx: click.Context | None, key: str, default: Any = None) -> Any:
    """A global option's value (given before or after the command), or ``default``."""
    if ctx is None:
        return default
    return settings.setting(ctx.find_root().obj, key, default)


def nearest_options(exc: click.NoSuchOption) -> list[str]:
    """The options of the failing command nearest to the unknown one (``--too`` -> ``--to``)."""

    known: list[str] = []
    if exc.ctx is not None:
        for param in exc.ctx.command.get_params(exc.ctx):
            if isinstance(param, click.Option):
                known.extend(o for o in (*param.opts, *param.secondary_opts) if o.startswith("--"))
    return nearest(exc.option_name, known)
