"""Collecting patches from inline plans: chained file edits, where each fix lands."""

from __future__ import annotations

import pytest

from upgradeplan.model import Action, Fact, Jump, Move, Plan, State, Step, Target
from upgradeplan.patches.build import build
from upgradeplan.provenance import ObjectRef, flag, in_file, read_from
from upgradeplan.render.patches import dir_layout, render_json, render_text

BOM = 'components:\n  conn:\n    versionRange: "1.0.0"  # pinned\n'


def _state(*facts: Fact) -> State:
    return State(facts={f.key: f for f in facts})


def _plan(*steps: Step) -> Plan:
    return Plan(
        schema_version=1,
        targets=(Target("meta", steps[-1].to_version),),
        current={"meta": steps[0].from_version},
        direct=Jump(findings=(), verdict="blocked"),
        steps=steps,
        verdict="safe-with-actions",
    )


def _pin_step(a: str, b: str) -> Step:
    return Step("meta", a, b, moves=(Move("pin", "conn", a, b, source=in_file("bom.yaml", 3)),))


def test_pin_moves_chain_across_steps_and_accumulate() -> None:
    state = _state(Fact("pin.conn", "1.0.0", in_file("bom.yaml", 3)))
    ps = build(_plan(_pin_step("1.0.0", "1.1.0"), _pin_step("1.1.0", "2.0.0")), state,
               files={"bom.yaml": BOM})  # fmt: skip
    diffs = [i for i in ps.items if i.kind == "file-edit"]
    assert [i.step for i in diffs] == [1, 2]
    assert '-    versionRange: "1.0.0"  # pinned' in diffs[0].content
    assert '-    versionRange: "1.1.0"  # pinned' in diffs[1].content
    assert '+    versionRange: "2.0.0"  # pinned' in diffs[1].content
    (first,) = ps.file_changes(1)
    assert first.result == BOM.replace("1.0.0", "1.1.0")
    (both,) = ps.file_changes(2)
    assert both.result == BOM.replace("1.0.0", "2.0.0")
    assert len(both.edits) == 1 and both.edits[0].before == "1.0.0"


def test_a_file_that_is_not_available_becomes_a_note() -> None:
    state = _state(Fact("pin.conn", "1.0.0", in_file("bom.yaml", 3)))
    ps = build(_plan(_pin_step("1.0.0", "1.1.0")), state, files={})
    (item,) = ps.items
    assert item.kind == "snippet" and "edit it by hand" in item.note
    assert ps.file_changes(1) == ()


def _action(mkind: str, content: str, **target: str) -> Action:
    return Action(
        migration=f"m-{mkind}",
        title=f"a {mkind}",
        kind=mkind,  # type: ignore[arg-type]
        when="before",
        content=content,
        target=target,
        fixes=("h",),
    )


def test_values_edit_from_a_cluster_is_a_helmrelease_patch() -> None:
    state = _state(
        Fact("values.agent.delegateVersion", "0.29.0",
             read_from("HelmRelease ns-a/agent spec.values.delegateVersion", "cluster prod",
                       obj=ObjectRef("HelmRelease", "ns-a", "agent"),
                       path="spec.values.delegateVersion")),
    )  # fmt: skip
    edit = _action("values-edit", 'delegateVersion: "0.31.2"\n', key="delegateVersion")
    step = Step("agent", "0.29.0", "0.31.2", actions=(edit,))
    ps = build(_plan(step), state)
    (item,) = ps.items
    assert item.kind == "strategic-merge"
    assert dict(item.target) == {
        "group": "helm.toolkit.fluxcd.io",
        "version": "v2",
        "kind": "HelmRelease",
        "name": "agent",
        "namespace": "ns-a",
    }
    assert "delegateVersion: 0.31.2" in item.content


def test_json6902_targets_the_observed_workload_and_edits_a_values_file() -> None:
    values = "args:\n  - --old=x   # keep\n"
    state = _state(
        Fact("workload.agent.args", ["--old=x"], in_file("values.yaml", 2)),
        Fact("workload.agent.name", "my-agent", in_file("values.yaml", 1)),
        Fact("workload.agent.namespace", "team-ns", in_file("values.yaml", 1)),
    )
    ops = (
        "- op: test\n  path: /spec/template/spec/containers/0/args/0\n  value: --old=x\n"
        "- op: replace\n  path: /spec/template/spec/containers/0/args/0\n  value: --new=x\n"
    )
    act = _action("json6902", ops, kind="Deployment", name="agent", namespace="default")
    step = Step("agent", "1.0.0", "2.0.0", actions=(act,))
    ps = build(_plan(step), state, files={"values.yaml": values})
    edit, patch = ps.items
    assert edit.kind == "file-edit" and "+  - --new=x   # keep" in edit.content
    assert patch.kind == "json6902"
    # no kb given: the step's product names the workload
    assert patch.target["name"] == "my-agent" and patch.target["namespace"] == "team-ns"


@pytest.mark.parametrize("render", [render_text, render_json])
def test_renderings_name_every_item(render: object) -> None:
    state = _state(Fact("pin.conn", "1.0.0", in_file("bom.yaml", 3)))
    cmd = _action("command", "kubectl -n 'a b' get pods")
    step = Step("meta", "1.0.0", "1.1.0", moves=(Move("pin", "conn", "1.0.0", "1.1.0"),),
                actions=(cmd,))  # fmt: skip
    ps = build(_plan(step), state, files={"bom.yaml": BOM})
    assert callable(render)
    out = render(ps)
    assert "m-command" in out and "pin-move" in out


def test_dir_layout_scripts_and_diffs() -> None:
    state = _state(Fact("pin.conn", "1.0.0", in_file("bom.yaml", 3)))
    cmd = _action("command", "echo hi")
    step = Step("meta", "1.0.0", "1.1.0", moves=(Move("pin", "conn", "1.0.0", "1.1.0"),),
                actions=(cmd,))  # fmt: skip
    layout = dir_layout(build(_plan(step), state, files={"bom.yaml": BOM}))
    folder = "01-meta-1.0.0-to-1.1.0"
    assert layout[f"{folder}/commands-before.sh"].endswith("echo hi\n")
    assert layout[f"{folder}/bom.yaml.diff"].startswith("--- a/bom.yaml")
    assert f"{folder}/kustomization.yaml" not in layout  # nothing for kustomize here


def test_a_patch_that_does_not_parse_is_bad_input() -> None:
    from upgradeplan.errors import BadInput

    broken = _action("helmrelease-patch", 'metadata:\n  namespace: "a"b: c"\n')
    step = Step("meta", "1.0.0", "1.1.0", actions=(broken,))
    with pytest.raises(BadInput, match="m-helmrelease-patch rendered invalid YAML"):
        build(_plan(step), _state())


def test_pins_not_in_a_file_are_listed_to_set_by_hand() -> None:
    state = _state(Fact("pin.conn", "1.0.0", flag("--pin")))
    steps = (
        Step("meta", "1.0.0", "1.1.0", moves=(Move("pin", "conn", "1.0.0", "1.1.0"),)),
        Step("meta", "1.1.0", "2.0.0", moves=(Move("pin", "conn", "1.1.0", "2.0.0"),)),
    )
    ps = build(_plan(*steps), state)
    assert [i.content for i in ps.items] == [
        "pin.conn: 1.0.0 -> 1.1.0  (read from flag --pin)\n",
        "pin.conn: 1.1.0 -> 2.0.0  (read from flag --pin)\n",
    ]
    assert all(i.kind == "snippet" and i.migration == "pin-move" for i in ps.items)
