"""diagnose beyond the match: the scheduler's real wordings, no generic 401, ranking by a
state, placeholders from the pasted text, the cloud's own commands, the terminal hint."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from upgradeplan.cli import cli

MISSING_HARNESS = 'Error from server (NotFound): harnesses.kagent.dev "kagent" not found\n'
HELM_CONTROLLER_LINE = (
    '{"level":"error","ts":"2026-11-30T10:00:00Z","msg":"Reconciler error",'
    '"controller":"helmrelease","controllerGroup":"helm.toolkit.fluxcd.io",'
    '"controllerKind":"HelmRelease","HelmRelease":{"name":"kagent","namespace":"flux-giantswarm"},'
    '"namespace":"flux-giantswarm","name":"kagent","error":"x"}\n'
)


def _diagnose(text: str, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["diagnose", "-o", "json", *args], input=text)
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def _ranked(text: str, *args: str) -> list[str]:
    return [m["hazard"] for m in _diagnose(text, *args)["matches"]]


@pytest.mark.parametrize(
    "line",
    [
        # kube-scheduler 1.25 on (taint_toleration.go: "node(s) had untolerated taint {%s: %s}")
        "Warning  FailedScheduling  default-scheduler  0/3 nodes are available: 3 node(s) had "
        "untolerated taint {cloud-provider: aws}. preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling.",
        # before 1.25 ("node(s) had taint {%s: %s}, that the pod didn't tolerate")
        "0/3 nodes are available: 3 node(s) had taint {cloud-provider: azure}, that the pod "
        "didn't tolerate.",
        # the field guide's wording
        "0/5 nodes are available: 5 node(s) had taint {cloud-provider=aws:NoSchedule} that the "
        "pod didn’t tolerate.",
    ],
)
def test_every_scheduler_wording_of_the_taint_finds_the_toleration_hazard(line: str) -> None:
    assert _ranked(line) == ["delegate-missing-toleration"]


def test_another_taint_is_not_the_delegates() -> None:
    line = "0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}."
    assert _ranked(line) == []


def test_a_healthy_helmrelease_line_of_another_release_gives_no_hazard() -> None:
    text = (
        "flux-giantswarm   muster   3h   True   Helm upgrade succeeded for release "
        "agent-platform/muster.v4 with chart muster@0.3.1\n"
        '{"level":"info","msg":"release in-sync with desired state","controller":"helmrelease",'
        '"HelmRelease":{"name":"muster","namespace":"flux-giantswarm"}}\n'
    )
    assert _ranked(text) == []


def test_a_401_from_anything_but_the_delegates_registry_is_not_the_iam_hazard() -> None:
    assert _ranked("GET https://api.github.com/repos/x/y: 401 Unauthorized") == []
    assert _ranked("ImagePullBackOff: pod/web-7d9f8c6b5-x2x8q") == []
    assert _ranked("GET https://registry.harness.io/v2/: 401 Unauthorized") == [
        "delegate-registry-iam"
    ]


def test_the_state_ranks_the_hazard_it_fits_first() -> None:
    ranked = _ranked(MISSING_HARNESS, "--installed", "agent-platform=4.8.0")
    assert ranked[0] == "harness-missing-on-480"
    doc = _diagnose(MISSING_HARNESS, "--installed", "agent-platform=4.8.0")
    assert doc["matches"][0]["state"] == "fits the state"
    # on 4.8.1 the 4.8.0 hazards are ruled out: dropped, and listed under -v
    later = _diagnose(MISSING_HARNESS, "--installed", "agent-platform=4.8.1")
    assert "harness-missing-on-480" not in [m["hazard"] for m in later["matches"]]
    assert all(m["state"] != "the state rules it out" for m in later["matches"])
    told = _diagnose(MISSING_HARNESS, "-v", "--installed", "agent-platform=4.8.1")
    assert "harness-missing-on-480" in told["ruled_out"]


def test_the_gitops_namespace_comes_from_the_pasted_log() -> None:
    doc = _diagnose(MISSING_HARNESS + HELM_CONTROLLER_LINE)
    assert "<gitops-namespace> = flux-giantswarm (from line 2)" in doc["notes"]
    first = next(m for m in doc["matches"] if m["hazard"] == "harness-missing-on-480")
    commands = first["recover_commands"]
    assert any("kubectl -n flux-giantswarm annotate helmrelease kagent" in c for c in commands)
    assert "flux reconcile helmrelease kagent -n flux-giantswarm --force" in commands
    assert not any("<gitops-namespace>" in c for c in commands)


def test_without_a_namespace_the_placeholder_stays() -> None:
    doc = _diagnose(MISSING_HARNESS)
    first = next(m for m in doc["matches"] if m["hazard"] == "harness-missing-on-480")
    assert any("<gitops-namespace>" in c for c in first["recover_commands"])


REGISTRY_401 = "GET https://registry.harness.io/v2/: 401 Unauthorized\n"


@pytest.mark.parametrize(
    ("clue", "tool", "other"),
    [
        ("Node ip-10-0-1-2  labels: eks.amazonaws.com/nodegroup=workers\n", "aws ", "az "),
        ("providerID: azure:///subscriptions/s/resourceGroups/r/providers/x\n", "az ", "aws "),
    ],
)
def test_the_fix_is_the_clouds_the_text_shows(clue: str, tool: str, other: str) -> None:
    doc = _diagnose(clue + REGISTRY_401)
    commands = doc["matches"][0]["recover_commands"]
    assert any(c.startswith(tool) for c in commands)
    assert not any(c.startswith(other) for c in commands)


def test_every_clouds_fix_when_the_cloud_is_unknown() -> None:
    commands = _diagnose(REGISTRY_401)["matches"][0]["recover_commands"]
    assert any(c.startswith("aws ") for c in commands)
    assert any(c.startswith("az ") for c in commands)


def test_the_fix_follows_the_states_provider() -> None:
    doc = _diagnose(REGISTRY_401, "--fact", "nodes.provider=aks")
    commands = doc["matches"][0]["recover_commands"]
    assert all(not c.startswith("aws ") for c in commands)
    assert any("provider aks" in n for n in doc["notes"])


def test_a_terminal_on_stdin_gets_a_hint() -> None:
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "upgradeplan", "diagnose"],
        stdin=child,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(child)
    try:
        os.write(main, b"metadata service unreachable\n\x04")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert b"paste it, then press Ctrl-D" in err
    assert b"delegate-metadata-flag-renamed" in out


@pytest.mark.parametrize(
    "line",
    [
        # `flux logs`: time, level, Kind/name.namespace - message
        "2026-11-30T08:00:00.000Z error HelmRelease/kagent.flux-giantswarm - upgrade failed",
        # a Flux alert's object (notification-controller: kind/name.namespace)
        "helmrelease/kagent.flux-giantswarm: Helm upgrade failed",
        # `kubectl get events -A`
        "flux-giantswarm   4m10s   Warning   UpgradeFailed   helmrelease/kagent   Helm upgrade "
        "failed for release kagent/kagent with chart kagent@0.11.0-gs.9: timeout",
        # a pasted command with the namespace first
        "$ kubectl -n flux-giantswarm get hr kagent",
    ],
)
def test_the_gitops_namespace_from_each_shape_flux_and_kubectl_print(line: str) -> None:
    from upgradeplan import triage

    found = triage.placeholders(line)["<gitops-namespace>"]
    assert (found.value, found.where) == ("flux-giantswarm", "line 1")


def test_a_manifest_path_or_a_release_namespace_is_no_gitops_namespace() -> None:
    from upgradeplan import triage

    for line in (
        "kubectl apply -f helmrelease/kagent.yaml",
        "Helm upgrade failed for release kagent/kagent with chart kagent@0.11.0-gs.9",
    ):
        assert triage.placeholders(line) == {}, line
