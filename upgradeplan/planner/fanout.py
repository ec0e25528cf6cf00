"""Every hop out of one start weighed at once: the search's hop costs without a loop per hop.

A hop ``i -> j`` costs HOP_COST plus, for the product and for every lockstep component that
moves on it, the skip and transition hazards that start at ``i`` and land on ``j``, the landing
and state hazards in scope at ``j``, and the requirements of release ``j``
(``Search.hop`` weighs one hop; this gives the same integers for all of them). Weights are
integers, so a sum does not depend on the order of its terms:

- a skip or transition hazard's truth is read on the state before the hop, the same for every
  end; the ends it lands on are runs of the window (where its ``to`` holds at the version the
  hop lands on), so its weight goes into a difference array over the window, summed once per
  start;
- a landing or state hazard whose truth is the same wherever the hop starts, and a
  requirement's status where it does not depend on the start (planner/requirements.py
  ``alike``), are summed once per end;
- what is left (a landing truth that depends on the start, a requirement that may be inherited
  from the start's release or whose product a skipped release moves) is added hop by hop.

It is used when the pruning's conditions hold (planner/prune.py ``prunable``: no ``$from`` /
``$to``, no templated keys, no conditional requirements, releases and lockstep components
strictly ascending) and no fact key a weight reads is path-dependent (planner/paths.py);
otherwise the search weighs hop by hop.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from upgradeplan.model import Hazard, State, Truth
from upgradeplan.planner import requirements
from upgradeplan.versions import parse_version

if TYPE_CHECKING:
    from upgradeplan.planner.search import Search
    from upgradeplan.planner.truths import Sweep

_Dependent = tuple[Hazard, str, str]  # a landing truth to find per start: hazard, mover, version
_NONE: frozenset[str] = frozenset()


class Fanout:
    """Hop costs from one start to every later release of the window."""

    def __init__(self, s: Search, comps: Sequence[str]) -> None:
        from upgradeplan.planner.search import HOP_COST

        self.s = s
        self._hop_cost = HOP_COST
        n = len(s.nodes)
        # a component no landing of the window moves never adds to a hop
        self.comps = tuple(c for c in comps if moves(s, c))
        # the version each mover lands on at node j (None: the landing does not move it)
        own: list[str | None] = [None, *(x.version for x in s.nodes[1:])]
        self.lands: dict[str, list[str | None]] = {s.product: own}
        maps = [s.landing_map(j) for j in range(1, n)]
        for comp in self.comps:
            key = f"installed.{comp}"
            at: list[str | None] = [None]
            for landing in maps:
                fact = landing.get(key)
                value = None if fact is None else fact.value
                at.append(value if isinstance(value, str) else None)
            self.lands[comp] = at
        self.parsed = {(s.product, x.version): x.parsed for x in s.nodes}
        for comp in self.comps:
            for v in self.lands[comp]:
                if v is not None and (comp, v) not in self.parsed:
                    self.parsed[(comp, v)] = parse_version(v)
        # per mover: the hazards a hop landing at node j can be in scope of (Index.sides;
        # None where the landing does not move it), looked up once
        sides_of, parsed = s.idx.sides, self.parsed
        self.sides: dict[str, list[Any]] = {
            m: [None if v is None else sides_of(m, v, parsed[(m, v)]) for v in at]
            for m, at in self.lands.items()
        }
        self.runs = {m: self._runs(m) for m in self.lands}
        self.base = [0] * n
        self.comp_base = {c: [0] * n for c in self.comps}
        self.dependent: list[list[_Dependent]] = [[] for _ in range(n)]
        self.requires: list[int] = []  # ends whose requirement may be inherited
        # per mover: its landing/state hazards whose truth is not the sweep's for every start
        self._apart: dict[str, frozenset[str]] = {}
        # per mover: (the end, the ids summed there, their weights, their sum)
        self._carried: dict[str, tuple[int, frozenset[str], dict[str, int], int]] = {}
        for j in range(1, n):
            self._end(j)

    def _runs(self, mover: str) -> dict[str, list[tuple[int, int]]]:
        """Per skip/transition hazard of ``mover``: the runs [lo, hi) of ends it lands on."""
        out: dict[str, list[tuple[int, int]]] = {}
        opened: dict[str, int] = {}  # hazard -> where its run now open began
        before: frozenset[str] = _NONE
        landing_on = self.s.idx.landing_on
        for j, sides in enumerate(self.sides[mover]):
            here = _NONE if sides is None else landing_on(sides)
            if here is before or here == before:
                continue
            for hid in before - here:  # its run ends before j
                out.setdefault(hid, []).append((opened.pop(hid), j))
            for hid in here - before:
                opened[hid] = j
            before = here
        for hid, lo in opened.items():
            out.setdefault(hid, []).append((lo, len(self.sides[mover])))
        return out

    def _end(self, j: int) -> None:
        """What a hop landing on ``j`` weighs whatever its start (and what it does not)."""
        s = self.s
        self.base[j] = self._hop_cost
        self._landed(j, s.product, self.base)
        for comp in self.comps:
            if self.lands[comp][j] is not None:
                self._landed(j, comp, self.comp_base[comp])
        rel = s.nodes[j].release
        if rel is not None and rel.requires and not requirements.alike(s, j):
            self.requires.append(j)  # its status depends on the start: weighed per hop
            return
        req = requirements.status(s, j - 1, j)
        if req is None or req[0] == "does-not-apply":
            return
        if req[0] == "may-apply":
            self.requires.append(j)
        else:
            self.base[j] += requirements.cost(s, j - 1, j)

    def _landed(self, j: int, mover: str, into: list[int]) -> None:
        s = self.s
        v = self.lands[mover][j]
        assert v is not None
        sides = self.sides[mover][j]
        sweep = s.sweep()
        if sweep is None:
            total, known_of = 0, s.landed_known(mover, v, j, sides.landed)
        else:  # the hazards whose truth the sweep gives alike for every start: a sweep-line
            total, rest = self._swept_landed(j, mover, sides, sweep)
            known_of = s.landed_truths(v, j, rest) if rest else []
        for h, known in known_of:
            if known is None:
                self.dependent[j].append((h, mover, v))
            elif known is not Truth.FALSE:  # one that does not apply weighs nothing
                total += s.weigh(h, known)
        into[j] += total

    def _swept_landed(
        self, j: int, mover: str, sides: Any, sweep: Sweep
    ) -> tuple[int, list[Hazard]]:
        """What the landing and state hazards of ``mover`` in scope at ``j`` whose truth is
        the sweep's at every end (no condition, or every fact read set by every landing or by
        none: ``Search.landed_known``) add to a hop landing on ``j``, and the other hazards.
        The sum is carried from ``j - 1``: a hazard is looked at again only where it enters or
        leaves the hazards in scope or the sweep may have changed its truth there."""
        s = self.s
        apart = self._apart.get(mover)
        if apart is None:
            from upgradeplan.planner.prune import alike_everywhere

            swept0 = sweep.first
            apart = self._apart[mover] = frozenset(
                h.id
                for h in s.idx.by_product.get(mover, ())
                if h.when is not None and not (h.id in swept0 and alike_everywhere(s, h))
            )
        ids = s.idx.landed_ids(sides)
        rest: list[Hazard] = []
        if apart and not apart.isdisjoint(ids):
            rest = [h for h in sides.landed if h.id in apart]
            ids = ids - apart
        last = self._carried.get(mover)
        if last is None or last[0] != j - 1:
            weights: dict[str, int] = {}
            total, look = 0, ids
        else:
            _, old, weights, total = last
            touched = sweep.touched[j] & ids
            # the index keeps one object per set of ids: the same set is the same object
            look = touched if ids is old else (ids ^ old) | touched
        truth, hazards, weigh = sweep.truth, s.kb.hazards, s.weigh
        for hid in look:
            total -= weights.pop(hid, 0)
            if hid in ids:
                h = hazards[hid]
                known = Truth.TRUE if h.when is None else truth(j, hid)
                assert known is not None  # a hazard of the mover with a condition: swept
                w = 0 if known is Truth.FALSE else weigh(h, known)
                if w:
                    weights[hid] = w
                    total += w
        self._carried[mover] = (j, ids, weights, total)
        return total, rest

    def costs(self, i: int, ends: Sequence[int]) -> list[int]:
        """The cost of every hop ``i -> j`` for ``j`` in ``ends`` (all after ``i``)."""
        s = self.s
        pre = s.state_at(i)
        n = len(s.nodes)
        diff = [0] * (n + 1)
        row = self.base
        starts: list[tuple[str, str]] = [(s.product, s.nodes[i].version)]
        for comp in self.comps:
            a = pre.installed(comp)
            if a is not None:
                starts.append((comp, a))
                row = list(map(operator.add, row, self.comp_base[comp]))
        for mover, f in starts:
            self._starting(i, mover, f, pre, diff)
        row = list(map(operator.add, row, itertools.accumulate(diff)))
        for j in self.requires:
            if j > i:
                row[j] += requirements.cost(s, i, j)
        movers = {m for m, _ in starts}
        for j in ends:
            for h, mover, v in self.dependent[j]:
                if mover in movers:
                    row[j] += s.weigh(h, self._per_start(h, i, j, v))
        return [row[j] for j in ends]

    def _starting(self, i: int, mover: str, f: str, pre: State, diff: list[int]) -> None:
        """Add the skip and transition hazards of ``mover`` starting at ``f`` to ``diff``."""
        s = self.s
        sides = s.idx.sides(mover, f, self._parse(mover, f))
        runs = self.runs[mover]
        skips, transitions = s._starting(mover, f, sides, pre)
        for h, known in itertools.chain(skips, transitions):
            assert known is not None  # no $to (prunable)
            w = s.weigh(h, known)
            if not w:
                continue
            for lo, hi in runs.get(h.id, ()):
                if hi > i + 1:
                    diff[max(lo, i + 1)] += w
                    diff[hi] -= w

    def _parse(self, mover: str, version: str) -> Any:
        hit = self.parsed.get((mover, version))
        if hit is None:
            hit = self.parsed[(mover, version)] = parse_version(version)
        return hit

    def _per_start(self, h: Hazard, i: int, j: int, v: str) -> Truth:
        return self.s._truth(h, self.s.landed_state(i, j), v, v)


def moves(s: Search, comp: str) -> bool:
    """Whether some landing of the window sets ``comp``'s installed version (cached)."""
    hit = s._moving.get(comp)
    if hit is None:
        key = f"installed.{comp}"
        maps = map(s.landing_map, range(1, len(s.nodes)))
        hit = s._moving[comp] = any(
            isinstance(getattr(landing.get(key), "value", None), str) for landing in maps
        )
    return hit


def fan_of(s: Search) -> Fanout | None:
    """The fan-out weighing of ``s``'s window, where it is exact (planner/prune.py
    ``prunable``); None: the search weighs hop by hop."""
    from upgradeplan.planner.prune import prunable

    comps = s.comps()
    if len(s.nodes) <= 2 or not prunable(s, comps):
        return None
    return Fanout(s, comps)


__all__ = ["Fanout", "fan_of", "moves"]
