"""The cheapest path through a window in one pass over its releases, in version order.

Releases rise strictly through the window and every hop goes up, so the hops form a DAG in
version order: the cheapest cost of reaching release ``j`` is the least, over the releases
``i`` before it that may hop to it, of the cost of reaching ``i`` plus the hop ``i -> j``.
The hop's cost (planner/fanout.py) is a sum of terms, each a function of the start alone, of
the end alone, or of a skip or transition hazard that adds its weight to every hop from a run
of starts into a run of ends. So the search keeps one *column*: for every start ``i``, what
the skip and transition hazards whose ends include ``j`` add to a hop from it. Moving from
``j - 1`` to ``j`` adds a hazard's weights over its starts where one of its runs of ends
begins and takes them away where one ends; the least over the column is found with C-level
``min``/``map`` over whole lists, and the terms of the end (landing and state hazards, the
requirements) are added once per end.

Ties are broken as Dijkstra's heap breaks them (planner/search.py): of the starts that give
an end its least cost, the one reached cheapest, then the lowest release; the key compared is
``(cost through i) * M + (cost of i) * B + i``, one integer. The result is the path and cost of
the search over every release, hop by hop; ``tests/test_planner_prune.py`` checks both.

It applies where the fan-out does (planner/fanout.py ``fan_of``) and no landing truth depends
on the start; otherwise the search runs Dijkstra over the fan-out. Like the fan-out and the
pruning, it weighs a hop from release ``i`` on ``Search.state_at(i)``, the state as if every
release before ``i`` had been installed, which is the state every path reaches there only
when no fact key a weight reads is path-dependent (planner/paths.py); where one is, the
search runs over the expanded nodes of planner/paths.py instead and none of these is used.
"""

from __future__ import annotations

import operator
from itertools import repeat
from typing import TYPE_CHECKING, Any

from upgradeplan.model import Truth
from upgradeplan.planner import requirements

if TYPE_CHECKING:
    from upgradeplan.planner.fanout import Fanout
    from upgradeplan.planner.search import Search

_Segs = list[list[int]]  # [lo, hi, weight] runs of starts with one weight


def cheapest(s: Search, fan: Fanout) -> list[int] | None:
    """Node indices of the cheapest path from node 0 to the target ([] when none); None when
    a term of a hop's cost depends on both its start and its end in another way."""
    if any(fan.dependent):
        return None
    n = len(s.nodes)
    starts = _comp_starts(s, fan)
    if starts is None:
        return None
    weights = _start_weights(s, fan, starts)
    events: list[list[tuple[_Segs, int]]] = [[] for _ in range(n + 1)]
    for (mover, hid), segs in weights.items():
        for lo, hi in fan.runs[mover].get(hid, ()):
            events[lo].append((segs, 1))
            events[hi].append((segs, -1))
    bound = _bound(s, fan)
    b = n + 1
    m = b * (bound + 1)  # cost-of-i * B + i < M for every cost
    inf = m * (4 * bound + 4)  # above every key, also with a column's weights added
    # per start i: enc(i) + col(i), where enc(i) is the cost of i * (M + B) + i (inf: not
    # reached) and col(i) what the skip/transition hazards active at the end add from i, * M
    # (never negative); kept as one sum so that the least over the starts is one C-level min
    tot = [inf] * n
    tot[0] = 0
    reached = [False] * n
    reached[0] = True
    prev = [0] * n
    best = [0] * n
    may_apply = set(fan.requires)
    groups = _groups(fan, starts, n)
    for j in range(1, n):
        for segs, sign in events[j]:
            for lo, hi, w in segs:  # starts at or after j are not read before they count
                tot[lo:hi] = map(operator.add, tot[lo:hi], repeat(sign * w * m, hi - lo))
        if s.nodes[j].release.upgrade_from is not None or j in may_apply:  # type: ignore[union-attr]
            key = _per_start(s, fan, j, tot, groups, m)
        else:
            key = _all_starts(j, tot, groups, m)
        if key >= inf:
            continue
        best[j] = key // m + fan.base[j]
        prev[j] = key % b
        tot[j] += best[j] * (m + b) + j - inf  # col(j) = tot[j] - inf while j is not reached
        reached[j] = True
    if not reached[-1]:
        return []
    path = [n - 1]
    while path[-1] != 0:
        path.append(prev[path[-1]])
    return path[::-1]


