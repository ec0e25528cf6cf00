"""Truths of hazard conditions during the search, each predicate evaluated once per facts read.

Many hazards share predicates (the same drift-detection or pin test, the same plain fact), and
along a window of releases most facts stay the same object from one state to the next. So the
truth of a predicate is cached by its content (name and arguments) and the identity of the
facts it reads (``conditions.facts_read``), and a condition tree is combined from those truths
with Kleene logic. The combination does not depend on the order of the children (``all`` is
FALSE when one child is, else UNKNOWN when one is, else TRUE; ``any`` alike), so the children
whose truth is already known are looked at first: one deciding child spares the others.

Only conditions without ``$from`` / ``$to`` and without templated fact keys are evaluated here
(the caller checks); the result is the one ``conditions.truth`` gives.
"""

from __future__ import annotations

from typing import Any

from upgradeplan import conditions
from upgradeplan.model import Condition, KnowledgeBase, State, Truth

_Pred = tuple[Any, tuple[str, ...]]  # (content key, fact keys read)


class Truths:
    """Kleene truth of conditions on states, predicates cached by content and facts read."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._preds: dict[int, tuple[Condition, _Pred]] = {}
        # (content, *fact ids) -> (truth, the facts read: kept alive so an id is never reused)
        self._cache: dict[tuple[Any, ...], tuple[Truth, tuple[Any, ...]]] = {}

    def _pred(self, cond: Condition) -> _Pred:
        hit = self._preds.get(id(cond))
        if hit is None or hit[0] is not cond:
            content = (cond.predicate, repr(sorted(cond.args.items())))
            hit = self._preds[id(cond)] = (cond, (content, tuple(conditions.facts_read(cond))))
        return hit[1]

    def known(self, cond: Condition, state: State) -> Truth | None:
        """The cached truth of a predicate (or its negation) on ``state`` (None: not known)."""
        if cond.op == "not":
            inner = self.known(cond.children[0], state)
            return None if inner is None else ~inner
        if cond.op != "pred":
            return None
        content, keys = self._pred(cond)
        facts = state.facts
        hit = self._cache.get((content, *[id(facts.get(k)) for k in keys]))
        return None if hit is None else hit[0]

    def of(self, cond: Condition, state: State) -> Truth:
        """The truth of ``cond`` on ``state`` (what ``conditions.truth`` gives)."""
        if cond.op == "pred":
            content, keys = self._pred(cond)
            read = tuple(state.facts.get(k) for k in keys)
            ck = (content, *map(id, read))
            hit = self._cache.get(ck)
            if hit is None:
                hit = self._cache[ck] = (conditions.truth(cond, state, self.kb), read)
            return hit[0]
        if cond.op == "not":
            return ~self.of(cond.children[0], state)
        return self._combine(cond, state)

    def _combine(self, cond: Condition, state: State) -> Truth:
        stop = Truth.FALSE if cond.op == "all" else Truth.TRUE
        rest: list[Condition] = []
        unknown = False
        for child in cond.children:  # first the predicates already known
            t = self.known(child, state)
            if t is None:
                rest.append(child)
            elif t is stop:
                return stop
            else:
                unknown = unknown or t is Truth.UNKNOWN
        for child in rest:
            t = self.of(child, state)
            if t is stop:
                return stop
            unknown = unknown or t is Truth.UNKNOWN
        if unknown:
            return Truth.UNKNOWN
        return Truth.TRUE if cond.op == "all" else Truth.FALSE


__all__ = ["Truths"]
