"""planner.plan on a small inline knowledge base mirroring the bundled hazards.

The reference scenarios (tests/support/scenarios.py), hold, lockstep pins, release effects,
several products in one plan, cross-product requirements, errors. The same scenarios against
the bundled knowledge through the CLI live in the CLI tests.
"""

from __future__ import annotations

import pytest
from support.builders import (
    AP,
    CD,
    CONN,
    DEL,
    K8S,
    KB,
    S1_FACTS,
    S6_FACTS,
    make_kb,
    releases,
    state,
    to,
)

from upgradeplan import errors, planner
from upgradeplan.model import Finding, KnowledgeBase, Plan, Release, Target
from upgradeplan.provenance import in_file


def status(findings: tuple[Finding, ...] | list[Finding], hazard: str) -> str:
    found = [f for f in findings if f.hazard == hazard]
    assert found, f"{hazard} not among {[f.hazard for f in findings]}"
    return found[0].status


def finding(findings: tuple[Finding, ...], hazard: str) -> Finding:
    return next(f for f in findings if f.hazard == hazard)


def path(plan: Plan, product: str = AP) -> list[str]:
    return plan.path.get(product, [])


S1 = state({AP: "4.7.18"}, {CONN: "4.7.18"}, S1_FACTS)


# --------------------------------------------------------------------------- scenarios 1-3


def test_s1_direct_jump_is_blocked_by_the_skipped_handover() -> None:
    plan = planner.plan(KB, S1, to(AP, "4.8.0"))
    d = plan.direct.findings
    assert plan.direct.verdict == "blocked"
    assert status(d, "harness-handover-skipped") == "applies"
    assert status(d, "no-drift-detection-on-480") == "applies"
    assert status(d, "harness-missing-on-480") == "does-not-apply"
    assert status(d, "harness-gap-skipping-to-481") == "does-not-apply"
    handover = finding(d, "harness-handover-skipped")
    assert (
        str(handover.location) == "clusters/prod/bom.yaml:12"
    )  # the exact pin that makes it apply
    assert handover.evidence and handover.reason.startswith("applies")
    assert (handover.from_version, handover.to_version) == ("4.7.18", "4.8.0")


def test_s1_path_stops_at_4719_and_moves_the_pin_in_lockstep() -> None:
    plan = planner.plan(KB, S1, to(AP, "4.8.0"))
    assert path(plan) == ["4.7.18", "4.7.19", "4.8.0"]
    pin_moves = [
        (m.before, m.after, str(m.source))
        for s in plan.steps
        for m in s.moves
        if m.kind == "pin" and m.product == CONN
    ]
    assert pin_moves == [
        ("4.7.18", "4.7.19", "clusters/prod/bom.yaml:12"),
        ("4.7.19", "4.8.0", "clusters/prod/bom.yaml:12"),
    ]
    assert plan.verdict == "safe-with-actions"
    last = plan.steps[-1]
    assert status(last.findings, "no-drift-detection-on-480") == "applies"
    assert [a.migration for a in last.actions] == ["kagent-drift-detection"]
    assert last.actions[0].placeholders == ("namespace",)  # gitops namespace unknown
    assert "<gitops-ns>" in last.actions[0].content
    assert not plan.blocked_by


def test_s2_direct_warns_of_the_gap_and_path_goes_through_4719() -> None:
    plan = planner.plan(KB, S1, to(AP, "4.8.1"))
    assert plan.direct.verdict == "safe-with-actions"
    assert status(plan.direct.findings, "harness-gap-skipping-to-481") == "applies"
    assert status(plan.direct.findings, "harness-handover-skipped") == "does-not-apply"
    assert path(plan) == ["4.7.18", "4.7.19", "4.8.1"]  # a warning costs more than a hop
    assert plan.verdict == "safe"


def test_s3_settled_range_pin_already_past_4719() -> None:
    st = state({AP: "4.7.18", CONN: "4.7.19"}, {CONN: ">=4.7.0 <5.0.0"})
    plan = planner.plan(KB, st, to(AP, "4.8.0"))
    assert status(plan.direct.findings, "harness-handover-skipped") == "does-not-apply"
    assert status(plan.direct.findings, "no-drift-detection-on-480") == "may-apply"
    assert plan.direct.verdict == "safe"  # a may-apply warning is below fail-on
    assert path(plan) == ["4.7.18", "4.8.0"]


