"""The per-knowledge-base hazard index: hazards by product and scope, constraints parsed once.

Built lazily per product and cached per knowledge base (by identity, weakly).
"""

from __future__ import annotations

import weakref
from typing import Any

from msgspec import Struct, field

from upgradeplan import conditions, provenance, releases
from upgradeplan.model import Condition, Fact, Hazard, KnowledgeBase, Release
from upgradeplan.planner.scopes import Ordered, Scope, scope_of
from upgradeplan.versions import parse_constraint, parse_version


class _ProductIndex(Struct):
    """Hazards of one product by scope, with their constraints parsed once."""

    skip: list[Scope] = field(default_factory=list)
    transition: list[Scope] = field(default_factory=list)
    landing: list[Scope] = field(default_factory=list)
    state: list[Scope] = field(default_factory=list)
    releases: list[Release] = field(default_factory=list)  # planned, ascending
    versions: list[Any] = field(default_factory=list)  # parsed, parallel to releases

    def scopes(self) -> list[Scope]:
        """Every scope: skip, transition, landing, state (each in hazard id order)."""
        return [*self.skip, *self.transition, *self.landing, *self.state]

    def running(self, parsed: Any) -> list[Hazard]:
        """Landing and state hazards in scope while ``parsed`` runs."""
        return [s.hazard for s in (*self.landing, *self.state) if s.lands(parsed)]


class _Sides(Struct):
    """The hazards a version can meet as the start or the end of a hop."""

    skip_pre: list[Hazard]  # skip hazards whose stop is above it
    trans_pre: list[Hazard]  # transition hazards whose `from` contains it
    skip_post: frozenset[str]  # skip hazards whose `to` contains it
    trans_post: frozenset[str]  # transition hazards whose `to` contains it
    landed: list[Hazard]  # landing and state hazards in scope when it runs
    landed_uses_from: bool  # one of them refers to $from


class Landing(Struct):
    """The facts landing on one release sets whatever the installation's state
    (planner/paths.py ``landing_facts`` picks among them and adds the pins it moves)."""

    installed: Fact  # the product's installed version
    bom: list[tuple[str, str, Fact]]  # (component, version, its installed version) per BOM entry
    # (component, the range the release publishes as its pin, the version it selects or None)
    components: list[tuple[str, Fact, Fact | None]]
    effects: list[Fact]


