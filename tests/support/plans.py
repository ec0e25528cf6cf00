"""Check results built from a bare Plan, for the renderer tests: what ``check`` would hand the
SARIF and GitHub renderers for that plan, without reading an installation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from upgradeplan.model import Finding, KnowledgeBase, Plan
from upgradeplan.planner.judge import judge
from upgradeplan.provenance import Source
from upgradeplan.render import github, sarif
from upgradeplan.results import EXIT_OF_VERDICT, CheckResult


def check_findings(plan: Plan) -> tuple[Finding, ...]:
    """The findings ``check`` reports: the direct jump's, then the installation's as it is."""
    seen: set[tuple[str, str | None, str | None]] = set()
    out: list[Finding] = []
    for f in (*plan.direct.findings, *plan.state_findings):
        key = (f.hazard, f.from_version, f.to_version)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return tuple(out)


def result_of(
    plan: Plan,
    findings: Sequence[Finding] | None = None,
    *,
    name: str = "",
    fail_on: str = "blocking",
    recommended: Plan | None = None,
    changed: Mapping[str, Source] | None = None,
) -> CheckResult:
    """The check result of ``plan``'s findings (or ``findings``), judged at ``fail_on``."""
    chosen = check_findings(plan) if findings is None else tuple(findings)
    verdict = judge(chosen, fail_on)
    return CheckResult(
        name=name,
        state=None,
        plan=plan,
        findings=chosen,
        verdict=verdict,
        exit_code=int(EXIT_OF_VERDICT[verdict]),
        recommended=recommended,
        changed=dict(changed or {}),
    )


def sarif_text(
    plan: Plan, kb: KnowledgeBase | None = None, *, findings: Sequence[Finding] | None = None
) -> str:
    """The SARIF log of one plan's check findings."""
    result = result_of(plan, findings, name=plan.state_name)
    return sarif.dumps(sarif.log([result], kb, fail_on="blocking"))


def github_text(
    plan: Plan,
    *,
    findings: Sequence[Finding] | None = None,
    name: str = "",
    changed: Mapping[str, Source] | None = None,
) -> str:
    """The workflow commands for one plan's check findings, then the summary."""
    recommended = plan if plan.steps else None
    result = result_of(plan, findings, name=name, recommended=recommended, changed=changed)
    return github.render_check([result])