def test_s3_settled_by_keep_annotation() -> None:
    facts = {
        "object.Harness.kagent.kagent.exists": True,
        "object.Harness.kagent.kagent.annotations": {"helm.sh/resource-policy": "keep"},
    }
    plan = planner.plan(KB, state({AP: "4.7.18"}, {CONN: "4.7.18"}, facts), to(AP, "4.8.0"))
    assert status(plan.direct.findings, "harness-handover-skipped") == "does-not-apply"


def test_s3_unsettled_names_missing_facts_and_how_to_supply_them() -> None:
    plan = planner.plan(KB, state({AP: "4.7.18"}), to(AP, "4.8.0"))
    assert plan.direct.verdict == "undetermined"
    handover = finding(plan.direct.findings, "harness-handover-skipped")
    assert handover.status == "may-apply"
    keys = [m.key for m in handover.missing]
    assert keys[:2] == [f"installed.{CONN}", "helmrelease.kagent.drift-detection"]
    assert "object.Harness.kagent.kagent.annotations" in keys
    hows = {m.key: m.how for m in handover.missing}
    assert hows[f"installed.{CONN}"].startswith(f"--installed {CONN}=VERSION")
    assert "--fact helmrelease.kagent.drift-detection=VALUE" in hows[keys[1]]
    assert "--kubeconfig" in hows[keys[1]]
    assert path(plan) == ["4.7.18", "4.7.19", "4.8.0"]  # known-safe hop preferred


# --------------------------------------------------------------------------- scenarios 4-5

S4 = state(
    {AP: "4.8.0"},
    {CONN: "4.8.0"},
    {
        "helmrelease.kagent.drift-detection": "disabled",
        "helmrelease.kagent.namespace": "flux-giantswarm",
        "object.Harness.kagent.kagent.exists": False,
    },
)


def test_s4_current_state_reports_the_missing_harness() -> None:
    found = planner.current_findings(KB, S4)
    assert status(found, "harness-missing-on-480") == "applies"
    assert status(found, "no-drift-detection-on-480") == "applies"
    assert planner.verdict_of(found) == "blocked"


def test_s4_plan_fixes_with_real_namespace_and_moves_to_481() -> None:
    plan = planner.plan(KB, S4, to(AP, "4.8.1"))
    assert path(plan) == ["4.8.0", "4.8.1"]
    actions = {a.migration: a for s in plan.steps for a in s.actions}
    assert (
        "-n flux-giantswarm annotate helmrelease kagent"
        in actions["forced-reconcile-kagent"].content
    )
    assert "namespace: flux-giantswarm" in actions["kagent-drift-detection"].content
    assert actions["forced-reconcile-kagent"].fixes == ("harness-missing-on-480",)
    assert not actions["kagent-drift-detection"].placeholders
    assert plan.verdict == "safe-with-actions"
    assert status(plan.state_findings, "harness-missing-on-480") == "applies"
    fixed = finding(plan.steps[0].findings, "harness-missing-on-480")
    assert fixed.fixed_by == ("forced-reconcile-kagent", "kagent-drift-detection")


def test_s5_hold_leaves_no_safe_path() -> None:
    plan = planner.plan(KB, S1, to(AP, "4.8.1"), holds=[CONN])
    assert plan.direct.verdict == "blocked"
    assert status(plan.direct.findings, "connectivity-pin-behind-479-second-owner") == "applies"
    assert plan.verdict == "blocked"
    assert plan.blocked_by == ("connectivity-pin-behind-479-second-owner",)
    assert plan.held == (CONN,)
    assert all(m.kind != "pin" for s in plan.steps for m in s.moves)  # the pin stays


def test_s5_state_form_is_blocked_as_it_is() -> None:
    found = planner.current_findings(KB, state({AP: "4.8.1"}, {CONN: "4.7.18"}))
    assert status(found, "connectivity-pin-behind-479-second-owner") == "applies"
    assert planner.verdict_of(found) == "blocked"


# --------------------------------------------------------------------------- scenarios 6-8

S6 = state({DEL: "0.29.0", CD: "24.12.0", K8S: "1.31.0"}, {}, S6_FACTS)


