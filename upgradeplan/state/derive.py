"""Derived facts: what follows from the facts read (docs/state-format.md, "Derived facts").

Flux installs exactly what an exact pin names, so an exact ``pin.X`` gives ``installed.X`` when
nothing says otherwise; a range derives nothing. A release that publishes a component range
(``components.X.versionRange``) pins X for an installation that does not pin X itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from upgradeplan import errors, provenance
from upgradeplan.model import Fact, Finding, KnowledgeBase, State
from upgradeplan.provenance import derived_from_pin
from upgradeplan.unreadable import covers
from upgradeplan.versions import parse_constraint


def derive(state: State, kb: KnowledgeBase | None = None) -> State:
    """Add ``installed.X`` from an exact ``pin.X`` where the installed version is unknown."""

    added: list[Fact] = []
    for key, fact in state.facts.items():
        if not key.startswith("pin.") or not isinstance(fact.value, str):
            continue
        product = key[len("pin.") :]
        if f"installed.{product}" in state.facts:
            continue
        try:
            exact = parse_constraint(fact.value).exact_version
        except errors.InvalidConstraint:
            continue
        if exact is None:
            continue
        added.append(Fact(f"installed.{product}", str(exact), derived_from_pin(fact.source)))
    if kb is not None:
        added.extend(_published_ranges(state, kb))
    return state.with_facts(*added) if added else state


def _published_ranges(state: State, kb: KnowledgeBase) -> list[Fact]:
    """``pin.X`` from ``components.X.versionRange`` of the release a product runs, where the
    installation does not pin X itself (it follows the range the release publishes)."""
    out: list[Fact] = []
    for key, fact in state.facts.items():
        if not key.startswith("installed.") or not isinstance(fact.value, str):
            continue
        rel = kb.release(key[len("installed.") :], fact.value)
        if rel is None or not rel.components:
            continue
        for comp, rng in sorted(rel.components.items()):
            if f"pin.{comp}" not in state.facts and _unknown(state, f"pin.{comp}"):
                continue  # the pin was there but could not be read: stays unknown
            if f"pin.{comp}" not in state.facts:
                source = provenance.release_default(rel.key, f"components.{comp}.versionRange")
                out.append(Fact(f"pin.{comp}", rng, source))
    return out


def _unknown(state: State, key: str) -> bool:
    """Whether ``key`` lies under an unreadable prefix (``pin`` for a whole list, ``pin.X``)."""
    return any(covers(prefix, key) for prefix in state.unreadable)


__all__ = ["derive"]


def resting_on_guesses(
    state: State, findings: Sequence[Finding], products: Iterable[str]
) -> list[str]:
    """One line per installed version the judgement uses that was derived from an exact pin
    while the source saying what runs could not be read (a guess, never a reading).

    The judgement uses the installed versions of ``products`` (the targets) and those any
    finding's evidence read."""
    keys = [f"installed.{p}" for p in products]
    keys += [f.key for fd in findings for ev in fd.evidence for f in ev.facts]
    out: list[str] = []
    for key in dict.fromkeys(k for k in keys if k.startswith("installed.")):
        fact = state.facts.get(key)
        if fact is None or fact.source.kind != "derived":
            continue
        if not any(covers(p, key) for p in state.unreadable):
            continue
        rec = next((r for r in state.unread if any(covers(p, key) for p in r.keys)), None)
        # the cause without the source's name: the record itself is listed with the others
        why = f"{rec.cause}, named below" if rec else "see what could not be read"
        product = key[len("installed.") :]
        out.append(
            f"{product} {fact.value} is only derived from its exact pin: what it runs could "
            f"not be read ({why}); state it with --installed {product}=VERSION"
        )
    return out
