"""The per-product path search: the window of releases, landing states, hop weights, the path.

Each hop costs ``HOP_COST`` plus the cost of the hazards it meets (planner/costs.py); a hop on
which a hazard at or above ``fail_on`` applies and cannot be fixed by actions is *forbidden*
(it only appears in a path when no path avoids it). ``Search.search`` finds the cheapest path:

- where no hop weight reads a fact whose value depends on the path taken (planner/paths.py),
  in one pass over the releases in version order (planner/onepass.py), each hazard's
  condition evaluated once per distinct state it reads;
- where one does, by Dijkstra over (release, the values of those facts) nodes, each hop
  weighed on the state its path reaches, up to ``budget`` hops (planner/paths.py);
- where a hazard refers to ``$from``/``$to`` or the releases do not rise, by Dijkstra over the
  releases, hop by hop (``dijkstra``).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from msgspec import Struct

from upgradeplan import conditions, provenance
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
from upgradeplan.planner import onepass, paths, requirements
from upgradeplan.planner.actions import migration_available
from upgradeplan.planner.costs import (
    APPLIES_COST,
    FIXED_COST,
    FORBIDDEN_COST,
    HOP_COST,
    MAY_APPLY_COST,
)
from upgradeplan.planner.hopfindings import product_findings
from upgradeplan.planner.index import Index
from upgradeplan.planner.onepass import Truths
from upgradeplan.planner.turns import Turns
from upgradeplan.planner.window import Status
from upgradeplan.provenance import Source
from upgradeplan.versions import is_exact, parse_version

__all__ = ["Hop", "Search"]


class _Node(Struct):
    version: str
    parsed: Any
    release: Release | None
    state: State | None = None  # computed lazily (``Search.state_at``)


class Hop(Struct, frozen=True):
    """A hop's weight: the hazards (and requirements) that forbid it, and its cost in tenths."""

    forbidden: tuple[str, ...]
    cost: int


_REQUIREMENT = "\0requirement"  # the weights of a requirement: blocking, not fixable


