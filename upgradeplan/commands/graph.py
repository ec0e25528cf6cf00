"""``upgradeplan graph``: a product's release graph as mermaid or Graphviz dot."""

from __future__ import annotations

import click

from upgradeplan import api
from upgradeplan.commands import complete
from upgradeplan.commands.options import kb_dirs, output_option
from upgradeplan.errors import BadInput
from upgradeplan.render import graphviz


@click.command("graph")
@click.option(
    "--product",
    "product",
    metavar="PRODUCT",
    required=True,
    shell_complete=complete.products,
    help="The product whose releases to draw.",
)
@output_option(("mermaid", "dot"), default="mermaid")
@click.option(
    "--path-from",
    "path_from",
    metavar="VERSION",
    default=None,
    help="Highlight the planned path from VERSION (needs --path-to).",
)
@click.option(
    "--path-to",
    "path_to",
    metavar="VERSION",
    default=None,
    help="Highlight the planned path to VERSION.",
)
@click.option(
    "--all-edges",
    is_flag=True,
    help="Also draw every upgrade edge the knowledge allows, not only the release order.",
)
@click.pass_context
def graph(
    ctx: click.Context,
    product: str,
    output: str,
    path_from: str | None,
    path_to: str | None,
    all_edges: bool,
) -> None:
    """The release graph: releases in order, required stops, hazards, a plan's path.

    \b
    Required stops (the stop of a skip hazard) and releases a landing hazard is about are
    marked; each skip hazard is a dashed edge from the release before its stop to the first
    release it lands on. With --path-from/--path-to the planner's path for a bare
    installation (no other facts) is highlighted: state-dependent hazards then count as
    "may apply" — use 'upgradeplan plan -o markdown' for your installation's path.

    \b
    Examples:
      upgradeplan graph --product agent-platform
      upgradeplan graph --product agent-platform --path-from 4.7.18 --path-to 4.8.1 -o dot
    """

    if (path_from is None) != (path_to is None):
        raise BadInput("--path-from and --path-to go together", hint="give both, or neither")
    kb = api.load_kb(kb_dirs(ctx))
    path = (path_from, path_to) if path_from is not None and path_to is not None else None
    found = api.graph(kb, product, path)
    view = graphviz.release_view(
        kb, product, plan=found.plan, allowed=list(found.allowed), all_edges=all_edges
    )
    click.echo(
        graphviz.to_mermaid(view) if output == "mermaid" else graphviz.to_dot(view), nl=False
    )
