"""The eight reference scenarios as data (docs/concepts.md tells their stories).

Each :class:`Case` is one command on one installation: the stated-facts form (``stated``), the
cluster fixture that holds the same installation (``cluster``, a directory under
``tests/fixtures/cluster``) with the facts no cluster read can give (``cluster_extra``, e.g.
the Harness CD platform version), and what every form must answer. Shared by the stated,
snapshot and live-cluster tests so the forms cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLUSTER_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cluster"

# The agent-platform scenarios run on Kubernetes 1.35 (their cluster fixtures say so): an
# unknown Kubernetes version leaves every release's "requires kubernetes" may-apply.
K8S_135 = ("--fact", "kubernetes=1.35.0")
KAGENT_UNPROTECTED = (
    "--fact",
    "helmrelease.kagent.drift-detection=disabled",
    "--fact",
    "object.Harness.kagent.kagent.exists=true",
    "--fact",
    "object.Harness.kagent.kagent.annotations=",
)
S1_STATED = (
    "--installed",
    "agent-platform=4.7.18",
    "--pin",
    "agent-platform-connectivity=4.7.18",
    *KAGENT_UNPROTECTED,
    *K8S_135,
)
# S3's versions: connectivity already moved to 4.7.19 under a range pin
S3_VERSIONS = (
    "--installed",
    "agent-platform=4.7.18",
    "--installed",
    "agent-platform-connectivity=4.7.19",
    "--pin",
    "agent-platform-connectivity=>=4.7.0 <5.0.0",
    *K8S_135,
)
S3_STATED = (*S3_VERSIONS, "--fact", "object.Harness.kagent.kagent.exists=true")
S4_STATED = (
    "--installed",
    "agent-platform=4.8.0",
    "--pin",
    "agent-platform-connectivity=4.8.0",
    "--fact",
    "helmrelease.kagent.drift-detection=disabled",
    "--fact",
    "helmrelease.kagent.namespace=flux-giantswarm",
    "--fact",
    "object.Harness.kagent.kagent.exists=false",
    *K8S_135,
)
S5_STATE_STATED = (
    "--installed",
    "agent-platform=4.8.1",
    "--pin",
    "agent-platform-connectivity=4.7.18",
    *K8S_135,
)
S6_STATED = (
    "--installed",
    "harness-delegate=0.29.0",
    "--fact",
    "workload.harness-delegate.namespace=harness-delegate-ng",
    "--fact",
    "workload.harness-delegate.name=harness-delegate",
    "--fact",
    "workload.harness-delegate.args=--instance-metadata-url=https://169.254.169.254",
    "--fact",
    "values.harness-delegate.delegateVersion=0.29.0",
    "--fact",
    "kubernetes=1.31.0",
    "--installed",
    "harness-cd=24.12.0",
    "--fact",
    "workload.harness-delegate.env-secrets=harness-api-key",
    "--fact",
    "secret.harness-delegate-ng.harness-api-key.type=Opaque",
)
S7_STATED = (
    "--installed",
    "harness-delegate=0.31.2",
    "--installed",
    "harness-cd=24.12.0",
    "--fact",
    "workload.harness-delegate.namespace=harness-delegate-ng",
    "--fact",
    "workload.harness-delegate.name=harness-delegate",
    "--fact",
    "workload.harness-delegate.env-secrets=harness-delegate-token",
    "--fact",
    "secret.harness-delegate-ng.harness-delegate-token.type=harness.io/token",
)
S8_STATED = ("--installed", "harness-delegate=0.29.0", "--fact", "kubernetes=1.27.3")

# The Harness CD platform is a SaaS: its version is stated, never read from a cluster.
HARNESS_CD = ("--installed", "harness-cd=24.12.0")


@dataclass(frozen=True)
class Case:
    id: str
    command: str  # check | plan
    stated: tuple[str, ...]
    cluster: str | None  # fixture directory name, None when no cluster form exists
    exit_code: int
    verdict: str
    to: tuple[str, ...] = ()
    holds: tuple[str, ...] = ()
    cluster_extra: tuple[str, ...] = ()
    statuses: dict[str, str] = field(default_factory=dict)  # hazard id -> status
    path: dict[str, list[str]] | None = None  # product -> versions (recommended path)
    blocked_by: tuple[str, ...] = ()
    action_text: tuple[str, ...] = ()  # substrings some action's content must hold
    # Where a cluster knows more than the stated form, what it answers instead (and why).
    cluster_verdict: str | None = None
    cluster_statuses: dict[str, str] = field(default_factory=dict)
    cluster_note: str = ""

    @property
    def args(self) -> list[str]:
        """Target and hold flags (common to every form)."""
        out: list[str] = []
        for t in self.to:
            out += ["--to", t]
        for h in self.holds:
            out += ["--hold", h]
        return out


CASES: tuple[Case, ...] = (
    Case(
        "S1-check",
        "check",
        S1_STATED,
        "s1",
        3,
        "blocked",
        to=("agent-platform=4.8.0",),
        statuses={
            "harness-handover-skipped": "applies",
            "no-drift-detection-on-480": "applies",
            "harness-missing-on-480": "does-not-apply",
            "harness-gap-skipping-to-481": "does-not-apply",
        },
        path={"agent-platform": ["4.7.18", "4.7.19", "4.8.0"]},
    ),
    Case(
        "S1-plan",
        "plan",
        S1_STATED,
        "s1",
        0,
        "safe-with-actions",
        to=("agent-platform=4.8.0",),
        path={"agent-platform": ["4.7.18", "4.7.19", "4.8.0"]},
    ),
    Case(
        "S2-check",
        "check",
        S1_STATED,
        "s2",
        0,
        "safe-with-actions",
        to=("agent-platform=4.8.1",),
        statuses={
            "harness-gap-skipping-to-481": "applies",
            "harness-handover-skipped": "does-not-apply",
        },
    ),
    Case(
        "S2-plan",
        "plan",
        S1_STATED,
        "s2",
        0,
        "safe",
        to=("agent-platform=4.8.1",),
        path={"agent-platform": ["4.7.18", "4.7.19", "4.8.1"]},
    ),
    Case(
        "S3-check",
        "check",
        S3_STATED,
        "s3",
        0,
        "safe",
        to=("agent-platform=4.8.0",),
        statuses={"harness-handover-skipped": "does-not-apply"},
        cluster_verdict="safe-with-actions",
        cluster_statuses={"no-drift-detection-on-480": "applies"},
        cluster_note="the cluster reads the kagent HelmRelease: no drift detection is known, "
        "so the 4.8.0 landing warning applies instead of may-apply (exit code unchanged)",
    ),
    Case(
        "S3-plan",
        "plan",
        S3_STATED,
        "s3",
        0,
        "safe",
        to=("agent-platform=4.8.0",),
        path={"agent-platform": ["4.7.18", "4.8.0"]},
        cluster_verdict="safe-with-actions",
        cluster_note="known: no drift detection on kagent, so the step adds the drift-detection "
        "patch (the 4.8.0 landing warning applies)",
    ),
    Case(
        "S4-check",
        "check",
        S4_STATED,
        "s4",
        3,
        "blocked",
        statuses={"harness-missing-on-480": "applies", "no-drift-detection-on-480": "applies"},
    ),
    Case(
        "S4-plan",
        "plan",
        S4_STATED,
        "s4",
        0,
        "safe-with-actions",
        to=("agent-platform=4.8.1",),
        path={"agent-platform": ["4.8.0", "4.8.1"]},
        action_text=("-n flux-giantswarm", "driftDetection"),
    ),
    Case(
        "S5-check",
        "check",
        S1_STATED,
        "s1",
        3,
        "blocked",
        to=("agent-platform=4.8.1",),
        holds=("agent-platform-connectivity",),
        statuses={"connectivity-pin-behind-479-second-owner": "applies"},
    ),
    Case(
        "S5-plan",
        "plan",
        S1_STATED,
        "s1",
        3,
        "blocked",
        to=("agent-platform=4.8.1",),
        holds=("agent-platform-connectivity",),
        blocked_by=("connectivity-pin-behind-479-second-owner",),
    ),
    Case(
        "S5-state",
        "check",
        S5_STATE_STATED,
        "s5",
        3,
        "blocked",
        statuses={"connectivity-pin-behind-479-second-owner": "applies"},
    ),
    Case(
        "S6-check",
        "check",
        S6_STATED,
        "s6",
        3,
        "blocked",
        to=("harness-delegate=0.31.2",),
        cluster_extra=HARNESS_CD,
        statuses={
            "delegate-metadata-flag-renamed": "applies",
            "delegate-version-value-not-bumped": "applies",
            "delegate-needs-kubernetes-128": "does-not-apply",
            "delegate-token-secret-type": "does-not-apply",
        },
    ),
    Case(
        "S6-plan",
        "plan",
        S6_STATED,
        "s6",
        0,
        "safe-with-actions",
        to=("harness-delegate=0.31.2",),
        cluster_extra=HARNESS_CD,
        path={"harness-delegate": ["0.29.0", "0.31.2"]},
        action_text=("--metadata-endpoint=https://169.254.169.254",),
    ),
    Case(
        "S7-check",
        "check",
        S7_STATED,
        "s7",
        3,
        "blocked",
        cluster_extra=HARNESS_CD,
        statuses={"delegate-token-secret-type": "applies"},
    ),
    Case(
        "S8-check",
        "check",
        S8_STATED,
        "s8",
        3,
        "blocked",
        to=("harness-delegate=0.31.2",),
        statuses={"delegate-needs-kubernetes-128": "applies"},
    ),
    Case(
        "S8-plan",
        "plan",
        S8_STATED,
        "s8",
        3,
        "blocked",
        to=("harness-delegate=0.31.2",),
        blocked_by=("delegate-needs-kubernetes-128",),
    ),
)


def statuses_of(findings: list[dict[str, Any]]) -> dict[str, str]:
    """hazard id -> status from a JSON findings list."""
    return {str(f["hazard"]): str(f["status"]) for f in findings}


def check_mismatches(
    case: Case, doc: dict[str, Any], exit_code: int, *, cluster: bool = False
) -> list[str]:
    """What a JSON answer (check or plan, one result) gets wrong against ``case``.

    ``cluster``: the answer came from a cluster read, which may know facts the stated form
    leaves unknown (``cluster_verdict``, ``cluster_statuses``).
    """
    problems: list[str] = []
    want_verdict = (case.cluster_verdict if cluster else None) or case.verdict
    want_statuses = {**case.statuses, **(case.cluster_statuses if cluster else {})}
    if exit_code != case.exit_code:
        problems.append(f"exit code {exit_code}, expected {case.exit_code}")
    [result] = doc["results"]
    if case.command == "check":
        verdict = result["verdict"]
        statuses = statuses_of(result.get("findings", []))
        rec = result.get("recommended") or {}
        path = rec.get("path", {})
        blocked_by = rec.get("blocked_by", [])
        actions: list[str] = []
    else:
        plan = result["plan"]
        verdict = plan["verdict"]
        statuses = statuses_of(plan["direct"]["findings"])
        path = plan["path"]
        blocked_by = plan["blocked_by"]
        actions = [a["content"] for s in plan["steps"] for a in s.get("actions", [])]
    if verdict != want_verdict:
        problems.append(f"verdict {verdict}, expected {want_verdict}")
    for hazard, status in want_statuses.items():
        if statuses.get(hazard) != status:
            problems.append(f"{hazard}: {statuses.get(hazard)}, expected {status}")
    for product, versions in (case.path or {}).items():
        if path.get(product) != versions:
            problems.append(f"path of {product}: {path.get(product)}, expected {versions}")
    for hazard in case.blocked_by:
        if hazard not in blocked_by:
            problems.append(f"blocked_by {blocked_by} lacks {hazard}")
    for text in case.action_text:
        if not any(text in a for a in actions):
            problems.append(f"no action holds {text!r}")
    return problems