class Search:
    """Hop weights and the path search for one product from one state.

    The window ``nodes`` holds the installed version (index 0) and every release of the
    product above it up to the target (``target``, the last index). During the search only
    the status of each in-scope hazard is computed; findings with evidence are built
    afterwards for the hops of the chosen path only (``hop_findings``).

    What it keeps, each built once on first use: ``pins``, ``comps``, ``carried`` and
    ``dependent`` (cached properties); ``truths``, the hazard truths by the facts their
    conditions read (planner/onepass.py ``Truths``); ``turns``, where along the window each
    hazard's truth may turn (planner/turns.py ``Turns``); and, as private dictionaries read by no
    other module, the facts each landing sets, the state after a hop, the weight of each hop,
    each requirement's status on a state and each hazard's weights.
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
        *,
        budget: int = paths.HOP_BUDGET,
    ) -> None:
        self.kb, self.idx, self.product = kb, idx, product
        self.holds = tuple(holds)
        self.limit = limit  # the rank of --fail-on
        self.budget = budget  # the most hops the path-aware search weighs (0: no bound)
        self.start_state = start_state
        pidx = idx.product(product)
        cur_v, tgt_v = parse_version(current), parse_version(target)
        pairs = list(zip(pidx.versions, pidx.releases, strict=True))
        start_rel = next((r for v, r in pairs if v == cur_v), None)
        self.nodes: list[_Node] = [_Node(current, cur_v, start_rel, start_state)]
        self.nodes += [_Node(r.version, v, r) for v, r in pairs if cur_v < v <= tgt_v]
        self.target = len(self.nodes) - 1
        # where the path-aware search stopped at its budget (planner/paths.py ``expanded``)
        self.stopped: paths.Stopped | None = None
        self._landing: dict[int, list[Fact]] = {}  # release -> the facts its landing sets
        self._landed: dict[tuple[int, int], State] = {}  # hop -> state after it
        self._hops: dict[tuple[int, int], Hop] = {}  # hop -> weight from state_at(i)
        self._path_hops: dict[tuple[int, int, int, int], tuple[State, State, Hop]] = {}
        self._requirements: dict[tuple[int, int, int], tuple[State, Status | None]] = {}
        self._hop_truths: dict[tuple[str, str, str, int], tuple[State, Truth]] = {}
        self._weights: dict[str, tuple[int, int, bool]] = {}  # hazard -> its weights
        self._walk: tuple[tuple[int, ...], list[State]] | None = None  # the last path walked
        self._kept: list[State] = []  # states whose facts' identities key the caches

    # -- what the window holds -------------------------------------------------------------

    @cached_property
    def pins(self) -> frozenset[str]:
        """The products the start state pins to an exact version."""
        return frozenset(
            k[len("pin.") :]
            for k, f in self.start_state.facts.items()
            if k.startswith("pin.") and isinstance(f.value, str) and is_exact(f.value)
        )

    @cached_property
    def comps(self) -> tuple[str, ...]:
        """The exactly pinned products other than this one (lockstep candidates), sorted."""
        return tuple(sorted(p for p in self.pins if p != self.product))

    @cached_property
    def carried(self) -> tuple[str, ...]:
        """Components whose exact pins move with this product's BOM."""
        published = {c for node in self.nodes[1:] if node.release for c in node.release.bom}
        return tuple(sorted((self.pins & published) - {self.product} - set(self.holds)))

    @cached_property
    def moving(self) -> frozenset[str]:
        """The fact keys some landing of the window sets."""
        return frozenset(k for j in range(1, len(self.nodes)) for k in self.landing_map(j))

    @cached_property
    def truths(self) -> Truths:
        """The hazard truths on the window's states, each condition evaluated once per
        distinct state it reads (planner/onepass.py)."""
        return Truths(self.kb, self.moving)

    @cached_property
    def turns(self) -> Turns:
        """Where along the window each hazard's truth may turn: the one pass judges hazards
        again only there (planner/turns.py)."""
        return Turns(self)

    @cached_property
    def dependent(self) -> tuple[str, ...]:
        """The path-dependent fact keys some hop weight reads (planner/paths.py)."""
        return paths.dependent_keys(self)

    @cached_property
    def rising(self) -> bool:
        """Every node is a release above the one before it (each hop may go to any later)."""
        nodes = self.nodes
        pairs = itertools.pairwise(n.parsed for n in nodes)
        return all(b > a for a, b in pairs) and all(n.release for n in nodes[1:])

    # -- states ----------------------------------------------------------------------------

    def landing_facts(self, j: int) -> list[Fact]:
        """What landing on release ``j`` sets, built once per release (the truths are kept by
        the identity of the facts a condition reads): the installed version (and the
        product's own exact pin), the exact pins of the components its BOM lists with their
        installed versions (the BOM rule, unless held), the components it publishes a range
        for that the installation does not pin, and its effects. The facts that do not depend
        on the state are the knowledge base's (``Index.landing``)."""
        hit = self._landing.get(j)
        if hit is None:
            hit = self._landing[j] = self._landing_facts(j)
        return hit

    def _landing_facts(self, j: int) -> list[Fact]:
        rel = self.nodes[j].release
        assert rel is not None
        known = self.idx.landing(self.product, rel)
        facts: list[Fact] = [known.installed]
        pins, holds, start = self.pins, self.holds, self.start_state
        if self.product in pins and self.product not in holds:
            # the product's own exact pin is what the user bumps to make the hop
            src = start.get(f"pin.{self.product}")
            moved = provenance.moved(src.source if src else None, rel.version, rel.key)
            facts.append(Fact(f"pin.{self.product}", rel.version, moved))
        for comp, version, installed in known.bom:
            if comp in pins and comp not in holds and comp != self.product:
                where = self._pin_sources.get(comp)
                if where is None:
                    moved = provenance.moved(None, version, rel.key)
                else:
                    moved = provenance.moved_behind(where, version, rel.key)
                facts.append(Fact(f"pin.{comp}", version, moved))
                facts.append(installed)
        for comp, pin, admits in known.components:
            # a component the installation does not pin follows the range the release publishes
            own = start.get(f"pin.{comp}")
            if comp in holds or (own is not None and own.source.kind != "release-default"):
                continue
            facts.append(pin)
            if admits is not None:
                facts.append(admits)
        facts += known.effects
        return facts

    @cached_property
    def _pin_sources(self) -> dict[str, Source]:
        """Where each exact pin is written in the start state (its source, unmoved)."""
        out: dict[str, Source] = {}
        for comp in self.pins:
            src = self.start_state.get(f"pin.{comp}")
            if src is not None:
                out[comp] = src.source.unmoved()
        return out

    def landing_map(self, j: int) -> dict[str, Fact]:
        """The facts landing on release ``j`` sets, by key."""
        return {f.key: f for f in self.landing_facts(j)}

    def state_at(self, i: int) -> State:
        """The state at release ``i`` as if every release before it had been installed: what
        a path reaches there in every fact key that is not path-dependent (planner/paths.py);
        ``walk`` gives the state a given path reaches."""
        node = self.nodes[i]
        if node.state is None:
            node.state = self.state_at(i - 1).with_facts(*self.landing_facts(i))
        return node.state

    def landed_state(self, i: int, j: int) -> State:
        """The state right after the hop ``i -> j``: what ``j`` brings on top of
        ``state_at(i)`` (the releases the hop skips contribute nothing)."""
        if j == i + 1 or j == i:
            return self.state_at(j)
        hit = self._landed.get((i, j))
        if hit is None:
            hit = self._landed[(i, j)] = self.state_at(i).with_facts(*self.landing_facts(j))
        return hit

    def walk(self, path: Sequence[int]) -> list[State]:
        """The state at each stop of ``path``: the start, then each landing laid on in turn
        (kept for the last path asked)."""
        key = tuple(path)
        if self._walk is not None and self._walk[0] == key:
            return self._walk[1]
        states = [self.start_state]
        for j in path[1:]:
            states.append(states[-1].with_facts(*self.landing_facts(j)))
        self._walk = (key, states)
        self.keep(states)
        return states

    def keep(self, states: Sequence[State]) -> None:
        """Keep ``states`` alive as long as the search: what is cached by the identity of
        their facts stays valid."""
        self._kept.extend(states)

    def moved(self, pre: State, post: State) -> list[tuple[str, str, str]]:
        """The lockstep components a hop from ``pre`` to ``post`` moves: (component, from, to)."""
        out = []
        for comp in self.comps:
            a, b = pre.installed(comp), post.installed(comp)
            if a is not None and b is not None and a != b:
                out.append((comp, a, b))
        return out

    def successors(self, i: int) -> list[int]:
        """The releases a hop from node ``i`` may land on (above it; their ``upgrade_from``
        admits it)."""
        nodes, here = self.nodes, self.nodes[i]
        out = []
        for j in range(i + 1, len(nodes)):
            rel = nodes[j].release
            if rel is None or not (self.rising or nodes[j].parsed > here.parsed):
                continue
            if self.idx.may_hop(rel, here.version):
                out.append(j)
        return out

    # -- weights ---------------------------------------------------------------------------

    def truth(self, h: Hazard, state: State, f: str, t: str) -> Truth:
        """The truth of ``h``'s condition on ``state`` for the hop ``f -> t``."""
        if h.when is None:
            return Truth.TRUE
        if not self.idx.refs.get(h.id):
            return self.truths.of(h, state)
        key = (h.id, f, t, id(state))
        hit = self._hop_truths.get(key)
        if hit is None or hit[0] is not state:
            found = conditions.truth(h.when, state, self.kb, hop=(f, t))
            hit = self._hop_truths[key] = (state, found)
        return hit[1]

    def scan(
        self, product: str, f: str, t: str, pre: State, post: State
    ) -> list[tuple[Hazard, Truth]]:
        """The hazards of ``product`` in scope of the hop ``f -> t`` with their truth: skip
        and transition hazards on ``pre``, landing and state hazards on ``post``."""
        idx, truth = self.idx, self.truth
        a = idx.sides(product, f, parse_version(f))
        b = idx.sides(product, t, parse_version(t))
        out = [(h, truth(h, pre, f, t)) for h in a.skip_pre if h.id in b.skip_post]
        out += [(h, truth(h, pre, f, t)) for h in a.trans_pre if h.id in b.trans_post]
        out += [(h, truth(h, post, f, t)) for h in b.landed]
        return out

    def fixable(self, hazard_id: str) -> bool:
        """Whether the hazard's migrations fix it (none held, none unavailable)."""
        h = self.kb.hazards.get(hazard_id)
        return (
            h is not None
            and h.scope != "skip"
            and bool(h.migrations)
            and all(
                migration_available(self.kb.migrations.get(m), self.holds) for m in h.migrations
            )
        )

    def _weights_of(self, key: str, severity: str, can_fix: bool) -> tuple[int, int, bool]:
        """What a hazard adds to a hop: (may apply, applies, applying forbids the hop)."""
        hit = self._weights.get(key)
        if hit is None:
            applies = FIXED_COST[severity] if can_fix else APPLIES_COST[severity]
            forbids = not can_fix and SEVERITY_RANK[severity] >= self.limit
            hit = self._weights[key] = (MAY_APPLY_COST[severity], applies, forbids)
        return hit

    def weigh(self, h: Hazard, truth: Truth) -> int:
        """What ``h`` with ``truth`` adds to a hop (FORBIDDEN_COST included where it forbids)."""
        if truth is Truth.FALSE:
            return 0
        w = self._weights.get(h.id)
        if w is None:
            w = self._weights_of(h.id, h.severity, self.fixable(h.id))
        if truth is Truth.UNKNOWN:
            return w[0]
        return w[1] + FORBIDDEN_COST if w[2] else w[1]

    def requirement_status(self, i: int, j: int, post: State) -> Status | None:
        """The status of release ``j``'s requirements on ``post`` for the hop ``i -> j``."""
        rel = self.nodes[j].release
        if rel is None or not rel.requires:
            return None
        key = (j, i if rel.requires_when else -1, id(post))  # a `when` may read $from
        hit = self._requirements.get(key)
        if hit is None or hit[0] is not post:
            found = requirements.status(self.kb, rel, post, self.nodes[i].version)
            hit = self._requirements[key] = (post, found)
        return hit[1]

    def requirement_cost(self, i: int, j: int, post: State) -> int:
        """What release ``j``'s requirements add to the hop ``i -> j``, judged on ``post`` (a
        requirement is blocking; one that may apply does not count where release ``i``
        already had it)."""
        req = self.requirement_status(i, j, post)
        if req is None or req[0] == "does-not-apply":
            return 0
        w = self._weights_of(_REQUIREMENT, "blocking", False)
        if req[0] == "may-apply":
            rel = self.nodes[j].release
            assert rel is not None
            return 0 if requirements.inherited(self.nodes[i].release, rel, req[1]) else w[0]
        return w[1] + FORBIDDEN_COST if w[2] else w[1]

    def hop(self, i: int, j: int, pre: State | None = None, post: State | None = None) -> Hop:
        """The weight of the hop ``i -> j`` from ``pre`` to ``post``, the states a path
        reaches at ``i`` and ``j`` (``walk``). Without them, or where no fact key is
        path-dependent (then every weight reads the same there), the hop from ``state_at(i)``
        to ``landed_state(i, j)``."""
        if pre is None or post is None or not self.dependent:
            hit = self._hops.get((i, j))
            if hit is None:
                pre, post = self.state_at(i), self.landed_state(i, j)
                hit = self._hops[(i, j)] = self._weigh(i, j, pre, post)
            return hit
        key = (i, j, id(pre), id(post))
        known = self._path_hops.get(key)
        if known is None or known[0] is not pre or known[1] is not post:
            known = self._path_hops[key] = (pre, post, self._weigh(i, j, pre, post))
        return known[2]

    def _weigh(self, i: int, j: int, pre: State, post: State) -> Hop:
        f, t = self.nodes[i].version, self.nodes[j].version
        found = self.scan(self.product, f, t, pre, post)
        for comp, a, b in self.moved(pre, post):
            found += self.scan(comp, a, b, pre, post)
        req_cost = self.requirement_cost(i, j, post)
        cost = HOP_COST + req_cost
        forbidden: list[str] = []
        for h, truth in found:
            w = self.weigh(h, truth)
            cost += w
            if w >= FORBIDDEN_COST:
                forbidden.append(h.id)
        if req_cost >= FORBIDDEN_COST:  # the requirement forbids the hop
            req = self._requirement_finding(i, j, post)
            assert req is not None
            forbidden.append(req.hazard)
        return Hop(tuple(forbidden), cost)

    # -- findings --------------------------------------------------------------------------

    def _requirement_finding(self, i: int, j: int, post: State) -> Finding | None:
        rel = self.nodes[j].release
        if rel is None:
            return None
        return requirements.finding(
            self.kb, rel, self.nodes[i].release, post, self.nodes[i].version
        )

    def findings_on(
        self,
        i: int,
        j: int,
        pre: State,
        post: State,
        moved: list[tuple[str, str, str]] | None = None,
        *,
        out_of_scope: bool = False,
    ) -> list[Finding]:
        """The findings of hop ``i -> j`` judged on ``pre`` and ``post`` as given: the
        product's, those of each lockstep component it moves (``moved``: component, from,
        to; default: what ``moved`` finds from ``pre`` to ``post``), its requirements'."""
        if moved is None:
            moved = self.moved(pre, post)
        f, t = self.nodes[i].version, self.nodes[j].version
        fv, tv = self.nodes[i].parsed, self.nodes[j].parsed
        idx, kb = self.idx, self.kb
        out = product_findings(idx, kb, self.product, f, t, fv, tv, pre, post, out_of_scope)
        for comp, a, b in moved:
            pa, pb = parse_version(a), parse_version(b)
            out += product_findings(idx, kb, comp, a, b, pa, pb, pre, post, False)
        req = self._requirement_finding(i, j, post)
        if req is not None:
            out.append(req)
        return out

    def hop_findings(
        self,
        i: int,
        j: int,
        pre: State | None = None,
        post: State | None = None,
        *,
        out_of_scope: bool = False,
    ) -> list[Finding]:
        """The findings of the hop ``i -> j`` from ``pre`` to ``post``, the states a path
        reaches (default, and where no fact key is path-dependent, so that they read alike:
        ``state_at(i)`` to ``landed_state(i, j)``)."""
        if pre is None or post is None or not self.dependent:
            pre, post = self.state_at(i), self.landed_state(i, j)
        out = self.findings_on(i, j, pre, post, out_of_scope=out_of_scope)
        if self.stopped is not None and i == 0:  # a cheaper path may exist
            out.append(paths.bound_finding(self, self.stopped, self.dependent))
        return out

    def jump_findings(self, post: State) -> list[Finding]:
        """The direct jump's findings: the hop from the start to the target, its skip and
        transition hazards judged on the start, its landing and state hazards and its
        requirements on ``post`` (the state after the one step, with every target's
        landing); the components it moves are those its own landing moves."""
        pre = self.start_state
        moved = self.moved(pre, self.landed_state(0, self.target))
        return self.findings_on(0, self.target, pre, post, moved, out_of_scope=True)

    # -- the path --------------------------------------------------------------------------

    def search(self) -> list[int]:
        """Node indices of the cheapest path from the current version to the target (empty:
        no path)."""
        keys = self.dependent
        if keys:
            path, self.stopped = paths.expanded(self, keys)
            if path is not None:
                return path
        if onepass.applies(self, ()):
            return onepass.cheapest(self, self.truths, self.turns)
        return self.dijkstra()

    def dijkstra(self) -> list[int]:
        """The cheapest path by Dijkstra over the releases, every hop weighed whole
        (``hop``); ties go to the lower release."""
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
            for j in self.successors(i):
                if j in done:
                    continue
                nd = d + self.hop(i, j).cost
                if nd < dist.get(j, nd + 1):
                    dist[j] = nd
                    prev[j] = i
                    heapq.heappush(heap, (nd, j))
        if self.target not in done:
            return []
        path = [self.target]
        while path[-1] != 0:
            path.append(prev[path[-1]])
        return path[::-1]
