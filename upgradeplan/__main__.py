"""The console scripts and ``python -m upgradeplan``: run the click CLI and exit with its code."""

from __future__ import annotations

import sys

from upgradeplan.cli import cli, run


def main() -> None:
    """Entry point of ``upgradeplan`` and ``kubectl-upgradeplan``."""

    sys.exit(run(sys.argv[1:]))


# cobra's directives (kubectl reads them from the last line): 0 lets the shell complete file
# names, 2 adds no space after the word, 4 offers no file names.
_FILES, _NO_SPACE, _NO_FILES = 0, 2, 4


def kubectl_complete(argv: list[str] | None = None) -> None:
    """``kubectl_complete-upgradeplan ARGS... INCOMPLETE``: the candidates for the last word of
    ``kubectl upgradeplan ARGS... INCOMPLETE``, one a line (a tab before its description), then
    ``:DIRECTIVE`` — the protocol kubectl's completion speaks with plugins."""
    from click.shell_completion import ShellComplete

    args = list(sys.argv[1:] if argv is None else argv)
    incomplete = args.pop() if args else ""
    try:
        comp = ShellComplete(cli, {}, "kubectl upgradeplan", "_UPGRADEPLAN_COMPLETE")
        items = comp.get_completions(args, incomplete)
    except Exception:  # a completion prints no error into the user's shell
        items = []
    out = []
    for item in items:
        if item.type == "plain":
            out.append(f"{item.value}\t{item.help}" if item.help else str(item.value))
    if any(item.type in ("file", "dir") for item in items):
        directive = _FILES
    elif out and all(line.split("\t", 1)[0].endswith("=") for line in out):
        directive = _NO_FILES | _NO_SPACE
    else:
        directive = _NO_FILES
    sys.stdout.write("".join(f"{line}\n" for line in out) + f":{directive}\n")


if __name__ == "__main__":
    main()
