"""The per-knowledge-base hazard index: hazards by product and scope, constraints parsed once.

Built lazily per product and cached per knowledge base (by identity, weakly).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from upgradeplan import conditions, releases
from upgradeplan.model import Hazard, KnowledgeBase, Release


@dataclass
class _ProductIndex:
    """Hazards of one product by scope, with their constraints parsed once."""

    skip: list[tuple[Hazard, Any, Any]] = field(default_factory=list)  # (h, stop, to)
    skip_from: dict[str, Any] = field(default_factory=dict)  # hazard id -> its `from` range
    landing: list[tuple[Hazard, Any]] = field(default_factory=list)  # (h, range)
    transition: list[tuple[Hazard, Any, Any]] = field(default_factory=list)  # (h, from, to)
    state: list[tuple[Hazard, Any]] = field(default_factory=list)  # (h, range or None)
    releases: list[Release] = field(default_factory=list)  # planned, ascending
    versions: list[Any] = field(default_factory=list)  # parsed, parallel to releases

    def starts(self, h: Hazard, parsed: Any) -> bool:
        """Whether a skip hazard's optional `from` range admits a hop starting at ``parsed``."""
        rng = self.skip_from.get(h.id)
        return rng is None or bool(rng.check(parsed))


@dataclass
class _Sides:
    """The hazards a version can meet as the start or the end of a hop."""

    skip_pre: list[Hazard]  # skip hazards whose stop is above it
    trans_pre: list[Hazard]  # transition hazards whose `from` contains it
    skip_post: frozenset[str]  # skip hazards whose `to` contains it
    trans_post: frozenset[str]  # transition hazards whose `to` contains it
    landed: list[Hazard]  # landing and state hazards in scope when it runs
    landed_uses_from: bool  # one of them refers to $from


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

    def product(self, product: str) -> _ProductIndex:
        hit = self.products.get(product)
        if hit is None:
            hit = self.products[product] = self._build(product)
        return hit

    def sides(self, product: str, version: str, parsed: Any) -> _Sides:
        """Which hazards of ``product`` a hop from / to ``version`` can be in scope of."""
        key = (product, version)
        hit = self._sides.get(key)
        if hit is None:
            pidx = self.product(product)
            landed = [h for h, rng in pidx.landing if rng.check(parsed)]
            landed += [h for h, rng_ in pidx.state if rng_ is None or rng_.check(parsed)]
            hit = _Sides(
                skip_pre=[
                    h for h, stop, _ in pidx.skip if parsed < stop and pidx.starts(h, parsed)
                ],
                trans_pre=[h for h, a, _ in pidx.transition if a.check(parsed)],
                skip_post=frozenset(h.id for h, _, to in pidx.skip if to.check(parsed)),
                trans_post=frozenset(h.id for h, _, b in pidx.transition if b.check(parsed)),
                landed=landed,
                landed_uses_from=any("$from" in self.refs.get(h.id, ()) for h in landed),
            )
            self._sides[key] = hit
        return hit

    def _build(self, product: str) -> _ProductIndex:
        from upgradeplan.versions import parse_constraint, parse_version

        rels = releases.planned(self.kb, product)
        idx = _ProductIndex(releases=rels, versions=[parse_version(r.version) for r in rels])
        con = parse_constraint
        for h in self.by_product.get(product, ()):
            if h.scope == "skip" and h.stop and h.to_range:
                idx.skip.append((h, parse_version(h.stop), con(h.to_range)))
                if h.from_range:
                    idx.skip_from[h.id] = con(h.from_range)
            elif h.scope == "landing" and h.to_range:
                idx.landing.append((h, con(h.to_range)))
            elif h.scope == "transition" and h.from_range and h.to_range:
                idx.transition.append((h, con(h.from_range), con(h.to_range)))
            elif h.scope == "state":
                idx.state.append((h, con(h.from_range) if h.from_range else None))
            self.refs[h.id] = frozenset(conditions.hop_refs(h.when))
            keys = conditions.facts_read(h.when)
            self.keys[h.id] = None if any("<" in k for k in keys) else tuple(keys)
        return idx


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