def test_s6_transition_fixed_by_actions() -> None:
    plan = planner.plan(KB, S6, to(DEL, "0.31.2"))
    d = plan.direct.findings
    assert plan.direct.verdict == "blocked"
    assert status(d, "delegate-metadata-flag-renamed") == "applies"
    assert status(d, "delegate-version-value-not-bumped") == "applies"
    assert status(d, "delegate-needs-kubernetes-128") == "does-not-apply"
    assert status(d, "delegate-token-secret-type") == "does-not-apply"
    assert path(plan, DEL) == ["0.29.0", "0.31.2"]
    (step,) = plan.steps
    contents = {a.migration: a.content for a in step.actions}
    assert (
        "--metadata-endpoint=https://169.254.169.254" in contents["delegate-metadata-endpoint-arg"]
    )
    assert contents["delegate-version-value"] == 'delegateVersion: "0.31.2"'
    assert step.verdict == plan.verdict == "safe-with-actions"


def test_s7_state_hazard_fixed_in_place() -> None:
    st = state(
        {DEL: "0.31.2", CD: "24.12.0"},
        {},
        {
            f"workload.{DEL}.namespace": "harness-delegate-ng",
            f"workload.{DEL}.env-secrets": ["harness-delegate-token"],
            "secret.harness-delegate-ng.harness-delegate-token.type": "harness.io/token",
        },
    )
    assert planner.verdict_of(planner.current_findings(KB, st)) == "blocked"
    plan = planner.plan(KB, st, to(DEL, "0.31.2"))
    (step,) = plan.steps
    assert (step.from_version, step.to_version) == ("0.31.2", "0.31.2")
    assert [a.migration for a in step.actions] == [
        "delegate-api-key-secret",
        "delegate-api-key-env",
    ]
    assert "type: Opaque" in step.actions[0].content and "apiKey" in step.actions[0].content
    assert plan.verdict == "safe-with-actions"


def test_s8_old_kubernetes_leaves_no_path() -> None:
    plan = planner.plan(KB, state({DEL: "0.29.0", K8S: "1.27.3"}), to(DEL, "0.31.2"))
    assert plan.direct.verdict == "blocked"
    assert status(plan.direct.findings, "delegate-needs-kubernetes-128") == "applies"
    assert plan.verdict == "blocked"
    assert "delegate-needs-kubernetes-128" in plan.blocked_by


# --------------------------------------------------------------------------- lockstep, effects


def test_range_pin_does_not_move_in_lockstep() -> None:
    st = state({AP: "4.7.19", CONN: "4.7.19"}, {CONN: ">=4.7.0 <5.0.0"}, S1_FACTS)
    plan = planner.plan(KB, st, to(AP, "4.8.1"))
    assert all(m.product == AP for s in plan.steps for m in s.moves)


def test_installed_is_derived_from_an_exact_pin() -> None:
    plan = planner.plan(KB, S1, to(AP, "4.8.0"))
    ev = finding(plan.direct.findings, "harness-handover-skipped").evidence[0]
    assert str(ev.facts[0].source) == "derived: exact pin (clusters/prod/bom.yaml:12)"


def test_effects_hold_after_landing_and_skipped_releases_bring_none() -> None:
    # 4.8.1 turns drift detection on; 4.8.2 declares nothing about it
    facts = {"helmrelease.kagent.drift-detection": "disabled"}
    plan = planner.plan(KB, state({AP: "4.8.1"}, {CONN: "4.8.1"}, facts), to(AP, "4.8.2"))
    assert status(plan.direct.findings, "no-drift-detection-on-482") == "applies"
    # the direct jump 4.8.0 -> 4.8.2 never runs 4.8.1, so its effects do not hold ...
    plan = planner.plan(KB, state({AP: "4.8.0"}, {CONN: "4.8.0"}, facts), to(AP, "4.8.2"))
    assert status(plan.direct.findings, "no-drift-detection-on-482") == "applies"
    # ... while the recommended path stops at 4.8.1 and lands on 4.8.2 with drift detection on
    assert plan.path[AP] == ["4.8.0", "4.8.1", "4.8.2"]
    assert all(
        f.hazard != "no-drift-detection-on-482" or f.status == "does-not-apply"
        for s in plan.steps
        for f in s.findings
    )


