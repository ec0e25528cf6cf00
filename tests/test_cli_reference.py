"""docs/cli-reference.md is every command's --help, regenerated, never edited by hand."""

from __future__ import annotations

from conftest import REPO

from upgradeplan.cli import COMMANDS
from upgradeplan.commands import clidoc

DOC = REPO / "docs" / "cli-reference.md"


def test_cli_reference_has_not_drifted(update_golden: bool) -> None:
    text = clidoc.render()
    if update_golden:
        DOC.write_text(text, encoding="utf-8")
    assert DOC.is_file(), "docs/cli-reference.md is missing; run pytest --update-golden"
    assert DOC.read_text(encoding="utf-8") == text, (
        "docs/cli-reference.md differs from the commands' --help; regenerate it with "
        "'python -m upgradeplan.commands.clidoc --write docs/cli-reference.md' or "
        "'pytest --update-golden'"
    )


def test_every_command_and_subcommand_is_documented() -> None:
    names = [name for name, _help in clidoc.commands()]
    for command in COMMANDS:
        assert f"upgradeplan {command}" in names
    # nested groups are walked too
    assert "upgradeplan docs upgrade-md" in names
    assert "upgradeplan kb lint" in names
    text = clidoc.render()
    for name in names:
        assert f"## `{name}`" in text


def test_main_writes_and_prints(tmp_path: object) -> None:
    from pathlib import Path

    out = Path(str(tmp_path)) / "cli.md"
    assert clidoc.main(["--write", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == clidoc.render()
    assert clidoc.main(["--bogus"]) == 2


def _examples() -> list[tuple[str, list[str]]]:
    """(command, argv) for every line of every command's Examples block."""
    import shlex

    out: list[tuple[str, list[str]]] = []
    for name, help_text in clidoc.commands():
        lines = help_text.splitlines()
        starts = [i for i, line in enumerate(lines) if line.strip() == "Examples:"]
        if not starts:
            continue
        joined: list[str] = []
        for line in lines[starts[0] + 1 :]:
            if not line.startswith("    ") or not line.strip():
                break
            if joined and joined[-1].endswith("\\"):
                joined[-1] = joined[-1][:-1] + " " + line.strip()
            else:
                joined.append(line.strip())
        for text in joined:
            if "upgradeplan " not in text:
                continue
            text = text.split("upgradeplan ", 1)[1]
            text = text.split(')"', 1)[0]  # eval "$(upgradeplan completion bash)"
            words = shlex.split(text)
            cut = next((i for i, w in enumerate(words) if w in ("|", ">", "&&")), len(words))
            out.append((name, words[:cut]))
    return out


def test_every_command_has_examples_and_each_example_parses() -> None:
    from click.testing import CliRunner

    from upgradeplan.cli import cli

    examples = _examples()
    with_examples = {name for name, _ in examples}
    assert with_examples >= {name for name, _ in clidoc.commands()}, sorted(
        {name for name, _ in clidoc.commands()} - with_examples
    )
    for name, argv in examples:
        # --help is eager: it exits 0 once every option of the line was recognised
        result = CliRunner().invoke(cli, [*argv, "--help"])
        assert result.exit_code == 0, f"{name}: {' '.join(argv)}: {result.output}"
