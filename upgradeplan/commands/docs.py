"""``upgradeplan docs upgrade-md``: UPGRADE.md from the knowledge base."""

from __future__ import annotations

from pathlib import Path

import click

from upgradeplan import api
from upgradeplan.commands import complete
from upgradeplan.commands.options import kb_dirs
from upgradeplan.commands.scan import write_atomically
from upgradeplan.errors import BadInput, ExitCode
from upgradeplan.patches.files import content_hash, write_all
from upgradeplan.render import markdown, upgrade_doc
from upgradeplan.render.doc_sections import splice, splice_report


@click.group("docs")
def docs() -> None:
    """Documents rendered from the knowledge base.

    \b
    Examples:
      upgradeplan docs upgrade-md > UPGRADE.md
      upgradeplan docs upgrade-md --next --write UPGRADE.md
    """


@docs.command("upgrade-md")
@click.option(
    "--product",
    "product",
    metavar="PRODUCT",
    default=None,
    shell_complete=complete.products,
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
    "--write",
    "write",
    metavar="FILE",
    default=None,
    help="Put the sections into FILE: only the generated sections (between upgradeplan "
    "markers) change, a new one goes where the file's version order puts it, one a "
    "hand-written section covers is left out; every other byte is kept.",
)
@click.option(
    "--check",
    "check",
    metavar="FILE",
    default=None,
    help="Exit 3, printing a unified diff, if --write would change FILE (for CI).",
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

    \b
    Examples:
      upgradeplan docs upgrade-md > UPGRADE.md
      upgradeplan docs upgrade-md --next --write UPGRADE.md
      upgradeplan docs upgrade-md --check UPGRADE.md
    """

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
        _check(ctx, check, text, whole=not (from_version or to_version or next_only))
        return
    if write is not None:
        _write(write, text, whole=not (from_version or to_version or next_only))
        return
    click.echo(text, nl=False)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise BadInput(f"not UTF-8 text ({exc.reason})", location=path) from None
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror}", location=path) from None


def _check(ctx: click.Context, path: str, rendered: str, *, whole: bool) -> None:
    import difflib

    current = _read(path)
    if current is None:
        raise BadInput("no such file", location=path, hint="write it first with --write")
    wanted = splice(current, rendered, whole=whole)
    if wanted == current:
        return
    diff = difflib.unified_diff(
        current.splitlines(keepends=True),
        wanted.splitlines(keepends=True),
        fromfile=f"{path} (as it is)",
        tofile=f"{path} (from the knowledge)",
    )
    click.echo("".join(diff), nl=False)
    click.echo(
        f"{path}: its generated sections differ from the knowledge base; update them with "
        f"'upgradeplan docs upgrade-md --write {path}'",
        err=True,
    )
    ctx.exit(int(ExitCode.HAZARD))


def _write(path: str, rendered: str, *, whole: bool) -> None:
    current = _read(path)
    if current is None:
        write_atomically(path, rendered)
        return
    updated, skipped = splice_report(current, rendered, whole=whole)
    for line in skipped:
        click.echo(f"{path}: not inserted, {line}", err=True)
    if updated != current:
        write_all([(path, updated, content_hash(current))])
