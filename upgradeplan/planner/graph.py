"""Release graphs: which upgrades between releases of one product the knowledge allows.

Nodes are the released, non-withdrawn releases of a product (keyed by version string, with the
:class:`~upgradeplan.model.Release` as the ``release`` attribute). An edge ``a -> b`` exists for
every later release ``b`` unless ``b.upgrade_from`` narrows which versions may hop to it. The
graph is built from model objects only; it never opens a file. networkx is imported inside the
functions (it is slow to import).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from upgradeplan import errors, releases
from upgradeplan.model import KnowledgeBase
from upgradeplan.releases import may_hop

if TYPE_CHECKING:
    import networkx as nx


def release_graph(kb: KnowledgeBase, product: str, *, start: str | None = None) -> nx.DiGraph[str]:
    """The upgrade graph of ``product``; ``start`` adds an unknown current version as a node."""
    import networkx as nx

    from upgradeplan.versions import parse_version

    if product not in kb.products:
        raise errors.UnknownName("product", product, sorted(kb.products))
    rels = releases.planned(kb, product)
    g: nx.DiGraph[str] = nx.DiGraph(product=product)
    nodes: list[tuple[Any, str]] = []
    for rel in rels:
        g.add_node(rel.version, release=rel)
        nodes.append((parse_version(rel.version), rel.version))
    if start is not None and start not in g:
        g.add_node(start, release=None)
        nodes.append((parse_version(start), start))
        nodes.sort(key=lambda n: n[0])
    by_version = {v: r for r in rels for v in [r.version]}
    for i, (va, a) in enumerate(nodes):
        for vb, b in nodes[i + 1 :]:
            if vb <= va:
                continue  # equal versions (build metadata only): no hop
            target = by_version.get(b)
            if target is not None and may_hop(target, a):
                g.add_edge(a, b, weight=1)
    return g


def graph_from_edges(product: str, edges: Iterable[tuple[str, str]]) -> nx.DiGraph[str]:
    """A graph of explicitly listed upgrade edges (``from``, ``to``), checked for cycles."""
    import networkx as nx

    g: nx.DiGraph[str] = nx.DiGraph(product=product)
    g.add_edges_from(edges, weight=1)
    check_acyclic(g, product)
    return g


def find_cycle(g: nx.DiGraph[str]) -> list[str] | None:
    """One cycle of ``g`` as a closed node sequence (first node repeated), or None."""
    import networkx as nx

    try:
        edges = nx.find_cycle(g)
    except nx.NetworkXNoCycle:
        return None
    return [str(e[0]) for e in edges] + [str(edges[0][0])]


def check_acyclic(g: nx.DiGraph[str], product: str = "") -> None:
    """Raise :class:`errors.BadInput` naming the cycle when upgrade edges go round in circles."""
    cycle = find_cycle(g)
    if cycle is not None:
        name = product or str(g.graph.get("product", ""))
        raise errors.BadInput(
            f"upgrade edges of {name or 'the product'} form a cycle: {' -> '.join(cycle)}",
            hint="an upgrade must go to a later release; remove one of these edges",
        )


def shortest_path(g: nx.DiGraph[str], source: str, target: str) -> Sequence[str] | None:
    """The path of least total ``weight`` from ``source`` to ``target``, or None."""
    import networkx as nx

    try:
        return list(nx.dijkstra_path(g, source, target, weight="weight"))
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None


__all__ = [
    "check_acyclic",
    "find_cycle",
    "graph_from_edges",
    "may_hop",
    "release_graph",
    "shortest_path",
]
