"""The PR gate: what a change of GitOps pins asks for (``--gitops PATH --base REF``).

The state at the base ref is the current installation; the working tree is the target. A
pin that changed becomes a target (an exact pin is the version itself; a range is resolved the
way Flux resolves it, the highest known release that satisfies it). A component whose new pin
is exactly what the meta chart's target release publishes needs no target of its own: the
planner moves it in lockstep. An exact pin the change leaves alone is held, because the change
keeps it where it is. Each target remembers the ``file:line`` of its new pin so the finding
can point there.

What the working tree could not be read is part of what the change asks for: a file of the
change that does not parse, a source it cannot follow, a product whose new pin cannot be
read (an unresolved substitution, a digest), and any other fact it leaves unknown (a
drift-detection mode written as a variable nobody sets) leave the change undetermined, never
"safe" (:func:`with_head_unread`). So does a setting the change rewrites beside its pins: Flux
applies the new value with the new release, and a hazard may read either.
"""

from __future__ import annotations

from collections.abc import Mapping

from msgspec import Struct, field

from upgradeplan import releases, versions
from upgradeplan.errors import BadInput, UpgradeplanError
from upgradeplan.model import (
    Fact,
    KnowledgeBase,
    State,
    Target,
)
from upgradeplan.provenance import Source
from upgradeplan.unreadable import Unreadable, covers

__all__ = ["PinChanges", "gitops_targets", "pin_changes", "with_head_unread"]

# the index keys of sources (files, Flux sources): a state holding one is never "safe"
_SOURCE_KEYS = ("file ", "source ")


class PinChange(Struct, frozen=True):
    product: str
    before: str | None
    after: str | None
    source: Source  # where the new pin is written
    version: str | None  # the version the new pin selects, None when it selects nothing known


class PinChanges(Struct, frozen=True):
    """The targets a change of pins asks for, the pins it holds, and where each pin is."""

    targets: tuple[Target, ...] = ()
    holds: tuple[str, ...] = ()
    locations: Mapping[str, Source] = field(default_factory=dict)  # product -> head pin
    changes: tuple[PinChange, ...] = ()


def gitops_targets(kb: KnowledgeBase, base_state: State, head_state: State) -> list[Target]:
    """For each product whose pin changed, the version the new pin selects."""
    return list(pin_changes(kb, base_state, head_state).targets)


def pin_changes(kb: KnowledgeBase, base_state: State, head_state: State) -> PinChanges:
    """The targets, holds and pin locations of the change from ``base_state`` to ``head_state``."""
    base = _pins(base_state)
    head = _pins(head_state)
    changes: list[PinChange] = []
    for product in sorted(set(base) & set(head)):
        before, after = base[product], head[product]
        if before.value == after.value or not isinstance(after.value, str):
            continue
        new = _selects(kb, product, after)
        old = _selects(kb, product, before) if isinstance(before.value, str) else None
        if new is not None and new == old:
            continue  # a range rewritten without changing what it selects
        changes.append(
            PinChange(
                product,
                before.value if isinstance(before.value, str) else None,
                after.value,
                after.source,
                new,
            )
        )
    by_product = {c.product: c for c in changes}
    published: dict[str, str] = {}  # component -> version its meta chart's target publishes
    for c in changes:
        rel = kb.release(c.product, c.version) if c.version else None
        if rel is not None:
            published.update(rel.bom)
    targets: list[Target] = []
    for c in changes:
        if c.version is None:
            raise BadInput(
                f"the new pin {c.after!r} of {c.product} selects no release upgradeplan knows",
                location=str(c.source),
                hint="check the constraint, or add the release to the knowledge base (--kb)",
            )
        if published.get(c.product) == c.version:
            continue
        targets.append(Target(c.product, c.version))
    holds = sorted(
        p
        for p, fact in head.items()
        if p not in by_product
        and p in published
        and isinstance(fact.value, str)
        and versions.is_exact(fact.value)
        and base.get(p) is not None
        and base[p].value == fact.value
    )
    return PinChanges(
        targets=tuple(targets),
        holds=tuple(holds),
        locations={c.product: c.source for c in changes},
        changes=tuple(changes),
    )