def test_verify_commands_come_from_hazards_and_the_landed_release() -> None:
    plan = planner.plan(KB, S4, to(AP, "4.8.1"))
    assert "kubectl get helmrelease kagent" in plan.steps[-1].verify


# --------------------------------------------------------------------------- several products


def test_two_products_in_one_plan() -> None:
    st = state({AP: "4.7.18", DEL: "0.29.0", CD: "24.12.0", K8S: "1.31.0"}, {CONN: "4.7.18"},
               {**S1_FACTS, **S6_FACTS})  # fmt: skip
    plan = planner.plan(KB, st, [Target(AP, "4.8.1"), Target(DEL, "0.31.2")])
    assert path(plan, AP) == ["4.7.18", "4.7.19", "4.8.1"]
    assert path(plan, DEL) == ["0.29.0", "0.31.2"]
    assert plan.verdict == "safe-with-actions"
    assert {f.product for f in plan.direct.findings} >= {AP, DEL}


def requires_kb() -> KnowledgeBase:
    rels = releases(AP, ("4.7.18", "4.7.19", "4.8.0", "4.8.1", "4.8.2"))
    raised = tuple(
        Release(r.product, r.version, r.title, bom=r.bom, requires={K8S: ">=1.30.0"})
        if r.version == "4.8.2"
        else r
        for r in rels
    )
    return make_kb(releases={AP: raised, K8S: releases(K8S, ("1.29.0", "1.30.0"))})


def test_unmet_requirement_is_a_blocking_finding() -> None:
    kb = requires_kb()
    st = state({AP: "4.8.1", K8S: "1.29.0"}, {CONN: "4.8.1"})
    plan = planner.plan(kb, st, to(AP, "4.8.2"))
    req = finding(plan.direct.findings, "requires:agent-platform@4.8.2")
    assert (req.status, req.severity) == ("applies", "blocking")
    assert plan.verdict == "blocked" and "requires:agent-platform@4.8.2" in plan.blocked_by


def test_raised_requirement_on_unknown_version_may_apply() -> None:
    plan = planner.plan(requires_kb(), state({AP: "4.8.1"}, {CONN: "4.8.1"}), to(AP, "4.8.2"))
    req = finding(plan.direct.findings, "requires:agent-platform@4.8.2")
    assert req.status == "may-apply"
    assert [m.key for m in req.missing] == [f"installed.{K8S}"]


def test_required_product_is_planned_first() -> None:
    st = state({AP: "4.8.1", K8S: "1.29.0"}, {CONN: "4.8.1"})
    plan = planner.plan(requires_kb(), st, [Target(AP, "4.8.2"), Target(K8S, "1.30.0")])
    assert [s.product for s in plan.steps] == [K8S, AP]
    assert plan.verdict == "safe"


def test_a_requirement_is_judged_after_the_hop_not_after_the_releases_it_skips() -> None:
    """4.7.19 moves the exactly pinned connectivity chart to 4.7.19; 4.8.0 moves nothing and
    requires it at 4.7.19 or later. Jumping 4.7.18 -> 4.8.0 skips that move, so the chart
    stays at 4.7.18 and the requirement is unmet: the plan goes through 4.7.19 (it used to
    call the jump safe, judging the requirement as if 4.7.19 had been installed)."""
    rels = (
        Release(AP, "4.7.18", "r0", bom={CONN: "4.7.18"}),
        Release(AP, "4.7.19", "r1", bom={CONN: "4.7.19"}),
        Release(AP, "4.8.0", "r2", requires={CONN: ">=4.7.19"}),
    )
    kb = KnowledgeBase(
        products=KB.products,
        releases={AP: rels, CONN: releases(CONN, ("4.7.18", "4.7.19"))},
        hazards={},
        migrations={},
    )
    plan = planner.plan(kb, state({AP: "4.7.18"}, {CONN: "4.7.18"}), to(AP, "4.8.0"))
    req = "requires:agent-platform@4.8.0"
    assert plan.direct.verdict == "blocked" and status(plan.direct.findings, req) == "applies"
    assert path(plan) == ["4.7.18", "4.7.19", "4.8.0"]
    assert plan.verdict == "safe"
    last = plan.steps[-1]
    assert last.from_version == "4.7.19" and status(last.findings, req) == "does-not-apply"


# --------------------------------------------------------------------------- verdicts, errors


