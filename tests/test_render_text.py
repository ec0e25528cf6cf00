"""Human text: findings with evidence, paths with arrows, steps; colour rules."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from upgradeplan.api import CheckResult, PlanResult
from upgradeplan.model import (
    Action,
    Evidence,
    Fact,
    Finding,
    Jump,
    MissingFact,
    Move,
    Plan,
    Step,
    Target,
    Truth,
)
from upgradeplan.provenance import in_file
from upgradeplan.render import text

PIN = Fact("pin.connectivity", "4.7.18", in_file("clusters/prod/bom.yaml", 9))
FINDING = Finding(
    hazard="handover-skipped",
    title="Skipping 4.7.19 deletes the Harness",
    severity="blocking",
    scope="skip",
    status="applies",
    product="platform",
    from_version="4.7.18",
    to_version="4.8.0",
    evidence=(Evidence("pin_exact", "the pin is exact", Truth.TRUE, facts=(PIN,)),),
    consequence="The Harness is deleted.\nNothing recreates it.",
    avoid="Stop at 4.7.19. Then go on.",
    reason="applies: the hop skips 4.7.19",
)
MAYBE = Finding(
    hazard="gap",
    title="A gap",
    severity="warning",
    scope="skip",
    status="may-apply",
    product="platform",
    from_version="4.7.18",
    to_version="4.8.0",
    missing=(MissingFact("object.Harness.kagent.kagent.exists", "--fact object...=VALUE"),),
)
OUT_OF_SCOPE = Finding(
    hazard="other",
    title="Other",
    severity="blocking",
    scope="landing",
    status="does-not-apply",
    product="platform",
    from_version="4.7.18",
    to_version="4.8.0",
    reason="not in scope: 4.8.0 is not in 4.9.0",
)
STEPS = (
    Step(
        "platform",
        "4.7.18",
        "4.7.19",
        moves=(
            Move("installed", "platform", "4.7.18", "4.7.19"),
            Move("pin", "connectivity", "4.7.18", "4.7.19", in_file("clusters/prod/bom.yaml", 9)),
        ),
        verdict="safe",
        verify=("kubectl get harness -A",),
    ),
    Step(
        "platform",
        "4.7.19",
        "4.8.0",
        moves=(
            Move("pin", "connectivity", "4.7.19", "4.8.0", in_file("clusters/prod/bom.yaml", 9)),
        ),
        actions=(
            Action("drift", "Turn on drift detection", "helmrelease-patch", "before", "spec: {}\n"),
        ),
        verdict="safe-with-actions",
    ),
)
PLAN = Plan(
    schema_version=1,
    targets=(Target("platform", "4.8.0"),),
    current={"platform": "4.7.18"},
    direct=Jump(findings=(FINDING, MAYBE, OUT_OF_SCOPE), verdict="blocked"),
    steps=STEPS,
    verdict="safe-with-actions",
    state_name="prod",
)
CHECK = CheckResult(
    name="prod",
    state=None,
    plan=PLAN,
    findings=PLAN.direct.findings,
    verdict="blocked",
    exit_code=3,
    recommended=PLAN,
)


def test_check_shows_verdict_findings_evidence_and_path() -> None:
    out = text.render_check([CHECK])
    lines = out.splitlines()
    assert lines[0] == "check platform 4.7.18 → 4.8.0 [prod]: blocked"
    assert "handover-skipped" in out and "Skipping 4.7.19 deletes the Harness" in out
    assert "why: applies: the hop skips 4.7.19" in out
    assert "observed pin.connectivity = 4.7.18 (from clusters/prod/bom.yaml:9)" in out
    assert "if ignored: The Harness is deleted." in out
    assert "avoid: Stop at 4.7.19." in out
    assert "missing object.Harness.kagent.kagent.exists: supply it with --fact" in out
    assert "  platform 4.7.18 → 4.7.19 → 4.8.0" in lines
    assert "  pin connectivity 4.7.18 → 4.7.19 → 4.8.0" in lines
    assert "not in scope of this move: other" in out
    assert out.index("handover-skipped") < out.index("gap")  # applies before may-apply


def test_plan_shows_each_step_with_moves_actions_and_verify() -> None:
    out = text.render_plan([PlanResult("prod", None, PLAN)])
    assert "Step 1: platform 4.7.18 → 4.7.19 (safe)" in out
    assert "move pin connectivity: 4.7.18 → 4.7.19 (clusters/prod/bom.yaml:9)" in out
    assert "before the upgrade: Turn on drift detection [drift, helmrelease-patch]" in out
    assert "$ kubectl get harness -A" in out


def test_output_is_deterministic_and_uncoloured_by_default() -> None:
    assert text.render_check([CHECK]) == text.render_check([CHECK])
    assert "\x1b[" not in text.render_check([CHECK])
    assert "\x1b[" in text.render_check([CHECK], color=True)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("mode", "no_color", "tty", "expected"),
    [
        ("always", "1", False, True),
        ("never", "", True, False),
        ("auto", "", True, True),
        ("auto", "1", True, False),
        ("auto", "", False, False),
    ],
)
def test_use_color(
    monkeypatch: pytest.MonkeyPatch, mode: str, no_color: str, tty: bool, expected: bool
) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", no_color)
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    stream = _Tty() if tty else io.StringIO()
    assert text.use_color(mode, stream) is expected


def test_unreadable_context_is_named() -> None:
    res = CheckResult("down", None, None, verdict="undetermined", exit_code=4, error="refused")
    assert text.render_check([res]).startswith(
        "check [down]: undetermined: could not read: refused"
    )


def test_a_tree_with_no_product_of_the_knowledge_is_not_called_safe(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from upgradeplan.cli import cli

    (tmp_path / "podinfo.yaml").write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: podinfo, namespace: default}\n"
        "spec:\n  chart:\n    spec: {chart: podinfo, version: 6.7.0,"
        " sourceRef: {kind: HelmRepository, name: podinfo}}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["check", "--gitops", str(tmp_path)])
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    assert header.endswith(": nothing to judge") and "safe" not in result.stdout
    assert "none of a product in the knowledge base" in result.stdout
