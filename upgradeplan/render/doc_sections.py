"""Generated sections inside a hand-kept UPGRADE.md: replace only what the markers enclose.

Every section ``docs upgrade-md`` renders sits between ``<!-- upgradeplan:begin VERSION -->``
and ``<!-- upgradeplan:end VERSION -->`` (invisible on GitHub); the markers are how it finds
its own sections again. :func:`splice` puts a new rendering into an existing file:

- a section whose markers are there is replaced where it is;
- a new one goes where the file's own version order puts it (the file is newest first): before
  the first section, hand-written or generated, of an older version (the ``<to>`` of its
  ``## <from> → <to> (…)`` heading), else after the last one of a newer version, else before
  the first ``## `` heading; the unreleased section (``next``) goes before the first ``## ``;
- a new one that a hand-written section already covers (the same heading, or for a release
  the same ``<from> → <to>``) is not inserted: no heading is written twice;
- every byte outside the markers stays as it was, and no hand-written section moves. A whole
  rendering (no --from/--to/--next) also drops generated sections the knowledge no longer has.

Headings inside fenced code blocks (a template) are not sections; nothing goes below a
``## Template`` section.
"""

from __future__ import annotations

import re

from upgradeplan.errors import InvalidVersion
from upgradeplan.kb.sources import TEMPLATE, Block, Heading, blocks, headings
from upgradeplan.versions import Version

_ARROW = re.compile(r"^##\s+(?P<from>.+?)\s+→\s+(?P<to>[^\s(]+)(?:\s+\((?P<title>.*)\))?\s*$")


def version_of(line: str) -> Version | None:
    """The version a ``## <from> → <to> (…)`` heading leads to (``4.0`` is 4.0.0); None for
    ``\\<next\\>``, ``4.7.x`` or a heading of another shape."""
    m = _ARROW.match(line)
    return _version(m.group("to")) if m else None


def span_of(line: str) -> str | None:
    """``<from> → <to>`` of a heading, normalised (``4.0`` and ``4.0.0`` alike)."""
    m = _ARROW.match(line)
    if m is None:
        return None
    to = _version(m.group("to"))
    return f"{m.group('from').strip()} → {to if to is not None else m.group('to')}"


def _version(text: str) -> Version | None:
    text = text.strip()
    if text.count(".") == 1:
        text += ".0"
    try:
        return Version.parse(text)
    except InvalidVersion:  # a label (\<next\>, 4.7.x) is no version
        return None


def _with_nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _first_line(text: str, prefix: str) -> str:
    return next((ln for ln in text.splitlines() if ln.startswith(prefix)), "")


def splice(current: str, rendered: str, *, whole: bool) -> str:
    """``current`` with the sections of ``rendered`` put in; nothing else changes."""
    return splice_report(current, rendered, whole=whole)[0]


def splice_report(current: str, rendered: str, *, whole: bool) -> tuple[str, list[str]]:
    """:func:`splice`, and one line per generated section left out because a hand-written
    section covers it.

    ``rendered`` holds marker-enclosed sections, newest first. ``whole``: it is the whole
    document, so a generated section of ``current`` it does not hold is removed.
    """
    new = blocks(rendered)
    wanted = {b.id for b in new}
    old = {b.id: b for b in blocks(current)}
    sections = headings(current)
    template = next((h.start for h in sections if h.line.strip() == TEMPLATE), len(current))
    ordered = [h for h in sections if h.start < template]
    written = [h for h in ordered if h.generated is None]
    titles = {h.line.strip() for h in written}
    spans = {span_of(h.line) for h in written} - {None}
    skipped: list[str] = []
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) on current
    inserts: dict[int, list[str]] = {}  # new sections by where they go, in rendered order
    for block in new:
        body = _with_nl(block.text)
        if block.id in old:
            have = old[block.id]
            edits.append((have.start, have.end, body))
            continue
        line = _first_line(block.text, "## ")
        covered = line.strip() in titles or (
            block.id != "next" and span_of(line) is not None and span_of(line) in spans
        )
        if covered:
            skipped.append(f"{block.id}: a hand-written section covers it ({line.strip()})")
            continue
        at = _position(block.id, ordered, template)
        inserts.setdefault(at, []).append(body)
    for at, bodies in inserts.items():
        edits.append((at, at, _spaced(current, at, "\n".join(bodies))))
    if whole:
        edits += [(b.start, b.end, "") for b in old.values() if b.id not in wanted]
    out = current
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + text + out[end:]
    return out, skipped


def _position(ident: str, ordered: list[Heading], template: int) -> int:
    """Where a new section of version ``ident`` goes among the file's ``ordered`` sections."""
    first = ordered[0].start if ordered else template
    mine = None if ident == "next" else _version(ident)
    if mine is None:
        return first
    keyed = [(h, _version(h.generated) if h.generated else version_of(h.line)) for h in ordered]
    for h, v in keyed:
        if v is not None and v < mine:
            return h.start
    newer = [i for i, (_, v) in enumerate(keyed) if v is not None and v > mine]
    if newer:
        after = newer[-1] + 1
        return keyed[after][0].start if after < len(keyed) else template
    return first


def _spaced(current: str, at: int, body: str) -> str:
    """``body`` to insert at ``at``, with a blank line to what is before and after it."""
    before = current[:at]
    if not before or before.endswith("\n\n"):
        lead = ""
    else:
        lead = "\n" if before.endswith("\n") else "\n\n"
    after = current[at:]
    trail = "\n" if after and not after.startswith("\n") else ""
    return lead + body + trail


__all__ = ["Block", "Heading", "blocks", "headings", "splice", "splice_report", "version_of"]
