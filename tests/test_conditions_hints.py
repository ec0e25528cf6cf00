"""A missing fact's hint names the kubectl command that shows it, filled in from the key."""

from __future__ import annotations

from support.cli import run

from upgradeplan.conditions.hints import kubectl_for, missing_fact_hint


def test_an_object_fact_names_its_kubectl_get() -> None:
    assert kubectl_for("object.Harness.kagent.kagent.exists") == (
        "kubectl get harness kagent -n kagent -o yaml"
    )
    hint = missing_fact_hint("object.Harness.kagent.kagent.exists")
    assert "shown by `kubectl get harness kagent -n kagent -o yaml`" in hint
    assert "--fact object.Harness.kagent.kagent.exists=VALUE" in hint


def test_a_field_remark_stays_outside_the_command() -> None:
    hint = missing_fact_hint("helmrelease.kagent.drift-detection")
    assert "shown by `kubectl get helmrelease -A -o yaml` (spec.driftDetection.mode)" in hint
    assert kubectl_for("crd.harnesses.kagent.dev.stored-versions").startswith(
        "kubectl get crd harnesses.kagent.dev "
    )


def test_check_prints_the_command_for_a_missing_fact() -> None:
    code, out = run("check", "--installed", "agent-platform=4.8.0", "--fact", "kubernetes=1.35.0")
    assert code == 4
    assert "shown by `kubectl get harness kagent -n kagent -o yaml`" in out