def _comp_starts(s: Search, fan: Fanout) -> dict[str, int] | None:
    """Per lockstep component: the first start whose state has it installed (every later one
    has it too); None when that is not so."""
    out: dict[str, int] = {}
    n = len(s.nodes)
    states = [s.state_at(i).facts for i in range(n)]
    for comp in fan.comps:
        key = f"installed.{comp}"
        # State.installed: the value where it is a version text
        has = [isinstance(getattr(facts.get(key), "value", None), str) for facts in states]
        first = has.index(True) if True in has else n
        if not all(has[first:]):
            return None
        out[comp] = first
    return out


def _start_weights(s: Search, fan: Fanout, starts: dict[str, int]) -> dict[tuple[str, str], _Segs]:
    """Per mover and skip/transition hazard: its weight on a hop from each start, as runs
    (the truths as ``Search._starting`` finds them: swept, else judged on the start).

    One sweep over the starts: a hazard's run goes on unchanged until it leaves the hazards a
    start can meet (``Index.sides``) or its swept truth may change (``Sweep.touched``), so
    only those hazards are looked at again at a start."""
    sweep = s.sweep()
    if sweep is None:
        return _each_start(s, fan, starts)
    out: dict[tuple[str, str], _Segs] = {}
    running: dict[tuple[str, str], list[int]] = {}  # (mover, hazard) -> its last run, open
    before: dict[str, frozenset[str]] = {}  # mover -> the hazards the start before can meet
    weigh, sides_of, started = s.weigh, s.idx.sides, s.idx.started
    last = len(s.nodes) - 1
    comp_keys = [(c, f"installed.{c}", first) for c, first in starts.items()]
    known_sides: dict[tuple[str, str], Any] = {}  # (mover, start version) -> Index.sides
    product, own = s.product, fan.sides[s.product]  # the product's own at every release
    truth = sweep.truth
    for i in range(last):
        movers = [(s.product, s.nodes[i].version)]
        if comp_keys:
            facts = s.state_at(i).facts
            for c, installed, first in comp_keys:
                if i >= first:
                    v = getattr(facts.get(installed), "value", None)  # State.installed, or ""
                    movers.append((c, v if isinstance(v, str) and v else ""))
        touched = sweep.touched[i]
        for mover, f in movers:
            if i and mover == product:
                sides = own[i]
            else:
                key = (mover, f)
                sides = known_sides.get(key)
                if sides is None:
                    sides = known_sides[key] = sides_of(mover, f, fan._parse(mover, f))
            ids, hazards = started(sides)
            old = before.get(mover)
            before[mover] = ids
            if old is None:
                look = ids
            elif ids is old:
                look = touched & ids
            else:
                look = (ids ^ old) | (touched & ids) if touched else ids ^ old
            for hid in look:
                h = hazards.get(hid)
                w = 0
                if h is not None:
                    known = truth(i, hid)
                    if known is None:
                        if h.when is not None:  # not swept: judged on each start
                            return _each_start(s, fan, starts)
                        known = s._truth(h, s.state_at(i), f, f)
                    w = weigh(h, known)
                key = (mover, hid)
                run = running.get(key)
                if run is not None:
                    if run[2] == w:
                        continue
                    run[1] = i
                    del running[key]
                if w:
                    run = running[key] = [i, last, w]
                    out.setdefault(key, []).append(run)
    return out  # the runs still open end at the last start


