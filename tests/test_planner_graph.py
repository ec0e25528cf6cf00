"""Release graphs, named by topology and built from tiny inline knowledge (no files)."""

from __future__ import annotations

import pytest
from support.builders import bare_kb

from upgradeplan import errors
from upgradeplan.model import KnowledgeBase, Release, Withdrawn
from upgradeplan.planner import graph


def kb_of(*releases: Release, product: str = "p") -> KnowledgeBase:
    return bare_kb(releases={product: releases})


def rel(version: str, upgrade_from: str | None = None, **kw: object) -> Release:
    return Release("p", version, f"release {version}", upgrade_from=upgrade_from, **kw)  # type: ignore[arg-type]


def edges(kb: KnowledgeBase) -> set[tuple[str, str]]:
    return set(graph.release_graph(kb, "p").edges())


def test_linear() -> None:
    kb = kb_of(rel("1.0.0"), rel("1.1.0"), rel("1.2.0"))
    g = graph.release_graph(kb, "p")
    assert list(g.nodes) == ["1.0.0", "1.1.0", "1.2.0"]
    # every later release by default, never backwards
    assert edges(kb) == {("1.0.0", "1.1.0"), ("1.0.0", "1.2.0"), ("1.1.0", "1.2.0")}
    assert g.nodes["1.1.0"]["release"].version == "1.1.0"


def test_skip() -> None:
    # 4.8.0 may only be reached from the required stop 4.7.19
    kb = kb_of(rel("4.7.18"), rel("4.7.19"), rel("4.8.0", upgrade_from=">=4.7.19"))
    assert edges(kb) == {("4.7.18", "4.7.19"), ("4.7.19", "4.8.0")}


def test_diamond() -> None:
    # 1.0.0 -> {1.1.0, 1.2.0} -> 2.0.0, and no direct jump
    kb = kb_of(
        rel("1.0.0"),
        rel("1.1.0", upgrade_from="1.0.0"),
        rel("1.2.0", upgrade_from="1.0.0"),
        rel("2.0.0", upgrade_from=">=1.1.0 <2.0.0"),
    )
    e = edges(kb)
    assert {("1.0.0", "1.1.0"), ("1.0.0", "1.2.0"), ("1.1.0", "2.0.0"), ("1.2.0", "2.0.0")} <= e
    assert ("1.0.0", "2.0.0") not in e
    assert ("1.1.0", "1.2.0") not in e  # 1.2.0 only from 1.0.0


def test_backport_line() -> None:
    # 4.7.20 is released after 4.8.0 (a backport) and sorts before it by version. 4.8.0 was
    # published when 4.7.19 was the newest 4.7 and narrows its upgrade_from accordingly;
    # 4.8.1 accepts every 4.7.
    kb = kb_of(
        rel("4.7.19", date="2026-09-01"),
        rel("4.8.0", upgrade_from="<=4.7.19", date="2026-09-08"),
        rel("4.7.20", date="2026-09-15"),
        rel("4.8.1", upgrade_from=">=4.7.0", date="2026-09-20"),
    )
    g = graph.release_graph(kb, "p")
    assert list(g.nodes) == ["4.7.19", "4.7.20", "4.8.0", "4.8.1"]  # version order, not date
    e = edges(kb)
    assert ("4.7.19", "4.7.20") in e
    assert ("4.7.20", "4.8.0") not in e  # would lose the backported fix
    assert ("4.7.20", "4.8.1") in e
    assert ("4.8.0", "4.7.20") not in e  # never downwards


def test_withdrawn_and_unreleased_are_not_nodes() -> None:
    kb = kb_of(
        rel("1.0.0"),
        rel("1.1.0", withdrawn=Withdrawn("2026-01-01", "broken")),
        rel("1.2.0"),
        rel("next"),
    )
    assert list(graph.release_graph(kb, "p").nodes) == ["1.0.0", "1.2.0"]


def test_start_version_unknown_to_the_knowledge_is_added() -> None:
    kb = kb_of(rel("1.0.0"), rel("1.2.0", upgrade_from=">=1.0.0"))
    g = graph.release_graph(kb, "p", start="1.1.0")
    assert ("1.1.0", "1.2.0") in g.edges and ("1.0.0", "1.1.0") not in g.edges


def test_unknown_product_is_a_typed_error() -> None:
    with pytest.raises(errors.UnknownName):
        graph.release_graph(kb_of(rel("1.0.0")), "q")