def test_fail_on_warning_blocks_on_an_applying_warning() -> None:
    plan = planner.plan(KB, S1, to(AP, "4.8.1"), fail_on="warning")
    assert plan.direct.verdict == "blocked"
    assert plan.verdict == "safe"  # the path avoids the gap warning


@pytest.mark.parametrize(
    ("statuses", "has_actions", "expected"),
    [
        ([("blocking", "applies")], False, "blocked"),
        ([("blocking", "may-apply")], False, "undetermined"),
        ([("warning", "applies")], False, "safe-with-actions"),
        ([("warning", "may-apply")], False, "safe"),
        ([], True, "safe-with-actions"),
        ([], False, "safe"),
    ],
)
def test_verdict_of(statuses: list[tuple[str, str]], has_actions: bool, expected: str) -> None:
    findings = [
        Finding(f"h{i}", "t", sev, "landing", st, AP, None, "1.0.0")  # type: ignore[arg-type]
        for i, (sev, st) in enumerate(statuses)
    ]
    assert planner.verdict_of(findings, "blocking", has_actions) == expected


def test_unknown_installed_version_and_downgrade_are_bad_input() -> None:
    with pytest.raises(errors.BadInput, match=f"--installed {AP}=VERSION"):
        planner.plan(KB, state(), to(AP, "4.8.0"))
    with pytest.raises(errors.BadInput, match="below the installed"):
        planner.plan(KB, state({AP: "4.8.1"}), to(AP, "4.8.0"))


def test_evaluate_hazard_out_of_scope_says_why() -> None:
    h = KB.hazards["harness-handover-skipped"]
    f = planner.evaluate_hazard(KB, h, S1, "4.7.19", "4.8.0")
    assert f.status == "does-not-apply" and f.reason.startswith("not in scope")
    f2 = planner.evaluate_hazard(KB, h, S1, "4.7.18", "4.8.0")
    assert f2.status == "applies"


def test_component_target_already_reached_by_the_bom_adds_no_step() -> None:
    st = state({AP: "4.7.19"}, {CONN: "4.7.19"}, S1_FACTS)
    plan = planner.plan(KB, st, [Target(AP, "4.8.1"), Target(CONN, "4.8.1")])
    assert [s.product for s in plan.steps] == [AP]
    assert any(m.product == CONN and m.after == "4.8.1" for m in plan.steps[0].moves)


def test_unreachable_target_is_blocked_and_says_so() -> None:
    rels = releases(AP, ("4.8.0", "4.8.1"))
    narrowed = (rels[0], Release(AP, "4.8.1", "x", bom=rels[1].bom, upgrade_from="<4.0.0"))
    plan = planner.plan(make_kb(releases={AP: narrowed}), state({AP: "4.8.0"}), to(AP, "4.8.1"))
    assert plan.verdict == "blocked"
    assert plan.blocked_by == (f"no-upgrade-path:{AP}",)
    assert not plan.steps


def test_reason_names_the_deciding_predicates() -> None:
    facts = {
        "object.Harness.kagent.kagent.exists": True,
        "object.Harness.kagent.kagent.annotations": {"helm.sh/resource-policy": "keep"},
    }
    plan = planner.plan(KB, state({AP: "4.7.18"}, {CONN: "4.7.18"}, facts), to(AP, "4.8.0"))
    reason = finding(plan.direct.findings, "harness-handover-skipped").reason
    assert reason.startswith("does not apply: ") and "keep" in reason
    assert "runs a version below" not in reason  # true, but not why it does not apply


def test_a_pin_the_plan_moved_says_so_and_keeps_where_it_is_written() -> None:
    plan = planner.plan(KB, S1, to(AP, "4.8.0"))
    ev = finding(plan.direct.findings, "connectivity-pin-behind-479-second-owner").evidence[0]
    pin = next(f for f in ev.facts if f.key == f"pin.{CONN}")
    assert pin.value == "4.8.0"
    assert str(pin.source) == "clusters/prod/bom.yaml:12 (moved to 4.8.0 with agent-platform@4.8.0)"
    assert pin.source.unmoved() == in_file("clusters/prod/bom.yaml", 12)
    pin_moves = [m for s in plan.steps for m in s.moves if m.kind == "pin"]
    assert pin_moves and all(m.source == in_file("clusters/prod/bom.yaml", 12) for m in pin_moves)
