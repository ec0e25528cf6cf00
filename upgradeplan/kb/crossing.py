"""Hazards derived from releases' crossing prerequisites and products' stepping rules.

A prerequisite of release ``V`` (``crossing:``) holds for every path that crosses ``V``,
whether or not the path stops there. It becomes a transition hazard of the release's product
from ``<V`` to ``>=V``, so the step that crosses ``V`` carries it (a long jump over ``V`` as much
as the hop onto it). Its condition is the prerequisite's ``unmet`` (TRUE where it is not in
place), judged like any transition hazard on the state before the crossing hop; a prerequisite
no fact can show (``unmet`` absent) reads the fact ``prerequisite.<product>.<id>``, which the
installation states as ``true`` once it is in place, and may apply until then.

A stepping rule (``stepping: {line: minor, at: latest-patch}``) becomes one skip hazard per
line of the product but the last: its required stop is the line's latest patch, which a hop
from below it to the next line or above skips. The cheapest path then moves one line at a
time, landing on each line's latest patch; a rule with ``at: any`` requires a stop on every
line (its first release) without naming the patch.

A crossing note (a product's ``crossing_notes:``) is what the sources say about a change whose
release they do not name: ``shipped`` is the range of the product's releases that may have
shipped it. It is not a hazard and never changes a verdict or a path: a step of a plan from
``f`` to ``t`` meets it when one of the product's releases in ``(f, t]`` is in that range
(:func:`notes_crossed`), for certain only when ``shipped`` names one release, and the step carries
its line (:func:`with_notes`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from msgspec.structs import replace

from upgradeplan.errors import InvalidVersion
from upgradeplan.model import (
    NEXT,
    Condition,
    CrossingNote,
    Hazard,
    KnowledgeBase,
    Plan,
    Prerequisite,
    Product,
    Release,
    Stepping,
)
from upgradeplan.versions import check, is_exact, parse_version

CROSSING = "crossing"  # hazard ids: crossing:<product>@<version>:<id>
STEPPING = "stepping"  # hazard ids: stepping:<product>@<stop>


def is_derived(hazard_id: str) -> bool:
    """Whether a hazard is one this module derives (not a hazard file of the knowledge)."""
    return hazard_id.startswith((f"{CROSSING}:", f"{STEPPING}:"))


def prerequisite_fact(product: str, pid: str) -> str:
    """The fact that states a prerequisite with no ``unmet`` condition in place."""
    return f"prerequisite.{product}.{pid}"


def _bound(version: str) -> str:
    """``version`` as the lower bound of a range that admits its pre-releases."""
    return version if "-" in version else f"{version}-0"


def crossing_hazard(rel: Release, p: Prerequisite) -> Hazard:
    """The transition hazard a release's prerequisite becomes."""
    unmet = p.unmet
    if unmet is None:
        stated = Condition(
            "pred",
            predicate="fact_equals",
            args={"fact": prerequisite_fact(rel.product, p.id), "value": True},
        )
        unmet = Condition("not", (stated,))
    side = f"before leaving <{rel.version}" if p.at == "leaving" else f"on entering >={rel.version}"
    cited = f" ({p.source}: “{p.quote}”)" if p.source and p.quote else ""
    return Hazard(
        id=f"{CROSSING}:{rel.product}@{rel.version}:{p.id}",
        title=f"{side[0].upper()}{side[1:]}: {p.title}",
        product=rel.product,
        severity=p.severity,
        scope="transition",
        consequence=(
            f"Every path from below {rel.version} to {rel.version} or above meets this "
            f"prerequisite, whether or not it stops at {rel.version}; "
            f"the move is not safe until it is in place{cited}."
        ),
        location=rel.location,
        from_range=f"<{_bound(rel.version)}",
        to_range=f">={_bound(rel.version)}",
        when=unmet,
        description=p.text,
        avoid=p.text,
        references=rel.references,
    )


def _line(version: str, line: str) -> tuple[str, ...]:
    parts = version.split("-")[0].split(".")
    return tuple(parts[:2] if line == "minor" else parts[:1])


