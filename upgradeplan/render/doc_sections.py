"""Generated sections inside a hand-kept UPGRADE.md: replace only what the markers enclose.

Every section ``docs upgrade-md`` renders sits between ``<!-- upgradeplan:begin VERSION -->``
and ``<!-- upgradeplan:end VERSION -->`` (invisible on GitHub). :func:`splice` puts a new
rendering into an existing file: a section whose markers are there is replaced in place, a new
one goes before the older generated sections (or before the first ``## `` heading, after a
hand-written introduction), and every byte outside the markers stays as it was. A whole
rendering (no --from/--to/--next) also drops generated sections the knowledge no longer has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BLOCK = re.compile(
    r"^<!-- upgradeplan:begin (?P<id>\S+) -->\n.*?^<!-- upgradeplan:end (?P=id) -->\n?",
    re.M | re.S,
)
_HEADING = re.compile(r"^## ", re.M)


@dataclass(frozen=True)
class Block:
    id: str
    start: int
    end: int
    text: str


def blocks(text: str) -> list[Block]:
    """The generated sections of ``text``, in file order."""
    return [Block(m.group("id"), m.start(), m.end(), m.group(0)) for m in _BLOCK.finditer(text)]


def _with_nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def splice(current: str, rendered: str, *, whole: bool) -> str:
    """``current`` with the sections of ``rendered`` put in; nothing else changes.

    ``rendered`` holds marker-enclosed sections, newest first. ``whole``: it is the whole
    document, so a generated section of ``current`` it does not hold is removed.
    """
    new = blocks(rendered)
    wanted = {b.id for b in new}
    old = {b.id: b for b in blocks(current)}
    # edits as (start, end, replacement) on current; applied back to front
    edits: list[tuple[int, int, str]] = []
    inserts: dict[int, list[str]] = {}  # new sections by where they go, in rendered order
    anchor: int | None = None  # where the next new section goes: after the one placed last
    for block in new:
        body = _with_nl(block.text)
        if block.id in old:
            have = old[block.id]
            edits.append((have.start, have.end, body))
            anchor = have.end
            continue
        at = anchor if anchor is not None else _first_position(current, old)
        inserts.setdefault(at, []).append(body)
    for at, bodies in inserts.items():
        edits.append((at, at, _spaced(current, at, "\n".join(bodies))))
    if whole:
        edits += [(b.start, b.end, "") for b in old.values() if b.id not in wanted]
    out = current
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        out = out[:start] + text + out[end:]
    return out


def _first_position(current: str, old: dict[str, Block]) -> int:
    """Before the first generated section, else the first ``## `` heading, else the end."""
    if old:
        return min(b.start for b in old.values())
    m = _HEADING.search(current)
    return m.start() if m else len(current)


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


__all__ = ["Block", "blocks", "splice"]
