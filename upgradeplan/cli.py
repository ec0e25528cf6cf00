"""The command line: parse flags, call :mod:`upgradeplan.api`, render, map errors to exit codes.

Subcommands live in :mod:`upgradeplan.commands` and are imported only when invoked, so
``upgradeplan --help`` and ``upgradeplan version`` stay light (no kubernetes, networkx, jinja2).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from upgradeplan import __version__
from upgradeplan.commands import global_options
from upgradeplan.commands.complete import bash_class
from upgradeplan.commands.global_options import group_options, nearest_options, start
from upgradeplan.errors import ExitCode, UpgradeplanError
from upgradeplan.redact import clean
from upgradeplan.suggest import nearest

# name -> (module, attribute, short help). The help text is here so `--help` needs no import.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "check": (
        "upgradeplan.commands.check",
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
        "upgradeplan.commands.snapshot",
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
    "help": ("upgradeplan.cli", "help_cmd", "Help about any command."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use and take the global options."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(entry[0])
        cmd = getattr(module, entry[1])
        assert isinstance(cmd, click.Command)

        global_options.inject(cmd)
        return cmd

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            close = nearest(name, self.list_commands(ctx))
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            _nearest_options(exc)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        """The one error boundary: typed errors become one line and their exit code."""
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:  # a subcommand's: only the nearest options
            _nearest_options(exc)
            raise
        except UpgradeplanError as exc:
            _traceback(ctx)

            click.echo(f"upgradeplan: error: {_one_line(clean(exc.one_line()))}", err=True)
            ctx.exit(int(exc.exit_code))
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            ctx.exit(int(ExitCode.SAFE))
        except Exception as exc:
            _traceback(ctx)

            hint = "" if (ctx.obj or {}).get("debug") else " (run with --debug for the traceback)"
            click.echo(
                f"upgradeplan: unexpected error: {type(exc).__name__}: "
                f"{_one_line(clean(str(exc)))}{hint}",
                err=True,
            )
            ctx.exit(int(ExitCode.ERROR))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


_LONGEST = 2000  # characters of an error line; a longer one loses its middle


def _one_line(text: str) -> str:
    """``text`` on one line: a message quoting a parser's (which may span lines) or a value
    holding a line break still ends the run with one line on stderr; one quoting a huge value
    keeps its start (the file, the field) and its end (what to do)."""
    if "\n" in text or "\r" in text:
        text = " ".join(text.split())
    if len(text) > _LONGEST:
        cut = len(text) - _LONGEST
        text = f"{text[: _LONGEST // 2]} …({cut} characters)… {text[-_LONGEST // 2 :]}"
    return text


def _traceback(ctx: click.Context) -> None:
    """With --debug, the traceback of the error being handled on stderr, secrets removed; the
    one-line message and the exit code follow as without it."""
    if not (ctx.obj or {}).get("debug"):
        return
    import traceback

    click.echo(clean(traceback.format_exc()).rstrip("\n"), err=True)


def _nearest_options(exc: click.NoSuchOption) -> None:
    # click's attribute is Final for type checkers; the message is built from it at show()
    setattr(exc, "possibilities", nearest_options(exc))  # noqa: B010


def _group_options(f: Any) -> Any:
    return group_options(f)


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    subcommand_metavar="COMMAND [ARGS]...",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Global options go before or after the command: `upgradeplan --context prod scan` "
    "and `upgradeplan scan --context prod` are the same.",
)
@click.version_option(
    __version__, "--version", prog_name="upgradeplan", message="%(prog)s %(version)s"
)
@_group_options
@click.pass_context
def cli(ctx: click.Context, /, **options: Any) -> None:
    """Is it safe to move this Helm/Flux installation to that target? If not, what is the safe way?

    \b
    Before anyone bumps a version pin: the verdict, the evidence and the safe path.

    \b
    Examples:
      upgradeplan check --gitops . --to agent-platform=4.8.1
      upgradeplan --context prod plan --to latest
      kubectl upgradeplan scan -n flux-giantswarm
      upgradeplan help check

    \b
    Exit codes: 0 safe, 1 unexpected error, 2 bad input, 3 a hazard applies or no safe
    path, 4 undetermined (a needed fact is missing). See docs/exit-codes.md.
    """

    start(ctx, options)
    if ctx.invoked_subcommand is None:  # bare `upgradeplan`: the help, as kubectl and helm do
        click.echo(ctx.get_help())
        ctx.exit(int(ExitCode.SAFE))


@click.command("version")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "yaml"]),
    default="text",
    show_default=True,
    help="Output format.",
)
def version_cmd(output: str) -> None:
    """Print the version of upgradeplan and of the bundled knowledge format.

    \b
    Examples:
      upgradeplan version
      upgradeplan version -o yaml
    """
    info = {
        "schema_version": 1,
        "version": __version__,
        "python": ".".join(str(p) for p in sys.version_info[:3]),
        "knowledge_schema_version": 1,
    }
    if output == "json":
        import json

        click.echo(json.dumps(info, indent=2, sort_keys=True))
    elif output == "yaml":
        import yaml

        click.echo(yaml.safe_dump(info, sort_keys=True), nl=False)
    else:
        click.echo(f"upgradeplan {__version__}")


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print a shell completion script (bash, zsh, fish).

    Completes commands and options, and from the knowledge and the kubeconfig: hazard,
    release and migration ids, products and their versions, kubeconfig contexts.
    PowerShell is not offered: click, which does the completing, has no PowerShell support.

    \b
    Examples:
      eval "$(upgradeplan completion bash)"
      upgradeplan completion zsh > "${fpath[1]}/_upgradeplan"
      upgradeplan completion fish > ~/.config/fish/completions/upgradeplan.fish
    """
    from click.shell_completion import get_completion_class

    comp_cls = bash_class() if shell == "bash" else get_completion_class(shell)
    assert comp_cls is not None
    comp = comp_cls(cli, {}, "upgradeplan", "_UPGRADEPLAN_COMPLETE")
    click.echo(comp.source())


@click.command("help")
@click.argument("words", nargs=-1, metavar="[COMMAND]...")
@click.pass_context
def help_cmd(ctx: click.Context, words: tuple[str, ...]) -> None:
    """Help about any command: `upgradeplan help kb lint` is `upgradeplan kb lint --help`.

    \b
    Examples:
      upgradeplan help
      upgradeplan help check
      upgradeplan help docs upgrade-md
    """
    root = ctx.find_root()
    cmd: click.Command = root.command
    sub = root
    for word in words:
        if not isinstance(cmd, click.Group):
            raise click.UsageError(f"{sub.command_path!r} has no subcommands", ctx)
        sub_cmd = cmd.get_command(sub, word)
        if sub_cmd is None:
            close = nearest(word, cmd.list_commands(sub))
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise click.UsageError(f"No such command {word!r}.{hint}", ctx)
        cmd = sub_cmd
        sub = click.Context(cmd, info_name=word, parent=sub)
    click.echo(sub.get_help())


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
