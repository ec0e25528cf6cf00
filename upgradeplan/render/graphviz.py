"""Release graphs and plan paths as mermaid flowcharts or Graphviz dot.

The graph of a product shows its releases in order, the required stops (the ``stop`` of skip
hazards), the releases a landing hazard is about, an edge per skip hazard (from the release
before the stop straight to the first release it lands on), and — when a plan is given — the
plan's path highlighted. Pure: it reads the knowledge and the plan, nothing else.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence

from msgspec import Struct, field

from upgradeplan.model import NEXT, KnowledgeBase, Plan
from upgradeplan.versions import Version, check

EdgeStyle = str  # "chain" | "next" | "skip" | "path" | "direct" | "edge"


class GNode(Struct):
    id: str
    label: str
    classes: list[str] = field(default_factory=list)


class GEdge(Struct):
    src: str
    dst: str
    label: str = ""
    style: EdgeStyle = "chain"


class GraphView(Struct):
    title: str
    nodes: list[GNode]
    edges: list[GEdge]


def node_id(product: str, version: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", f"{product}__{version}")


def _in(constraint: str | None, version: str) -> bool:
    return bool(constraint) and version != NEXT and check(str(constraint), version)


def release_view(
    kb: KnowledgeBase,
    product: str,
    *,
    plan: Plan | None = None,
    allowed: Iterable[tuple[str, str]] | None = None,
    all_edges: bool = False,
) -> GraphView:
    """The release graph of ``product`` (see the module doc).

    ``allowed``: the upgrade edges the knowledge allows (those of
    :func:`upgradeplan.planner.graph.release_graph`); a release whose ``upgrade_from`` refuses its
    predecessor is then drawn from its nearest allowed one, and a withdrawn release stands
    apart. ``all_edges`` also draws every allowed edge, thin.
    """

    releases = list(kb.releases.get(product, ()))
    released = [r.version for r in releases if r.version != NEXT]
    hazards = [h for h in kb.hazards_for(product) if h.withdrawn is None]
    stops = {str(h.stop) for h in hazards if h.scope == "skip" and h.stop}
    # a landing hazard is marked on the first release of its range ("… onwards" when the
    # range goes on), not repeated on every later one
    first_landing: dict[str, list[str]] = {}
    for h in sorted(hazards, key=lambda x: x.id):
        if h.scope != "landing":
            continue
        inside = [v for v in released if _in(h.to_range, v)]
        if inside:
            mark = h.id if len(inside) == 1 else f"{h.id} (onwards)"
            first_landing.setdefault(inside[0], []).append(mark)
    nodes: dict[str, GNode] = {}
    for rel in releases:
        label = rel.version
        classes: list[str] = []
        landing = first_landing.get(rel.version, [])
        if rel.version in stops:
            classes.append("stop")
            label += " · required stop"
        if landing:
            classes.append("hazard")
            label += " · " + ", ".join(landing)
        if rel.withdrawn is not None:
            classes.append("withdrawn")
            label += " · withdrawn"
        if rel.version == NEXT:
            classes.append("next")
        nodes[rel.version] = GNode(node_id(product, rel.version), label, classes)
    ok = set(allowed) if allowed is not None else None
    out_edges: list[GEdge] = []
    for i, (a, b) in enumerate(itertools.pairwise(released)):
        if ok is None or (a, b) in ok:
            out_edges.append(GEdge(nodes[a].id, nodes[b].id))
            continue
        preds = [x for x in released[: i + 1] if (x, b) in ok]
        if preds:
            target = kb.release(product, b)
            narrowed = target.upgrade_from if target is not None and target.upgrade_from else ""
            label = f"upgrade_from {narrowed}" if narrowed else ""
            out_edges.append(GEdge(nodes[preds[-1]].id, nodes[b].id, label))
    if released and NEXT in nodes:
        out_edges.append(GEdge(nodes[released[-1]].id, nodes[NEXT].id, style="next"))
    for h in sorted(hazards, key=lambda x: x.id):
        if h.scope != "skip" or not h.stop or h.stop not in nodes:
            continue
        stop_v = Version.parse(str(h.stop))
        below = [v for v in released if Version.parse(v) < stop_v]
        landing_on = [v for v in released if _in(h.to_range, v)]
        if below and landing_on:
            out_edges.append(
                GEdge(
                    nodes[below[-1]].id,
                    nodes[landing_on[0]].id,
                    f"skips {h.stop}: {h.id} ({h.severity})",
                    "skip",
                )
            )
    known = {(e.src, e.dst) for e in out_edges}
    for a, b in sorted(ok or ()) if all_edges else ():
        if a in nodes and b in nodes and (nodes[a].id, nodes[b].id) not in known:
            out_edges.append(GEdge(nodes[a].id, nodes[b].id, style="edge"))
            known.add((nodes[a].id, nodes[b].id))
    if plan is not None:
        _mark_plan(product, plan, nodes, out_edges)
    return GraphView(f"{product} releases", list(nodes.values()), out_edges)


def _mark_plan(product: str, plan: Plan, nodes: dict[str, GNode], edges: list[GEdge]) -> None:
    seq = plan.path.get(product)
    current = plan.current.get(product)
    if current and current in nodes:
        nodes[current].classes.append("current")
        nodes[current].label += " · now"
    if not seq:
        return
    for v in seq:
        if v in nodes and "path" not in nodes[v].classes:
            nodes[v].classes.append("path")
    for n, (a, b) in enumerate(itertools.pairwise(seq), 1):
        if a not in nodes or b not in nodes:
            continue
        src, dst = nodes[a].id, nodes[b].id
        for e in edges:
            if e.src == src and e.dst == dst and e.style in ("chain", "edge", "next"):
                e.style, e.label = "path", f"step {n}"
                break
        else:
            edges.append(GEdge(src, dst, f"step {n}", "path"))


def _hazard_ids(findings: Sequence[object], statuses: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for f in findings:
        status = getattr(f, "status", "")
        hazard = getattr(f, "hazard", "")
        if status in statuses and hazard not in out:
            out.append(hazard)
    return out


def path_view(plan: Plan) -> GraphView:
    """The plan's path per product, steps labelled with their findings, and the direct jump."""
    nodes: dict[str, GNode] = {}
    edges: list[GEdge] = []

    def node(product: str, version: str) -> str:
        nid = node_id(product, version)
        if nid not in nodes:
            nodes[nid] = GNode(nid, f"{product} {version}", ["path"])
        return nid

    for product, current in sorted(plan.current.items()):
        if current is not None and any(t.product == product for t in plan.targets):
            nodes.setdefault(
                node_id(product, current),
                GNode(node_id(product, current), f"{product} {current}", []),
            )
            nodes[node_id(product, current)].classes.append("current")
            nodes[node_id(product, current)].label += " · now"
    for n, step in enumerate(plan.steps, 1):
        src, dst = node(step.product, step.from_version), node(step.product, step.to_version)
        hazards = _hazard_ids(step.findings, ("applies",))
        maybe = _hazard_ids(step.findings, ("may-apply",))
        label = f"step {n}"
        if hazards:
            label += ": " + ", ".join(hazards)
            if "hazard" not in nodes[dst].classes:
                nodes[dst].classes.append("hazard")
        extras = []
        if step.actions:
            extras.append(f"{len(step.actions)} action{'s' if len(step.actions) != 1 else ''}")
        if maybe:
            extras.append(f"{len(maybe)} may apply")
        if extras:
            label += f" ({', '.join(extras)})"
        edges.append(GEdge(src, dst, label, "path"))
    for target in plan.targets:
        direct = _hazard_ids(
            [f for f in plan.direct.findings if f.product == target.product], ("applies",)
        )
        current = plan.current.get(target.product)
        if current is None or current == target.version:
            continue
        src = node_id(target.product, current)
        dst = node(target.product, target.version)
        if src not in nodes:
            nodes[src] = GNode(src, f"{target.product} {current} · now", ["current"])
        label = f"direct: {plan.direct.verdict}"
        if direct:
            label += " — " + ", ".join(direct)
        edges.append(GEdge(src, dst, label, "direct"))
    return GraphView("path", list(nodes.values()), edges)