def with_head_unread(judged: State, base: State, head: State) -> State:
    """``judged`` (the state at the base ref with its change facts) with what the change
    could not be read: the files and sources the working tree reached and could not read,
    every other fact the working tree leaves unknown (the base's value of it is dropped: it is
    not what merging the change runs), and one record per product whose pin the base holds
    and the working tree's pin leaves unknown (the change moves it to a version nobody could
    read).

    Chart values (``values.*`` read from files) are the working tree's: Flux applies them with
    the new chart version in the one ``helm upgrade``, so a hazard on the move reads them as
    the change leaves them, a key the change removes included."""
    index = dict(judged.unreadable)
    recs = list(judged.unread)
    for rec in head.unread:
        if any(k.startswith(_SOURCE_KEYS) for k in rec.keys) and rec not in recs:
            recs.append(rec)
    facts = _head_values(judged.facts, head)
    recorded = {k for r in head.unread for k in r.keys}
    for key, why in head.unreadable.items():
        if key.startswith(_SOURCE_KEYS):
            index.setdefault(key, why)
        elif key in recorded and not key.startswith("pin.") and key not in judged.unreadable:
            # a fact the change leaves unknown: the base's value is not what merging runs
            index[key] = why
            recs += [r for r in head.unread if key in r.keys and r not in recs]
            facts = {k: f for k, f in facts.items() if not covers(key, k)}
    for rec in _rewritten(base, head, index):
        index[rec.keys[0]] = f"{rec.location}: {rec.detail}"
        recs.append(rec)
        facts.pop(rec.keys[0], None)
    before, after = _pins(base), _pins(head)
    for product in sorted(set(before) - set(after)):
        prefix = next((p for p in head.unreadable if covers(p, f"pin.{product}")), None)
        if prefix is None:
            continue  # the change drops the pin (a release removed): nothing moves
        rec = _unread_pin(product, before[product], prefix, head)
        recs.append(rec)
        index.setdefault(rec.keys[0], f"{rec.location}: {rec.detail}" if rec.location else str(rec))
    if (
        len(index) == len(judged.unreadable)
        and len(recs) == len(judged.unread)
        and facts == dict(judged.facts)
    ):
        return judged
    return State(facts=facts, name=judged.name, unreadable=index, unread=tuple(recs))


_VALUES = "values."


def _head_values(facts: Mapping[str, Fact], head: State) -> dict[str, Fact]:
    """``facts`` with the chart values read from files replaced by the working tree's."""
    out = {
        k: f for k, f in facts.items() if not (k.startswith(_VALUES) and f.source.kind == "file")
    }
    out.update({f.key: f for f in head if f.key.startswith(_VALUES) and f.source.kind == "file"})
    return out


def _rewritten(base: State, head: State, unknown: Mapping[str, str]) -> list[Unreadable]:
    """One record per scalar fact the working tree writes in a file to another value than the
    base holds (a pin aside): Flux applies the new value with the new release, and whether a hazard
    reads the value before or after the change is not known, so neither is judged as fact."""
    out: list[Unreadable] = []
    for fact in head:
        key, was = fact.key, base.get(fact.key)
        if key.startswith(("pin.", "change.", _VALUES)) or fact.source.kind != "file":
            continue  # chart values: the working tree's are judged (_head_values)
        if key in unknown:
            continue
        if was is not None and was.value == fact.value:
            continue
        if isinstance(fact.value, dict | list) or (was and isinstance(was.value, dict | list)):
            continue  # chart values as a whole: their pins move with every bump (not judged)
        then = "sets none" if was is None else f"has {was.value!r} ({was.source})"
        out.append(
            Unreadable(
                key,
                "rewritten by the change",
                kind="fact",
                location=str(fact.source),
                detail=f"the change writes {fact.value!r} where the base {then}; whether a "
                "hazard reads it before or after the change is not known",
                keys=(key,),
                at=(fact.source.file, fact.source.line),
            )
        )
    return out


def _unread_pin(product: str, before: Fact, prefix: str, head: State) -> Unreadable:
    """The record of a product whose new pin could not be read."""
    cause = next((r for r in head.unread if prefix in r.keys), None)
    was = before.value if isinstance(before.value, str) else "its pin"
    why = (cause.detail or cause.cause) if cause else head.unreadable[prefix]
    return Unreadable(
        f"the new pin of {product}",
        cause.cause if cause else "could not be read",
        kind="fact",
        location=cause.location if cause else "",
        detail=f"the change moves {product} from {was} to a version that could not be read: {why}",
        keys=(f"source pin.{product}",),
        at=cause.at if cause else None,
    )


def _pins(state: State) -> dict[str, Fact]:
    return {f.key[len("pin.") :]: f for f in state if f.key.startswith("pin.")}


def _selects(kb: KnowledgeBase, product: str, pin: Fact) -> str | None:
    """The known release a pin selects (releases.selects), None when it selects none."""
    text = pin.value
    if not isinstance(text, str):
        return None
    try:
        chosen = releases.selects(kb, product, text)
    except UpgradeplanError as exc:
        raise BadInput(str(exc), location=str(pin.source)) from None
    if chosen is not None and releases.newer_than_known(kb, product, chosen):
        return chosen  # released after the knowledge was written: judged, not refused
    return chosen if chosen is not None and kb.release(product, chosen) is not None else None
