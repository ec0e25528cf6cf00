"""What the knowledge rests on: its quotes checked against the source files, and the coverage
of an UPGRADE.md (``kb verify-quotes``, ``kb coverage``).

Every entry may carry ``quotes:`` (``source``, the file's name; ``section``, the heading it is
under; ``quote``, a sentence copied from it). A product may list the sections of its
UPGRADE.md it does not model, with the reason (``not_modelled: [{section, reason}]``). Both
are read from the parsed documents, so a quote is reported at its file and line.

Text is compared with its white space collapsed and Markdown's ``\\<``/``\\>`` escapes
dropped: a quote may be wrapped differently from its source, never worded differently.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from msgspec import Struct, field

from upgradeplan.errors import BadInput
from upgradeplan.kb.documents import Document, Loaded
from upgradeplan.model import Location

_SPACE = re.compile(r"\s+")
_BLOCK = re.compile(
    r"^<!-- upgradeplan:begin (?P<id>\S+) -->\n.*?^<!-- upgradeplan:end (?P=id) -->\n?",
    re.M | re.S,
)
_FENCE = re.compile(r"^(```|~~~)")
TEMPLATE = "## Template"


class Block(Struct, frozen=True):
    id: str
    start: int
    end: int
    text: str


class Heading(Struct, frozen=True):
    """One ``## `` section of a file: where it starts and what it covers."""

    start: int  # offset of the section (its begin marker when generated)
    line: str  # the heading line, without its newline
    generated: str | None  # the block id when the section is a generated one


def blocks(text: str) -> list[Block]:
    """The generated sections of ``text``, in file order."""
    return [Block(m.group("id"), m.start(), m.end(), m.group(0)) for m in _BLOCK.finditer(text)]


def headings(text: str) -> list[Heading]:
    """The ``## `` sections of ``text`` in file order (not those in fenced code)."""
    owned = {b.start: b for b in blocks(text)}
    spans = [(b.start, b.end) for b in owned.values()]
    out: list[Heading] = []
    fenced = False
    pos = 0
    for line in text.splitlines(keepends=True):
        at = pos
        pos += len(line)
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not line.startswith("## "):
            continue
        inside = next((s for s, e in spans if s <= at < e), None)
        if inside is not None:
            block = owned[inside]
            if any(h.start == inside for h in out):
                continue  # the block's first heading names it
            out.append(Heading(inside, line.rstrip("\n"), block.id))
        else:
            out.append(Heading(at, line.rstrip("\n"), None))
    return out


def plain(text: str) -> str:
    """``text`` as quotes are compared: escapes dropped, white space collapsed."""
    return _SPACE.sub(" ", text.replace("\\<", "<").replace("\\>", ">")).strip()


def section_title(heading: str) -> str:
    """A heading as a quote's ``section`` names it: without ``## ``, compared plainly."""
    return plain(heading.lstrip("#"))


class Quote(Struct, frozen=True):
    """One ``quotes:`` item of a knowledge entry."""

    entry: str  # "hazard kagent-substrate-pins-apart", "release agent-platform 4.8.1"
    source: str  # the source file's name, as written
    section: str
    text: str
    location: Location


class Section(Struct, frozen=True):
    """One ``## `` section of a Markdown source: its heading and its text."""

    number: int  # 1-based, in file order
    heading: str  # the heading line without "## "
    text: str


class Coverage(Struct):
    """Every section of an UPGRADE.md and what of the knowledge accounts for it."""

    rows: list[tuple[Section, list[str], str]] = field(default_factory=list)

    @property
    def modelled(self) -> int:
        return sum(1 for _, by, _ in self.rows if by)

    @property
    def not_modelled(self) -> int:
        return sum(1 for _, by, why in self.rows if not by and why)

    @property
    def unaccounted(self) -> list[Section]:
        return [s for s, by, why in self.rows if not by and not why]


def entry_name(doc: Document) -> str:
    data: Any = doc.data
    if doc.kind == "release":
        return f"release {data.get('product', '?')} {data.get('version', '?')}"
    return f"{doc.kind} {data.get('id', doc.stem)}"


