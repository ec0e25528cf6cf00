"""What goes into an UPGRADE.md: one section per release, newest first, derived from knowledge.

This module decides the content (headings, the operator-action bullets, their order); the
jinja2 template ``templates/upgrade_md.j2`` lays it out. Bullets come from

- the release's own ``notes`` (authoritative: a note wins over a derived bullet with the same
  condition);
- the **path bullets** each skip hazard implies, in the section of the first release of its
  ``skip.to`` range: "In order, via S (the default path)" and "Skipping S (from P or earlier
  straight to R)", with the hazard's consequence, how to avoid it and the recovery commands;
- one bullet for every other live hazard of the product, in the section of the first release
  its scope reaches (a landing range, a transition's ``to``, a state range); a hazard whose
  scope reaches every release goes to the newest section, "whatever the version". Every hazard
  is rendered once, in one section;
- one bullet for each crossing note of the product (``crossing_notes:``), in the section of the
  newest release its ``shipped`` range admits (by then the change has shipped), with the range
  as an aside when it admits more than one release;
- value clean-ups (``values-key-removed`` changes) and the BOM (the component versions the
  release is published with, when they moved);
- "Recognising it worked" from the release's ``verify`` commands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from msgspec import Struct

from upgradeplan.errors import BadInput, UnknownName
from upgradeplan.kb.crossing import shipped_releases
from upgradeplan.kb.placeholders import first_in
from upgradeplan.model import NEXT, CrossingNote, Hazard, KnowledgeBase, Note, Product, Release
from upgradeplan.versions import Version, check

CURRENT_LABEL = r"\<current\>"
NEXT_LABEL = r"\<next\>"
WORKED = "Recognising it worked"


class Bullet(Struct, frozen=True):
    condition: str  # shown bold
    aside: str  # shown after the bold part, e.g. "(the default path)"
    text: str
    commands: tuple[str, ...] = ()
    sep: str = ": "  # between the condition (and aside) and the text
    hazards: tuple[str, ...] = ()  # the hazards a path bullet stands for, named after its text


class Section(Struct, frozen=True):
    version: str
    heading: str  # "4.7.x → 4.8.0 (title)"
    summary: str
    references: tuple[str, ...]
    withdrawn: str  # "" or "Withdrawn on DATE: reason"
    bullets: tuple[Bullet, ...]
    inferred: str = ""  # "" or "Inferred, not from a source: FIELD (reason); …"


class Document(Struct, frozen=True):
    title: str
    intro: str
    sections: tuple[Section, ...]


_ASIDE = re.compile(r"^(?P<bold>.*?)\s*(?P<aside>\([^()]*\))\s*$")


def split_condition(condition: str) -> tuple[str, str]:
    """``"Skipping 4.7.19 (from 4.7.18 …)"`` -> ``("Skipping 4.7.19", "(from 4.7.18 …)")``."""
    text = condition.strip()
    m = _ASIDE.match(text)
    if m and m.group("bold"):
        return m.group("bold").rstrip(":"), m.group("aside")
    return text.rstrip(":"), ""


def _norm(condition: str) -> str:
    return re.sub(r"[^a-z0-9.]+", " ", split_condition(condition)[0].lower()).strip().rstrip(".")


def _released(kb: KnowledgeBase, product: str) -> list[Release]:
    return [r for r in kb.releases.get(product, ()) if r.version != NEXT]


def _version_in(constraint: str | None, version: str) -> bool:
    return bool(constraint) and version != NEXT and check(str(constraint), version)


def _previous(kb: KnowledgeBase, release: Release) -> Release | None:
    released = _released(kb, release.product)
    if release.version == NEXT:
        return released[-1] if released else None
    for i, rel in enumerate(released):
        if rel.version == release.version:
            return released[i - 1] if i > 0 else None
    return None


def _before(kb: KnowledgeBase, product: str, version: str) -> str | None:
    """The newest released version below ``version``."""

    wanted = Version.parse(version)
    below = [r.version for r in _released(kb, product) if Version.parse(r.version) < wanted]
    return below[-1] if below else None


def heading(kb: KnowledgeBase, release: Release) -> str:
    if release.version == NEXT:
        return f"{CURRENT_LABEL} → {NEXT_LABEL} ({release.title})"
    prev = _previous(kb, release)
    start = release.from_label or (prev.version if prev else "")
    if not start:
        return f"{release.version} ({release.title})"
    return f"{start} → {release.version} ({release.title})"


def _skip_hazards(kb: KnowledgeBase, release: Release) -> list[tuple[Hazard, str]]:
    """Skip hazards whose ``to`` range contains ``release``, each with the first release of
    that range (where the window opens and the full bullets go)."""
    released = _released(kb, release.product)
    out = []
    for h in kb.hazards_for(release.product):
        if h.scope != "skip" or h.withdrawn is not None or not h.stop:
            continue
        if not _version_in(h.to_range, release.version):
            continue
        first = next((r.version for r in released if _version_in(h.to_range, r.version)), "")
        out.append((h, first))
    return sorted(out, key=lambda pair: (pair[0].stop or "", pair[0].id))


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if not text or text.endswith((".", ":", "!", "?")) else text + "."


def _path_bullets(kb: KnowledgeBase, release: Release) -> list[Bullet]:
    """ "In order, via S" and "Skipping S" for each required stop S of the skip hazards whose
    ``to`` range contains the release. The release where a window opens gets the whole
    story (consequence, how to avoid it, the recovery commands); later releases in the same
    window repeat nothing: a hazard is rendered once."""
    out: list[Bullet] = []
    by_stop: dict[tuple[str, str], list[tuple[Hazard, str]]] = {}
    for hazard, first in _skip_hazards(kb, release):
        by_stop.setdefault((str(hazard.stop), hazard.from_range or ""), []).append((hazard, first))
    for (stop, start), pairs in by_stop.items():
        opening = [h for h, first in pairs if first == release.version]
        aside = _skip_aside(kb, release, stop, start)
        if opening:
            out.append(
                Bullet(
                    condition=f"In order, via {stop}",
                    aside="(the default path)",
                    text=f"nothing to do; going through {stop} (meta chart and pins together) "
                    "avoids " + ", ".join(f"`{h.id}`" for h in opening) + ".",
                )
            )
            text: list[str] = []
            commands: list[str] = []
            for h in opening:
                text.append(_sentence(h.consequence))
                if h.avoid:
                    text.append(_sentence(h.avoid))
                if h.recover:
                    text.append("Recovery: " + _sentence(h.recover))
                commands.extend(c for c in h.recover_commands if c not in commands)
            ids = tuple(h.id for h in opening)
            out.append(
                Bullet(
                    condition=f"Skipping {stop}",
                    aside=aside,
                    text=" ".join(text) + _named(ids),
                    commands=tuple(commands),
                    hazards=ids,
                )
            )
    return out


def _skip_aside(kb: KnowledgeBase, release: Release, stop: str, start: str) -> str:
    """ "(from P or earlier straight to R)"; with a skip's ``from``, the releases it starts
    from: "(from L–P straight to R; a start below L is not exposed)"."""

    earlier = _before(kb, release.product, stop)
    to = f"straight to {release.version}"
    if not earlier:
        return f"({to})"
    if not start:
        return f"(from {earlier} or earlier {to})"
    below = Version.parse(stop)
    inside = [
        r.version
        for r in _released(kb, release.product)
        if _version_in(start, r.version) and Version.parse(r.version) < below
    ]
    if not inside:
        return f"(from {start} {to})"
    lowest = inside[0]
    span = earlier if lowest == earlier else f"{lowest}–{earlier}"
    if _before(kb, release.product, lowest) is None:
        return f"(from {span} {to})"
    return f"(from {span} {to}; a start below {lowest} is not exposed)"


def _scope_range(hazard: Hazard) -> str | None:
    """The range of release versions a hazard's scope reaches (None: every version)."""
    if hazard.scope == "state":  # the installed range, optional
        return hazard.from_range or None
    return hazard.to_range


