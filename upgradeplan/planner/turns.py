"""Where along a window a hazard's truth may turn: the releases whose landing changes what its
condition sees.

The state at release ``i`` of a window is the state at ``i - 1`` with what landing on ``i``
sets, and a condition reads only the fact keys its predicates declare
(``conditions.facts_read``). So the truth of a hazard on the state at ``i`` can differ from
that on the state at ``i - 1`` only where the landing on ``i`` changes what one of its
predicates sees of those keys: its *turns*. What a predicate sees of a key is the class of the
value for a version comparison or a pin test (``conditions.vocabulary`` ``ARG_CLASS``,
``VALUE_CLASS``), the default of its key in the release a value predicate reads the installed
version for (``conditions.values``), else the value and the kind of its source. The one pass
(planner/onepass.py) weighs the starts and the ends between two turns alike and judges a
hazard again only after it turned.

Each key's changes along the window are found in one walk over the landings; a predicate's
turns are where its view of them changes. Along a rising run of versions a comparison with one
bound (``version_below``, ``version_at_least``) turns at most once, found by bisection.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from upgradeplan import conditions, keypath
from upgradeplan.conditions.vocabulary import ARG_CLASS, VALUE_CLASS
from upgradeplan.model import Condition, Fact, Hazard
from upgradeplan.planner.window import Window
from upgradeplan.versions import parse_version

# the predicates that read ``installed.<product>`` only to find the running release's defaults
VALUE_PREDICATES = frozenset({"value_set", "value_equals", "value_in", "value_contains"})
SCALARS = (str, bool, int, float)
CLASSED = frozenset(VALUE_CLASS) | frozenset(ARG_CLASS)
_MONOTONE = frozenset({"version_below", "version_at_least"})  # one bound: turns at most once

_Turns = frozenset[int] | None  # None: at any release


def class_of(cond: Condition, fact: Fact | None) -> Any:
    """The class of the one fact ``cond`` read that its truth depends on alone (None: no
    such fact): ``VALUE_CLASS`` by the value, ``ARG_CLASS`` by the arguments and the value."""
    if fact is None:
        return None
    by_value = VALUE_CLASS.get(cond.predicate)
    if by_value is not None:
        return by_value(fact.value)
    return ARG_CLASS[cond.predicate](cond.args, fact.value)


def _same(a: Fact | None, b: Fact | None) -> bool:
    """Do ``a`` and ``b`` read alike (the value and its source's kind; else one fact)?"""
    if a is b:
        return True
    if a is None or b is None or not isinstance(a.value, SCALARS):
        return False
    same_value = type(a.value) is type(b.value) and a.value == b.value
    return same_value and a.source.kind == b.source.kind


class Turns:
    """The releases of one window at which each hazard's truth may turn (``of``), and per set
    of hazards how many turns lie at or before each release (``counts``)."""

    def __init__(self, s: Window) -> None:
        # what it reads of the window, taken now: it keeps no reference to the search
        self.kb, self.idx, self.moving, self.n = s.kb, s.idx, s.moving, len(s.nodes)
        self._start = s.start_state.facts
        self._walked = _walk(s)
        self._preds: dict[tuple[str, str], _Turns] = {}  # by predicate and arguments
        self._hazards: dict[str, _Turns] = {}
        self._sets: dict[frozenset[int], frozenset[int]] = {}
        self._defaults: dict[tuple[str, str], list[int]] = {}  # (installed key, values key)
        self._order: dict[int, tuple[frozenset[int], list[int]]] = {}  # turns, ascending
        self._rising: dict[str, bool] = {}  # key -> its values are versions, never falling

    def of(self, h: Hazard) -> _Turns:
        """The releases ``i`` (from 1) where the truth of ``h`` on the state at ``i`` may differ
        from that on the state at ``i - 1``; None: at any."""
        if h.id in self._hazards:
            return self._hazards[h.id]
        sets = []
        for cond in _predicates(h.when):
            found = self._pred(cond)
            if found is None:
                self._hazards[h.id] = None
                return None
            sets.append(found)
        widest = max(sets, key=len, default=frozenset())
        if all(x <= widest for x in sets):  # one set shared by the hazards that see alike
            hit = self._hazards[h.id] = widest
        else:
            hit = self._hazards[h.id] = frozenset().union(*sets)
        return hit

    def turned(self, h: Hazard, a: int, b: int) -> bool:
        """Whether the truth of ``h`` may differ between the states at releases ``a`` and
        ``b``: some turn of it lies after the lower and at or before the higher."""
        found = self.of(h)
        if found is None:
            return a != b
        hit = self._order.get(id(found))
        if hit is None or hit[0] is not found:
            hit = self._order[id(found)] = (found, sorted(found))
        order = hit[1]
        return bisect_right(order, min(a, b)) != bisect_right(order, max(a, b))

    def counts(self, hazards: Iterable[Hazard]) -> list[int]:
        """Per release ``i`` of the window: how many turns of ``hazards`` lie in ``1 .. i``
        (two releases with equal counts have no turn between them)."""
        n = self.n
        at: set[int] = set()
        for h in hazards:
            found = self.of(h)
            if found is None:
                return list(range(n))
            at |= found
        return list(itertools.accumulate(int(i in at) for i in range(n)))

    def _pred(self, cond: Condition) -> _Turns:
        content = (cond.predicate, repr(sorted(cond.args.items())))
        if content in self._preds:
            return self._preds[content]
        hit = self._turns(cond)
        if hit is not None:
            hit = self._sets.setdefault(hit, hit)  # one object per set of turns
        self._preds[content] = hit
        return hit

    def _turns(self, cond: Condition) -> _Turns:
        if conditions.hop_refs(cond):
            return None
        moving = self.moving
        keys: list[str] = []
        for key in self.idx.reads(cond):
            if "<" in key:  # templated: any moving key under its fixed part may be read
                head = key[: key.index("<")].rstrip(".")
                if any(m == head or m.startswith(head + ".") or not head for m in moving):
                    return None
            elif key in moving:
                keys.append(key)
        out: set[int] = set()
        if len(keys) == 1 and cond.predicate in CLASSED:
            return frozenset(self._class_turns(cond, keys[0]))
        own = f"installed.{cond.args.get('product')}"
        for key in keys:
            if key == own and cond.predicate in VALUE_PREDICATES:
                out.update(self._default_turns(key, str(cond.args.get("key"))))
            else:
                out.update(self._walk(key)[0][1:])
        return frozenset(out)

    def _class_turns(self, cond: Condition, key: str) -> list[int]:
        at, facts = self._walk(key)
        if cond.predicate in _MONOTONE and self._rises(key):
            last = class_of(cond, facts[-1])
            if isinstance(last, bool):
                # a rising run: the comparison turns once at most, into the last's class
                def reached(m: int) -> bool:
                    return bool(class_of(cond, facts[m]) == last)

                k = bisect_left(range(len(facts)), True, key=reached)
                return [at[k]] if k > 0 else []
        return _changes(at, [class_of(cond, f) for f in facts])

    def _rises(self, key: str) -> bool:
        """Are the values of ``key`` along the window versions, none below the one before?"""
        hit = self._rising.get(key)
        if hit is None:
            values = [f.value if f is not None else None for f in self._walk(key)[1]]
            hit = False
            if all(isinstance(v, str) for v in values):
                try:
                    parsed = [parse_version(str(v)) for v in values]
                except ValueError:
                    parsed = []
                hit = bool(parsed) and all(a <= b for a, b in itertools.pairwise(parsed))
            self._rising[key] = hit
        return hit

    def _default_turns(self, key: str, path: str) -> list[int]:
        """Where the default of values key ``path`` changes with the installed version under
        ``key``: all a value predicate reads of that version (``conditions.values``
        ``lookup_value``: the release it runs, and that release's default of the key)."""
        hit = self._defaults.get((key, path))
        if hit is None:
            at, facts = self._walk(key)
            parts = keypath.split(path)
            views: list[Any] = []
            for fact in facts:
                rel = None
                if fact is not None and isinstance(fact.value, str):
                    rel = self.kb.release(key[len("installed.") :], fact.value)
                if rel is None:
                    views.append(("fact", id(fact)))
                    continue
                found = keypath.get(rel.defaults, parts)
                scalar = isinstance(found, SCALARS)
                views.append(("default", type(found), found) if scalar else ("id", id(found)))
            hit = self._defaults[(key, path)] = _changes(at, views)
        return hit

    def _walk(self, key: str) -> tuple[list[int], list[Fact | None]]:
        """Where ``key`` changes along the window (0: the start) and its fact from there."""
        return self._walked.get(key) or ([0], [self._start.get(key)])


def _walk(s: Window) -> dict[str, tuple[list[int], list[Fact | None]]]:
    """Per key some landing of the window sets: the releases where its fact changes (0: the
    start) and the fact from each on."""
    walked: dict[str, tuple[list[int], list[Fact | None]]] = {}
    for j in range(1, len(s.nodes)):
        for f in s.landing_facts(j):
            seen = walked.get(f.key)
            if seen is None:
                seen = walked[f.key] = ([0], [s.start_state.facts.get(f.key)])
            if not _same(seen[1][-1], f):
                seen[0].append(j)
                seen[1].append(f)
    return walked


def _changes(at: list[int], views: list[Any]) -> list[int]:
    """The positions of ``at`` where ``views`` differs from the one before."""
    return [at[m] for m in range(1, len(at)) if views[m] != views[m - 1]]


def _predicates(cond: Condition | None) -> Iterable[Condition]:
    if cond is None:
        return
    if cond.op == "pred":
        yield cond
    for child in cond.children:
        yield from _predicates(child)


__all__ = ["CLASSED", "SCALARS", "VALUE_PREDICATES", "Turns", "class_of"]