def quotes(loaded: Loaded) -> Iterator[Quote]:
    """Every quote of the knowledge, in file order: the ``quotes:`` of each entry, then the
    quote of each crossing note of a product (an entry of its own, ``note PRODUCT:ID``)."""
    for _, doc in sorted(loaded.documents.items()):
        items = doc.data.get("quotes") if isinstance(doc.data, dict) else None
        yield from _note_quotes(doc)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if not isinstance(item, dict) or not isinstance(item.get("quote"), str):
                continue
            yield Quote(
                entry_name(doc),
                str(item.get("source", "")),
                str(item.get("section", "")),
                item["quote"],
                doc.at("quotes", i, "quote"),
            )


def _note_quotes(doc: Document) -> Iterator[Quote]:
    notes = doc.data.get("crossing_notes") if doc.kind == "product" else None
    for i, item in enumerate(notes if isinstance(notes, list) else []):
        if isinstance(item, dict) and isinstance(item.get("quote"), str):
            yield Quote(
                f"note {doc.data.get('id', doc.stem)}:{item.get('id', i)}",
                str(item.get("source", "")),
                str(item.get("section", "")),
                item["quote"],
                doc.at("crossing_notes", i, "quote"),
            )


def sections(text: str) -> list[Section]:
    """The ``## `` sections of a Markdown text (not in fenced code), up to ``## Template``."""
    cuts = [h for h in headings(text) if h.generated is None]
    out: list[Section] = []
    for i, h in enumerate(cuts):
        if h.line.strip() == TEMPLATE:
            break
        end = cuts[i + 1].start if i + 1 < len(cuts) else len(text)
        out.append(Section(len(out) + 1, h.line[3:].strip(), text[h.start : end]))
    return out


class Unfound(Struct, frozen=True):
    quote: Quote
    why: str


def verify(
    all_quotes: Iterable[Quote], sources: dict[str, list[str]]
) -> tuple[int, list[Unfound], int]:
    """(quotes found, quotes not found, quotes of a source not given). ``sources``: file name
    -> its texts (one per version given). A quote naming a section must be in that section of
    one of them."""
    found, unfound, unchecked = 0, [], 0
    versions = {name: [_Checked(text) for text in texts] for name, texts in sources.items()}
    for q in all_quotes:
        name = os.path.basename(q.source)
        if name not in versions:
            unchecked += 1
            continue
        whys = [v.why_not(q) for v in versions[name]]
        if None in whys:
            found += 1
            continue
        specific = [w for w in whys if w and not w.startswith("not in ")]  # in it, misplaced
        unfound.append(Unfound(q, (specific or whys)[0] or "not found"))
    return found, unfound, unchecked


class _Checked:
    """One version of a source, as quotes are compared with it."""

    def __init__(self, text: str) -> None:
        self.text = plain(text)
        self.sections = {section_title(s.heading): plain(s.text) for s in sections(text)}

    def why_not(self, q: Quote) -> str | None:
        """Why ``q`` is not in this text (None: it is)."""
        name = os.path.basename(q.source)
        wanted = plain(q.text)
        if wanted not in self.text:
            return f"not in {name}"
        title = section_title(q.section) if q.section else ""
        if title and title in self.sections and wanted not in self.sections[title]:
            return f"in {name}, but not under '{q.section}'"
        if title and self.sections and title not in self.sections and not _entry_heading(title):
            return f"{name} has no section '{q.section}'"
        return None


def _entry_heading(title: str) -> bool:
    """A CHANGELOG-style section name (``[Unreleased]``, ``#431``): not a ``##`` heading."""
    return "→" not in title


def coverage(loaded: Loaded, text: str, source: str = "UPGRADE.md") -> Coverage:
    """A row per section of ``text``: the entries quoting it, or why it is not modelled."""
    cited: dict[str, list[str]] = {}
    for q in quotes(loaded):
        # a product's quote supports a fact of it (a chart source), not a section's model
        if (
            os.path.basename(q.source) == source
            and q.section
            and not q.entry.startswith("product ")
        ):
            names = cited.setdefault(section_title(q.section), [])
            if q.entry not in names:
                names.append(q.entry)
    reasons: dict[str, str] = {}
    for doc in loaded.documents.values():
        items = doc.data.get("not_modelled") if isinstance(doc.data, dict) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("section"), str):
                reasons[section_title(item["section"])] = str(item.get("reason", ""))
    out = Coverage()
    for s in sections(text):
        title = section_title(s.heading)
        out.rows.append((s, sorted(cited.get(title, [])), reasons.get(title, "")))
    return out


