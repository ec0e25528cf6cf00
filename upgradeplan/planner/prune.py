"""Exact pruning of a large window: the releases the cheapest path may need, and no fewer.

Two neighbouring releases of the window are *alike* when every term of a hop's weight comes
out the same whether the hop starts (or ends) at one or at the other: the same ``upgrade_from``
and the same answers of every ``upgrade_from`` in the window, the same hazards of the product
and of every lockstep component in scope, the same truth of each of them, the same
requirements with the same status. A run of alike releases is then one release as far as any
release outside the run can tell; a path visits at most one of them (a second costs at least
one more hop), and Dijkstra, which breaks ties by the lower index, takes the first of the run.
So keeping the first release of each run gives the exhaustive search's path and cost.

The truth of a landing or state hazard on a hop depends on the state before the hop as well
as on the release it lands on. It is taken as the same for every start when the facts the
landing sets decide it alone: each predicate reading only such facts is evaluated, every
other one is UNKNOWN, and Kleene logic is monotone, so a TRUE or FALSE result holds whatever
the others read. Otherwise the release stays apart, and the facts the hazard reads from the
state before the hop are compared (by identity) for the releases a hop may start from.

When that reasoning cannot be applied (a condition refers to ``$from``/``$to`` or reads
templated keys, a requirement has a ``when``, a lockstep component does not move up strictly),
nothing is pruned: every release is a candidate. Nor is anything pruned where a fact key a
weight reads is path-dependent (planner/paths.py: the search then runs over releases with
the values the path reached them with).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from upgradeplan import conditions
from upgradeplan.model import Condition, Fact, Hazard, KnowledgeBase, State, Truth
from upgradeplan.versions import parse_constraint, parse_version

if TYPE_CHECKING:
    from upgradeplan.planner.search import Search


def candidates(s: Search) -> list[int] | None:
    """Node indices worth stopping at: the start, the first of each run of alike releases and
    the target; None when every release must be tried."""
    comps = s.comps()
    if not prunable(s, comps):
        return None
    n = len(s.nodes)
    read_before: set[str] = set()
    live = _live(s, comps)
    # the target too: what its landing hazards read before the hop tells starts apart
    ends = [_as_end(s, m, comps, live, read_before) for m in range(1, n)]
    keys = sorted(read_before)
    constraints = _constraints(s)
    keep = [0]
    previous: Any = None
    for m in range(1, n - 1):
        sig = (ends[m - 1], _as_start(s, m, comps, keys, constraints))
        if m == 1 or sig != previous:
            keep.append(m)
        previous = sig
    keep.append(n - 1)
    return keep


def prunable(s: Search, comps: Sequence[str]) -> bool:
    """Whether a hop's weight can be reasoned about apart from its start and its end (no
    ``$from``/``$to``, no templated keys, no conditional requirements, the releases and every
    lockstep component's versions strictly ascending); answered once per search."""
    key = tuple(comps)
    hit = s._prunable.get(key)
    if hit is None:
        hit = s._prunable[key] = _prunable(s, comps)
    return hit


def _prunable(s: Search, comps: Sequence[str]) -> bool:
    nodes = s.nodes
    if any(b.parsed <= a.parsed for a, b in itertools.pairwise(nodes)):
        return False
    if any(node.release is None or node.release.requires_when for node in nodes[1:]):
        return False
    for product in (s.product, *comps):
        s.idx.product(product)  # fills idx.keys / idx.refs
        for h in s.idx.by_product.get(product, ()):
            if s.idx.keys.get(h.id, ()) is None or s.idx.refs.get(h.id):
                return False
    maps = [s.landing_map(m) for m in range(1, len(nodes))]
    for comp in comps:
        last = s.start_state.installed(comp)
        key = f"installed.{comp}"
        try:
            seen = parse_version(last) if last is not None else None
            for landing in maps:
                fact = landing.get(key)
                if fact is None:
                    continue
                if not isinstance(fact.value, str):
                    return False
                v = parse_version(fact.value)
                if seen is not None and not v > seen:
                    return False
                seen = v
        except Exception:  # an unparsable version: no pruning
            return False
    return True


