"""``upgradeplan docs upgrade-md``: UPGRADE.md from the knowledge base."""

from __future__ import annotations

from pathlib import Path

import click

from upgradeplan import api
from upgradeplan.commands.options import kb_dirs
from upgradeplan.errors import BadInput, ExitCode


@click.group("docs")
def docs() -> None:
    """Documents rendered from the knowledge base."""


@docs.command("upgrade-md")
@click.option(
    "--product",
    "product",
    metavar="PRODUCT",
    default=None,
    help="The product (default: the one product whose knowledge has an upgrade_doc).",
)
@click.option(
    "--from",
    "from_version",
    metavar="VERSION",
    default=None,
    help="Only sections of releases after VERSION.",
)
@click.option(
    "--to",
    "to_version",
    metavar="VERSION",
    default=None,
    help="Only sections of releases up to VERSION ('next' includes the unreleased one).",
)
@click.option(
    "--next",
    "next_only",
    is_flag=True,
    help="Only the unreleased section (\\<current\\> → \\<next\\>).",
)
@click.option(
    "--write", "write", metavar="FILE", default=None, help="Write to FILE instead of stdout."
)
@click.option(
    "--check",
    "check",
    metavar="FILE",
    default=None,
    help="Exit 3 if FILE differs from what would be rendered (for CI).",
)
@click.pass_context
def upgrade_md(
    ctx: click.Context,
    product: str | None,
    from_version: str | None,
    to_version: str | None,
    next_only: bool,
    write: str | None,
    check: str | None,
) -> None:
    """Render UPGRADE.md: the whole document, or the chosen sections, newest first.

    \b
    Each release gets "## <from> → <to> (<title>)", its summary and "### Operator action":
    the release's notes, the path bullets its skip hazards imply ("In order, via S" /
    "Skipping S" with the recovery commands), value clean-ups, the BOM, and "Recognising it
    worked". Unreleased knowledge renders as \\<current\\> → \\<next\\>.
    """
    from upgradeplan.render import markdown, upgrade_doc

    if next_only and (from_version or to_version):
        raise BadInput("--next cannot be combined with --from/--to", hint="use one or the other")
    kb = api.load_kb(kb_dirs(ctx))
    chosen = product or upgrade_doc.default_product(kb)
    for flag, value in (("--from", from_version), ("--to", to_version)):
        if value is not None and value != "next":
            api.check_version(value, flag)
    text = markdown.upgrade_md(
        kb, chosen, from_version=from_version, to_version=to_version, next_only=next_only
    )
    if check is not None:
        try:
            current = Path(check).read_text(encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"cannot read: {exc.strerror}", location=check) from None
        if current != text:
            click.echo(
                f"{check}: differs from the knowledge base; regenerate it with "
                f"'upgradeplan docs upgrade-md --write {check}'",
                err=True,
            )
            ctx.exit(int(ExitCode.HAZARD))
        return
    if write is not None:
        try:
            Path(write).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"cannot write: {exc.strerror}", location=write) from None
        return
    click.echo(text, nl=False)
