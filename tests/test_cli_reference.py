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
