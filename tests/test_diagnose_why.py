"""diagnose against each failure issue 33 found: messages over several lines, escaped JSON,
the newest scheduler wording, generic lines alone, a healthy Harness, the chart the paste
names, a state that rules a match out, and what ``-o json`` says of each match."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from upgradeplan.cli import cli


def _diagnose(text: str, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["diagnose", "-o", "json", *args], input=text)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def _confident(text: str, *args: str) -> list[str]:
    """The hazards matched with more than a hint, best first."""
    return [m["hazard"] for m in _diagnose(text, *args)["matches"] if m["confidence"] != "low"]


# helm-controller: "Cluster state of release %s has drifted from the desired state:\n%s", as
# `kubectl get events` prints it (the message's second line at column 0)
DRIFT_EVENT = (
    "LAST SEEN   TYPE      REASON          OBJECT               MESSAGE\n"
    "2m          Warning   DriftDetected   helmrelease/kagent   Cluster state of release "
    "flux-giantswarm/kagent.v3 has drifted from the desired state:\n"
    "Harness/kagent/kagent removed\n"
)


def test_a_drift_event_over_two_lines_is_one_message() -> None:
    doc = _diagnose(DRIFT_EVENT)
    first = doc["matches"][0]
    assert first["hazard"] == "harness-gap-skipping-to-481"
    assert first["confidence"] == "high"
    assert first["lines"] == [2, 3]  # numbers in the paste as given
    assert first["matched"][0]["read_as"] == "events"


def test_a_status_message_folded_by_kubectl_get_o_yaml_is_read_whole() -> None:
    folded = (
        "status:\n"
        "  conditions:\n"
        "  - message: 'Helm upgrade failed for release flux-giantswarm/kagent-crds with chart\n"
        '      kagent-crds@0.11.0-gs.9: CustomResourceDefinition.apiextensions.k8s.io "modelconfigs.kagent.dev"\n'  # noqa: E501
        '      is invalid: status.storedVersions[0]: Invalid value: "v1alpha2": must appear\n'
        "      in spec.versions'\n"
        "    reason: UpgradeFailed\n"
    )
    first = _diagnose(folded)["matches"][0]
    assert first["hazard"] == "kagent-crds-v1alpha2-stored"
    assert first["confidence"] == "high"
    assert first["lines"] == [3, 4, 5, 6]


def test_a_selector_printed_as_a_block_map_is_read_as_one() -> None:
    block = (
        "spec:\n"
        "  allowedAgentTemplates:\n"
        "    selector:\n"
        "      matchLabels:\n"
        "        agent-platform.giantswarm.io/harness: kagent\n"
        "        kagent.dev/harness: kagent\n"
    )
    assert _confident(block)[0] == "harness-selector-lost-in-merge-patch"


def test_an_escaped_json_log_line_is_unescaped_before_matching() -> None:
    line = (
        '{"level":"error","ts":"2026-11-30T09:12:40.118Z","msg":"Reconciler error",'
        '"controller":"helmrelease","controllerKind":"HelmRelease",'
        '"HelmRelease":{"name":"kagent-crds","namespace":"flux-giantswarm"},'
        '"error":"CustomResourceDefinition.apiextensions.k8s.io \\"modelconfigs.kagent.dev\\" '
        'is invalid: status.storedVersions[0]: Invalid value: \\"v1alpha2\\": must appear in '
        'spec.versions"}\n'
    )
    assert '\\"v1alpha2\\"' in line
    assert _confident(line)[0] == "kagent-crds-v1alpha2-stored"


NEWEST_TAINT = (
    "0/3 nodes are available: 3 node(s) had untolerated taint(s). preemption: 0/3 nodes are "
    "available: 3 Preemption is not helpful for scheduling."
)


def test_the_newest_scheduler_wording_finds_the_toleration_hazard_for_the_delegate() -> None:
    # kube-scheduler 1.34 on (kubernetes/kubernetes#134740) names no taint
    describe = (
        "Name:             harness-delegate-6b8f9d7c5-qwz4t\n"
        "Events:\n"
        "  Type     Reason            Age   From               Message\n"
        "  ----     ------            ----  ----               -------\n"
        f"  Warning  FailedScheduling  30s   default-scheduler  {NEWEST_TAINT}\n"
    )
    assert _confident(describe) == ["delegate-missing-toleration"]
    # any other pod's: a hint at most
    other = describe.replace("harness-delegate-6b8f9d7c5-qwz4t", "coredns-559f6c778d-c4qvr")
    assert _confident(other) == []


@pytest.mark.parametrize(
    "line",
    [
        # Go's net package, from any client
        'Get "https://10.96.0.1:443/api/v1/pods": dial tcp 10.96.0.1:443: i/o timeout',
        # any container's kill
        "prometheus-server-0   1/2   OOMKilled   4 (30s ago)   1h",
        # any chart's schema refusal (Helm's words)
        "Error: UPGRADE FAILED: values don't meet the specifications of the schema(s) in the "
        "following chart(s):",
        # helm-controller's Stalled reason, any release
        "Stalled  True  RetriesExceeded  Failed to upgrade after 3 attempt(s)",
        # any v1beta1 storage object
        "apiVersion: storage.k8s.io/v1beta1",
        'no matches for kind "CSIStorageCapacity" in version "storage.k8s.io/v1beta1"',
        # the healthy connectivity annotation
        "meta.helm.sh/release-name: agent-platform-connectivity",
    ],
)
def test_a_generic_line_alone_is_a_hint_never_a_match(line: str) -> None:
    doc = _diagnose(line + "\n")
    assert all(m["confidence"] == "low" for m in doc["matches"]), doc["matches"]


def test_a_healthy_4718_harness_is_not_flagged() -> None:
    harness = (
        "apiVersion: kagent.dev/v1alpha2\n"
        "kind: Harness\n"
        "metadata:\n"
        "  annotations:\n"
        "    meta.helm.sh/release-name: agent-platform-connectivity\n"
        "    meta.helm.sh/release-namespace: kagent\n"
        "  labels:\n"
        "    helm.sh/chart: agent-platform-connectivity-4.7.18\n"
        "  name: kagent\n"
        "  namespace: kagent\n"
    )
    assert _confident(harness) == []
    # the text output says what a hint is
    result = CliRunner().invoke(cli, ["diagnose"], input=harness)
    assert "low confidence, a hint only" in result.stdout


def _refusal(chart: str, keys: str) -> str:
    # helm-controller's upgrade failure around Helm's schema refusal (jsonschema v6 words)
    return (
        f"Helm upgrade failed for release flux-giantswarm/{chart} with chart {chart}@1.0.0: "
        "values don't meet the specifications of the schema(s) in the following chart(s):\n"
        f"{chart}:\n- at '': additional properties {keys} not allowed\n"
    )


def test_the_chart_named_in_the_paste_decides_the_order() -> None:
    # the same refused keys: klaus-gateway's refusal is the klaus-gateway floor, the
    # connectivity chart's is its pin
    assert _confident(_refusal("klaus-gateway", "'podAnnotations'")) == [
        "bom-klaus-gateway-below-floor"
    ]
    assert _confident(_refusal("agent-platform-connectivity", "'podAnnotations'")) == [
        "connectivity-pin-lags-closed-schema"
    ]
    # klaus-gateway refusing its crd keys ranks its own hazard first, no agent-platform pin
    assert _confident(_refusal("klaus-gateway", "'crd'")) == ["klaus-gateway-crd-keys-refused"]
    # another chart's refusal of the same keys is none of these
    assert _confident(_refusal("podinfo", "'podAnnotations'")) == []


def test_a_state_that_rules_a_match_out_drops_it_and_v_lists_it() -> None:
    missing = 'Error from server (NotFound): harnesses.kagent.dev "kagent" not found\n'
    assert "harness-missing-on-480" in _confident(missing)
    ruled = _diagnose(missing, "--installed", "agent-platform=4.8.1")
    assert "harness-missing-on-480" not in [m["hazard"] for m in ruled["matches"]]
    result = CliRunner().invoke(
        cli, ["-v", "diagnose", "--installed", "agent-platform=4.8.1"], input=missing
    )
    assert "ruled out by the state: harness-missing-on-480" in result.stdout


def test_json_gives_each_match_its_confidence_lines_and_confirming_facts() -> None:
    first = _diagnose(DRIFT_EVENT)["matches"][0]
    assert {"hazard", "confidence", "lines", "confirm"} <= set(first)
    facts = {c["fact"]: c["how"] for c in first["confirm"]}
    assert "installed.agent-platform" in facts
    assert "object.Harness.kagent.kagent.annotations" in facts
    assert all(how for how in facts.values())
