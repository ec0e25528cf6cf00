"""planner/index.py: the per-knowledge landing facts (Index.landing) are built once and shared."""

from __future__ import annotations

from upgradeplan.kb.loader import load
from upgradeplan.planner.index import index_of


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
