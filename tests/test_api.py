"""The library facade: everything the CLI does is callable from Python and returns objects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import fixture_path

from upgradeplan import api, errors
from upgradeplan.model import Finding, KnowledgeBase

S1 = api.Inputs(
    installed=("agent-platform=4.7.18",),
    pins=("agent-platform-connectivity=4.7.18",),
    facts=(
        "helmrelease.kagent.drift-detection=disabled",
        "object.Harness.kagent.kagent.exists=true",
        "object.Harness.kagent.kagent.annotations=",
        "kubernetes=1.35.0",
    ),
)


def _finding(status: str, severity: str) -> Finding:
    return Finding(
        hazard=f"h-{status}-{severity}",
        title="t",
        severity=severity,  # type: ignore[arg-type]
        scope="landing",
        status=status,  # type: ignore[arg-type]
        product="p",
        from_version=None,
        to_version="1.0.0",
    )


@pytest.mark.parametrize(
    ("findings", "fail_on", "verdict"),
    [
        ([], "blocking", "safe"),
        ([("applies", "blocking")], "blocking", "blocked"),
        ([("may-apply", "blocking")], "blocking", "undetermined"),
        ([("applies", "blocking"), ("may-apply", "blocking")], "blocking", "blocked"),
        ([("applies", "warning")], "blocking", "safe-with-actions"),
        ([("applies", "warning")], "warning", "blocked"),
        ([("may-apply", "warning")], "blocking", "safe"),
        ([("may-apply", "notice")], "notice", "undetermined"),
        ([("applies", "blocking")], "never", "safe-with-actions"),
        ([("does-not-apply", "blocking")], "blocking", "safe"),
    ],
)
def test_judge_follows_the_verdict_rules(
    findings: list[tuple[str, str]], fail_on: str, verdict: str
) -> None:
    assert api.judge([_finding(s, sev) for s, sev in findings], fail_on) == verdict


def test_worst_exit_prefers_hazard_over_undetermined_over_safe() -> None:
    assert api.worst_exit([0, 4, 3]) == 3
    assert api.worst_exit([0, 4]) == 4
    assert api.worst_exit([]) == 0


def test_gather_merges_offline_inputs_into_one_state_with_derived_facts(kb: KnowledgeBase) -> None:
    gathered = api.gather(kb, S1)
    assert len(gathered) == 1
    state = gathered[0].state
    assert state is not None
    fact = state.get("installed.agent-platform-connectivity")
    assert fact is not None and fact.source.kind == "derived"


def test_check_and_plan_return_objects(kb: KnowledgeBase) -> None:
    state = api.gather(kb, S1)[0].state
    assert state is not None
    result = api.check(kb, state, ["agent-platform=4.8.0"])
    assert result.verdict == "blocked" and result.exit_code == 3
    assert result.recommended is not None
    assert result.recommended.path["agent-platform"] == ["4.7.18", "4.7.19", "4.8.0"]
    planned = api.plan(kb, state, ["agent-platform=4.8.0"])
    assert planned.plan is not None and planned.exit_code == 0


def test_plan_without_target_is_bad_input(kb: KnowledgeBase) -> None:
    state = api.gather(kb, S1)[0].state
    assert state is not None
    with pytest.raises(errors.BadInput, match="target"):
        api.plan(kb, state, [])


def test_base_without_gitops_is_bad_input(kb: KnowledgeBase) -> None:
    with pytest.raises(errors.BadInput, match="--base"):
        api.gather(kb, api.Inputs(installed=("agent-platform=4.7.18",), base="main"))


def test_explain_and_diagnose_return_objects(kb: KnowledgeBase) -> None:
    explained = api.explain(kb, "agent-platform@4.8.1")
    assert explained.kind == "release" and explained.release is not None
    found = api.diagnose(kb, "metadata service unreachable")
    assert found and found[0].hazard.id == "delegate-metadata-flag-renamed"
    assert found[0].matches[0].line_number == 1


def test_patch_and_write_patches_move_the_pins_from_python(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """The patch verb without the CLI: build the first step's patches, then write them."""
    tree = tmp_path / "s1"
    shutil.copytree(fixture_path("gitops", "s1"), tree)
    inputs = api.Inputs(gitops=str(tree), facts=("kubernetes=1.35.0",))
    [gathered] = api.gather(kb, inputs)
    assert gathered.state is not None
    result = api.patch(kb, gathered.state, ["agent-platform=4.8.1"])
    assert result.plan is not None and result.plan.steps
    before = {p.name: p.read_text() for p in tree.rglob("*.yaml")}
    written = api.write_patches(result, 1)  # a list: written before the call returns
    assert written
    changed = {p.name for p in tree.rglob("*.yaml") if p.read_text() != before[p.name]}
    assert changed == {Path(w).name for w in written}
    first = result.plan.steps[0].to_version
    assert f'"{first}"' in (tree / "bom.yaml").read_text()
