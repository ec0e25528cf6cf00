"""The per-product path search: the window of releases, landing states, hop weights, Dijkstra.

Each hop costs 1 plus the cost of the hazards it meets; a hop on which a hazard at or above
``fail_on`` applies and cannot be fixed by actions is *forbidden* (it only appears in a path
when no path avoids it). Large windows are pruned to the releases the cheapest path may need
(planner/prune.py: exact, the same path and cost as trying every release). Every hop is
weighed on the state its path reaches (planner/paths.py): where that depends on which
releases the path stopped at, the search runs over (release, path-dependent facts) nodes.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from upgradeplan import conditions
from upgradeplan.model import (
    SEVERITY_RANK,
    Fact,
    Finding,
    Hazard,
    KnowledgeBase,
    Release,
    State,
    Truth,
)
from upgradeplan.planner import onepass, requirements
from upgradeplan.planner.actions import migration_available
from upgradeplan.planner.hopfindings import hop_findings
from upgradeplan.planner.index import Index
from upgradeplan.planner.paths import dependent_keys, landing_facts
from upgradeplan.planner.prune import alike_everywhere, alike_starts, first_set, landing_truth
from upgradeplan.planner.truths import Sweep, Truths, window_sweep
from upgradeplan.provenance import Source
from upgradeplan.releases import may_hop
from upgradeplan.versions import is_exact, parse_version

if TYPE_CHECKING:
    from upgradeplan.planner.fanout import Fanout

# hop weights, in tenths (integers: a path's cost is exact whatever the order of its terms)
HOP_COST = 10
FORBIDDEN_COST = 10_000_000
APPLIES_COST = {"blocking": 10_000, "warning": 100, "notice": 5}
MAY_APPLY_COST = {"blocking": 1000, "warning": 20, "notice": 1}
FIXED_COST = {"blocking": 30, "warning": 20, "notice": 5}

# windows larger than this consider only the releases planner/prune.py keeps (the first of
# each run of releases no hop weight tells apart); smaller ones try every release
EXHAUSTIVE_WINDOW = 40
# weigh every hop out of a start at once (planner/fanout.py) where that is exact, and find
# truths through planner/truths.py; off: hop by hop, each truth by conditions.truth
FANOUT = True
# with the fan-out: the cheapest path in one pass over the window in version order
# (planner/columns.py) rather than Dijkstra over the pruned releases
COLUMNS = True


@dataclass(slots=True)
class _Node:
    version: str
    parsed: Any
    release: Release | None
    state: State | None = None  # computed lazily


@dataclass(slots=True)
class _Hop:
    forbidden: tuple[str, ...]
    cost: int  # tenths


_TruthInfo = tuple[tuple[str, ...] | None, bool, bool]
_ALWAYS: _TruthInfo = ((), False, False)  # no condition: the hazard applies wherever in scope

_Known = list[tuple[Hazard, "Truth | None"]]  # a hazard and its truth (None: per hop)


class Search:
    """Hop evaluation and the path search for one product from one state.

    During the search only the status of each in-scope hazard is computed (cached by the
    identity of the facts its condition reads); findings with evidence are built afterwards
    for the hops of the chosen path only.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        idx: Index,
        product: str,
        start_state: State,
        current: str,
        target: str,
        holds: Sequence[str],
        limit: int,
    ) -> None:
        self.kb, self.idx, self.product = kb, idx, product
        self.holds = tuple(holds)
        self.limit = limit
        self.pidx = idx.product(product)
        self.start_state = start_state
        cur_v, tgt_v = parse_version(current), parse_version(target)
        pairs = list(zip(self.pidx.versions, self.pidx.releases, strict=True))
        start_rel = next((r for v, r in pairs if v == cur_v), None)
        self.nodes: list[_Node] = [_Node(current, cur_v, start_rel, start_state)]
        self.nodes += [_Node(r.version, v, r) for v, r in pairs if cur_v < v <= tgt_v]
        self.target = len(self.nodes) - 1
        self._pins = {
            k[len("pin.") :]
            for k, f in start_state.facts.items()
            if k.startswith("pin.") and isinstance(f.value, str) and is_exact(f.value)
        }
        self._hop_cache: dict[tuple[int, int], _Hop] = {}
        self._truth_cache: dict[tuple[Any, ...], Truth] = {}
        self._req_cache: dict[tuple[int, str | None], Finding | None] = {}
        self._req_alike: dict[int, bool] = {}
        self._req_status: dict[tuple[int, str | None], tuple[str, tuple[str, ...]] | None] = {}
        self._req_on: dict[tuple[int, int, int], tuple[State, Any]] = {}
        self._req_status_on: dict[tuple[int, int, int], tuple[State, Any]] = {}
        self._fix_cache: dict[str, bool] = {}
        self._weights: dict[str, tuple[int, int, bool]] = {}
        self.truths = Truths(kb)
        self._sweep: Sweep | Literal[False] | None = None
        self._swept: dict[int, int] = {}  # id of a window state -> its index in the sweep
        self._first_set: dict[str, int] | None = None
        self._alike: dict[str, bool] = {}  # hazard id -> prune.alike_everywhere
        self._set_by_every: frozenset[str] | None = None  # fact keys every landing sets
        self._prunable: dict[tuple[str, ...], bool] = {}
        self._truth_info: dict[str, _TruthInfo] = {}
        self._landed_cache: dict[tuple[str, str, int], _Known] = {}
        self._start_cache: dict[tuple[str, str, int], tuple[_Known, _Known]] = {}
        self._admits: dict[tuple[str, int], bool] = {}
        self._rising: bool | None = None  # every release above the one before it
        self._positions: dict[str, int] | None = None
        self._moving: dict[str, bool] = {}  # lockstep component -> some landing moves it
        self._fanout: Fanout | Literal[False] | None = None
        self._allowed: list[int] | None = None  # None: every release
        self._allowed_ready = False  # whether _allowed is computed
        self._landed_states: dict[tuple[int, int], State] = {}
        self._landing: dict[int, list[Fact]] = {}
        # per exactly pinned component: its pin's key and where the pin is written (paths.py)
        self._pin_written: dict[str, tuple[str, Source | None]] = {}
        self._landing_maps: dict[int, dict[str, Fact]] = {}
        self._dependent: tuple[str, ...] | None = None  # planner/paths.py dependent_keys
        self._walk: tuple[tuple[int, ...], list[State]] | None = None
        self._kept: list[State] = []  # states whose facts' identities key the caches
        self._state_hops: dict[tuple[int, int, int, int], tuple[State, State, _Hop]] = {}
        # the path-aware search stopped at its budget: (states, hops weighed); planner/paths.py
        self.stopped: tuple[int, int] | None = None

    @property
    def carried(self) -> tuple[str, ...]:
        """Components whose exact pins move with this product's BOM."""
        published = {c for node in self.nodes[1:] if node.release for c in node.release.bom}
        return tuple(sorted((self._pins & published) - {self.product} - set(self.holds)))

    def state_at(self, i: int) -> State:
        """The state at release ``i`` as if every release before it had been installed: what
        a path reaches there in every fact key no landing of the window sets partly
        (planner/paths.py); ``walk`` gives the state a given path reaches."""
        node = self.nodes[i]
        if node.state is not None:
            return node.state
        rel = node.release
        assert rel is not None
        node.state = self.state_at(i - 1).with_facts(*self._landing_facts(i))
        return node.state

    def landed_state(self, i: int, j: int) -> State:
        """The state right after the hop ``i -> j``: what ``j`` brings on top of
        ``state_at(i)`` (the releases the hop skips contribute nothing)."""
        if j == i + 1 or j == i:
            return self.state_at(j)
        key = (i, j)
        cached = self._landed_states.get(key)
        if cached is None:
            cached = self.state_at(i).with_facts(*self._landing_facts(j))
            self._landed_states[key] = cached
        return cached

    def landing_map(self, j: int) -> dict[str, Fact]:
        """The facts landing on release ``j`` sets, by key (cached)."""
        hit = self._landing_maps.get(j)
        if hit is None:
            hit = self._landing_maps[j] = {f.key: f for f in self._landing_facts(j)}
        return hit

    def _landing_facts(self, j: int) -> list[Fact]:
        """What landing on release ``j`` sets (planner/paths.py ``landing_facts``), built once
        per release, so the facts keep their identity across hops (the truth cache is keyed
        by the identity of the facts a condition reads)."""
        hit = self._landing.get(j)
        if hit is None:
            hit = self._landing[j] = landing_facts(self, j)
        return hit

    @property
    def allowed(self) -> list[int] | None:
        """The releases the search may stop at (computed on first use); None: all. A large
        window keeps those planner/prune.py finds the cheapest path may need."""
        if not self._allowed_ready:
            from upgradeplan.planner.prune import candidates

            large = len(self.nodes) > EXHAUSTIVE_WINDOW
            self._allowed, self._allowed_ready = candidates(self) if large else None, True
        return self._allowed

    @allowed.setter
    def allowed(self, value: list[int] | None) -> None:
        self._allowed, self._allowed_ready = value, True

    def positions(self) -> dict[str, int]:
        """The index of each release of the window after the start, by version (cached)."""
        if self._positions is None:
            self._positions = {n.version: i for i, n in enumerate(self.nodes) if i}
        return self._positions

    def successors(self, i: int) -> list[int]:
        """The releases a hop from node ``i`` may land on (their ``upgrade_from`` admits it)."""
        nodes = self.nodes
        allowed = self.allowed
        cands = range(i + 1, len(nodes)) if allowed is None else [j for j in allowed if j > i]
        if self._rising is None:
            pairs = itertools.pairwise(n.parsed for n in nodes)
            self._rising = all(b > a for a, b in pairs) and all(n.release for n in nodes[1:])
        if not self._rising:
            here = nodes[i].parsed
            cands = [j for j in cands if nodes[j].release and nodes[j].parsed > here]
        version = nodes[i].version
        admits = self._admits
        out = []
        for j in cands:
            rel = nodes[j].release
            assert rel is not None
            if rel.upgrade_from is not None:
                key = (rel.upgrade_from, i)
                ok = admits.get(key)
                if ok is None:
                    ok = admits[key] = may_hop(rel, version)
                if not ok:
                    continue
            out.append(j)
        return out

    def _truth(self, h: Hazard, state: State, f: str, t: str) -> Truth:
        if self._sweep is None and FANOUT:
            self.sweep()
        hit = self.swept_truth(state, h.id)
        if hit is not None:
            return hit
        info = self._truth_info.get(h.id)
        if info is None:
            info = self._info_of(h)
        if info is _ALWAYS:
            return Truth.TRUE
        keys, uses_from, uses_to = info
        bf, bt = f if uses_from else None, t if uses_to else None
        if keys is None:
            ck: tuple[Any, ...] = (h.id, bf, bt, id(state))
        else:
            ck = (h.id, bf, bt, *map(id, map(state.facts.get, keys)))
        hit = self._truth_cache.get(ck)
        if hit is None:
            assert h.when is not None
            if keys is None or uses_from or uses_to or not FANOUT:
                hit = conditions.truth(h.when, state, self.kb, hop=(f, t))
            else:
                hit = self.truths.of(h.when, state)
            self._truth_cache[ck] = hit
        return hit

    def sweep(self) -> Sweep | None:
        """The truths of the product's and lockstep components' hazards on every state of the
        window (planner/truths.py ``window_sweep``), when that is exact."""
        if self._sweep is None:
            found = window_sweep(self) if FANOUT else None
            self._sweep = found or False
            if found is not None:  # the states stay alive in the sweep: no id is reused
                self._swept = {id(st): i for i, st in enumerate(found.states)}
        return self._sweep or None

    def swept_truth(self, state: State, hid: str) -> Truth | None:
        """The sweep's truth of hazard ``hid`` on ``state`` (None: ``state`` is not one of
        the window's states the sweep went over, or the hazard is not swept)."""
        at = self._swept.get(id(state))
        if at is None or not self._sweep:
            return None
        return self._sweep.truth(at, hid)

    def _info_of(self, h: Hazard) -> _TruthInfo:
        """What the truth of ``h`` depends on: the facts it reads (None: the whole state) and
        whether it refers to ``$from`` / ``$to`` (cached per hazard)."""
        info: _TruthInfo = _ALWAYS
        if h.when is not None:
            refs = self.idx.refs.get(h.id, frozenset())
            info = (self.idx.keys.get(h.id), "$from" in refs, "$to" in refs)
        self._truth_info[h.id] = info
        return info

    def _scan(
        self,
        product: str,
        f: str,
        t: str,
        fv: Any,
        tv: Any,
        pre: State,
        post: State,
        j: int,
    ) -> list[tuple[Hazard, Truth]]:
        """In-scope hazards of ``product`` for the hop f -> t with their truth."""
        a = self.idx.sides(product, f, fv)
        b = self.idx.sides(product, t, tv)
        truth = self._truth
        skips, transitions = self._starting(product, f, a, pre)
        out = [
            (h, truth(h, pre, f, t) if known is None else known)
            for h, known in skips
            if h.id in b.skip_post
        ]
        out += [
            (h, truth(h, pre, f, t) if known is None else known)
            for h, known in transitions
            if h.id in b.trans_post
        ]
        if b.landed:
            out += [
                (h, truth(h, post, f, t) if known is None else known)
                for h, known in self.landed_known(product, t, j, b.landed)
            ]
        return out

    def landed_known(self, product: str, t: str, j: int, hazards: Sequence[Hazard]) -> _Known:
        """Landing and state hazards of ``product`` (at ``t``) on a hop landing on release
        ``j``, with their truth when it is the same wherever the hop starts (None: per hop)."""
        key = (product, t, j)
        hit = self._landed_cache.get(key)
        if hit is None:
            hit = self._landed_cache[key] = self.landed_truths(t, j, hazards)
        return hit

    def landed_truths(self, t: str, j: int, hazards: Sequence[Hazard]) -> _Known:
        """``landed_known`` for the hazards given (not cached)."""
        state = self.state_at(j)
        self.sweep()
        alike = self._alike
        hit: _Known = []
        landing: dict[str, Fact] | None = None
        for h in hazards:
            known = self.swept_truth(state, h.id)
            if known is not None:
                everywhere = alike.get(h.id)
                if everywhere is None:
                    everywhere = alike_everywhere(self, h)
                if everywhere:
                    hit.append((h, known))
                    continue
            if landing is None:
                landing = self.landing_map(j)
            if known is None or not alike_starts(self, h, landing, first_set(self), j):
                known = self._independent(h, state, landing, t, j)
            hit.append((h, known))
        return hit

    def _independent(
        self, h: Hazard, state: State, landing: Mapping[str, Fact], t: str, j: int
    ) -> Truth | None:
        if h.when is None:
            return Truth.TRUE
        keys = self.idx.keys.get(h.id)
        if keys is None or self.idx.refs.get(h.id):
            return None
        if alike_starts(self, h, landing, first_set(self), j):
            return self._truth(h, state, t, t)
        found = landing_truth(h.when, state, self.kb, landing)
        return None if found is Truth.UNKNOWN else found

    def _starting(self, product: str, f: str, a: Any, pre: State) -> tuple[_Known, _Known]:
        """Skip and transition hazards of ``product`` a hop from ``f`` (on ``pre``) can meet,
        with their truth when it does not depend on where the hop lands (no ``$to``)."""
        key = (product, f, id(pre))
        hit = self._start_cache.get(key)
        if hit is None:
            self.sweep()

            def known(hazards: Sequence[Hazard]) -> _Known:
                out: _Known = []
                for h in hazards:
                    t = self.swept_truth(pre, h.id)
                    if t is None:
                        lands = "$to" in self.idx.refs.get(h.id, ())
                        t = None if lands else self._truth(h, pre, f, f)
                    out.append((h, t))
                return out

            hit = self._start_cache[key] = (known(a.skip_pre), known(a.trans_pre))
        return hit

    def _moved(self, pre: State, post: State) -> list[tuple[str, str, str]]:
        out = []
        for comp in sorted(self._pins):
            a, b = pre.installed(comp), post.installed(comp)
            if a is not None and b is not None and a != b and comp != self.product:
                out.append((comp, a, b))
        return out

    def dependent(self) -> tuple[str, ...]:
        """The path-dependent fact keys some weight reads (planner/paths.py)."""
        return dependent_keys(self)

    def walk(self, path: list[int]) -> list[State]:
        """The state at each stop of ``path``, as that path reaches it (planner/paths.py)."""
        from upgradeplan.planner.paths import walk

        return walk(self, path)

    def fixable_id(self, hazard_id: str) -> bool:
        hit = self._fix_cache.get(hazard_id)
        if hit is None:
            h = self.kb.hazards.get(hazard_id)
            hit = (
                h is not None
                and h.scope != "skip"
                and bool(h.migrations)
                and all(
                    migration_available(self.kb.migrations.get(m), self.holds) for m in h.migrations
                )
            )
            self._fix_cache[hazard_id] = hit
        return hit

    def hop(self, i: int, j: int, pre: State | None = None, post: State | None = None) -> _Hop:
        """The weight of the hop i -> j from ``pre`` to ``post``, the states a path reaches at
        ``i`` and ``j`` (``walk``), cached. Without them, or where no fact key is path-dependent
        (then ``state_at(i)`` and ``landed_state(i, j)`` hold the same facts for every key a
        weight reads), the hop from ``state_at(i)`` to ``landed_state(i, j)``."""
        if pre is None or post is None or not self.dependent():
            hit = self._hop_cache.get((i, j))
            if hit is None:
                hit = self._hop_cache[(i, j)] = self._weigh(
                    i, j, self.state_at(i), self.landed_state(i, j), None
                )
            return hit
        key = (i, j, id(pre), id(post))
        known = self._state_hops.get(key)
        if known is None or known[0] is not pre or known[1] is not post:
            known = self._state_hops[key] = (pre, post, self._weigh(i, j, pre, post, post))
        return known[2]

    def _weigh(self, i: int, j: int, pre: State, post: State, judged: State | None) -> _Hop:
        """The hop's weight; ``judged``: the state its requirements are judged on (None: as
        planner/requirements.py finds it from ``i`` and ``j``)."""
        f, t = self.nodes[i].version, self.nodes[j].version
        found = self._scan(
            self.product, f, t, self.nodes[i].parsed, self.nodes[j].parsed, pre, post, j
        )
        for comp, a, b in self._moved(pre, post):
            found += self._scan(comp, a, b, parse_version(a), parse_version(b), pre, post, j)
        req_cost = requirements.cost(self, i, j, judged)
        cost = HOP_COST + req_cost
        forbidden: list[str] = []
        for h, truth in found:
            w = self.weigh(h, truth)
            cost += w
            if w >= FORBIDDEN_COST:
                forbidden.append(h.id)
        if req_cost >= FORBIDDEN_COST:  # the requirement forbids the hop
            req = requirements.found_for(self, i, j, judged)
            assert req is not None
            forbidden.append(req.hazard)
        return _Hop(tuple(forbidden), cost)

    def weigh(self, h: Hazard, truth: Truth) -> int:
        """What ``h`` with ``truth`` adds to a hop (FORBIDDEN_COST included where it forbids)."""
        if truth is Truth.FALSE:
            return 0
        w = self._weights.get(h.id)
        if w is None:
            w = self._weight_of(h.id, h.severity, self.fixable_id(h.id))
        if truth is Truth.UNKNOWN:
            return w[0]
        return w[1] + FORBIDDEN_COST if w[2] else w[1]

    def _weight_of(self, key: str, severity: str, can_fix: bool) -> tuple[int, int, bool]:
        """What a hazard adds to a hop: (may apply, applies, applying forbids the hop)."""
        hit = self._weights.get(key)
        if hit is None:
            applies = FIXED_COST[severity] if can_fix else APPLIES_COST[severity]
            forbids = not can_fix and SEVERITY_RANK[severity] >= self.limit
            hit = self._weights[key] = (MAY_APPLY_COST[severity], applies, forbids)
        return hit

    def hop_findings(
        self,
        i: int,
        j: int,
        pre: State | None = None,
        post: State | None = None,
        *,
        out_of_scope: bool = False,
    ) -> list[Finding]:
        """The findings of the hop i -> j from ``pre`` to ``post``, the states a path reaches
        (default, and where no fact key is path-dependent: ``state_at(i)`` to
        ``landed_state(i, j)``, alike in every fact a finding reads; see ``hop``)."""
        judged = post
        if pre is None or post is None or not self.dependent():
            judged = None
            pre, post = self.state_at(i), self.landed_state(i, j)
        out = hop_findings(self, i, j, pre, post, self._moved(pre, post), judged, out_of_scope)
        if self.stopped is not None and i == 0:  # planner/paths.py: a cheaper path may exist
            from upgradeplan.planner.paths import bound_finding

            out.append(bound_finding(self))
        return out

    def jump_findings(self, post: State) -> list[Finding]:
        """The direct jump's findings: the hop from the start to the target, its skip and
        transition hazards judged on the start, its landing and state hazards and its
        requirements on ``post`` (the state after the one step, with every target's
        landing); the components it moves are those its own landing moves."""
        pre = self.start_state
        moved = self._moved(pre, self.landed_state(0, self.target))
        return hop_findings(self, 0, self.target, pre, post, moved, post, True)

    def search(self) -> list[int]:
        """Node indices of the cheapest path from the current version to the target."""
        try:
            return self._search()
        finally:
            # the fan-out refers back to this search: dropped, so that the search is
            # freed by reference counting, not left to the cyclic collector
            self._fanout = None

    hop_cost = HOP_COST  # planner/onepass.py reads it through its Window protocol

    def _search(self) -> list[int]:
        from upgradeplan.planner.paths import expanded

        if onepass.applies(self):  # hop weights split into start and end terms
            return onepass.cheapest(self)
        keys = self.dependent()
        if keys and self.stopped is None:  # the state a stop has depends on the path to it
            self.allowed = None  # every release, hop by hop
            found = expanded(self, keys)
            if found is not None:
                return found
            self._allowed_ready = False  # stopped at its budget: the plain search's path
        fan = self._fan()
        if fan is not None and COLUMNS and self._allowed is None:
            from upgradeplan.planner.columns import cheapest

            found = cheapest(self, fan)
            if found is not None:
                return found
        dist: dict[int, int] = {0: 0}
        prev: dict[int, int] = {}
        heap: list[tuple[int, int]] = [(0, 0)]
        done: set[int] = set()
        while heap:
            d, i = heapq.heappop(heap)
            if i in done:
                continue
            done.add(i)
            if i == self.target:
                break
            ends = [j for j in self.successors(i) if j not in done]
            costs = fan.costs(i, ends) if fan else [self.hop(i, j).cost for j in ends]
            for j, c in zip(ends, costs, strict=True):
                nd = d + c
                if nd < dist.get(j, nd + 1):
                    dist[j] = nd
                    prev[j] = i
                    heapq.heappush(heap, (nd, j))
        if self.target not in done:
            if self.allowed is not None:
                self.allowed = None  # the pruned releases gave no path: try them all
                return self._search()
            return []
        path = [self.target]
        while path[-1] != 0:
            path.append(prev[path[-1]])
        return path[::-1]

    def _fan(self) -> Fanout | None:
        """Every hop out of a start weighed at once, where that is exact (None: hop by hop)."""
        if self._fanout is None:
            from upgradeplan.planner.fanout import fan_of

            self._fanout = (fan_of(self) if FANOUT else None) or False
        return self._fanout or None

    def comps(self) -> tuple[str, ...]:
        """The exactly pinned products other than this one (lockstep candidates)."""
        return tuple(sorted(p for p in self._pins if p != self.product))
