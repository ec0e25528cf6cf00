"""docs/knowledge-sources.md: the table that traces the bundled knowledge to its sources.

It lists every section of the real giantswarm/agent-platform UPGRADE.md at the commit it names,
each modelled by entries that exist or "not modelled" with a reason, and every reference a
bundled hazard cites.
"""

from __future__ import annotations

import re
from pathlib import Path

from upgradeplan.kb.crossing import is_derived
from upgradeplan.model import KnowledgeBase

DOC = Path(__file__).resolve().parents[1] / "docs" / "knowledge-sources.md"
COMMIT = "0025c4d9098dbf2787ab913349d9218d894aadcc"


def _rows() -> list[list[str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("| ") and not line.startswith("| source ") and "---" not in line[:6]:
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows.append(cells)
    return rows


def test_the_table_names_the_commit_and_lists_all_65_upgrade_sections() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert COMMIT in text
    sections = [r for r in _rows() if r[0].startswith("UPGRADE.md ")]
    assert [r[0] for r in sections] == [f"UPGRADE.md {n}" for n in range(1, 66)]
    for source, heading, entries in sections:
        assert heading.startswith("## ") and " → " in heading and heading.endswith(")"), source
        assert entries.startswith(("modelled by ", "not modelled: ")), source
        if "not modelled" in entries:
            reason = entries.split("not modelled", 1)[1].lstrip(": ")
            assert len(reason) > 10, source


def test_every_reference_of_a_bundled_hazard_is_in_the_table(kb: KnowledgeBase) -> None:
    cited = " ".join(" ".join(r) for r in _rows())
    for hazard in kb.hazards.values():
        if is_derived(hazard.id):  # a release's crossing prerequisite cites its section
            continue
        for ref in hazard.references:
            number = ref.split("#", 1)[1] if "#" in ref and "/" in ref else None
            owner_repo = ref.split("#", 1)[0]
            found = ref in cited or (
                number is not None and owner_repo in cited and f"#{number}" in cited
            )
            assert found, f"{hazard.id}: {ref} is not in docs/knowledge-sources.md"


_LIST = r"((?:`[^`]+`(?: \([^)]*\))?(?:, | and )?)+)"


def test_every_entry_the_table_names_exists(kb: KnowledgeBase) -> None:
    checked = 0
    for row in _rows():
        for kind, items in re.findall(r"\b(hazards?|migrations?|releases?) " + _LIST, row[2]):
            for name in re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", items)):
                checked += 1
                if kind.startswith("hazard"):
                    assert name in kb.hazards, (row[0], name)
                elif kind.startswith("migration"):
                    assert name in kb.migrations, (row[0], name)
                else:
                    product, _, version = name.partition(" ")
                    assert kb.release(product, version) is not None, (row[0], name)
    assert checked > 60


def test_every_bundled_hazard_is_named_in_the_table(kb: KnowledgeBase) -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [
        h
        for h in kb.hazards
        if not is_derived(h)
        and f"`{h}`" not in text
        and not (h.startswith("delegate-") and "`delegate-*`" in text)
    ]
    assert missing == []


GOLDEN = Path(__file__).resolve().parent / "golden" / "UPGRADE-agent-platform.md"


def _golden_sections() -> dict[str, str]:
    """heading version ('next' for \\<current\\> → \\<next\\>) -> the section's text."""
    out = {}
    for chunk in re.split(r"(?m)^## ", GOLDEN.read_text(encoding="utf-8"))[1:]:
        head = chunk.splitlines()[0]
        arrow = head.split(" (", 1)[0]
        version = arrow.split(" → ")[-1].strip()
        out["next" if version == r"\<next\>" else version] = chunk
    return out


def test_the_generated_upgrade_md_has_a_section_for_each_modelled_real_section(
    kb: KnowledgeBase,
) -> None:
    sections = _golden_sections()
    text = GOLDEN.read_text(encoding="utf-8")
    flat = " ".join(text.split())
    titles = {n.id: n.title for n in kb.products["agent-platform"].crossing_notes}
    for source, _heading, entries in _rows():
        if not source.startswith("UPGRADE.md ") or not entries.startswith("modelled by "):
            continue
        modelled = entries.split("; not modelled", 1)[0]
        versions = re.findall(r"`agent-platform ([^`]+)`", modelled)
        hazards = re.findall(r"hazards? ((?:`[a-z0-9-]+`(?:, )?)+)", modelled)
        ids = [i for group in hazards for i in re.findall(r"`([^`]+)`", group)]
        notes = re.findall(r"`agent-platform:([a-z0-9-]+)`", modelled)
        for note in notes:  # a crossing note: its bullet, once
            assert flat.count(f"- **{titles[note]}**") == 1, (source, note)
        if not (versions or ids or notes):  # a component's release alone (a kagent build)
            assert re.search(r"releases? `(kagent|substrate)", modelled), source
            continue
        for version in versions:
            assert version in sections, (source, version)
        for hazard_id in ids:
            assert f"`{hazard_id}`" in text, (source, hazard_id)


def test_the_generated_upgrade_md_has_no_section_for_a_release_no_source_names() -> None:
    # a release is named by a source when the table traces it to a section or an entry
    named = {v for row in _rows() for v in re.findall(r"`agent-platform ([^`]+)`", row[2])}
    for version in _golden_sections():
        assert version in named, version
    for invented in ("3.9.0", "4.7.11", "4.7.15", "4.10.7"):
        assert invented not in _golden_sections()


def test_no_hazard_bullet_is_repeated_across_sections(kb: KnowledgeBase) -> None:
    sections = _golden_sections()
    for hazard in kb.hazards_for("agent-platform"):
        if is_derived(hazard.id):  # not rendered as a bullet of its own
            continue
        holding = [v for v, text in sections.items() if f"`{hazard.id}`" in text]
        assert len(holding) == 1, (hazard.id, holding)


def test_every_bundled_migration_cites_where_its_steps_come_from(kb: KnowledgeBase) -> None:
    for mig in kb.migrations.values():
        assert mig.references, mig.id
    delegate = [m for m in kb.migrations.values() if m.product == "harness-delegate"]
    assert len(delegate) == 6
    assert all(m.references == ("doc:harness-delegate-field-guide-2026",) for m in delegate)
    # the references table of docs/knowledge-sources.md names them
    row = next(r for r in _rows() if r[1] == "doc:harness-delegate-field-guide-2026")
    assert "migrations `delegate-api-key-env`" in row[2]
