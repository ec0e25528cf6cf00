"""renovate: Renovate packageRules for a GitOps tree (thin over :mod:`upgradeplan.renovate`)."""

from __future__ import annotations

import json

import click

from upgradeplan import api, errors
from upgradeplan import renovate as rules
from upgradeplan.commands.options import kb_dirs


@click.command("renovate")
@click.option(
    "--gitops",
    "gitops",
    metavar="PATH",
    required=True,
    help="The GitOps tree whose pins Renovate bumps.",
)
@click.pass_context
def renovate(ctx: click.Context, gitops: str) -> None:
    """Renovate packageRules: a meta chart and its BOM's pins in one PR, bumps stopped at the
    next required stop.

    \b
    Prints JSON for renovate.json (or a shared preset); rerun it after each merge so the
    limit moves to the next stop (docs/ci.md). Exit codes: 0, or 2 for bad input.

    \b
    Examples:
      upgradeplan renovate --gitops . > renovate-upgradeplan.json
    """

    kb = api.load_kb(kb_dirs(ctx))
    gathered = api.gather(kb, api.Inputs(gitops=gitops))
    states = [g.state for g in gathered if g.state is not None]
    if not states:
        raise errors.BadInput(f"--gitops {gitops}: nothing could be read")
    config = rules.rules(kb, states, rules.flux_sources(gitops))
    click.echo(json.dumps(config, indent=2, ensure_ascii=False))
    if not config.get("packageRules"):  # nothing to hold back: said, so an empty file is not
        # mistaken for rules (a --gitops path that misses the cluster's files reads the same)
        click.echo(
            f"upgradeplan renovate: --gitops {gitops}: no pin of a product the knowledge base"
            " knows; packageRules is empty, so Renovate bumps as it would without it",
            err=True,
        )