def _landing(s: Search, m: int) -> dict[str, Fact]:
    return s.landing_map(m)


def _constraints(s: Search) -> list[Any]:
    texts = {n.release.upgrade_from for n in s.nodes[1:] if n.release and n.release.upgrade_from}
    return [parse_constraint(t) for t in sorted(texts)]


def _live(s: Search, comps: Sequence[str]) -> frozenset[str]:
    """Skip and transition hazards not FALSE on the state before some hop's start (the others
    never weigh: a hazard that does not apply adds nothing to a hop)."""
    live: set[str] = set()
    for i in range(len(s.nodes) - 1):
        node, state = s.nodes[i], s.state_at(i)
        starts = [(s.product, node.version, node.parsed)]
        for comp in comps:
            a = state.installed(comp)
            if a is not None:
                starts.append((comp, a, parse_version(a)))
        for product, version, parsed in starts:
            sides = s.idx.sides(product, version, parsed)
            for part in s._starting(product, version, sides, state):
                live.update(h.id for h, known in part if known is not Truth.FALSE)
    return frozenset(live)


def _as_end(
    s: Search, m: int, comps: Sequence[str], live: frozenset[str], read_before: set[str]
) -> tuple[Any, ...]:
    """What a hop landing on release ``m`` weighs, as far as it does not depend on its start."""
    from upgradeplan.planner import requirements

    node = s.nodes[m]
    rel = node.release
    assert rel is not None
    landing = _landing(s, m)
    sides = s.idx.sides(s.product, node.version, node.parsed)
    parts: list[Any] = [rel.upgrade_from, sides.skip_post & live, sides.trans_post & live]
    parts.append(_landed(s, m, s.product, node.version, sides.landed, landing, read_before))
    for comp in comps:
        fact = landing.get(f"installed.{comp}")
        if fact is None:
            parts.append(None)
            continue
        b = str(fact.value)
        cs = s.idx.sides(comp, b, parse_version(b))
        landed = _landed(s, m, comp, b, cs.landed, landing, read_before)
        parts.append((cs.skip_post & live, cs.trans_post & live, landed))
    req = requirements.finding(s, m - 1, m)
    if rel.requires and not requirements.alike(s, m):
        # its status depends on what the start has installed: compared there, kept apart
        read_before.update(f"installed.{p}" for p in rel.requires)
        parts.append(("apart", m))
    elif req is None or req.status == "does-not-apply":
        parts.append(None)
    elif req.status != "may-apply":
        parts.append((req.status, req.severity))
    else:  # weighed unless the release before the hop has the same requirements (_inherited)
        products = tuple(e.key.removeprefix("installed.") for e in req.missing)
        read_before.update(f"requires.{p}" for p in products)
        mine = tuple(rel.requires.get(p) for p in products)
        parts.append((req.status, req.severity, products, mine))
    return tuple(parts)


def _landed(
    s: Search,
    m: int,
    product: str,
    version: str,
    hazards: Sequence[Hazard],
    landing: dict[str, Fact],
    read_before: set[str],
) -> tuple[Any, ...]:
    """Per landing/state hazard: its truth whatever the hop's start, or what it depends on."""
    out: list[Any] = []
    for h, known in s.landed_known(product, version, m, hazards):
        if known is not None:
            if known is not Truth.FALSE:  # one that does not apply adds nothing
                out.append((h.id, known))
            continue
        keys = s.idx.keys[h.id] or ()
        before = [k for k in keys if k not in landing]
        read_before.update(before)
        # decided by the state before the hop alone (compared there), or apart
        out.append((h.id, "before") if len(before) == len(keys) else ("apart", m))
    return tuple(out)


_READS: dict[int, tuple[Condition, tuple[str, ...]]] = {}


def _reads(cond: Condition) -> tuple[str, ...]:
    hit = _READS.get(id(cond))
    if hit is None or hit[0] is not cond:
        if len(_READS) > 100_000:
            _READS.clear()
        hit = _READS[id(cond)] = (cond, tuple(conditions.facts_read(cond)))
    return hit[1]


