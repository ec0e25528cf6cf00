"""``kb verify-quotes`` and ``kb coverage`` on a small UPGRADE.md and CHANGELOG.md of this
repository's own words (tests/fixtures/upgrade-md/small) and the knowledge that quotes them
(tests/fixtures/kb-quoted)."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.cli import invoke

from upgradeplan.kb.sources import plain, sections

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KB = str(FIXTURES / "kb-quoted")
SMALL = FIXTURES / "upgrade-md" / "small"
SOURCES = ("--source", str(SMALL / "UPGRADE.md"), "--source", str(SMALL / "CHANGELOG.md"))


def test_every_quote_of_the_fragment_is_found_in_its_source() -> None:
    result = invoke("--kb", KB, "kb", "verify-quotes", "--no-bundled", *SOURCES)
    assert (result.exit_code, result.stdout) == (0, "")
    assert "3 quotes checked: 3 found, 0 not found" in result.stderr


def test_a_quote_changed_or_under_the_wrong_section_is_reported_at_its_line(
    tmp_path: Path,
) -> None:
    root = tmp_path / "kb"
    shutil.copytree(KB, root)
    release = root / "releases" / "gadget" / "2.0.0.yaml"
    release.write_text(
        release.read_text().replace("fails the\n      upgrade", "breaks the upgrade")
    )
    first = root / "releases" / "gadget" / "1.0.0.yaml"
    first.write_text(
        first.read_text().replace(
            "0.9.0 → 1.0.0 (first stable release)", "1.0.0 → 2.0.0 (the `legacy.mode` key is gone)"
        )
    )
    result = invoke("--kb", str(root), "kb", "verify-quotes", "--no-bundled", *SOURCES)
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("kb/releases/gadget/1.0.0.yaml:12 release gadget 1.0.0: in ")
    assert "not under '1.0.0 → 2.0.0 (the `legacy.mode` key is gone)'" in lines[0]
    assert lines[1].startswith("kb/releases/gadget/2.0.0.yaml:12 release gadget 2.0.0: not in")
    assert "1 found, 2 not found" in result.stderr


def test_quotes_of_a_source_not_given_are_counted_not_checked() -> None:
    only = ("--source", str(SMALL / "UPGRADE.md"))
    result = invoke("--kb", KB, "kb", "verify-quotes", "--no-bundled", *only)
    assert result.exit_code == 0
    assert "2 quotes checked: 2 found, 0 not found; 1 of other sources not checked" in (
        result.stderr
    )


def test_one_source_at_two_versions_is_checked_in_either_never_across(tmp_path: Path) -> None:
    text = (SMALL / "UPGRADE.md").read_text()
    cut = text.index("## 0.9.0 → 1.0.0")
    (tmp_path / "v1").mkdir()
    (tmp_path / "v2").mkdir()
    (tmp_path / "v1" / "UPGRADE.md").write_text("# Upgrading gadget\n\n" + text[cut:])
    (tmp_path / "v2" / "UPGRADE.md").write_text(text[:cut])
    both = [arg for v in ("v1", "v2") for arg in ("--source", str(tmp_path / v / "UPGRADE.md"))]
    result = invoke("--kb", KB, "kb", "verify-quotes", "--no-bundled", *both)
    assert (result.exit_code, result.stdout) == (0, "")
    assert "2 quotes checked: 2 found, 0 not found" in result.stderr

    root = tmp_path / "kb"
    shutil.copytree(KB, root)
    first = root / "releases" / "gadget" / "1.0.0.yaml"
    first.write_text(
        first.read_text().replace(
            '"Nothing to do for anyone."', '"Nothing to do for anyone. # Upgrading gadget"'
        )
    )
    across = invoke("--kb", str(root), "kb", "verify-quotes", "--no-bundled", *both)
    assert across.exit_code == 2
    assert across.stdout.startswith("kb/releases/gadget/1.0.0.yaml:12 release gadget 1.0.0: not in")


def test_coverage_has_a_row_per_section_modelled_or_not_and_why() -> None:
    result = invoke(
        "--kb", KB, "kb", "coverage", "--no-bundled", "--upgrade-md", str(SMALL / "UPGRADE.md")
    )
    assert result.exit_code == 0, result.output
    rows = [ln for ln in result.stdout.splitlines() if ln.startswith("| UPGRADE.md ")]
    assert rows == [
        "| UPGRADE.md 1 | ## \\<current\\> → \\<next\\> (the cache is smaller by default) | "
        "not modelled: an existing installation keeps its cache; nothing to do |",
        "| UPGRADE.md 2 | ## 1.0.0 → 2.0.0 (the `legacy.mode` key is gone) | modelled by "
        "release `gadget 2.0.0` |",
        "| UPGRADE.md 3 | ## 0.9.0 → 1.0.0 (first stable release) | modelled by "
        "release `gadget 1.0.0` |",
    ]
    assert "3 sections: 2 modelled, 1 not modelled" in result.stdout
    assert "| #12 |" not in result.stdout
    assert "UPGRADE.md: 3 sections, 2 modelled, 1 not modelled, 0 unaccounted" in result.stderr


def test_an_unaccounted_section_is_named_and_exits_2(tmp_path: Path) -> None:
    upgrade = tmp_path / "UPGRADE.md"
    text = (SMALL / "UPGRADE.md").read_text()
    upgrade.write_text(text.replace("## Template", "## 2.0.0 → 2.1.0 (new)\n\nNew.\n\n## Template"))
    result = invoke("--kb", KB, "kb", "coverage", "--no-bundled", "--upgrade-md", str(upgrade))
    assert result.exit_code == 2
    assert "unaccounted: UPGRADE.md 4 ## 2.0.0 → 2.1.0 (new)" in result.stderr
    assert "| UPGRADE.md 4 | ## 2.0.0 → 2.1.0 (new) | **unaccounted** |" in result.stdout


def test_coverage_writes_the_document(tmp_path: Path) -> None:
    out = tmp_path / "sources.md"
    args = ("--upgrade-md", str(SMALL / "UPGRADE.md"), "--write", str(out))
    result = invoke("--kb", KB, "kb", "coverage", "--no-bundled", *args)
    assert result.exit_code == 0
    assert out.read_text().startswith("# Where the bundled knowledge comes from\n")


def test_sections_stop_at_the_template_and_skip_fenced_headings() -> None:
    text = (SMALL / "UPGRADE.md").read_text()
    assert [s.number for s in sections(text)] == [1, 2, 3]
    assert plain("a\n   b \\<c\\>") == "a b <c>"


def test_a_crossing_note_models_a_section_that_names_no_release(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    shutil.copytree(KB, root)
    product = root / "products" / "gadget.yaml"
    text = product.read_text().split("not_modelled:")[0]
    product.write_text(
        text
        + "crossing_notes:\n"
        + "  - id: smaller-cache\n"
        + '    shipped: ">1.0.0 <=2.0.0"\n'
        + "    title: a new installation gets a smaller cache\n"
        + "    text: nothing to do; an existing installation keeps its cache.\n"
        + "    source: UPGRADE.md\n"
        + '    section: "\\\\<current\\\\> → \\\\<next\\\\> (the cache is smaller by default)"\n'
        + '    quote: "An existing one keeps the cache it has."\n'
        + "    inferred: the section names no release; 2.0.0 is the newest\n"
    )
    upgrade = ("--upgrade-md", str(SMALL / "UPGRADE.md"))
    result = invoke("--kb", str(root), "kb", "coverage", "--no-bundled", *upgrade)
    assert result.exit_code == 0, result.output
    assert (
        "| UPGRADE.md 1 | ## \\<current\\> → \\<next\\> (the cache is smaller by default) | "
        "modelled by note `gadget:smaller-cache` |"
    ) in result.stdout
    assert "3 sections: 3 modelled, 0 not modelled" in result.stdout
    checked = invoke("--kb", str(root), "kb", "verify-quotes", "--no-bundled", *SOURCES)
    assert checked.exit_code == 0 and "4 quotes checked: 4 found" in checked.stderr
    product.write_text(product.read_text().replace("keeps the cache it has", "keeps its cache"))
    checked = invoke("--kb", str(root), "kb", "verify-quotes", "--no-bundled", *SOURCES)
    assert checked.exit_code == 2
    assert "note gadget:smaller-cache: not in UPGRADE.md" in checked.stdout
