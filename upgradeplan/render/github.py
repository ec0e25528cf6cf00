"""GitHub Actions workflow commands: one annotation per finding that applies or may apply.

``::error file=clusters/prod/bom.yaml,line=12,title=…::message`` puts the finding on the
pin's line in the pull request. Values are escaped as the runner expects (``%``, CR, LF in
messages; also ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from collections.abc import Sequence

from upgradeplan.model import Finding, Plan
from upgradeplan.provenance import Source
from upgradeplan.render.sarif import check_findings, fallback_locations

_COMMAND = {"blocking": "error", "warning": "warning", "notice": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(f: Finding) -> str:
    if f.status == "applies":
        return _COMMAND[f.severity]
    # may apply: one level softer, so an unknown never looks like a certain failure
    return "warning" if f.severity == "blocking" else "notice"


def annotation(f: Finding, fallback: Source | None = None, installation: str = "") -> str:
    """One workflow command line for ``f`` (at ``fallback`` when it has no file of its own)."""
    props: list[str] = []
    where = f.location or fallback
    loc = where.file_line if where is not None else None
    if loc is not None:
        props.append(f"file={escape_property(loc[0])}")
        props.append(f"line={max(loc[1], 1)}")
    status = "applies" if f.status == "applies" else "may apply"
    at = f"[{installation}] " if installation else ""
    props.append(f"title={escape_property(f'{at}{f.hazard} ({f.severity}, {status})')}")
    hop = f.product
    if f.from_version and f.to_version and f.from_version != f.to_version:
        hop += f" {f.from_version} → {f.to_version}"
    elif f.to_version or f.from_version:
        hop += f" {f.to_version or f.from_version}"
    lines = [f"{f.title} ({hop})."]
    if f.reason:
        lines.append(f.reason)
    if f.status == "may-apply" and f.missing:
        lines.append("Missing facts: " + ", ".join(m.key for m in f.missing))
    if f.consequence:
        lines.append(" ".join(f.consequence.split()))
    if f.avoid:
        lines.append("Avoid: " + " ".join(f.avoid.split()))
    return f"::{_command(f)} {','.join(props)}::{escape_data(chr(10).join(lines))}"


def render(plan: Plan, *, findings: Sequence[Finding] | None = None, installation: str = "") -> str:
    """Annotations for ``plan``'s check findings (or ``findings``), then a one-line summary.

    ``installation`` names the installation (a GitOps entry point, a context) they are for.
    """
    chosen = check_findings(plan) if findings is None else tuple(findings)
    reported = [f for f in chosen if f.status in ("applies", "may-apply")]
    fallback = fallback_locations(plan, reported)
    out = [annotation(f, fallback.get(f.product), installation) for f in reported]
    path = " ; ".join(f"{p}: {' → '.join(vs)}" for p, vs in plan.path.items())
    summary = f"upgradeplan [{installation}]" if installation else "upgradeplan"
    summary += f": verdict {plan.direct.verdict}"
    if plan.steps and plan.verdict == "blocked":
        blockers = ", ".join(plan.blocked_by) or "a blocking hazard"
        summary += f"; no safe path ({blockers}): the least-bad path is {path}"
    elif plan.steps:
        summary += f"; recommended path {path} ({plan.verdict})"
    out.append(f"::notice title=upgradeplan::{escape_data(summary)}")
    return "\n".join(out) + "\n"
