"""fleet: judge many installations in one run; a thin click command over api.fleet."""

from __future__ import annotations

import os
from typing import Any

import click

from upgradeplan import api, errors
from upgradeplan.commands import complete
from upgradeplan.commands.options import (
    fail_on_option,
    kb_dirs,
    output_option,
    target_options,
)
from upgradeplan.fleet.render import render

FLEET_FORMATS = ("text", "json", "yaml", "csv", "markdown")


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@click.command("fleet")
@click.argument("sources", nargs=-1, metavar="[SNAPSHOTS|DIR|GLOB|s3://BUCKET/PREFIX]...")
@click.option(
    "--kubeconfig",
    "kubeconfig",
    metavar="PATH",
    default=None,
    help="Judge every context of this kubeconfig (read-only; --context narrows it).",
)
@click.option(
    "--context",
    "contexts",
    multiple=True,
    metavar="NAME",
    help="Only this kubeconfig context (repeatable).",
)
@click.option(
    "--gitops",
    "gitops",
    multiple=True,
    metavar="PATH",
    help="A GitOps tree, judged as one installation (repeatable).",
)
@click.option(
    "--installed",
    "installed",
    multiple=True,
    metavar="PRODUCT=VERSION",
    help="Stated for every installation, e.g. the Harness CD platform version (repeatable).",
)
@click.option(
    "--pin",
    "pins",
    multiple=True,
    metavar="PRODUCT=CONSTRAINT",
    help="A pin stated for every installation (repeatable).",
)
@click.option(
    "--fact",
    "facts",
    multiple=True,
    metavar="KEY=VALUE",
    help="A fact stated for every installation (repeatable).",
)
@click.option(
    "--hazard",
    "hazard",
    metavar="ID",
    default=None,
    shell_complete=complete.hazards,
    help="List the installations where this hazard applies or may apply (one added with "
    "--kb too); a skip or transition hazard without --to is judged against the newest "
    "release it lands on.",
)
@click.option(
    "-j",
    "--jobs",
    "jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that read and judge local snapshot files (default: the usable cores).",
)
@target_options
@fail_on_option
@output_option(FLEET_FORMATS)
@click.pass_context
def fleet(
    ctx: click.Context,
    /,
    sources: tuple[str, ...],
    kubeconfig: str | None,
    contexts: tuple[str, ...],
    gitops: tuple[str, ...],
    installed: tuple[str, ...],
    pins: tuple[str, ...],
    facts: tuple[str, ...],
    hazard: str | None,
    jobs: int | None,
    to: tuple[str, ...],
    holds: tuple[str, ...],
    fail_on: str,
    output: str,
    **_: Any,
) -> None:
    """Judge many installations in one run and roll the results up.

    \b
    SOURCES are snapshot files (upgradeplan's own or kubectl get -o yaml|json output,
    .gz too), directories of them (a subdirectory is one installation in several files),
    glob patterns and s3://BUCKET/PREFIX (the s3 extra); with --kubeconfig every context,
    with --gitops each tree. Each installation is judged as `check` judges it on its own;
    the roll-up gives per installation its versions, verdict, safe path, blocking findings
    and missing facts, and per hazard where it applies or may apply. A member that cannot
    be read is listed with its reason and counts as undetermined; the run goes on.
    Exit codes: the worst of the fleet (3 over 4 over 0), 2 bad input; with --hazard,
    3 it applies somewhere, 4 it may apply somewhere, 0 nowhere (docs/exit-codes.md).

    \b
    Examples:
      upgradeplan fleet snapshots/ --to agent-platform=4.8.1
      upgradeplan fleet --kubeconfig ~/.kube/config --hazard harness-missing-on-480
      upgradeplan fleet 's3://bucket/snapshots/' -o json
    """
    if not (sources or kubeconfig or contexts or gitops):
        raise errors.BadInput(
            "no installations given",
            hint="pass snapshot files, a directory, a glob or s3://BUCKET/PREFIX, or "
            "--kubeconfig PATH, or --gitops PATH",
        )
    kb = api.load_kb(kb_dirs(ctx))
    result = api.fleet(
        kb,
        sources,
        to,
        kubeconfig=kubeconfig,
        contexts=contexts,
        gitops=gitops,
        installed=installed,
        pins=pins,
        facts=facts,
        holds=holds,
        fail_on=fail_on,
        hazard=hazard,
        workers=jobs or _cores(),
    )

    click.echo(render(result, output), nl=False)
    ctx.exit(result.exit_code)
