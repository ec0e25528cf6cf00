"""The PR gate: what a change of GitOps pins asks for (``--gitops PATH --base REF``).

The state at the base ref is the current installation; the working tree is the target. A
pin that changed becomes a target (an exact pin is the version itself; a range is resolved the
way Flux resolves it, the highest known release that satisfies it). A component whose new pin
is exactly what the meta chart's target release publishes needs no target of its own: the
planner moves it in lockstep. An exact pin the change leaves alone is held, because the change
keeps it where it is. Each target remembers the ``file:line`` of its new pin so the finding
can point there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from upgradeplan import releases, versions
from upgradeplan.errors import BadInput, UpgradeplanError
from upgradeplan.model import (
    Fact,
    KnowledgeBase,
    State,
    Target,
)
from upgradeplan.provenance import Source

__all__ = ["PinChanges", "gitops_targets", "pin_changes"]


@dataclass(frozen=True)
class PinChange:
    product: str
    before: str | None
    after: str | None
    source: Source  # where the new pin is written
    version: str | None  # the version the new pin selects, None when it selects nothing known


@dataclass(frozen=True)
class PinChanges:
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
    return chosen if chosen is not None and kb.release(product, chosen) is not None else None
