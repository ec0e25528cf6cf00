"""`upgradeplan docs upgrade-md`: whole document, chosen sections, --write and --check."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from upgradeplan.cli import cli


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["docs", "upgrade-md", *args])


def test_whole_document_by_default() -> None:
    result = run()
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# Upgrading agent-platform\n")


def test_next_only_and_a_range() -> None:
    nxt = run("--next")
    assert nxt.stdout.startswith("<!-- upgradeplan:begin next -->\n")
    assert nxt.stdout.splitlines()[1].startswith(r"## \<current\> → \<next\>")
    assert nxt.stdout.count("\n## ") == 1
    part = run("--from", "4.7.19", "--to", "4.8.1")
    headings = [ln for ln in part.stdout.splitlines() if ln.startswith("## ")]
    assert [h.split(" (")[0] for h in headings] == ["## 4.8.0 → 4.8.1", "## 4.7.x → 4.8.0"]


def test_write_and_check(tmp_path: Path) -> None:
    target = tmp_path / "UPGRADE.md"
    assert run("--write", str(target)).exit_code == 0
    assert run("--check", str(target)).exit_code == 0
    target.write_text(target.read_text() + "hand edit\n")  # outside the markers: kept
    assert run("--check", str(target)).exit_code == 0
    text = target.read_text()
    target.write_text(text.replace("### Operator action", "### Operator action (edited)", 1))
    stale = run("--check", str(target))
    assert stale.exit_code == 3
    assert "differ from the knowledge base" in stale.stderr
    assert "-### Operator action (edited)" in stale.stdout


def test_bad_input() -> None:
    assert run("--product", "nope").exit_code == 2
    bad = run("--from", "4.x.y")
    assert bad.exit_code == 2 and "--from" in bad.stderr
    both = run("--next", "--from", "4.7.18")
    assert both.exit_code == 2 and "--next cannot be combined" in both.stderr
    empty = run("--from", "4.11.0", "--to", "4.11.0")
    assert empty.exit_code == 2 and "no agent-platform release lies in" in empty.stderr


def test_an_open_end_includes_the_unreleased_section() -> None:
    heads = [ln for ln in run("--from", "4.16.0").stdout.splitlines() if ln.startswith("## ")]
    assert heads[0].startswith(r"## \<current\> → \<next\>")
    assert heads[1].startswith("## 4.16.0 → 4.20.0")
    assert len(heads) == 2
    released = run("--from", "4.16.0", "--to", "4.20.0").stdout
    # no unreleased section (a crossing note may still cite a section titled <current> → <next>)
    assert not [ln for ln in released.splitlines() if ln.startswith(r"## \<current\> →")]