def _note_home(kb: KnowledgeBase, product: str, note: CrossingNote) -> str | None:
    """The release whose section renders a crossing note: the newest ``shipped`` admits."""

    try:
        shipped = shipped_releases(note, kb.releases.get(product, ()))
    except ValueError:  # kb lint reports it (KB031)
        return None
    return shipped[-1] if shipped else None


def home_version(kb: KnowledgeBase, hazard: Hazard) -> str | None:
    """The release whose section renders ``hazard``: that of the crossing note that names it
    (the change it belongs to), else the first its scope reaches, or the newest one
    (unreleased included) when the scope reaches every release."""
    product = kb.products.get(hazard.product)
    for note in product.crossing_notes if product is not None else ():
        if hazard.id in note.hazards:
            home = _note_home(kb, hazard.product, note)
            if home is not None:
                return home
    releases = list(kb.releases.get(hazard.product, ()))
    released = [r for r in releases if r.version != NEXT]
    if not releases:
        return None
    rng = _scope_range(hazard)
    reached = [r.version for r in released if rng and _version_in(rng, r.version)]
    if rng is None or (released and len(reached) == len(released)):
        return releases[-1].version
    return reached[0] if reached else None


def _everywhere(kb: KnowledgeBase, hazard: Hazard) -> bool:
    released = _released(kb, hazard.product)
    rng = _scope_range(hazard)
    return rng is None or all(_version_in(rng, r.version) for r in released)


