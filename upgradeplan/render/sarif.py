"""SARIF 2.1.0 for code scanning: one result per finding that applies or may apply.

A finding read from GitOps files is located at the pin's file and line
(:attr:`Finding.location`); a finding without one is shown where another finding of its product
is, or where a pin its plan moves is written (code scanning needs a file location); with no
file at all (stated facts, a cluster) it carries a logical location, the product. Rules come
from the hazards: title, consequence, how to avoid and recover. Output is deterministic.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from upgradeplan import __version__
from upgradeplan.model import Finding, Hazard, KnowledgeBase, Plan
from upgradeplan.provenance import Source

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"

_LEVEL = {"blocking": "error", "warning": "warning", "notice": "note"}


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


def _flat(text: str) -> str:
    return " ".join(text.split())


def _help(finding: Finding, hazard: Hazard | None) -> tuple[str, str]:
    consequence = _flat(hazard.consequence if hazard else finding.consequence)
    avoid = _flat(hazard.avoid if hazard else finding.avoid)
    recover = _flat(hazard.recover if hazard else finding.recover)
    text: list[str] = []
    md: list[str] = []
    if consequence:
        text.append(f"What happens: {consequence}")
        md.append(f"**What happens**: {consequence}")
    if avoid:
        text.append(f"Avoid: {avoid}")
        md.append(f"**Avoid**: {avoid}")
    if recover:
        text.append(f"Recover: {recover}")
        md.append(f"**Recover**: {recover}")
    if hazard is not None and hazard.recover_commands:
        md.append("```sh\n" + "\n".join(hazard.recover_commands) + "\n```")
    if hazard is not None and hazard.migrations:
        text.append(f"Migrations: {', '.join(hazard.migrations)}")
        md.append("**Migrations**: " + ", ".join(f"`{m}`" for m in hazard.migrations))
    return "\n\n".join(text) or finding.title, "\n\n".join(md) or finding.title


def _rule(finding: Finding, hazard: Hazard | None) -> dict[str, Any]:
    text, markdown = _help(finding, hazard)
    rule: dict[str, Any] = {
        "id": finding.hazard,
        "name": "".join(p.capitalize() for p in finding.hazard.replace(".", "-").split("-")),
        "shortDescription": {"text": finding.title},
        "fullDescription": {"text": _flat(finding.consequence or finding.title)},
        "help": {"text": text, "markdown": markdown},
        "defaultConfiguration": {"level": _LEVEL[finding.severity]},
        "properties": {
            "tags": ["upgrade", finding.scope, finding.severity],
            "severity": finding.severity,
            "scope": finding.scope,
            "product": finding.product,
        },
    }
    if hazard is not None:
        urls = [r for r in hazard.references if r.startswith(("https://", "http://"))]
        if urls:
            rule["helpUri"] = urls[0]
    return rule


def _hop(f: Finding) -> str:
    if f.from_version and f.to_version and f.from_version != f.to_version:
        return f"{f.product} {f.from_version} → {f.to_version}"
    if f.to_version or f.from_version:
        return f"{f.product} {f.to_version or f.from_version}"
    return f.product


def _message(f: Finding) -> str:
    status = "applies" if f.status == "applies" else "may apply"
    parts = [f"{f.title} ({f.severity}, {status}; {_hop(f)})."]
    if f.reason:
        parts.append(f.reason.rstrip(".") + ".")
    if f.status == "may-apply" and f.missing:
        parts.append("Missing facts: " + ", ".join(m.key for m in f.missing) + ".")
    if f.consequence:
        parts.append(_flat(f.consequence))
    return " ".join(parts)


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path.removeprefix("./"))


def fallback_locations(plan: Plan, findings: Sequence[Finding]) -> dict[str, Source]:
    """Per product, a ``file:line`` to show a finding at when it has none of its own: where
    another finding of the product is located, else where a pin its steps move is written.
    (Code scanning needs a file location on every result.)"""
    out: dict[str, Source] = {}
    for f in findings:
        if f.location is not None and f.location.file_line is not None:
            out.setdefault(f.product, f.location)
    for step in plan.steps:
        for move in step.moves:
            if move.source is not None and move.source.file_line is not None:
                out.setdefault(step.product, move.source)
    return out


def _location(f: Finding, fallback: Source | None = None) -> dict[str, Any]:
    where = f.location or fallback
    loc = where.file_line if where is not None else None
    if loc is not None:
        artifact: dict[str, str] = {"uri": _uri(loc[0]), "uriBaseId": "%SRCROOT%"}
        if loc[0].startswith("/"):
            from pathlib import Path

            artifact = {"uri": Path(loc[0]).as_uri()}
        return {
            "physicalLocation": {
                "artifactLocation": artifact,
                "region": {"startLine": max(loc[1], 1)},
            }
        }
    return {"logicalLocations": [{"name": f.product, "kind": "module"}]}


def _result(f: Finding, rule_index: int, fallback: Source | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.hazard,
        "ruleIndex": rule_index,
        "message": {"text": _message(f)},
        "locations": [_location(f, fallback)],
        "partialFingerprints": {
            "upgradeplan/v1": hashlib.sha256(
                "|".join((f.hazard, f.product, f.from_version or "", f.to_version or "")).encode()
            ).hexdigest()[:32]
        },
        "properties": {
            "status": f.status,
            "severity": f.severity,
            "product": f.product,
            "from": f.from_version,
            "to": f.to_version,
            "evidence": [
                {"predicate": e.predicate, "description": e.description, "result": e.result.value}
                for e in f.evidence
            ],
        },
    }
    if f.status == "applies":
        result["kind"] = "fail"
        result["level"] = _LEVEL[f.severity]
    else:
        # SARIF 2.1.0 §3.27.9: a result of any kind other than "fail" has level "none"
        result["kind"] = "review"
        result["level"] = "none"
    return result


def to_dict(
    plan: Plan,
    kb: KnowledgeBase | None = None,
    *,
    findings: Sequence[Finding] | None = None,
) -> dict[str, Any]:
    """The SARIF log as a dict (see :func:`render`)."""
    chosen = check_findings(plan) if findings is None else tuple(findings)
    reported = [f for f in chosen if f.status in ("applies", "may-apply")]
    hazards: Mapping[str, Hazard] = kb.hazards if kb is not None else {}
    rule_ids: list[str] = []
    rules: list[dict[str, Any]] = []
    for f in sorted(reported, key=lambda x: x.hazard):
        if f.hazard not in rule_ids:
            rule_ids.append(f.hazard)
            rules.append(_rule(f, hazards.get(f.hazard)))
    fallback = fallback_locations(plan, reported)
    results = [_result(f, rule_ids.index(f.hazard), fallback.get(f.product)) for f in reported]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "upgradeplan",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The GitOps checkout."}}},
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"verdict": plan.direct.verdict, "recommended_verdict": plan.verdict},
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(
    plan: Plan,
    kb: KnowledgeBase | None = None,
    *,
    findings: Sequence[Finding] | None = None,
) -> str:
    """SARIF 2.1.0 JSON for ``plan``'s check findings (or ``findings`` when given)."""
    return json.dumps(to_dict(plan, kb, findings=findings), indent=2, ensure_ascii=False) + "\n"
