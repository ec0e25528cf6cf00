"""diagnose: pasted log, event and status lines ranked against the hazards' symptoms."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from upgradeplan import api, symptoms
from upgradeplan.cli import cli
from upgradeplan.model import KnowledgeBase


def _ranked(text: str, *args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["diagnose", "-o", "json", *args], input=text)
    assert result.exit_code == 0, result.output
    return [m["hazard"] for m in json.loads(result.output)["matches"]]


def test_token_secret_type_error_ranks_its_hazard_first() -> None:
    line = "ERROR   Invalid secret type: harness.io/token. Expected harness.io/api-key."
    assert _ranked(line)[0] == "delegate-token-secret-type"


def test_metadata_service_unreachable_ranks_the_renamed_flag_first() -> None:
    assert _ranked("metadata service unreachable")[0] == "delegate-metadata-flag-renamed"


@pytest.mark.parametrize(
    ("line", "hazard"),
    [
        (
            "Warning  FailedScheduling  0/3 nodes are available: 3 node(s) had taint "
            "{cloud-provider=gcp:NoSchedule} that the pod didn't tolerate.",
            "delegate-missing-toleration",
        ),
        (
            # the API server's words, as giantswarm/agent-platform's UPGRADE.md quotes them
            'status.storedVersions[0]: Invalid value: "v1alpha2": missing from spec.versions; '
            "v1alpha2 was previously a storage version, and must remain in spec.versions until "
            "a storage migration …",
            "kagent-crds-v1alpha2-stored",
        ),
        (
            "helm-controller  DriftDetected: Harness/kagent/kagent removed",
            "harness-gap-skipping-to-481",
        ),
        (
            "2026-10-02T10:00:01Z ERROR: connection to harness.io refused (mtls policy)",
            "delegate-istio-sidecar",
        ),
        (
            'Failed to provision volume with StorageClass: storageclass.storage.k8s.io "standard" '
            "not found",
            "delegate-storage-class-standard",
        ),
        (
            'error: no matches for kind "CSIStorageCapacity" in version "storage.k8s.io/v1beta1"',
            "delegate-needs-kubernetes-128",
        ),
        (
            'Job.batch "agent-platform-connectivity-agent-manager-migrate-16c89a3a" is invalid: '
            "spec.template: Invalid value: …: field is immutable",
            "connectivity-migrate-job-immutable",
        ),
    ],
)
def test_symptom_lines_rank_their_hazard_first(line: str, hazard: str) -> None:
    assert _ranked(line)[0] == hazard


def test_several_lines_of_one_incident_beat_a_single_generic_match() -> None:
    text = "\n".join(
        [
            "all dependencies are ready, release in-sync with desired state",
            'Error from server (NotFound): harnesses.kagent.dev "kagent" not found',
            'status: {"harnesses": []}',
        ]
    )
    ranked = _ranked(text)
    assert ranked[0] in ("harness-handover-skipped", "harness-missing-on-480")


def test_a_healthy_helm_controller_line_ranks_no_hazard() -> None:
    # helm-controller logs this for every unchanged release; only next to the missing Harness
    # is it part of an incident, and the Harness lines carry that
    assert _ranked("all dependencies are ready, release in-sync with desired state") == []


def test_the_real_messages_of_396_and_441_rank_their_hazards_first() -> None:
    # as giantswarm/agent-platform's UPGRADE.md (#396) and CHANGELOG.md (#278 on #441) quote them
    stored = (
        'status.storedVersions[0]: Invalid value: "v1alpha2": missing from spec.versions; '
        "v1alpha2 was previously a storage version, and must remain in spec.versions until a "
        "storage migration …"
    )
    assert _ranked(stored)[0] == "kagent-crds-v1alpha2-stored"
    helm = (
        "Helm upgrade failed: values don't meet the specifications of the schema(s) in the "
        "following chart(s): agent-platform-connectivity: - (root): "
        "additional properties 'vmManager', 'vm-manager' not allowed"
    )
    assert _ranked(helm)[0] == "connectivity-pin-lags-closed-schema-441"


def test_every_symptom_example_is_recognised_among_the_best_matches(kb: KnowledgeBase) -> None:
    for hazard in kb.hazards.values():
        for symptom in hazard.symptoms:
            if not symptom.example:
                continue
            found = api.diagnose(kb, symptom.example)
            best = found[0].score if found else None
            tied = [d.hazard.id for d in found if d.score == best]
            assert hazard.id in tied, (hazard.id, symptom.example)


def test_text_output_gives_the_recovery_and_reads_a_file(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "log.txt"
    path.write_text("boot\nmetadata service unreachable\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["diagnose", str(path)])
    assert result.exit_code == 0
    assert result.output.startswith("1. delegate-metadata-flag-renamed")
    assert "line 2: metadata service unreachable" in result.output
    assert "Recover:" in result.output


def test_nothing_matching_says_so() -> None:
    result = CliRunner().invoke(cli, ["diagnose"], input="all good here\n")
    assert result.exit_code == 0
    assert "No known symptom" in result.output


def test_specificity_counts_literal_characters() -> None:
    assert symptoms.specificity("abc") == 3
    assert symptoms.specificity(r"a\.b.*c") == 4
    assert symptoms.specificity(r"\d+ nodes") == 6


@pytest.mark.parametrize(
    ("line", "hazard"),
    [
        (
            # the API server before it explained the rule ("must appear in spec.versions")
            'CustomResourceDefinition.apiextensions.k8s.io "harnesses.kagent.dev" is invalid: '
            'status.storedVersions[0]: Invalid value: "v1alpha2": must appear in spec.versions',
            "kagent-crds-v1alpha2-stored",
        ),
        (
            # Helm before 3.18 (gojsonschema): no quotes, one property per line
            "- agent-platform-connectivity: Additional property podAnnotations is not allowed",
            "connectivity-pin-lags-closed-schema",
        ),
        (
            # Helm 3.18 and later: every refused key on one line, the one of the hazard not first
            "- at '/agent-platform-connectivity': additional properties 'replicas', "
            "'podDisruptionBudget' not allowed",
            "connectivity-pin-lags-closed-schema",
        ),
        (
            "- (root): Additional property harness is not allowed",
            "cutover-pr-race",
        ),
        (
            "- klaus-gateway: Additional property controller is not allowed",
            "klaus-gateway-crd-keys-refused",
        ),
        (
            "- at '/connectivity': additional properties 'image', 'vmManager' not allowed",
            "connectivity-pin-lags-closed-schema-441",
        ),
    ],
)
def test_each_wording_the_tools_print_finds_its_hazard(line: str, hazard: str) -> None:
    assert hazard in _ranked(line)[:2]


def test_a_key_that_only_begins_like_a_refused_one_is_not_it() -> None:
    ranked = _ranked("- klaus-gateway: Additional property crdsInstall is not allowed")
    assert "klaus-gateway-crd-keys-refused" not in ranked
