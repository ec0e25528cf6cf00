"""docs upgrade-md --write changes only the generated sections; --check prints a diff."""

from __future__ import annotations

from pathlib import Path

from support.cli import invoke

from upgradeplan.render.doc_sections import blocks, splice

INTRO = (
    "# Upgrading our platform\n"
    "\n"
    "Hand-written: read this before anything else.\n"
    "<!-- a comment of ours -->\n"
    "\n"
)
OLDER = (
    "## 1.0.0 → 1.1.0 (written by hand, long ago)\n"
    "\n"
    "### Operator action\n"
    "\n"
    "- **None.**   trailing spaces kept   \n"
)


def _next_section() -> str:
    result = invoke("docs", "upgrade-md", "--next")
    assert result.exit_code == 0, result.output
    return result.stdout


def test_write_next_keeps_the_hand_written_bytes(tmp_path: Path) -> None:
    target = tmp_path / "UPGRADE.md"
    target.write_text(INTRO + OLDER, encoding="utf-8")
    result = invoke("docs", "upgrade-md", "--next", "--write", str(target))
    assert result.exit_code == 0, result.output
    after = target.read_text(encoding="utf-8")
    [block] = blocks(after)
    assert block.id == "next"
    assert after[: block.start] == INTRO  # the introduction, byte for byte
    assert after[block.end :].lstrip("\n") == OLDER  # the older hand-written section
    assert block.text == _next_section()
    # a second write changes nothing
    before = after
    assert invoke("docs", "upgrade-md", "--next", "--write", str(target)).exit_code == 0
    assert target.read_text(encoding="utf-8") == before


def test_write_replaces_only_the_section_between_its_markers(tmp_path: Path) -> None:
    target = tmp_path / "UPGRADE.md"
    stale = "<!-- upgradeplan:begin next -->\n## old text\n<!-- upgradeplan:end next -->\n"
    target.write_text(INTRO + stale + "\n" + OLDER, encoding="utf-8")
    assert invoke("docs", "upgrade-md", "--next", "--write", str(target)).exit_code == 0
    after = target.read_text(encoding="utf-8")
    assert after == INTRO + _next_section() + "\n" + OLDER


def test_check_prints_a_diff_and_exits_3(tmp_path: Path) -> None:
    target = tmp_path / "UPGRADE.md"
    stale = "<!-- upgradeplan:begin next -->\n## old text\n<!-- upgradeplan:end next -->\n"
    target.write_text(INTRO + stale + OLDER, encoding="utf-8")
    result = invoke("docs", "upgrade-md", "--next", "--check", str(target))
    assert result.exit_code == 3
    assert f"--- {target} (as it is)" in result.stdout
    assert "-## old text" in result.stdout
    assert "+## \\<current\\> → \\<next\\>" in result.stdout
    assert "--write" in result.stderr
    assert invoke("docs", "upgrade-md", "--next", "--write", str(target)).exit_code == 0
    assert invoke("docs", "upgrade-md", "--next", "--check", str(target)).exit_code == 0


def test_whole_write_into_a_new_file_then_check_is_clean(tmp_path: Path) -> None:
    target = tmp_path / "UPGRADE.md"
    assert invoke("docs", "upgrade-md", "--write", str(target)).exit_code == 0
    assert target.read_text(encoding="utf-8") == invoke("docs", "upgrade-md").stdout
    assert invoke("docs", "upgrade-md", "--check", str(target)).exit_code == 0


def test_splice_orders_new_sections_and_drops_gone_ones_on_a_whole_rendering() -> None:
    def sec(v: str, body: str = "x") -> str:
        return f"<!-- upgradeplan:begin {v} -->\n## {v}\n{body}\n<!-- upgradeplan:end {v} -->\n"

    current = "# T\n\n" + sec("2.0.0", "old") + "\nmine\n\n" + sec("0.9.0")
    rendered = sec("3.0.0") + "\n" + sec("2.0.0", "new") + "\n" + sec("1.0.0")
    out = splice(current, rendered, whole=True)
    assert [b.id for b in blocks(out)] == ["3.0.0", "2.0.0", "1.0.0"]
    assert "mine\n" in out and "old" not in out and "0.9.0" not in out
    partial = splice(current, sec("3.0.0"), whole=False)
    assert [b.id for b in blocks(partial)] == ["3.0.0", "2.0.0", "0.9.0"]


SHAPED = Path(__file__).resolve().parent / "fixtures" / "upgrade-md" / "shaped.md"


def _hand_written(text: str) -> list[str]:
    """The hand-written sections of ``text`` (each from its heading to the next section)."""
    from upgradeplan.render.doc_sections import headings

    cuts = headings(text)
    out = []
    for i, h in enumerate(cuts):
        end = cuts[i + 1].start if i + 1 < len(cuts) else len(text)
        if h.generated is None:
            out.append(text[h.start : end].rstrip("\n"))
    return out


def test_write_into_a_file_shaped_like_the_real_one_keeps_its_order(tmp_path: Path) -> None:
    """An UPGRADE.md with an H1, newest-first sections (most headed \\<current\\> →
    \\<next\\>) and a closing template: --write puts each generated section where the file's
    version order puts it, leaves out those a hand-written section covers, moves and changes
    no hand-written byte, and --check is then clean."""
    from upgradeplan.render.doc_sections import headings, version_of

    original = SHAPED.read_text(encoding="utf-8")
    target = tmp_path / "UPGRADE.md"
    target.write_text(original, encoding="utf-8")
    result = invoke("docs", "upgrade-md", "--write", str(target))
    assert result.exit_code == 0, result.output
    assert "not inserted, 4.8.0: a hand-written section covers it" in result.stderr
    assert "not inserted, 4.0.0: a hand-written section covers it" in result.stderr
    assert "not inserted, next: a hand-written section covers it" in result.stderr
    after = target.read_text(encoding="utf-8")
    assert invoke("docs", "upgrade-md", "--check", str(target)).exit_code == 0
    # no heading twice; the hand-written sections byte for byte, in their order
    lines = [h.line for h in headings(after)]
    assert len(lines) == len(set(lines))
    assert _hand_written(after) == _hand_written(original)
    assert after.startswith(original[: original.index("## ")])  # the H1 and intro
    assert after.endswith(original[original.index("## Template") :])  # nothing below it
    # the generated sections newest first, each in its era of the file
    order = [(h.generated, h.line) for h in headings(after)]
    ids = [g for g, _ in order if g is not None]
    versions = [version_of(f"## x → {i}") for i in ids]
    assert versions == sorted(versions, reverse=True)  # type: ignore[type-var]
    assert ids[0] == "4.20.0" and ids[-1] == "3.10.0"
    assert "4.8.0" not in ids and "4.0.0" not in ids and "next" not in ids
    where = {line: i for i, (_, line) in enumerate(order)}
    handover = where[next(ln for ln in where if ln.startswith("## 4.7.x → 4.8.0"))]
    cutover = where[next(ln for ln in where if ln.startswith("## 3.x → 4.0"))]
    rename = where[next(ln for ln in where if ln.startswith("## 2.5.4 → 2.6.0"))]
    for i, (generated, line) in enumerate(order):
        if generated is None:
            continue
        v = version_of(line) or version_of(f"## x → {generated}")
        assert v is not None
        if v.major == 4 and v.minor >= 8:
            assert i < handover, line
        elif v.major == 4:
            assert handover < i < cutover, line
        else:
            assert cutover < i < rename, line
    # a second write changes nothing
    assert invoke("docs", "upgrade-md", "--write", str(target)).exit_code == 0
    assert target.read_text(encoding="utf-8") == after