def stepping_hazards(product: Product, rule: Stepping, rels: Sequence[Release]) -> list[Hazard]:
    """The skip hazards of a stepping rule over ``rels`` (planned, ascending)."""
    lines: list[list[Release]] = []
    for rel in rels:
        if lines and _line(lines[-1][-1].version, rule.line) == _line(rel.version, rule.line):
            lines[-1].append(rel)
        else:
            lines.append([rel])
    out = []
    cited = f" ({rule.source}: “{rule.quote}”)" if rule.source and rule.quote else ""
    for here, following in itertools.pairwise(lines):
        stop = here[-1] if rule.at == "latest-patch" else here[0]
        name = ".".join(_line(stop.version, rule.line)) + (".x" if rule.line == "minor" else ".x.x")
        at = "its latest patch" if rule.at == "latest-patch" else "a release of it"
        out.append(
            Hazard(
                id=f"{STEPPING}:{product.id}@{stop.version}",
                title=f"{product.id} moves one {rule.line} at a time: the {name} line, at "
                f"{stop.version}, is a required stop",
                product=product.id,
                severity="blocking",
                scope="skip",
                consequence=(
                    f"The sources ask for every {rule.line} line in turn, leaving each from "
                    f"{at}; a hop past {name} leaves the upgrade path they describe{cited}."
                ),
                location=product.location,
                stop=stop.version,
                to_range=f">={_bound(following[0].version)}",
                description=f"Stop at {stop.version} before moving past the {name} line.",
                avoid=f"Stop at {stop.version} first.",
                references=rule.references,
            )
        )
    return out


def derived_hazards(
    products: Mapping[str, Product], releases: Mapping[str, Sequence[Release]]
) -> dict[str, Hazard]:
    """Every hazard the knowledge's crossing prerequisites and stepping rules give, by id."""
    out: dict[str, Hazard] = {}
    for product, rels in releases.items():
        planned = [r for r in rels if not r.unreleased and r.withdrawn is None]
        for rel in planned:
            for p in rel.crossing:
                h = crossing_hazard(rel, p)
                out[h.id] = h
        known = products.get(product)
        if known is not None and known.stepping is not None:
            out.update((h.id, h) for h in stepping_hazards(known, known.stepping, planned))
    return out


def shipped_releases(note: CrossingNote, rels: Sequence[Release]) -> list[str]:
    """The versions of ``rels`` (the product's, released) that may have shipped ``note``."""

    return [r.version for r in rels if r.version != NEXT and check(note.shipped, r.version)]


def notes_crossed(
    kb: KnowledgeBase, product: str, from_version: str, to_version: str
) -> list[tuple[CrossingNote, bool]]:
    """The crossing notes a hop of ``product`` from ``from_version`` to ``to_version`` meets,
    each with whether it meets it for certain: only when ``shipped`` names one release (a range
    says the sources do not know which release, and may admit releases the knowledge lacks)."""

    known = kb.products.get(product)
    if known is None or not known.crossing_notes:
        return []
    try:
        low, high = parse_version(from_version), parse_version(to_version)
    except InvalidVersion:
        return []
    rels = kb.releases.get(product, ())
    out = []
    for note in known.crossing_notes:
        try:
            may = shipped_releases(note, rels)
        except ValueError:  # a range kb lint reports
            continue
        if any(low < parse_version(v) <= high for v in may):
            out.append((note, is_exact(note.shipped)))
    return out


def note_line(note: CrossingNote, certain: bool) -> str:
    """One line of a step: what the note says, where the change shipped, its source."""
    when = "crosses" if certain else f"may cross (shipped in {note.shipped})"
    title = note.section.replace("\\<", "<").replace("\\>", ">")  # Markdown's escapes
    cited = f" ({note.source}, “{title}”)" if note.source and note.section else ""
    return f"{when}: {note.title}: {note.text}{cited}"


def with_notes(kb: KnowledgeBase, plan: Plan) -> Plan:
    """``plan`` with each step carrying the crossing notes its hop meets."""
    if not any(p.crossing_notes for p in kb.products.values()):
        return plan
    steps = []
    for step in plan.steps:
        met = notes_crossed(kb, step.product, step.from_version, step.to_version)
        lines = tuple(note_line(n, certain) for n, certain in met)
        steps.append(replace(step, notes=lines) if lines else step)
    return replace(plan, steps=tuple(steps))


__all__ = [
    "CROSSING",
    "STEPPING",
    "crossing_hazard",
    "derived_hazards",
    "is_derived",
    "note_line",
    "notes_crossed",
    "prerequisite_fact",
    "shipped_releases",
    "stepping_hazards",
    "with_notes",
]