def _hazard_bullets(kb: KnowledgeBase, release: Release) -> list[Bullet]:
    """One bullet per non-skip hazard at home in this release's section."""
    out: list[Bullet] = []
    for h in sorted(kb.hazards_for(release.product), key=lambda h: h.id):
        if h.scope == "skip" or h.withdrawn is not None:
            continue
        if home_version(kb, h) != release.version:
            continue
        aside = "(whatever the version)" if _everywhere(kb, h) else ""
        text = [_lower_first(_sentence(h.consequence))]
        if h.avoid:
            text.append(_sentence(h.avoid))
        if h.recover:
            text.append("Recovery: " + _lower_first(_sentence(h.recover)))
        text.append(f"(`{h.id}`)")
        out.append(
            Bullet(
                condition=h.title.rstrip("."),
                aside=aside,
                text=" ".join(text),
                commands=tuple(h.recover_commands),
            )
        )
    return out


def _crossing_note_bullets(kb: KnowledgeBase, release: Release) -> list[Bullet]:
    """One bullet per crossing note at home in this release's section."""

    product = kb.products.get(release.product)
    out: list[Bullet] = []
    for note in product.crossing_notes if product is not None else ():
        if _note_home(kb, release.product, note) != release.version:
            continue
        shipped = shipped_releases(note, kb.releases.get(release.product, ()))
        aside = f"(shipped in `{note.shipped}`)" if len(shipped) > 1 else ""
        # the heading as the source writes it (its Markdown escapes kept)
        cited = f" ({note.source}, “{note.section}”)" if note.source and note.section else ""
        out.append(Bullet(note.title, aside, _sentence(note.text) + cited))
    return out


def _named(ids: Sequence[str]) -> str:
    return " (" + ", ".join(f"`{i}`" for i in ids) + ")" if ids else ""


def _lower_first(text: str) -> str:
    """ "Nothing: …" -> "nothing: …" after a colon; "AgentTemplate …", "`x` …" stay."""
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        return text[0].lower() + text[1:]
    return text


def _note_bullet(note: Note) -> Bullet:
    bold, aside = split_condition(note.condition)
    if bold.endswith(".") and not aside:
        return Bullet(bold, "", _sentence(note.text), note.commands, sep=" ")
    return Bullet(bold, aside, _lower_first(_sentence(note.text)), note.commands)


def _mentioned(key: str, notes: Sequence[Note]) -> bool:
    return any(key in n.condition or key in n.text for n in notes)


