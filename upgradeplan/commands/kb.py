"""``upgradeplan kb lint``, ``kb list`` and the knowledge-source commands."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

import click
from msgspec.structs import replace

from upgradeplan import api
from upgradeplan.commands import complete, kb_new, kb_packs
from upgradeplan.commands.kb_packs import manifest_problems
from upgradeplan.commands.scan import write_atomically
from upgradeplan.errors import ExitCode, UnknownName
from upgradeplan.kb.lint import format_problems, lint
from upgradeplan.kb.loader import bundled_dir, load, load_all
from upgradeplan.kb.packs import directories
from upgradeplan.kb.problems import CATALOGUE
from upgradeplan.kb.sources import (
    coverage,
    coverage_markdown,
    quotes,
    read_source,
    read_sources,
    references,
    verify,
)
from upgradeplan.render.github import escape_data, escape_property
from upgradeplan.render.structured import serialise


def _kb_dirs(ctx: click.Context) -> tuple[str, ...]:
    obj = ctx.find_root().obj or {}
    dirs = obj.get("kb_dirs", ())
    return tuple(dirs)


@click.group("kb")
def kb() -> None:
    """Lint, list and scaffold the knowledge base.

    \b
    Examples:
      upgradeplan kb lint ./team-kb
      upgradeplan kb list --product agent-platform
      upgradeplan kb new hazard my-hazard --product agent-platform --reference owner/repo#1
    """


@kb.command("lint")
@click.argument("dirs", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--no-bundled",
    is_flag=True,
    help="Lint only the given directories, without the bundled knowledge.",
)
@click.option("--list-checks", is_flag=True, help="Print the catalogue of checks and exit.")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text: 'file:line CODE message'; github: one ::error/::warning workflow command per "
    "problem, on its file and line in a pull request.",
)
@click.option("--strict", is_flag=True, help="Exit 2 on warnings too.")
@click.option(
    "--pack",
    "lint_packs",
    multiple=True,
    metavar="NAME",
    shell_complete=complete.packs,
    help="Lint this shipped knowledge pack (its files and pack.yaml, with the bundled "
    "knowledge it builds on; repeatable).",
)
@click.option(
    "--inferred",
    "inferred_only",
    is_flag=True,
    help="List the fields marked inferred (KB025), each with its reason, instead of the "
    "problems; exit 0.",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="With directories to lint: also show the findings of the bundled knowledge (by "
    "default only those of the given directories' files are shown).",
)
@click.pass_context
def lint_cmd(
    ctx: click.Context,
    dirs: tuple[str, ...],
    no_bundled: bool,
    list_checks: bool,
    output: str,
    strict: bool,
    lint_packs: tuple[str, ...],
    inferred_only: bool,
    show_all: bool,
) -> None:
    """Check knowledge files: every problem as 'file:line CODE message', in one run.

    Without DIR: the bundled knowledge plus the --kb / UPGRADEPLAN_KB directories. With DIRs:
    those directories, each merged with the bundled knowledge unless --no-bundled; only the
    findings in their files are shown unless --all. Fields marked inferred are listed by
    --inferred, not reported on every run. Exit 2 when
    any error-level problem is found (with --strict, also for warnings), 0 otherwise.
    Paths are relative to the working directory (absolute outside it), so an editor or a CI
    annotation opens them as printed.

    \b
    Examples:
      upgradeplan kb lint
      upgradeplan kb lint ./team-knowledge --strict
      upgradeplan kb lint ./team-knowledge -o github
    """

    if list_checks:
        if output == "json":
            rows = [
                {
                    "code": c.code,
                    "name": c.name,
                    "severity": c.severity,
                    "description": c.description,
                }
                for c in CATALOGUE
            ]
            click.echo(json.dumps({"schema_version": 1, "checks": rows}, indent=2))
        else:
            for c in CATALOGUE:
                click.echo(f"{c.code}  {c.severity:<7}  {c.name:<22}  {c.description}")
        ctx.exit(int(ExitCode.SAFE))

    pack_dirs = directories(lint_packs)
    use: Sequence[str] = [*dirs, *pack_dirs] if dirs or pack_dirs else _kb_dirs(ctx)

    problems = _openable(
        [*lint(use, bundled=not no_bundled), *manifest_problems(pack_dirs, use, not no_bundled)],
        use,
        bundled=not no_bundled,
    )
    if use and not show_all:
        problems = _within(problems, use)
    marks = [p for p in problems if p.code == INFERRED]
    problems = marks if inferred_only else [p for p in problems if p.code != INFERRED]
    errors = sum(1 for p in problems if p.severity == "error")
    warnings = len(problems) - errors
    if output == "json":
        doc = {
            "schema_version": 1,
            "errors": errors,
            "warnings": warnings,
            "problems": [p.to_dict() for p in problems],
        }
        click.echo(json.dumps(doc, indent=2))
    elif output == "github":
        click.echo(_github(problems), nl=False)
    elif problems:
        click.echo(format_problems(problems))
        click.echo(f"{errors} error(s), {warnings} warning(s)", err=True)
    failed = not inferred_only and (errors > 0 or (strict and warnings > 0))
    ctx.exit(int(ExitCode.USAGE if failed else ExitCode.SAFE))


INFERRED = "KB025"  # a field marked inferred: listed by --inferred, not a finding of every run


def _within(problems: Sequence[Any], dirs: Sequence[str]) -> list[Any]:
    """The problems whose file is in one of ``dirs`` (paths as :func:`_openable` shows them)."""
    from pathlib import Path

    roots = [Path(d).resolve() for d in dirs]
    return [
        p for p in problems if any(Path(p.location.file).resolve().is_relative_to(r) for r in roots)
    ]


def _openable(problems: Sequence[Any], dirs: Sequence[str], *, bundled: bool) -> list[Any]:
    """The problems with their paths relative to the working directory (absolute outside it).

    The loader names a file relative to the parent of its knowledge directory
    (``team-kb/hazards/x.yaml``); from another directory that path opens nothing.
    """
    import os
    import re
    from pathlib import Path

    roots = [Path(d).resolve() for d in dirs]
    if bundled:
        roots.append(bundled_dir().resolve())
    cwd = Path.cwd().resolve()

    def shown(root: Path) -> str:
        try:
            return (
                Path(os.path.relpath(root, cwd)).as_posix()
                if root.is_relative_to(cwd)
                else str(root)
            )
        except ValueError:
            return str(root)

    mapping = {f"{root.name}/": f"{shown(root)}/" for root in reversed(roots)}
    mapping = {k: v for k, v in mapping.items() if k != v}
    if not mapping:
        return list(problems)
    rx = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(k) for k in mapping) + ")")

    def fix(text: str) -> str:
        return rx.sub(lambda m: mapping[m.group(1)], text)

    out = []
    for p in problems:
        loc = replace(p.location, file=fix(p.location.file))
        out.append(replace(p, location=loc, message=fix(p.message)))
    return out


def _github(problems: Sequence[Any]) -> str:
    """One workflow command per problem: ``::error file=F,line=N,title=KB004::message``."""

    lines = []
    for p in problems:
        command = "error" if p.severity == "error" else "warning"
        props = [f"file={escape_property(p.location.file)}"]
        if p.location.line:
            props.append(f"line={p.location.line}")
        props.append(f"title={escape_property(p.code)}")
        lines.append(f"::{command} {','.join(props)}::{escape_data(p.message)}")
    return "".join(line + "\n" for line in lines)


@kb.command("coverage")
@click.option(
    "--upgrade-md",
    "upgrade_md",
    metavar="FILE",
    required=True,
    help="The product's UPGRADE.md: a row per '## ' section (up to '## Template').",
)
@click.option(
    "--address",
    metavar="URL",
    default="",
    help="Where the file is published, linked in the document's introduction.",
)
@click.option("--write", "write", metavar="FILE", default=None, help="Write the document to FILE.")
@click.option(
    "--no-bundled",
    is_flag=True,
    help="Only the --kb / UPGRADEPLAN_KB directories, without the bundled knowledge.",
)
@click.pass_context
def coverage_cmd(
    ctx: click.Context, upgrade_md: str, address: str, write: str | None, no_bundled: bool
) -> None:
    """Which sections of an UPGRADE.md the knowledge models, and why the others are not.

    A section is modelled by every hazard, migration, release or crossing note with a quote
    from it (quotes: [{source: UPGRADE.md, section: HEADING, quote: ...}]); not modelled when a
    product lists it under not_modelled
    with the reason; unaccounted otherwise. Prints docs/knowledge-sources.md (a row per
    section, the summary, every reference and who cites it); the summary goes to stderr.
    Exit 0; 2 when a section is unaccounted.

    \b
    Examples:
      upgradeplan kb coverage --upgrade-md UPGRADE.md --write docs/knowledge-sources.md
    """

    text = read_source(upgrade_md)
    loaded = load_all(_kb_dirs(ctx), bundled=not no_bundled, semantic=False)
    name = os.path.basename(upgrade_md)
    cov = coverage(loaded, text, name)
    doc = coverage_markdown(cov, references(loaded), source=name, address=address)
    if write is not None:
        write_atomically(write, doc)
    else:
        click.echo(doc, nl=False)
    missing = cov.unaccounted
    click.echo(
        f"{name}: {len(cov.rows)} sections, {cov.modelled} modelled, {cov.not_modelled} not "
        f"modelled, {len(missing)} unaccounted"
        + "".join(f"\n  unaccounted: {name} {s.number} ## {s.heading}" for s in missing),
        err=True,
    )
    ctx.exit(int(ExitCode.USAGE if missing else ExitCode.SAFE))


@kb.command("verify-quotes")
@click.option(
    "--source",
    "source_files",
    metavar="FILE",
    multiple=True,
    required=True,
    help="A source file the quotes name by its file name (repeatable).",
)
@click.option(
    "--no-bundled",
    is_flag=True,
    help="Only the --kb / UPGRADEPLAN_KB directories, without the bundled knowledge.",
)
@click.pass_context
def verify_quotes_cmd(ctx: click.Context, source_files: tuple[str, ...], no_bundled: bool) -> None:
    """Check every quote of the knowledge against its source file.

    A quote must be in the file its 'source' names (white space and Markdown's \\< \\>
    escapes aside), under the section it names when that is a heading of the file. Each quote
    not found is printed as 'file:line entry: why: "quote"'. Quotes of a source not given are
    counted, not checked. The same file name given twice (a source at several versions) is
    one source: a quote is found when it is in any of them. Exit 0 when every checked quote
    is found, 2 otherwise.

    \b
    Examples:
      upgradeplan kb verify-quotes --source UPGRADE.md --source CHANGELOG.md
      upgradeplan --pack cilium kb verify-quotes --no-bundled \\
        --source v1.16/upgrade.rst --source v1.17/upgrade.rst
    """

    texts = read_sources(source_files)
    loaded = load_all(_kb_dirs(ctx), bundled=not no_bundled, semantic=False)
    found, unfound, unchecked = verify(quotes(loaded), texts)
    for u in unfound:
        click.echo(f'{u.quote.location} {u.quote.entry}: {u.why}: "{u.quote.text}"')
    click.echo(
        f"{found + len(unfound)} quotes checked: {found} found, {len(unfound)} not found; "
        f"{unchecked} of other sources not checked",
        err=True,
    )
    ctx.exit(int(ExitCode.USAGE if unfound else ExitCode.SAFE))


@kb.command("list")
@click.option(
    "--product",
    "product",
    metavar="PRODUCT",
    shell_complete=complete.products,
    help="Only this product.",
)
@click.option(
    "-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True
)
@click.pass_context
def list_cmd(ctx: click.Context, product: str | None, output: str) -> None:
    """Products, their releases (date, title, marks) and hazard/migration counts.

    \b
    Examples:
      upgradeplan kb list
      upgradeplan --kb ./team-kb kb list --product agent-platform -o json
    """

    knowledge = load(_kb_dirs(ctx))
    ids = sorted(set(knowledge.products) | set(knowledge.releases))
    if product is not None:
        if product not in ids:
            raise UnknownName("product", product, ids)
        ids = [product]
    rows = [_product_row(knowledge, pid) for pid in ids]
    if output in ("json", "yaml"):
        click.echo(serialise({"schema_version": 1, "products": rows}, output), nl=False)
    else:
        click.echo(_text(rows))
    ctx.exit(int(ExitCode.SAFE))


def _origin(entry: Any) -> dict[str, Any]:
    """Where an entry is defined and what amended it (for `kb list`)."""
    return {
        "file": entry.location.file,
        "amendments": [
            {"file": a.location.file, "reason": a.reason, "overrides": dict(a.overrides)}
            for a in entry.amendments
        ],
        "inferred": dict(entry.inferred),
    }


def _product_row(knowledge: Any, pid: str) -> dict[str, Any]:
    prod = knowledge.products.get(pid)
    releases = []
    for rel in knowledge.releases.get(pid, ()):
        releases.append(
            {
                "version": rel.version,
                "date": rel.date,
                "title": rel.title,
                "unreleased": rel.unreleased,
                "withdrawn": None
                if rel.withdrawn is None
                else {"date": rel.withdrawn.date, "reason": rel.withdrawn.reason},
                **_origin(rel),
            }
        )
    hazards = [{"id": h.id, **_origin(h)} for h in knowledge.hazards.values() if h.product == pid]
    return {
        "id": pid,
        "name": prod.name if prod else pid,
        "type": prod.kind if prod else "",
        **(_origin(prod) if prod else {"file": "", "amendments": [], "inferred": {}}),
        "releases": releases,
        "hazards": len(hazards),
        "hazard_entries": hazards,
        "migrations": sum(1 for m in knowledge.migrations.values() if m.product == pid),
    }


def _root(file: str) -> str:
    return file.split("/", 1)[0]


def _origin_marks(entry: dict[str, Any], home: str) -> list[str]:
    marks = []
    if entry["file"] and _root(entry["file"]) != home:
        marks.append(f"[from {entry['file']}]")
    for a in entry["amendments"]:
        why = "".join(f"; overrides {k}: {v}" for k, v in sorted(a["overrides"].items()))
        marks.append(f"[amended by {a['file']}: {a['reason'].rstrip('.')}{why}]")
    if entry["inferred"]:
        marks.append(f"[inferred: {', '.join(sorted(entry['inferred']))}]")
    return marks


def _text(rows: list[dict[str, Any]]) -> str:
    out: list[str] = []
    for row in rows:
        n = len(row["releases"])
        out.append(
            f"{row['id']} ({row['type']}): {n} release{'s' if n != 1 else ''}, "
            f"{row['hazards']} hazard{'s' if row['hazards'] != 1 else ''}, "
            f"{row['migrations']} migration{'s' if row['migrations'] != 1 else ''}"
        )
        home = _root(row["file"]) if row["file"] else ""
        width = max((len(r["version"]) for r in row["releases"]), default=0)
        for rel in row["releases"]:
            marks = []
            if rel["unreleased"]:
                marks.append("[unreleased]")
            if rel["withdrawn"]:
                marks.append(f"[withdrawn {rel['withdrawn']['date']}]")
            marks += _origin_marks(rel, home or _root(rel["file"]))
            date = rel["date"] or "-"
            line = f"  {rel['version']:<{width}}  {date:<10}  {rel['title']}"
            out.append(" ".join([line, *marks]) if marks else line)
        for hz in row["hazard_entries"]:
            marks = _origin_marks(hz, home or _root(hz["file"]))
            if marks:
                out.append(" ".join([f"  hazard {hz['id']}", *marks]))
    return "\n".join(out)


@kb.group("new")
def new() -> None:
    """Scaffold a knowledge file: a skeleton whose TODO placeholders kb lint rejects until filled.

    \b
    Examples:
      upgradeplan kb new release agent-platform 4.16.0 --dir ./team-kb
      upgradeplan kb new hazard my-hazard --product agent-platform --reference owner/repo#1
    """


def _known_products(ctx: click.Context, directory: str) -> list[str]:
    from pathlib import Path

    dirs = [*_kb_dirs(ctx), *([directory] if Path(directory).is_dir() else [])]
    loaded = load_all(dirs, semantic=False)
    return sorted(set(loaded.kb.products) | set(loaded.kb.releases))


def _require_product(ctx: click.Context, product: str, directory: str) -> None:
    known = _known_products(ctx, directory)
    if product not in known:
        raise UnknownName("product", product, known)


@new.command("release")
@click.argument("product")
@click.argument("version")
@click.option("--title", default="TODO: the release in one line", help="Its one-line title.")
@click.option("--date", default=None, metavar="YYYY-MM-DD", help="Its release date, if known.")
@kb_new._dir_option
@click.pass_context
def new_release(
    ctx: click.Context, product: str, version: str, title: str, date: str | None, directory: str
) -> None:
    """A release of PRODUCT: DIR/releases/PRODUCT/VERSION.yaml.

    \b
    Examples:
      upgradeplan kb new release agent-platform 4.16.0 --dir ./team-kb
      upgradeplan kb new release agent-platform 4.16.0 --date 2026-12-01 --title "…"
    """
    from pathlib import Path

    api.check_version(version, "VERSION")
    _require_product(ctx, product, directory)
    path = Path(directory) / "releases" / product / f"{version}.yaml"
    kb_new.write_new(path, kb_new.release_text(product, version, title, date))
    click.echo(
        f"wrote {path}; fill in the TODO placeholders (kb lint rejects them: KB030), "
        f"then run 'upgradeplan kb lint {directory}'"
    )


@new.command("hazard")
@click.argument("hazard_id", metavar="ID")
@click.option("--product", required=True, help="The product whose upgrade it concerns.")
@click.option(
    "--reference",
    required=True,
    metavar="REF",
    help="Where it is documented: owner/repo#N, an http(s) URL or doc:<name>.",
)
@click.option(
    "--severity",
    type=click.Choice(["blocking", "warning", "notice"]),
    default="warning",
    show_default=True,
)
@click.option(
    "--landing",
    default=">=0.0.0-0",
    show_default=True,
    metavar="RANGE",
    help="The versions it applies on (a landing scope; change the scope in the file).",
)
@kb_new._dir_option
@click.pass_context
def new_hazard(
    ctx: click.Context,
    hazard_id: str,
    product: str,
    reference: str,
    severity: str,
    landing: str,
    directory: str,
) -> None:
    """A hazard: DIR/hazards/ID.yaml.

    \b
    Examples:
      upgradeplan kb new hazard egress-denied-hook --product agent-platform \\
        --reference giantswarm/agent-platform#413 --landing ">=4.7.14" --dir ./team-kb
    """
    from pathlib import Path

    kb_new.check_id("hazard", hazard_id)
    _require_product(ctx, product, directory)
    path = Path(directory) / "hazards" / f"{hazard_id}.yaml"
    text = kb_new.hazard_text(hazard_id, product, reference, severity, landing)
    kb_new.write_new(path, text)
    click.echo(
        f"wrote {path}; fill in the TODO placeholders (kb lint rejects them: KB030), "
        f"then run 'upgradeplan kb lint {directory}'"
    )


@new.command("migration")
@click.argument("migration_id", metavar="ID")
@click.option("--product", required=True, help="The product whose plans it belongs to.")
@kb_new._dir_option
@click.pass_context
def new_migration(ctx: click.Context, migration_id: str, product: str, directory: str) -> None:
    """A migration: DIR/migrations/ID.yaml.

    \b
    Examples:
      upgradeplan kb new migration reconcile-kagent --product agent-platform --dir ./team-kb
    """
    from pathlib import Path

    kb_new.check_id("migration", migration_id)
    _require_product(ctx, product, directory)
    path = Path(directory) / "migrations" / f"{migration_id}.yaml"
    kb_new.write_new(path, kb_new.migration_text(migration_id, product))
    click.echo(
        f"wrote {path}; fill in the TODO placeholders (kb lint rejects them: KB030), "
        f"then run 'upgradeplan kb lint {directory}'"
    )


kb.add_command(kb_packs.packs_cmd)
kb.add_command(kb_packs.releases_from_git_cmd)
