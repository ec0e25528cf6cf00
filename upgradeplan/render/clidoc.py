"""docs/cli-reference.md from every command's ``--help``.

``python -m upgradeplan.render.clidoc`` prints it; ``--write PATH`` writes it. The command list
comes from :data:`upgradeplan.cli.COMMANDS` and nested groups, so a new command shows up
without editing this module; ``tests/test_cli_reference.py`` fails when the file drifts.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import click

WIDTH = 100

HEADER = (
    "# CLI reference\n\n"
    "Generated from each command's `--help` by `python -m upgradeplan.render.clidoc --write "
    "docs/cli-reference.md`;\ndo not edit by hand (`tests/test_cli_reference.py` checks it; "
    "`pytest --update-golden` regenerates it).\n"
)


def _walk(
    cmd: click.Command, ctx: click.Context, path: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
    yield path, cmd, ctx
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is None:
                raise RuntimeError(f"command {' '.join((*path, name))} cannot be loaded")
            sub_ctx = click.Context(
                sub, info_name=name, parent=ctx, terminal_width=WIDTH, max_content_width=WIDTH
            )
            yield from _walk(sub, sub_ctx, (*path, name))


def commands() -> list[tuple[str, str]]:
    """(full command name, --help text) of the group and every (nested) subcommand."""
    from upgradeplan.cli import cli

    root = click.Context(
        cli, info_name="upgradeplan", terminal_width=WIDTH, max_content_width=WIDTH
    )
    return [
        (" ".join(path), cmd.get_help(ctx)) for path, cmd, ctx in _walk(cli, root, ("upgradeplan",))
    ]


def render() -> str:
    parts = [HEADER]
    for name, text in commands():
        parts.append(f"\n## `{name}`\n\n```text\n{text.rstrip()}\n```\n")
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    text = render()
    if args[:1] == ["--write"] and len(args) == 2:
        with open(args[1], "w", encoding="utf-8") as fh:
            fh.write(text)
        return 0
    if args:
        print("usage: python -m upgradeplan.render.clidoc [--write PATH]", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