# --------------------------------------------------------------------------- mermaid

_MERMAID_CLASSES = {
    "stop": "fill:#fff3bf,stroke:#e67700,stroke-width:2px",
    "hazard": "fill:#ffe3e3,stroke:#c92a2a",
    "withdrawn": "fill:#f1f3f5,stroke:#868e96,stroke-dasharray: 4 4",
    "next": "fill:#f8f9fa,stroke:#868e96,stroke-dasharray: 2 2",
    "current": "stroke:#1971c2,stroke-width:3px",
    "path": "fill:#d0ebff,stroke:#1971c2",
}


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;").replace("|", "#124;")


def to_mermaid(view: GraphView) -> str:
    lines = ["flowchart LR"]
    for n in view.nodes:
        lines.append(f'  {n.id}["{_mermaid_text(n.label)}"]')
    path_links: list[int] = []
    for i, e in enumerate(view.edges):
        arrow = {"chain": "-->", "next": "-.->", "skip": "-.->", "path": "==>", "direct": "-.->"}
        a = arrow.get(e.style, "-->")
        label = f'|"{_mermaid_text(e.label)}"|' if e.label else ""
        lines.append(f"  {e.src} {a}{label} {e.dst}")
        if e.style == "path":
            path_links.append(i)
        if e.style in ("skip", "direct"):
            lines.append(f"  linkStyle {i} stroke:#c92a2a")
    for i in path_links:
        lines.append(f"  linkStyle {i} stroke:#1971c2,stroke-width:3px")
    used = sorted({c for n in view.nodes for c in n.classes})
    for c in used:
        lines.append(f"  classDef {c} {_MERMAID_CLASSES[c]}")
    for c in used:
        members = [n.id for n in view.nodes if c in n.classes]
        lines.append(f"  class {','.join(members)} {c}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- dot

_DOT_FILL = {
    "stop": {"style": "filled,bold", "fillcolor": "#fff3bf", "color": "#e67700"},
    "hazard": {"style": "filled", "fillcolor": "#ffe3e3", "color": "#c92a2a"},
    "path": {"style": "filled", "fillcolor": "#d0ebff", "color": "#1971c2"},
    "withdrawn": {"style": "dashed", "color": "#868e96"},
    "next": {"style": "dotted"},
}
_DOT_EDGE = {
    "chain": "",
    "edge": 'color="#adb5bd"',
    "next": "style=dotted",
    "skip": 'style=dashed color="#c92a2a" fontcolor="#c92a2a"',
    "path": 'color="#1971c2" penwidth=3',
    "direct": 'style=dashed color="#c92a2a" fontcolor="#c92a2a"',
}


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(view: GraphView) -> str:
    lines = [
        f"digraph {_dot_quote(view.title)} {{",
        "  rankdir=LR;",
        '  node [shape=box fontname="Helvetica"];',
        '  edge [fontname="Helvetica" fontsize=10];',
    ]
    for n in view.nodes:
        node: dict[str, str] = {"label": n.label}
        # the most telling class gives the fill; the path and "now" give a blue border
        for c in ("stop", "hazard", "path", "withdrawn", "next"):
            if c in n.classes:
                node.update(_DOT_FILL[c])
                break
        if "current" in n.classes:
            node.update({"color": "#1971c2", "penwidth": "3"})
        elif "path" in n.classes:
            node.update({"color": "#1971c2", "penwidth": "2"})
        text = " ".join(f"{k}={_dot_quote(v)}" for k, v in node.items())
        lines.append(f"  {n.id} [{text}];")
    for e in view.edges:
        attrs = [
            a for a in (f"label={_dot_quote(e.label)}" if e.label else "", _DOT_EDGE[e.style]) if a
        ]
        suffix = f" [{' '.join(attrs)}]" if attrs else ""
        lines.append(f"  {e.src} -> {e.dst}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"