def _value_bullets(release: Release) -> list[Bullet]:
    """Clean-ups the structured changes imply and no note already covers: a values key that
    is gone, a container flag renamed or removed, a requirement raised."""
    out: list[Bullet] = []
    for change in release.changes:
        d = change.details
        if change.kind == "values-key-removed":
            key = str(d.get("key", "")).strip()
            if key and not _mentioned(key, release.notes):
                out.append(
                    Bullet(
                        f"`{key}` set in your values",
                        "",
                        _sentence(f"remove it; {_lower_first(change.summary)}"),
                    )
                )
        elif change.kind in ("flag-renamed", "flag-removed"):
            old, new = str(d.get("from", "")).strip(), str(d.get("to", "")).strip()
            if not old or _mentioned(old, release.notes):
                continue
            todo = f"rewrite it to `{new}`, keeping its value" if new else "remove it"
            out.append(
                Bullet(
                    f"`{old}` in your container args",
                    "",
                    _sentence(f"{todo}; {_lower_first(change.summary)}"),
                )
            )
        elif change.kind == "requirement-raised":
            product, constraint = str(d.get("product", "")), str(d.get("constraint", ""))
            if not product or not constraint or _mentioned(product, release.notes):
                continue
            out.append(
                Bullet(
                    f"`{product}` does not satisfy `{constraint}`",
                    "",
                    _sentence(f"upgrade it first; {_lower_first(change.summary)}"),
                )
            )
    return out


def _bom_bullet(kb: KnowledgeBase, release: Release) -> list[Bullet]:
    if not release.bom or any(_norm(n.condition).startswith("a bom") for n in release.notes):
        return []
    prev = _previous(kb, release)
    before = prev.bom if prev else {}
    moved = [(c, v) for c, v in sorted(release.bom.items()) if before.get(c) != v]
    if not moved:
        return []
    pins = ", ".join(f'`components.{c}.versionRange: "{v}"`' for c, v in moved)
    return [
        Bullet(
            condition="A BOM",
            aside="",
            text=f"pins the components exactly: move {pins} together with the meta chart.",
            sep=" ",
        )
    ]


def section(kb: KnowledgeBase, release: Release) -> Section:
    notes = list(release.notes)
    derived = _path_bullets(kb, release)
    by_norm = {_norm(n.condition): n for n in notes}
    bullets: list[Bullet] = []
    used: set[str] = set()
    for note in notes:  # "None." first, as the release wrote it
        if _norm(note.condition) == "none":
            bullets.append(_note_bullet(note))
            used.add("none")
    for bullet in derived:
        key = _norm(bullet.condition)
        match = by_norm.get(key) or next(
            (n for k, n in by_norm.items() if k.startswith(key + " ") or k == key), None
        )
        if match is not None:
            merged = _note_bullet(match)
            bullets.append(
                Bullet(
                    condition=merged.condition,
                    aside=merged.aside or bullet.aside,
                    text=merged.text + _named(bullet.hazards),
                    commands=merged.commands or bullet.commands,
                    sep=merged.sep,
                )
            )
            used.add(_norm(match.condition))
        else:
            bullets.append(bullet)
    worked: Note | None = None
    for note in notes:
        key = _norm(note.condition)
        if key in used:
            continue
        if key == _norm(WORKED):
            worked = note
            continue
        bullets.append(_note_bullet(note))
        used.add(key)
    bullets.extend(_crossing_note_bullets(kb, release))  # a change, then its hazards
    bullets.extend(_hazard_bullets(kb, release))
    bullets.extend(_value_bullets(release))
    bullets.extend(_bom_bullet(kb, release))
    if worked is not None:
        wb = _note_bullet(worked)
        bullets.append(
            Bullet(wb.condition, wb.aside, wb.text, wb.commands or tuple(release.verify), wb.sep)
        )
    elif release.verify:
        bullets.append(
            Bullet(
                WORKED,
                "",
                "the command reads back what the release changed."
                if len(release.verify) == 1
                else "the commands read back what the release changed.",
                tuple(release.verify),
            )
        )
    if not bullets:
        bullets.append(Bullet("None.", "", "", sep=" "))
    withdrawn = ""
    if release.withdrawn is not None:
        withdrawn = f"Withdrawn on {release.withdrawn.date}: {_sentence(release.withdrawn.reason)}"
    return Section(
        version=release.version,
        heading=heading(kb, release),
        summary=" ".join(release.summary.split()),
        references=release.references,
        withdrawn=withdrawn,
        bullets=tuple(bullets),
        inferred=_inferred_line(release),
    )


