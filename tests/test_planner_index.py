"""planner/index.py: the per-knowledge landing facts (Index.landing) are built once and shared."""

from __future__ import annotations

from typing import Any

import pytest

from upgradeplan.kb import packs
from upgradeplan.kb.loader import load
from upgradeplan.planner.index import index_of
from upgradeplan.versions import parse_version


def test_landing_built_once_per_knowledge_base() -> None:
    kb = load([])
    idx = index_of(kb)
    product = "agent-platform"
    rel = idx.product(product).releases[-1]
    first = idx.landing(product, rel)
    assert idx.landing(product, rel) is first  # the same facts for every plan
    assert first.installed.key == f"installed.{product}"
    assert first.installed.value == rel.version
    assert [f.key for f in first.effects] == [str(k) for k in rel.effects]
    assert index_of(load([])).landing(product, rel) is not first  # per knowledge base


def _checked(pidx: Any, parsed: Any) -> tuple[list[str], ...]:
    """A release's sides checked scope by scope (what the sweep must give)."""
    return (
        [s.hazard.id for s in pidx.skip if s.starts(parsed)],
        [s.hazard.id for s in pidx.transition if s.starts(parsed)],
        sorted(s.hazard.id for s in pidx.skip if s.lands(parsed)),
        sorted(s.hazard.id for s in pidx.transition if s.lands(parsed)),
        [h.id for h in pidx.running(parsed)],
    )


@pytest.mark.parametrize("pack", [None, "kube-prometheus-stack", "cilium", "cert-manager"])
def test_sides_of_every_release_are_those_checked_scope_by_scope(pack: str | None) -> None:
    """The sweep over sorted releases gives each release the hazards a scope-by-scope check
    gives (bundled knowledge and the longest packs, pre-releases included)."""
    kb = load(packs.directories([pack]) if pack else [])
    idx = index_of(kb)
    compared = 0
    for product in sorted(kb.products):
        pidx = idx.product(product)
        for rel, parsed in zip(pidx.releases, pidx.versions, strict=True):
            sides = idx.sides(product, rel.version, parsed)
            got = (
                [h.id for h in sides.skip_pre],
                [h.id for h in sides.trans_pre],
                sorted(sides.skip_post),
                sorted(sides.trans_post),
                [h.id for h in sides.landed],
            )
            assert got == _checked(pidx, parsed), (product, rel.version)
            compared += 1
    assert compared > (1000 if pack == "kube-prometheus-stack" else 10)


def test_sides_of_a_version_that_is_no_release_are_checked() -> None:
    kb = load([])
    idx = index_of(kb)
    pidx = idx.product("agent-platform")
    parsed = parse_version("4.7.18-rc.1")
    sides = idx.sides("agent-platform", "4.7.18-rc.1", parsed)
    assert [h.id for h in sides.trans_pre] == _checked(pidx, parsed)[1]
    assert [h.id for h in sides.landed] == _checked(pidx, parsed)[4]
