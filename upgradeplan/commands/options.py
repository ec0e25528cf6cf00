"""Shared click options: where the state comes from, the targets, the output, --fail-on.

Every command that reads an installation uses :func:`state_options`; the values end up in
one :class:`upgradeplan.api.Inputs` through :func:`inputs_from`, and :func:`gather` reads
them. This module imports only click, :mod:`upgradeplan.api` (which is light at import
time), errors and the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import click

from upgradeplan import api
from upgradeplan.api import FAIL_ON_CHOICES, Inputs
from upgradeplan.commands import complete, judging
from upgradeplan.model import KnowledgeBase

F = TypeVar("F", bound=Callable[..., Any])


def _apply(f: F, decorators: Sequence[Callable[[F], F]]) -> F:
    for deco in reversed(decorators):
        f = deco(f)
    return f


def state_options(f: F) -> F:
    """--installed/--pin/--fact, --state/--snapshot, --gitops/--base, --kubeconfig/--context."""
    decorators: list[Callable[[F], F]] = [
        click.option(
            "--installed",
            "installed",
            multiple=True,
            metavar="PRODUCT=VERSION",
            shell_complete=complete.product_versions,
            help="The version a product runs (repeatable).",
        ),
        click.option(
            "--pin",
            "pins",
            multiple=True,
            metavar="PRODUCT=CONSTRAINT",
            shell_complete=complete.product_versions,
            help="The version constraint that selects a product; 'PRODUCT=' for none (repeatable).",
        ),
        click.option(
            "--fact",
            "facts",
            multiple=True,
            metavar="KEY=VALUE",
            help="Any fact (docs/state-format.md); 'kubernetes=1.31.0' is short for "
            "installed.kubernetes (repeatable).",
        ),
        click.option(
            "--state",
            "--snapshot",
            "state_files",
            multiple=True,
            metavar="FILE",
            help="A snapshot file (upgradeplan-state, or kubectl get -o yaml|json output); "
            "'-' reads stdin (repeatable).",
        ),
        click.option(
            "--gitops",
            "gitops",
            metavar="PATH",
            default=None,
            help="GitOps files (HelmRelease, OCIRepository, BOM and values files) under PATH.",
        ),
        click.option(
            "--base",
            "base",
            metavar="REF",
            default=None,
            help="With --gitops: the current state is PATH at git REF, the target is the "
            "working tree.",
        ),
        click.option(
            "--cluster",
            "clusters",
            multiple=True,
            metavar="NAME",
            help="With --gitops: read only this installation (a cluster entry point, by the name "
            "scan shows or its directory; repeatable).",
        ),
        click.option(
            "--gitops-artifact",
            "gitops_artifacts",
            multiple=True,
            metavar="NAME=DIR",
            help="With --gitops: the OCIRepository or ExternalArtifact NAME that a Kustomization "
            "applies holds DIR of this repository (an artifact your CI pushes from it); "
            "repeatable.",
        ),
        click.option(
            "--kubeconfig",
            "kubeconfig",
            metavar="PATH",
            default=None,
            help="Read a live cluster through this kubeconfig (read-only).",
        ),
        click.option(
            "--context",
            "contexts",
            multiple=True,
            metavar="NAME",
            shell_complete=complete.contexts,
            help="Kubeconfig context to read (repeatable; one result per context).",
        ),
        click.option(
            "--all-contexts",
            "all_contexts",
            is_flag=True,
            default=False,
            help="Read every context of the kubeconfig.",
        ),
        request_timeout_option,
    ]
    return _apply(f, decorators)


request_timeout_option = click.option(
    "--request-timeout",
    "request_timeout",
    type=click.FloatRange(min=0.05, max=3600),
    default=None,
    metavar="SECONDS",
    help="With a cluster: each request's whole answer within SECONDS (default 10, or "
    "$UPGRADEPLAN_KUBE_TIMEOUT); a context's whole read within SECONDS x 3 (two retries).",
)


def target_options(f: F) -> F:
    """--to (repeatable) and --hold (repeatable)."""
    decorators: list[Callable[[F], F]] = [
        click.option(
            "--to",
            "to",
            multiple=True,
            metavar="PRODUCT=VERSION|VERSION|latest",
            shell_complete=complete.product_versions,
            help="The target: PRODUCT=VERSION, a bare VERSION when one product has it, or "
            "'latest' (repeatable).",
        ),
        click.option(
            "--hold",
            "holds",
            multiple=True,
            metavar="PRODUCT",
            shell_complete=complete.products,
            help="Keep this product's pin where it is instead of moving it with its release "
            "(repeatable).",
        ),
    ]
    return _apply(f, decorators)


def output_option(
    choices: Sequence[str], default: str = "text", help: str = "Output format."
) -> Callable[[F], F]:
    """-o/--output with the formats a command supports."""
    return click.option(
        "-o",
        "--output",
        "output",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help=help,
    )


def fail_on_option(f: F) -> F:
    """--fail-on blocking|warning|notice|never (default blocking)."""
    deco: Callable[[F], F] = click.option(
        "--fail-on",
        "fail_on",
        type=click.Choice(list(FAIL_ON_CHOICES)),
        default="blocking",
        show_default=True,
        help="The lowest severity that fails (exit 3 when it applies, 4 when it may apply); "
        "'never' always exits 0 on a completed run.",
    )
    return deco(f)


def inputs_from(params: Mapping[str, Any]) -> Inputs:
    """Build :class:`Inputs` from the keyword arguments :func:`state_options` added.

    The global options given before the command (``upgradeplan --context prod check``) or
    after it on a command that does not declare them fill in what the command's own leave
    unset; contexts add up (:func:`upgradeplan.commands.judging.inputs_from`).
    """
    ctx = click.get_current_context(silent=True)
    return judging.inputs_from(params, None if ctx is None else ctx.find_root().obj)


def kb_dirs(ctx: click.Context) -> tuple[str, ...]:
    """The extra knowledge directories given to the group (--kb, UPGRADEPLAN_KB)."""
    obj = ctx.find_root().obj or {}
    return tuple(obj.get("kb_dirs", ()))


def judging_options(formats: Sequence[str]) -> Callable[[F], F]:
    """The options check and plan share: the state, --to/--hold, --fail-on and -o."""

    def decorate(f: F) -> F:
        return state_options(target_options(fail_on_option(output_option(formats)(f))))

    return decorate


def use_color(ctx: click.Context) -> bool:
    """Whether text output is coloured: the group's --color, and whether stdout is a terminal."""
    return judging.use_color(ctx.find_root().obj)


def gather(ctx: click.Context, params: dict[str, Any]) -> tuple[KnowledgeBase, list[api.Gathered]]:
    """The knowledge and every installation the state options name (BadInput when none)."""
    return judging.gather(ctx.find_root().obj, params)
