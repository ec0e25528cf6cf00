"""The eight reference scenarios, end to end through the CLI against the bundled knowledge.

Each asserts the verdict, the recommended path (exact versions in order), the hazards with
their status on the direct jump, and the exit code (see tests/support/scenarios.py and
docs/exit-codes.md).
"""

from __future__ import annotations

from typing import Any

from support.cli import check, plan, run
from support.scenarios import (
    S1_STATED,
    S3_STATED,
    S4_STATED,
    S6_STATED,
    S7_STATED,
    S8_STATED,
    statuses_of,
)


def actions(p: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for step in p["steps"] for a in step["actions"]]


# --------------------------------------------------------------------------- S1


def test_s1_direct_jump_to_480_is_blocked_and_the_path_stops_at_4719() -> None:
    code, res = check(*S1_STATED, "--to", "agent-platform=4.8.0")
    assert (code, res["verdict"]) == (3, "blocked")
    found = statuses_of(res["findings"])
    assert found["harness-handover-skipped"] == "applies"
    assert found["no-drift-detection-on-480"] == "applies"
    assert found["harness-missing-on-480"] == "does-not-apply"
    assert found["harness-gap-skipping-to-481"] == "does-not-apply"
    rec = res["recommended"]
    assert rec["path"]["agent-platform"] == ["4.7.18", "4.7.19", "4.8.0"]
    assert rec["pins"]["agent-platform-connectivity"] == ["4.7.18", "4.7.19", "4.8.0"]


def test_s1_plan_is_safe_with_actions_and_names_481_as_the_better_target() -> None:
    code, p = plan(*S1_STATED, "--to", "agent-platform=4.8.0")
    assert (code, p["verdict"]) == (0, "safe-with-actions")
    assert p["path"]["agent-platform"] == ["4.7.18", "4.7.19", "4.8.0"]
    assert p["pins"]["agent-platform-connectivity"] == ["4.7.18", "4.7.19", "4.8.0"]
    last = p["steps"][-1]
    warning = [f for f in last["findings"] if f["hazard"] == "no-drift-detection-on-480"]
    assert warning and warning[0]["status"] == "applies"
    assert "4.8.1" in warning[0]["avoid"] + warning[0]["reason"] + warning[0]["title"]


def test_s1_text_output_shows_evidence_and_the_path() -> None:
    code, out = run("-v", "check", *S1_STATED, "--to", "agent-platform=4.8.0")
    assert code == 3
    assert "harness-handover-skipped" in out
    assert (
        "observed installed.agent-platform-connectivity = 4.7.18 "
        "(from derived: exact pin (flag --pin))" in out
    )
    assert "observed helmrelease.kagent.drift-detection = disabled (from flag --fact)" in out
    assert "agent-platform 4.7.18 → 4.7.19 → 4.8.0" in out


# --------------------------------------------------------------------------- S2


def test_s2_direct_jump_to_481_warns_of_the_gap() -> None:
    code, res = check(*S1_STATED, "--to", "agent-platform=4.8.1")
    assert (code, res["verdict"]) == (0, "safe-with-actions")
    found = statuses_of(res["findings"])
    assert found["harness-gap-skipping-to-481"] == "applies"
    assert found["harness-handover-skipped"] == "does-not-apply"
    assert res["recommended"]["path"]["agent-platform"] == ["4.7.18", "4.7.19", "4.8.1"]


def test_s2_plan_goes_through_4719_and_is_safe() -> None:
    code, p = plan(*S1_STATED, "--to", "agent-platform=4.8.1")
    assert (code, p["verdict"]) == (0, "safe")
    assert p["path"]["agent-platform"] == ["4.7.18", "4.7.19", "4.8.1"]


# --------------------------------------------------------------------------- S3


def test_s3_settled_direct_jump_is_safe() -> None:
    code, res = check(*S3_STATED, "--to", "agent-platform=4.8.0")
    assert (code, res["verdict"]) == (0, "safe")
    found = statuses_of(res["findings"])
    assert found["harness-handover-skipped"] == "does-not-apply"
    assert found["no-drift-detection-on-480"] == "may-apply"
    _, p = plan(*S3_STATED, "--to", "agent-platform=4.8.0")
    assert p["path"]["agent-platform"] == ["4.7.18", "4.8.0"]


def test_s3_harness_carrying_keep_settles_the_handover() -> None:
    code, res = check(
        "--installed",
        "agent-platform=4.7.18",
        "--pin",
        "agent-platform-connectivity=4.7.18",
        "--fact",
        "object.Harness.kagent.kagent.exists=true",
        "--fact",
        "object.Harness.kagent.kagent.annotations=helm.sh/resource-policy=keep",
        "--fact",
        "kubernetes=1.35.0",
        "--to",
        "agent-platform=4.8.0",
    )
    assert statuses_of(res["findings"])["harness-handover-skipped"] == "does-not-apply"
    assert (code, res["verdict"]) == (0, "safe")


def test_s3_unsettled_is_undetermined_and_names_the_missing_facts() -> None:
    args = ["--installed", "agent-platform=4.7.18", "--to", "agent-platform=4.8.0"]
    code, res = check(*args)
    assert (code, res["verdict"]) == (4, "undetermined")
    assert statuses_of(res["findings"])["harness-handover-skipped"] == "may-apply"
    assert res["recommended"]["path"]["agent-platform"] == ["4.7.18", "4.7.19", "4.8.0"]
    code, out = run("-v", "check", *args)
    assert code == 4
    for key in (
        "installed.agent-platform-connectivity",
        "helmrelease.kagent.drift-detection",
        "object.Harness.kagent.kagent.annotations",
    ):
        assert key in out
    assert "--fact" in out
    assert "--kubeconfig" in out and "--snapshot" in out and "--gitops" in out