class Index:
    """Per knowledge base: hazards by product and scope with parsed constraints (lazily)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.products: dict[str, _ProductIndex] = {}
        self.by_product: dict[str, list[Hazard]] = {}
        for h in sorted(kb.hazards.values(), key=lambda h: h.id):
            if h.withdrawn is None:
                self.by_product.setdefault(h.product, []).append(h)
        self.refs: dict[str, frozenset[str]] = {}
        # the fact keys a condition reads, when they do not depend on other facts
        self.keys: dict[str, tuple[str, ...] | None] = {}
        self._sides: dict[tuple[str, str], _Sides] = {}
        self._hops: dict[tuple[str, str], bool] = {}
        self._admitted: dict[tuple[str, str], frozenset[str]] = {}
        self._started: dict[int, tuple[_Sides, frozenset[str], dict[str, Hazard]]] = {}
        self._landed_ids: dict[int, tuple[_Sides, frozenset[str]]] = {}
        self._landing_on: dict[int, tuple[_Sides, frozenset[str]]] = {}
        self._landings: dict[tuple[str, str], Landing] = {}
        self._reads: dict[int, tuple[Condition, list[str]]] = {}
        # one object per distinct set of hazard ids (``_one``): neighbouring releases mostly
        # meet the same hazards, and the sweeps over a window then see the very same set
        self._sets: dict[frozenset[str], frozenset[str]] = {}

    def _one(self, ids: frozenset[str]) -> frozenset[str]:
        """``ids``, as the one object the index keeps for that set of ids."""
        return self._sets.setdefault(ids, ids)

    def reads(self, cond: Condition) -> list[str]:
        """The fact keys the predicate ``cond`` declares it reads (``conditions.facts_read``),
        bound once per knowledge base (kept by the node, which the knowledge keeps)."""
        hit = self._reads.get(id(cond))
        if hit is None or hit[0] is not cond:
            hit = self._reads[id(cond)] = (cond, conditions.facts_read(cond))
        return hit[1]

    def landing(self, product: str, rel: Release) -> Landing:
        """The state-independent facts landing on ``rel`` (of ``product``) sets, built once
        per knowledge base: the same Fact objects for every plan (facts are immutable; the
        caches keyed by their identity live no longer than one plan)."""
        key = (product, rel.key)
        hit = self._landings.get(key)
        if hit is None:
            hit = self._landings[key] = _landing(self.kb, product, rel)
        return hit

    def may_hop(self, release: Release, from_version: str) -> bool:
        """``releases.may_hop``, cached per ``upgrade_from`` text and start version."""
        if release.upgrade_from is None:
            return True
        key = (release.upgrade_from, from_version)
        hit = self._hops.get(key)
        if hit is None:
            hit = self._hops[key] = releases.may_hop(release, from_version)
        return hit

    def product(self, product: str) -> _ProductIndex:
        hit = self.products.get(product)
        if hit is None:
            hit = self.products[product] = self._build(product)
        return hit

    def sides(self, product: str, version: str, parsed: Any) -> _Sides:
        """Which hazards of ``product`` a hop from / to ``version`` can be in scope of (built
        for every release of the product at once, ``_line_sides``; checked scope by scope for
        a version that is not a release)."""
        key = (product, version)
        hit = self._sides.get(key)
        if hit is None:
            pidx = self.product(product)  # its releases' sides, on first use
            hit = self._sides.get(key)
            if hit is None:
                landed = pidx.running(parsed)
                hit = self._sides_of(
                    [s.hazard for s in pidx.skip if s.starts(parsed)],
                    [s.hazard for s in pidx.transition if s.starts(parsed)],
                    frozenset(s.hazard.id for s in pidx.skip if s.lands(parsed)),
                    frozenset(s.hazard.id for s in pidx.transition if s.lands(parsed)),
                    landed,
                )
                self._sides[key] = hit
        return hit

    def _sides_of(
        self,
        skip_pre: list[Hazard],
        trans_pre: list[Hazard],
        skip_post: frozenset[str],
        trans_post: frozenset[str],
        landed: list[Hazard],
    ) -> _Sides:
        uses_from = any("$from" in self.refs.get(h.id, ()) for h in landed)
        return _Sides(skip_pre, trans_pre, skip_post, trans_post, landed, uses_from)

    def _line_sides(self, product: str, pidx: _ProductIndex) -> None:
        """The sides of every release of ``product``, from its sorted releases: each range
        admits runs of them (``versions.Ordered``, by bisection), so a sweep over the runs'
        ends gives each release the hazards it can start and end, and the releases between
        two ends share one ``_Sides``."""
        n = len(pidx.versions)
        if not n:
            return
        line = Ordered(pidx.versions)
        whole = [(0, n)]

        def runs(con: Any) -> list[tuple[int, int]]:
            return whole if con is None else line.runs(con)

        skip_pre = []
        for s in pidx.skip:
            top = line.below(s.stop)
            skip_pre.append([(a, min(b, top)) for a, b in runs(s.from_range) if a < top])
        per = [
            _sweep(n, pidx.skip, skip_pre),
            _sweep(n, pidx.transition, [runs(s.from_range) for s in pidx.transition]),
            _sweep(n, pidx.skip, [runs(s.to_range) for s in pidx.skip]),
            _sweep(n, pidx.transition, [runs(s.to_range) for s in pidx.transition]),
            _sweep(
                n,
                [*pidx.landing, *pidx.state],
                [runs(s.to_range) for s in pidx.landing] + [runs(s.from_range) for s in pidx.state],
            ),
        ]
        made: dict[tuple[int, ...], _Sides] = {}
        for i, rel in enumerate(pidx.releases):
            parts = [p[i] for p in per]
            key = tuple(id(p) for p in parts)
            hit = made.get(key)
            if hit is None:
                sp, tp, sq, tq, landed = parts
                hit = made[key] = self._sides_of(
                    [x.hazard for x in sp],
                    [x.hazard for x in tp],
                    frozenset(x.hazard.id for x in sq),
                    frozenset(x.hazard.id for x in tq),
                    [x.hazard for x in landed],
                )
            self._sides.setdefault((product, rel.version), hit)

    def admitted(self, product: str, upgrade_from: str) -> frozenset[str]:
        """The versions of ``product``'s releases that ``upgrade_from`` admits as a start
        (``releases.may_hop``), cached per product and constraint text."""
        key = (product, upgrade_from)
        hit = self._admitted.get(key)
        if hit is None:
            check = parse_constraint(upgrade_from).check
            rels = self.product(product).releases
            hit = self._admitted[key] = frozenset(r.version for r in rels if check(r.version))
        return hit

    def started(self, sides: _Sides) -> tuple[frozenset[str], dict[str, Hazard]]:
        """The skip and transition hazards of ``sides.skip_pre`` and ``sides.trans_pre``: their
        ids and each by id (cached per sides, which the index keeps)."""
        hit = self._started.get(id(sides))
        if hit is None or hit[0] is not sides:
            hazards = {h.id: h for h in (*sides.skip_pre, *sides.trans_pre)}
            hit = self._started[id(sides)] = (sides, self._one(frozenset(hazards)), hazards)
        return hit[1], hit[2]

    def landed_ids(self, sides: _Sides) -> frozenset[str]:
        """The ids of ``sides.landed`` (cached per sides, which the index keeps)."""
        hit = self._landed_ids.get(id(sides))
        if hit is None or hit[0] is not sides:
            ids = self._one(frozenset(h.id for h in sides.landed))
            hit = self._landed_ids[id(sides)] = (sides, ids)
        return hit[1]

    def landing_on(self, sides: _Sides) -> frozenset[str]:
        """The skip and transition hazards a hop landing on the version of ``sides`` can be
        in scope of: ``skip_post | trans_post`` (cached per sides, which the index keeps)."""
        hit = self._landing_on.get(id(sides))
        if hit is None or hit[0] is not sides:
            ids = self._one(sides.skip_post | sides.trans_post)
            hit = self._landing_on[id(sides)] = (sides, ids)
        return hit[1]

    def _build(self, product: str) -> _ProductIndex:
        rels = releases.planned(self.kb, product)
        idx = _ProductIndex(releases=rels, versions=[parse_version(r.version) for r in rels])
        by_kind = {"skip": idx.skip, "transition": idx.transition}
        by_kind.update(landing=idx.landing, state=idx.state)
        for h in self.by_product.get(product, ()):
            scope = scope_of(h)
            if scope is not None and scope.kind in by_kind:
                by_kind[scope.kind].append(scope)
            self.refs[h.id] = frozenset(conditions.hop_refs(h.when))
            keys = conditions.facts_read(h.when)
            self.keys[h.id] = None if any("<" in k for k in keys) else tuple(keys)
        self._line_sides(product, idx)
        return idx


def _sweep(
    n: int, scopes: list[Scope], runs: list[list[tuple[int, int]]]
) -> list[tuple[Scope, ...]]:
    """Per position ``0 .. n-1``: the scopes (in their order) whose ``runs`` hold it; one
    tuple per stretch between two ends of runs."""
    events: dict[int, list[tuple[int, bool]]] = {}
    for k, found in enumerate(runs):
        for a, b in found:
            events.setdefault(a, []).append((k, True))
            events.setdefault(b, []).append((k, False))
    active: set[int] = set()
    out: list[tuple[Scope, ...]] = []
    now: tuple[Scope, ...] = ()
    for at in sorted(events):
        if at >= n:
            break
        out += [now] * (at - len(out))
        for k, entering in sorted(events[at], key=lambda e: e[1]):  # ends first
            if entering:
                active.add(k)
            else:
                active.discard(k)
        now = tuple(scopes[k] for k in sorted(active))
    out += [now] * (n - len(out))
    return out


def _landing(kb: KnowledgeBase, product: str, rel: Release) -> Landing:
    bom_source = provenance.supposed(f"plan: BOM of {rel.key}")
    bom = [(c, v, Fact(f"installed.{c}", v, bom_source)) for c, v in rel.bom.items()]
    components: list[tuple[str, Fact, Fact | None]] = []
    for comp, rng in rel.components.items():
        source = provenance.release_default(rel.key, f"components.{comp}.versionRange")
        chosen = conditions.resolve_pin(kb, comp, rng)
        admits = None
        if chosen is not None:
            supposed = provenance.supposed(f"plan: {source} admits {chosen}")
            admits = Fact(f"installed.{comp}", chosen, supposed)
        components.append((comp, Fact(f"pin.{comp}", rng, source), admits))
    effects = provenance.supposed(f"effects of {rel.key} ({rel.location})")
    landed = provenance.supposed(f"plan: {rel.key}")
    return Landing(
        installed=Fact(f"installed.{product}", rel.version, landed),
        bom=bom,
        components=components,
        effects=[Fact(str(k), v, effects) for k, v in rel.effects.items()],
    )


_INDEX_CACHE: dict[int, tuple[weakref.ref[KnowledgeBase], Index]] = {}


def index_of(kb: KnowledgeBase) -> Index:
    hit = _INDEX_CACHE.get(id(kb))
    if hit is not None and hit[0]() is kb:
        return hit[1]
    idx = Index(kb)
    _INDEX_CACHE[id(kb)] = (weakref.ref(kb), idx)
    if len(_INDEX_CACHE) > 16:
        for key in [k for k, (ref, _) in _INDEX_CACHE.items() if ref() is None]:
            del _INDEX_CACHE[key]
    return idx
