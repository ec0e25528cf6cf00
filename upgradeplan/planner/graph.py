"""Release graphs: which upgrades between releases of one product the knowledge allows.

Nodes are the released, non-withdrawn releases of a product (keyed by version string, with the
:class:`~upgradeplan.model.Release` as the ``release`` attribute). An edge ``a -> b`` exists for
every later release ``b`` unless ``b.upgrade_from`` narrows which versions may hop to it. The
graph is built from model objects only; it never opens a file. networkx is imported inside the
functions (it is slow to import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from upgradeplan import errors, releases
from upgradeplan.model import KnowledgeBase
from upgradeplan.releases import may_hop
from upgradeplan.versions import parse_version

if TYPE_CHECKING:
    import networkx as nx


def release_graph(kb: KnowledgeBase, product: str, *, start: str | None = None) -> nx.DiGraph[str]:
    """The upgrade graph of ``product``; ``start`` adds an unknown current version as a node."""
    import networkx as nx

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


__all__ = ["may_hop", "release_graph"]