# --------------------------------------------------------------------------- S4


def test_s4_installation_as_it_is_is_blocked_by_the_missing_harness() -> None:
    code, res = check(*S4_STATED)
    assert (code, res["verdict"]) == (3, "blocked")
    found = statuses_of(res["findings"])
    assert found["harness-missing-on-480"] == "applies"
    assert found["no-drift-detection-on-480"] == "applies"


def test_s4_plan_to_481_reconciles_in_the_real_namespace_and_adds_drift_detection() -> None:
    code, p = plan(*S4_STATED, "--to", "agent-platform=4.8.1")
    assert (code, p["verdict"]) == (0, "safe-with-actions")
    assert p["path"]["agent-platform"] == ["4.8.0", "4.8.1"]
    acts = actions(p)
    ids = {a["migration"] for a in acts}
    assert {"forced-reconcile-kagent", "kagent-drift-detection"} <= ids
    reconcile = next(a for a in acts if a["migration"] == "forced-reconcile-kagent")
    assert "-n flux-giantswarm" in reconcile["content"]
    patch = next(a for a in acts if a["migration"] == "kagent-drift-detection")
    assert "driftDetection" in patch["content"] and "enabled" in patch["content"]


# --------------------------------------------------------------------------- S5


def test_s5_held_connectivity_pin_leaves_no_safe_path_to_481() -> None:
    args = [*S1_STATED, "--hold", "agent-platform-connectivity", "--to", "agent-platform=4.8.1"]
    code, res = check(*args)
    assert (code, res["verdict"]) == (3, "blocked")
    assert statuses_of(res["findings"])["connectivity-pin-behind-479-second-owner"] == "applies"
    code, p = plan(*args)
    assert (code, p["verdict"]) == (3, "blocked")
    assert "connectivity-pin-behind-479-second-owner" in p["blocked_by"]


def test_s5_state_form_is_blocked() -> None:
    code, res = check(
        "--installed", "agent-platform=4.8.1", "--pin", "agent-platform-connectivity=4.7.18"
    )
    assert (code, res["verdict"]) == (3, "blocked")
    assert statuses_of(res["findings"])["connectivity-pin-behind-479-second-owner"] == "applies"


# --------------------------------------------------------------------------- S6


def test_s6_delegate_jump_to_0312_is_blocked_until_the_flag_is_rewritten() -> None:
    code, res = check(*S6_STATED, "--to", "harness-delegate=0.31.2")
    assert (code, res["verdict"]) == (3, "blocked")
    found = statuses_of(res["findings"])
    assert found["delegate-metadata-flag-renamed"] == "applies"
    assert found["delegate-version-value-not-bumped"] == "applies"
    assert found["delegate-needs-kubernetes-128"] == "does-not-apply"
    assert found["delegate-token-secret-type"] == "does-not-apply"
    assert res["recommended"]["path"]["harness-delegate"] == ["0.29.0", "0.31.2"]
    assert res["recommended"]["verdict"] == "safe-with-actions"


def test_s6_plan_rewrites_the_argument_and_bumps_delegate_version() -> None:
    code, p = plan(*S6_STATED, "--to", "harness-delegate=0.31.2")
    assert (code, p["verdict"]) == (0, "safe-with-actions")
    assert p["path"]["harness-delegate"] == ["0.29.0", "0.31.2"]
    acts = {a["migration"]: a for a in actions(p)}
    assert (
        "--metadata-endpoint=https://169.254.169.254"
        in acts["delegate-metadata-endpoint-arg"]["content"]
    )
    assert "0.31.2" in acts["delegate-version-value"]["content"]


# --------------------------------------------------------------------------- S7


def test_s7_token_secret_type_blocks_the_installation_as_it_is() -> None:
    code, res = check(*S7_STATED)
    assert (code, res["verdict"]) == (3, "blocked")
    assert statuses_of(res["findings"])["delegate-token-secret-type"] == "applies"


def test_s7_plan_gives_the_opaque_secret_and_the_env_change() -> None:
    code, p = plan(*S7_STATED, "--to", "harness-delegate=0.31.2")
    acts = {a["migration"]: a for a in actions(p)}
    secret = acts["delegate-api-key-secret"]["content"]
    assert "Opaque" in secret and "harness-api-key" in secret and "apiKey" in secret
    env = acts["delegate-api-key-env"]["content"]
    assert "valueFrom" in env or "secretKeyRef" in env
    assert code == 0 and p["verdict"] == "safe-with-actions"


# --------------------------------------------------------------------------- S8


def test_s8_kubernetes_below_128_leaves_no_safe_path() -> None:
    code, res = check(*S8_STATED, "--to", "harness-delegate=0.31.2")
    assert (code, res["verdict"]) == (3, "blocked")
    assert statuses_of(res["findings"])["delegate-needs-kubernetes-128"] == "applies"
    assert res["recommended"]["verdict"] == "blocked"
    code, p = plan(*S8_STATED, "--to", "harness-delegate=0.31.2")
    assert (code, p["verdict"]) == (3, "blocked")
    assert "delegate-needs-kubernetes-128" in p["blocked_by"]