def _each_start(s: Search, fan: Fanout, starts: dict[str, int]) -> dict[tuple[str, str], _Segs]:
    """``_start_weights`` start by start, every hazard a start can meet looked at."""
    out: dict[tuple[str, str], _Segs] = {}
    weigh, sides_of = s.weigh, s.idx.sides
    s.sweep()
    for i in range(len(s.nodes) - 1):
        pre = s.state_at(i)
        movers = [(s.product, s.nodes[i].version)]
        movers += [(c, pre.installed(c) or "") for c, first in starts.items() if i >= first]
        for mover, f in movers:
            sides = sides_of(mover, f, fan._parse(mover, f))
            for h in (*sides.skip_pre, *sides.trans_pre):
                known = s.swept_truth(pre, h.id)
                if known is None:  # not swept: judged on the start (no $to: fan-out applies)
                    known = s._truth(h, pre, f, f)
                if known is Truth.FALSE:
                    continue
                w = weigh(h, known)
                if not w:
                    continue
                segs = out.get((mover, h.id))
                if segs is None:
                    out[(mover, h.id)] = [[i, i + 1, w]]
                elif segs[-1][1] == i and segs[-1][2] == w:
                    segs[-1][1] = i + 1
                else:
                    segs.append([i, i + 1, w])
    return out


def _bound(s: Search, fan: Fanout) -> int:
    """Above the cost of every path: every hop at most the greatest weight of every hazard of
    every mover and of a requirement."""
    from upgradeplan.planner.search import APPLIES_COST, FORBIDDEN_COST, HOP_COST

    per = FORBIDDEN_COST + max(APPLIES_COST.values())
    hazards = sum(len(s.idx.by_product.get(m, ())) for m in (s.product, *fan.comps))
    return len(s.nodes) * (HOP_COST + per * (hazards + 1))


_Groups = list[tuple[int, list[list[int]]]]


def _groups(fan: Fanout, starts: dict[str, int], n: int) -> _Groups:
    """(first start, the end terms of the components first installed there), in start order
    (the start 0 always there)."""
    at: dict[int, list[list[int]]] = {0: []}
    for comp, first in starts.items():
        if first < n:
            at.setdefault(first, []).append(fan.comp_base[comp])
    return sorted(at.items())


def _extras(groups: _Groups, j: int) -> list[tuple[int, int]]:
    """(first start, what the components installed from there add at ``j``) in start order."""
    out, total = [], 0
    for first, bases in groups:
        for base in bases:
            total += base[j]
        out.append((first, total))
    return out


def _all_starts(j: int, tot: list[int], groups: _Groups, m: int) -> int:
    """The least key over every start before ``j`` (``tot``: enc + col per start)."""
    pieces = _extras(groups, j)
    key = -1
    for k, (lo, extra) in enumerate(pieces):
        hi = min(pieces[k + 1][0], j) if k + 1 < len(pieces) else j
        if lo >= hi:
            continue
        found = min(tot[lo:hi]) + extra * m
        if key < 0 or found < key:
            key = found
    return key


def _per_start(
    s: Search,
    fan: Fanout,
    j: int,
    tot: list[int],
    groups: _Groups,
    m: int,
) -> int:
    """The least key over the starts that may hop to ``j`` (its ``upgrade_from``), with the
    requirement's cost where it depends on the start (``tot``: enc + col per start)."""
    rel = s.nodes[j].release
    assert rel is not None
    pieces = _extras(groups, j)
    may_apply = j in fan.requires
    key = -1
    for i in _admitted(s, j):
        extra = next(e for lo, e in reversed(pieces) if lo <= i)
        if may_apply:
            extra += requirements.cost(s, i, j)
        found = tot[i] + extra * m
        if key < 0 or found < key:
            key = found
    return key


def _admitted(s: Search, j: int) -> list[int]:
    """The starts before ``j`` that may hop to it (its ``upgrade_from``), ascending: the
    window's releases among those of the product the constraint admits (found once per
    knowledge base, ``Index.admitted``), and the start when it is not a release."""
    rel = s.nodes[j].release
    assert rel is not None
    if rel.upgrade_from is None:
        return list(range(j))
    nodes = s.nodes
    ok = s.idx.admitted(s.product, rel.upgrade_from)
    at = s.positions()
    out = sorted(i for i in map(at.get, ok) if i is not None and 0 < i < j)
    if s.idx.may_hop(rel, nodes[0].version):  # the start, a release or not
        out.insert(0, 0)
    return out


__all__ = ["cheapest"]
