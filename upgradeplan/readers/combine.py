"""Combining states: merge (later wins per key) and derived facts."""

from __future__ import annotations

from upgradeplan.model import Fact, State


def merge(*states: State) -> State:
    """One state from several; for the same key the later state's fact wins.

    The name joins the distinct non-empty names in order; ``unreadable`` entries are kept
    unless a later state supplies facts under that prefix.
    """
    facts: dict[str, Fact] = {}
    unreadable: dict[str, str] = {}
    names: list[str] = []
    for state in states:
        for key, why in state.unreadable.items():
            unreadable[key] = why
        for key, fact in state.facts.items():
            facts[key] = fact
        for key in list(unreadable):
            if any(k == key or k.startswith(key + ".") for k in state.facts):
                del unreadable[key]
        if state.name and state.name not in names:
            names.append(state.name)
    return State(facts=facts, name=" + ".join(names), unreadable=unreadable)


def derive(state: State) -> State:
    """Add ``installed.X`` from an exact ``pin.X`` where the installed version is unknown.

    Flux installs exactly what an exact pin names; a range derives nothing.
    """
    from upgradeplan.versions import Constraint

    added: list[Fact] = []
    for key, fact in sorted(state.facts.items()):
        if not key.startswith("pin.") or not isinstance(fact.value, str):
            continue
        product = key[len("pin.") :]
        if f"installed.{product}" in state.facts:
            continue
        try:
            constraint = Constraint.parse(fact.value)
        except ValueError:
            continue
        exact = constraint.exact_version if constraint.is_exact else None
        if exact is None:
            continue
        added.append(
            Fact(f"installed.{product}", str(exact), f"derived: exact pin ({fact.source})")
        )
    return state.with_facts(*added) if added else state
