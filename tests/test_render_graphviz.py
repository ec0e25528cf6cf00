"""Release graphs and plan paths as mermaid and dot."""

from __future__ import annotations

import re
import shutil
import subprocess

from click.testing import CliRunner
from support.builders import bare_kb

from upgradeplan import api
from upgradeplan.cli import cli
from upgradeplan.model import KnowledgeBase
from upgradeplan.readers import stated
from upgradeplan.render import graphviz


def test_release_view_marks_stops_landing_hazards_and_skip_edges(kb: KnowledgeBase) -> None:
    view = graphviz.release_view(kb, "agent-platform")
    nodes = {n.id: n for n in view.nodes}
    stop = nodes[graphviz.node_id("agent-platform", "4.7.19")]
    assert "stop" in stop.classes and "required stop" in stop.label
    v480 = nodes[graphviz.node_id("agent-platform", "4.8.0")]
    assert "hazard" in v480.classes and "harness-missing-on-480" in v480.label
    skips = [e for e in view.edges if e.style == "skip"]
    handover = next(e for e in skips if "harness-handover-skipped" in e.label)
    assert handover.src == graphviz.node_id("agent-platform", "4.7.18")
    assert handover.dst == graphviz.node_id("agent-platform", "4.8.0")
    assert "(blocking)" in handover.label


def test_plan_path_is_highlighted(kb: KnowledgeBase) -> None:
    state = stated.from_flags(
        kb,
        ["agent-platform=4.7.18"],
        ["agent-platform-connectivity=4.7.18"],
        ["helmrelease.kagent.drift-detection=disabled", "object.Harness.kagent.kagent.exists=true",
         "object.Harness.kagent.kagent.annotations="],
    )  # fmt: skip
    plan = api.plan(kb, state, ["agent-platform=4.8.0"]).plan
    assert plan is not None
    view = graphviz.release_view(kb, "agent-platform", plan=plan)
    path = [(e.src, e.dst) for e in view.edges if e.style == "path"]
    ids = [graphviz.node_id("agent-platform", v) for v in ("4.7.18", "4.7.19", "4.8.0")]
    assert path == [(ids[0], ids[1]), (ids[1], ids[2])]
    mermaid = graphviz.to_mermaid(view)
    assert mermaid.startswith("flowchart LR\n")
    assert f"{ids[0]} ==>" in mermaid
    assert re.search(r"linkStyle \d+ stroke:#1971c2", mermaid)


def test_mermaid_and_dot_are_well_formed(kb: KnowledgeBase) -> None:
    view = graphviz.release_view(kb, "harness-delegate")
    mermaid = graphviz.to_mermaid(view)
    for line in mermaid.splitlines()[1:]:
        assert line.startswith("  ")
    assert '"' not in "".join(n.label for n in view.nodes)  # labels need no escaping here
    dot = graphviz.to_dot(view)
    assert dot.startswith('digraph "harness-delegate releases" {') and dot.rstrip().endswith("}")
    if shutil.which("dot"):
        done = subprocess.run(["dot", "-Tsvg"], input=dot, text=True, capture_output=True)
        assert done.returncode == 0, done.stderr


def test_dot_quotes_labels() -> None:
    view = graphviz.GraphView(
        'a "b"', [graphviz.GNode("n1", 'x "y" \\ z', ["path"])], [graphviz.GEdge("n1", "n1", 'q"')]
    )
    dot = graphviz.to_dot(view)
    assert 'label="x \\"y\\" \\\\ z"' in dot
    assert 'label="q\\""' in dot


def test_graph_command(tmp_path: object) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["graph", "--product", "agent-platform"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("flowchart LR")
    result = runner.invoke(
        cli,
        ["graph", "--product", "agent-platform", "-o", "dot", "--path-from", "4.7.18",
         "--path-to", "4.8.1", "--all-edges"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert 'label="step 1"' in result.stdout and 'label="step 2"' in result.stdout
    bad = runner.invoke(cli, ["graph", "--product", "agent-platform", "--path-from", "4.7.18"])
    assert bad.exit_code == 2 and "go together" in bad.stderr
    unknown = runner.invoke(cli, ["graph", "--product", "nope"])
    assert unknown.exit_code == 2 and "unknown product 'nope'" in unknown.stderr


def test_upgrade_from_and_withdrawn_releases_shape_the_chain() -> None:
    """Drawn from the allowed edges: a narrowed release hangs off its nearest allowed
    predecessor; a withdrawn release stands apart, dashed."""
    from upgradeplan.model import Release, Withdrawn

    rels = (
        Release("p", "1.0.0", "a"),
        Release("p", "1.1.0", "b"),
        Release("p", "1.2.0", "c", withdrawn=Withdrawn("2026-01-01", "broken")),
        Release("p", "2.0.0", "d", upgrade_from=">=1.0.0 <1.1.0"),
    )
    kb2 = bare_kb(releases={"p": rels})
    from upgradeplan.planner.graph import release_graph

    allowed = [(str(a), str(b)) for a, b in release_graph(kb2, "p").edges()]
    view = graphviz.release_view(kb2, "p", allowed=allowed)
    edges = {(e.src, e.dst): e for e in view.edges}

    def nid(v: str) -> str:
        return graphviz.node_id("p", v)

    assert (nid("1.0.0"), nid("1.1.0")) in edges
    assert (nid("1.1.0"), nid("1.2.0")) not in edges  # withdrawn: not an upgrade target
    narrowed = edges[(nid("1.0.0"), nid("2.0.0"))]
    assert narrowed.label == "upgrade_from >=1.0.0 <1.1.0"
    withdrawn = next(n for n in view.nodes if n.id == nid("1.2.0"))
    assert "withdrawn" in withdrawn.classes


def test_path_view_labels_each_direct_jump_with_its_own_hazards() -> None:
    from upgradeplan.model import Finding, Jump, Plan, Step, Target

    def finding(product: str, hazard: str) -> Finding:
        return Finding(hazard, hazard, "blocking", "skip", "applies", product, "1", "2")

    plan = Plan(
        schema_version=1,
        targets=(Target("a", "2"), Target("b", "2")),
        current={"a": "1", "b": "1"},
        direct=Jump(findings=(finding("a", "ha"), finding("b", "hb")), verdict="blocked"),
        steps=(Step("a", "1", "2"), Step("b", "1", "2")),
        verdict="safe",
    )
    labels = {e.src: e.label for e in graphviz.path_view(plan).edges if e.style == "direct"}
    assert labels[graphviz.node_id("a", "1")] == "direct: blocked — ha"
    assert labels[graphviz.node_id("b", "1")] == "direct: blocked — hb"