def references(loaded: Loaded) -> dict[str, list[str]]:
    """Every ``references:`` entry of the knowledge -> the entries that cite it."""
    out: dict[str, list[str]] = {}
    for _, doc in sorted(loaded.documents.items()):
        refs = doc.data.get("references") if isinstance(doc.data, dict) else None
        for ref in refs if isinstance(refs, list) else []:
            names = out.setdefault(str(ref), [])
            if entry_name(doc) not in names:
                names.append(entry_name(doc))
    return dict(sorted(out.items()))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


KINDS = ("hazard", "migration", "release", "note", "product")


def named(entries: list[str]) -> str:
    """``hazards `a`, `b`; release `agent-platform 4.8.0```: entry names grouped by kind."""
    groups: dict[str, list[str]] = {}
    for e in entries:
        kind, _, name = e.partition(" ")
        groups.setdefault(kind, []).append(f"`{name}`")
    parts = []
    for kind in sorted(groups, key=lambda k: KINDS.index(k) if k in KINDS else len(KINDS)):
        names = groups[kind]
        parts.append(f"{kind}{'s' if len(names) > 1 else ''} {', '.join(names)}")
    return "; ".join(parts)


def coverage_markdown(
    cov: Coverage, refs: dict[str, list[str]], *, source: str, address: str = ""
) -> str:
    """docs/knowledge-sources.md: the coverage table, the summary, the references table."""
    total = len(cov.rows)
    link = f"[{source}]({address})" if address else source
    lines = [
        "# Where the bundled knowledge comes from",
        "",
        f"Produced by `upgradeplan kb coverage --upgrade-md {source}` from the sections of",
        f"{link} and the knowledge's `quotes:` and `not_modelled:` fields; do not edit it by",
        "hand. `upgradeplan kb verify-quotes --source UPGRADE.md --source CHANGELOG.md` checks",
        "that every quote is in its source, under the section it names.",
        "",
        f"{total} sections: {cov.modelled} modelled, {cov.not_modelled} not modelled (each with",
        f"its reason), {len(cov.unaccounted)} unaccounted.",
        "",
        "| source | section heading | knowledge entries |",
        "|---|---|---|",
    ]
    for s, by, why in cov.rows:
        if by:
            what = "modelled by " + named(by)
        elif why:
            what = f"not modelled: {why}"
        else:
            what = "**unaccounted**"
        lines.append(f"| {source} {s.number} | ## {_cell(s.heading)} | {_cell(what)} |")
    lines += [
        "",
        "## References",
        "",
        "Every `references:` entry of the knowledge and the entries that cite it.",
        "",
        "| source | reference | knowledge entries |",
        "|---|---|---|",
    ]
    for ref, by in refs.items():
        lines.append(f"| reference | {_cell(ref)} | {_cell(named(by))} |")
    return "\n".join(lines) + "\n"


def read_sources(paths: Iterable[str]) -> dict[str, list[str]]:
    """The source files' texts by file name. A name given more than once (the same file at
    several versions, ``v1.16/upgrade.rst`` and ``v1.17/upgrade.rst``) is one source: a quote
    naming it is found when it is in any one of them."""

    texts: dict[str, list[str]] = {}
    for path in paths:
        texts.setdefault(os.path.basename(path), []).append(read_source(path))
    return texts


def read_source(path: str) -> str:
    """A source file's text (UTF-8); :class:`~upgradeplan.errors.BadInput` naming it."""

    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise BadInput("no such file", location=path, hint="name an existing file") from None
    except UnicodeDecodeError as exc:
        raise BadInput(f"not UTF-8 text ({exc.reason})", location=path) from None
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror}", location=path) from None


__all__ = [
    "TEMPLATE",
    "Block",
    "Coverage",
    "Heading",
    "Quote",
    "Section",
    "Unfound",
    "blocks",
    "coverage",
    "coverage_markdown",
    "headings",
    "plain",
    "quotes",
    "read_source",
    "read_sources",
    "references",
    "sections",
    "verify",
]
