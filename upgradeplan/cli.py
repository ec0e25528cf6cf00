"""The command line: parse flags, call :mod:`upgradeplan.api`, render, map errors to exit codes.

Subcommands live in :mod:`upgradeplan.commands` and are imported only when invoked, so
``upgradeplan --help`` and ``upgradeplan version`` stay light (no kubernetes, networkx, jinja2).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Any

import click

from upgradeplan import __version__
from upgradeplan.errors import ExitCode, UpgradeplanError

# name -> (module, attribute, short help). The help text is here so `--help` needs no import.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": (
        "upgradeplan.commands.planning",
        "check",
        "Judge the move as asked; exit code for CI.",
    ),
    "plan": ("upgradeplan.commands.planning", "plan", "The safe path as ordered steps."),
    "patch": ("upgradeplan.commands.patch", "patch", "Migration patches for a plan."),
    "renovate": (
        "upgradeplan.commands.renovate",
        "renovate",
        "Renovate packageRules: grouped bumps that stop at required stops.",
    ),
    "scan": ("upgradeplan.commands.scan", "scan", "What an installation runs and pins."),
    "snapshot": (
        "upgradeplan.commands.scan",
        "snapshot",
        "A redacted snapshot of a live cluster for offline use.",
    ),
    "explain": (
        "upgradeplan.commands.planning",
        "explain",
        "A hazard, release or migration; with a state, its evidence.",
    ),
    "diagnose": (
        "upgradeplan.commands.planning",
        "diagnose",
        "Match pasted logs, events or status text against known symptoms.",
    ),
    "fleet": (
        "upgradeplan.commands.fleet",
        "fleet",
        "Judge many installations at once; roll-up per installation and hazard.",
    ),
    "docs": ("upgradeplan.commands.docs", "docs", "Render UPGRADE.md from the knowledge base."),
    "graph": ("upgradeplan.commands.graph", "graph", "The release graph as mermaid or dot."),
    "kb": ("upgradeplan.commands.kb", "kb", "Lint and list the knowledge base."),
    "version": ("upgradeplan.cli", "version_cmd", "Print the version."),
    "completion": ("upgradeplan.cli", "completion_cmd", "Print a shell completion script."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        cmd = getattr(module, entry[1])
        assert isinstance(cmd, click.Command)
        return cmd

    def invoke(self, ctx: click.Context) -> Any:
        """The one error boundary: typed errors become one line and their exit code."""
        try:
            return super().invoke(ctx)
        except UpgradeplanError as exc:
            if (ctx.obj or {}).get("debug"):
                raise
            from upgradeplan.redact import clean  # secrets a reader registered never shown

            click.echo(f"upgradeplan: error: {clean(exc.one_line())}", err=True)
            ctx.exit(int(exc.exit_code))
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            ctx.exit(int(ExitCode.SAFE))
        except Exception as exc:
            if (ctx.obj or {}).get("debug"):
                raise
            click.echo(
                f"upgradeplan: unexpected error: {type(exc).__name__}: {exc} "
                "(run with --debug for the traceback)",
                err=True,
            )
            ctx.exit(int(ExitCode.ERROR))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, "--version", prog_name="upgradeplan", message="%(prog)s %(version)s"
)
@click.option(
    "--kb",
    "kb_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Extra knowledge directory, merged with the bundled one "
    "(repeatable; also UPGRADEPLAN_KB).",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour in text output (NO_COLOR is honoured).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, kb_dirs: tuple[str, ...], color: str, debug: bool) -> None:
    """Is it safe to move this Helm/Flux installation to that target? If not, what is the safe way?

    \b
    Before anyone bumps a version pin: the verdict, the evidence and the safe path.

    \b
    Exit codes: 0 safe, 1 unexpected error, 2 bad input, 3 a hazard applies or no safe
    path, 4 undetermined (a needed fact is missing). See docs/exit-codes.md.
    """
    env_dirs = [d for d in os.environ.get("UPGRADEPLAN_KB", "").split(os.pathsep) if d]
    ctx.obj = {
        "kb_dirs": tuple(env_dirs) + tuple(kb_dirs),
        "color": color,
        "debug": debug,
    }


@click.command("version")
@click.option(
    "-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def version_cmd(output: str) -> None:
    """Print the version of upgradeplan and of the bundled knowledge format."""
    info = {
        "schema_version": 1,
        "version": __version__,
        "python": ".".join(str(p) for p in sys.version_info[:3]),
        "knowledge_schema_version": 1,
    }
    if output == "json":
        click.echo(json.dumps(info, indent=2, sort_keys=True))
    else:
        click.echo(f"upgradeplan {__version__}")


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print a completion script: eval "$(upgradeplan completion bash)"."""
    from click.shell_completion import get_completion_class

    comp_cls = get_completion_class(shell)
    assert comp_cls is not None
    comp = comp_cls(cli, {}, "upgradeplan", "_UPGRADEPLAN_COMPLETE")
    click.echo(comp.source())


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI and exit with its code."""
    sys.exit(run(list(sys.argv[1:] if argv is None else argv)))


def run(args: list[str]) -> int:
    """Run the CLI with ``args`` and return the exit code instead of exiting."""
    invoked_as = os.path.basename(sys.argv[0]) if sys.argv else ""
    prog = "kubectl upgradeplan" if invoked_as.startswith("kubectl-") else "upgradeplan"
    try:
        rv = cli.main(args=args, prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("upgradeplan: aborted", err=True)
        return int(ExitCode.ERROR)
    except click.ClickException as exc:
        exc.show()
        return int(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("upgradeplan: interrupted", err=True)
        return 130
    return int(rv) if isinstance(rv, int) else int(ExitCode.SAFE)