def landing_truth(
    cond: Condition, state: State, kb: KnowledgeBase, landing: Mapping[str, Fact]
) -> Truth:
    """Kleene truth of ``cond`` on ``state`` with every predicate reading a fact the landing
    does not set taken as UNKNOWN: a definite answer holds for every state before the hop
    (Kleene logic is monotone: making an UNKNOWN definite never changes a definite result)."""
    if cond.op == "pred":
        if all(k in landing for k in _reads(cond)):
            return conditions.truth(cond, state, kb)
        return Truth.UNKNOWN
    if cond.op == "not":
        return ~landing_truth(cond.children[0], state, kb, landing)
    stop = Truth.FALSE if cond.op == "all" else Truth.TRUE
    unknown = False
    for child in cond.children:
        t = landing_truth(child, state, kb, landing)
        if t is stop:
            return stop
        unknown = unknown or t is Truth.UNKNOWN
    if unknown:
        return Truth.UNKNOWN
    return Truth.TRUE if cond.op == "all" else Truth.FALSE


def _as_start(
    s: Search, m: int, comps: Sequence[str], keys: Sequence[str], constraints: Sequence[Any]
) -> tuple[Any, ...]:
    """What a hop starting at release ``m`` weighs, as far as it does not depend on its end."""
    node = s.nodes[m]
    rel = node.release
    assert rel is not None
    state = s.state_at(m)
    parts: list[Any] = [tuple(bool(c.check(node.parsed)) for c in constraints)]
    sides = s.idx.sides(s.product, node.version, node.parsed)
    parts.append(_before(s, s.product, node.version, sides, state))
    for comp in comps:
        a = state.installed(comp)
        if a is None:
            parts.append(None)
            continue
        cs = s.idx.sides(comp, a, parse_version(a))
        parts.append(_before(s, comp, a, cs, state))
    facts = [k for k in keys if not k.startswith("requires.")]
    parts.append(tuple(id(state.facts.get(k)) for k in facts))
    needs = [k.removeprefix("requires.") for k in keys if k.startswith("requires.")]
    parts.append(tuple(rel.requires.get(p) for p in needs))
    return tuple(parts)


def _before(s: Search, product: str, version: str, sides: Any, state: State) -> tuple[Any, ...]:
    skips, transitions = s._starting(product, version, sides, state)
    return tuple((h.id, known) for h, known in (*skips, *transitions) if known is not Truth.FALSE)


def first_set(s: Search) -> dict[str, int]:
    """Per fact key: the first release of the window whose landing sets it."""
    if s._first_set is None:
        first: dict[str, int] = {}
        for m in range(len(s.nodes) - 1, 0, -1):
            for fact in s._landing_facts(m):
                first[fact.key] = m
        s._first_set = first
    return s._first_set


def alike_starts(
    s: Search, h: Hazard, landing: Mapping[str, Fact], first: Mapping[str, int], j: int
) -> bool:
    """Whether what ``h`` reads after a hop landing on ``j`` is the same wherever the hop
    starts: what the landing sets, or what no release before ``j`` in the window sets."""
    keys = s.idx.keys.get(h.id)
    if keys is None or s.idx.refs.get(h.id):
        return False
    return all(k in landing or first.get(k, j) >= j for k in keys)


def alike_everywhere(s: Search, h: Hazard) -> bool:
    """Whether ``alike_starts`` holds for ``h`` at every release of the window: every fact
    it reads is set by every landing of the window or by none (cached per search)."""
    hit = s._alike.get(h.id)
    if hit is None:
        keys = s.idx.keys.get(h.id)
        hit = False
        if keys is not None and not s.idx.refs.get(h.id):
            first, every = first_set(s), _set_by_every(s)
            hit = all(k in every or k not in first for k in keys)
        s._alike[h.id] = hit
    return hit


def _set_by_every(s: Search) -> frozenset[str]:
    if s._set_by_every is None:
        keys = [s.landing_map(m).keys() for m in range(1, len(s.nodes))]
        s._set_by_every = frozenset(keys[0]).intersection(*keys[1:]) if keys else frozenset()
    return s._set_by_every


__all__ = [
    "alike_everywhere",
    "alike_starts",
    "candidates",
    "first_set",
    "landing_truth",
    "prunable",
]
