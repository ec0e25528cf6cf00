"""Merging the states of several inputs into one: the later input wins per fact key."""

from __future__ import annotations

from upgradeplan.model import Fact, State
from upgradeplan.unreadable import Unreadable, covers


def merge(*states: State) -> State:
    """One state from several; for the same key the later state's fact wins.

    The name joins the distinct non-empty names in order; ``unreadable`` entries are kept
    unless a later state supplies facts under that prefix, and so are the records naming them.
    A state's own facts under its own unknown prefix (the values read beside a Secret that
    was not) never drop it: only a later input can supply what one input could not read.
    """
    facts: dict[str, Fact] = {}
    unreadable: dict[str, str] = {}
    unread: list[Unreadable] = []
    names: list[str] = []
    for state in states:
        for key in list(unreadable):  # an earlier state's unknown, supplied by this one
            if any(covers(key, k) for k in state.facts):
                del unreadable[key]
        unread.extend(r for r in state.unread if r not in unread)
        for key, why in state.unreadable.items():
            unreadable[key] = why  # kept beside this state's own facts under the prefix
        facts.update(state.facts)  # in place for a key seen before, as assigning each
        if state.name and state.name not in names:
            names.append(state.name)
    kept = tuple(r for r in unread if not r.keys or any(k in unreadable for k in r.keys))
    return State(facts=facts, name=" + ".join(names), unreadable=unreadable, unread=kept)


__all__ = ["merge"]
