"""``upgradeplan kb new release|hazard|migration``: a skeleton whose placeholders lint rejects.

The skeleton holds every field a maintainer fills in, with what to write as a ``TODO:``
placeholder where there is nothing true to say yet. ``kb lint`` reports each placeholder
still there as KB030 (an error) and ``docs upgrade-md`` refuses to render one, so a skeleton
cannot reach an UPGRADE.md unfilled. Fields whose absence is only a lint warning (symptoms,
verify commands) are left out, so ``kb lint`` names what is still missing. Nothing is
invented: a hazard takes its reference from ``--reference``, a release its date only from
``--date``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from upgradeplan import errors

_ID = r"^[a-z0-9][a-z0-9-]*$"


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def release_text(product: str, version: str, title: str, date: str | None) -> str:
    lines = [
        "schema_version: 1",
        "kind: release",
        f"product: {_q(product)}",
        f"version: {_q(version)}",
        f"title: {_q(title)}",
    ]
    if date:
        lines.append(f"date: {_q(date)}")
    lines += [
        "summary: |",
        "  TODO: what the release changes for an operator, in the changelog's words.",
        "references: []  # TODO: the issue, pull request or changelog entry (owner/repo#N, URL)",
    ]
    return "\n".join(lines) + "\n"


def hazard_text(hazard_id: str, product: str, reference: str, severity: str, landing: str) -> str:
    return (
        "\n".join(
            [
                "schema_version: 1",
                "kind: hazard",
                f"id: {hazard_id}",
                'title: "TODO: what goes wrong, in one line"',
                f"product: {_q(product)}",
                f"severity: {severity}",
                "scope: landing  # or skip (stop + to), transition (from + to), state",
                f"landing: {{range: {_q(landing)}}}",
                "description: |",
                "  TODO: when it happens and why; mark what the sources do not say with inferred:.",
                "consequence: |",
                "  TODO: what the operator sees when it happens.",
                "avoid: |",
                "  TODO: what to do before the upgrade so it does not happen.",
                "recover: |",
                "  TODO: what to do once it has happened.",
                f"references: [{_q(reference)}]",
            ]
        )
        + "\n"
    )


def migration_text(migration_id: str, product: str) -> str:
    return (
        "\n".join(
            [
                "schema_version: 1",
                "kind: migration",
                f"id: {migration_id}",
                'title: "TODO: what the migration does, in one line"',
                "type: command  # or bom-pin, helmrelease-patch, json6902, values-edit, manifest",
                f"product: {_q(product)}",
                "when: before  # before, during or after the step",
                "description: |",
                "  TODO: what it changes and why that fixes the hazard.",
                "template: |",
                "  # TODO: the command; each value from params:, shell-quoted with the shq filter",
            ]
        )
        + "\n"
    )


def write_new(path: Path, text: str) -> None:
    """Write a new file (its directories too); an existing file is never replaced."""
    if path.exists():
        raise errors.BadInput("exists already; not replacing it", location=str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise errors.BadInput(f"cannot write: {exc.strerror}", location=str(path)) from None


def check_id(kind: str, value: str) -> None:
    import re

    if not re.match(_ID, value):
        raise errors.BadInput(
            f"{kind} id {value!r} must be lower-case letters, digits and '-'",
            hint="e.g. harness-missing-on-480",
        )


_dir_option = click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    default=".",
    show_default=True,
    help="The knowledge directory to write into (it holds releases/, hazards/, migrations/).",
)