def _inferred_line(release: Release) -> str:
    """The release's inferred fields with their reasons, shown under its heading."""
    if not release.inferred:
        return ""
    marks = "; ".join(f"{path} ({reason.rstrip('.')})" for path, reason in release.inferred.items())
    return f"Inferred, not from a source: {marks}."


def _require(kb: KnowledgeBase, product: str) -> Product:
    found = kb.products.get(product)
    if found is None:
        raise UnknownName("product", product, sorted(kb.products))
    return found


def default_product(kb: KnowledgeBase) -> str:
    """The product to document when none is named: the one product with an upgrade_doc."""
    documented = sorted(p.id for p in kb.products.values() if p.upgrade_doc_title)
    if len(documented) == 1:
        return documented[0]
    raise BadInput(
        "which product? name one with --product",
        hint=f"products with an UPGRADE.md: {', '.join(documented) or 'none'}",
    )


def select(
    kb: KnowledgeBase,
    product: str,
    *,
    from_version: str | None = None,
    to_version: str | None = None,
    next_only: bool = False,
) -> list[Release]:
    """The releases to document, newest first: (from, to], or only ``next``, or all."""

    _require(kb, product)
    releases = list(kb.releases.get(product, ()))
    if next_only:
        chosen = [r for r in releases if r.version == NEXT]
        if not chosen:
            raise BadInput(f"{product} has no unreleased ('next') knowledge", hint="drop --next")
        return chosen
    low = Version.parse(from_version) if from_version else None
    high = Version.parse(to_version) if to_version and to_version != NEXT else None
    chosen = []
    for rel in releases:
        if rel.version == NEXT:  # unreleased: after every release, so only an open or "next" end
            if to_version is None or to_version == NEXT:
                chosen.append(rel)
            continue
        v = Version.parse(rel.version)
        if low is not None and not v > low:
            continue
        if high is not None and v > high:
            continue
        chosen.append(rel)
    if not chosen:
        raise BadInput(
            f"no {product} release lies in ({from_version or 'first'}, {to_version or 'last'}]",
            hint="check --from/--to against 'upgradeplan kb list'",
        )
    return list(reversed(chosen))


def _refuse_placeholders(kb: KnowledgeBase, product: str, releases: Sequence[Release]) -> None:
    """Bad input when a text that would be rendered is still a ``kb new`` placeholder."""

    texts = [(r.location, n, getattr(r, n)) for r in releases for n in ("title", "summary")]
    texts += [(r.location, "notes", f"{n.condition} {n.text}") for r in releases for n in r.notes]
    hazards = [h for h in kb.hazards.values() if h.product == product]
    texts += [
        (h.location, f"hazard {h.id} {n}", getattr(h, n))
        for h in hazards
        for n in ("title", "consequence", "avoid")
    ]
    for where, field, text in texts:
        found = first_in(text)
        if found is not None:
            raise BadInput(
                f"{field} is still the placeholder {found!r}; not rendering it into UPGRADE.md",
                location=f"{where.file}:{where.line}",
                hint="fill it in ('upgradeplan kb lint' lists every placeholder as KB030)",
            )


def document(kb: KnowledgeBase, product: str, releases: Sequence[Release]) -> Document:
    spec = _require(kb, product)
    _refuse_placeholders(kb, product, releases)
    title = spec.upgrade_doc_title or f"Upgrading {spec.name}"
    intro = " ".join(spec.upgrade_doc_intro.split()) or (
        "CHANGELOG.md records what changed; this file records what an operator must do."
    )
    return Document(title=title, intro=intro, sections=tuple(section(kb, r) for r in releases))
