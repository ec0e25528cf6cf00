"""JSON and YAML output: plain dicts with ``schema_version: 1`` and a stable key order.

Within schema version 1 fields are only added, never renamed or removed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from upgradeplan.model import (
    Action,
    Evidence,
    Finding,
    Hazard,
    Migration,
    MissingFact,
    Move,
    Plan,
    Product,
    Release,
    Step,
    Withdrawn,
)
from upgradeplan.render.summary import shown, stop_reasons, to_decide
from upgradeplan.render.text import moved_judged
from upgradeplan.results import FIT_WORDS

if TYPE_CHECKING:
    from upgradeplan.results import CheckResult, Diagnosis, Explanation, MovedPin, PlanResult

SCHEMA_VERSION = 1


# --------------------------------------------------------------------------- building blocks


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _targets(plan: Plan) -> list[dict[str, str]]:
    return [{"product": t.product, "version": t.version} for t in plan.targets]


def _current(plan: Plan) -> dict[str, str | None]:
    return {k: plan.current[k] for k in sorted(plan.current)}


def _path(plan: Plan) -> dict[str, list[str]]:
    return {k: list(v) for k, v in sorted(plan.path.items())}


def _pins(plan: Plan) -> dict[str, list[str | None]]:
    return {k: list(v) for k, v in sorted(plan.pin_path.items())}


def _missing(missing: Iterable[MissingFact]) -> list[dict[str, str]]:
    return [{"key": m.key, "how": m.how} for m in missing]


def _withdrawn(w: Withdrawn | None) -> dict[str, str] | None:
    return None if w is None else {"date": w.date, "reason": w.reason}


def _results(command: str, exit_code: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "exit_code": exit_code,
        "results": results,
    }


def evidence_to_dict(ev: Evidence) -> dict[str, Any]:
    return {
        "predicate": ev.predicate,
        "description": ev.description,
        "result": ev.result.value,
        "negated": ev.negated,
        "observed": [
            {"key": f.key, "value": _plain(f.value), "source": str(f.source)} for f in ev.facts
        ],
        "missing": list(ev.missing),
    }


def finding_to_dict(f: Finding) -> dict[str, Any]:
    return {
        "hazard": f.hazard,
        "title": f.title,
        "severity": f.severity,
        "scope": f.scope,
        "status": f.status,
        "product": f.product,
        "from": f.from_version,
        "to": f.to_version,
        "reason": f.reason,
        "location": str(f.location) if f.location is not None else "",
        "fixed_by": list(getattr(f, "fixed_by", ())),
        "evidence": [evidence_to_dict(e) for e in f.evidence],
        "missing": _missing(f.missing),
        "consequence": f.consequence,
        "avoid": f.avoid,
        "recover": f.recover,
    }


def move_to_dict(m: Move) -> dict[str, Any]:
    return {
        "kind": m.kind,
        "product": m.product,
        "before": m.before,
        "after": m.after,
        "source": str(m.source) if m.source is not None else "",
    }


def action_to_dict(a: Action) -> dict[str, Any]:
    return {
        "migration": a.migration,
        "title": a.title,
        "kind": a.kind,
        "when": a.when,
        "fixes": list(a.fixes),
        "target": _plain(a.target),
        "placeholders": list(a.placeholders),
        "content": a.content,
    }


def step_to_dict(s: Step) -> dict[str, Any]:
    out: dict[str, Any] = {
        "product": s.product,
        "from": s.from_version,
        "to": s.to_version,
        "verdict": s.verdict,
        "moves": [move_to_dict(m) for m in s.moves],
        "findings": [finding_to_dict(f) for f in s.findings],
        "actions": [action_to_dict(a) for a in s.actions],
        "verify": list(s.verify),
    }
    if s.notes:
        out["notes"] = list(s.notes)
    return out


def _stops(plan: Plan, direct: Sequence[Finding] = ()) -> list[dict[str, str]]:
    """Every stop of the path after the start, with why the path stops there (one line)."""

    return [
        {"product": product, "version": version, "reason": reason}
        for (product, version), reason in stop_reasons(plan, direct).items()
    ]


def _to_decide(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """Each fact a finding that may apply is missing, once: how to state it, what shows it."""

    return [n.to_dict() for n in to_decide(shown(findings))]


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "state": plan.state_name,
        "targets": _targets(plan),
        "current": _current(plan),
        "held": list(plan.held),
        "verdict": plan.verdict,
        "blocked_by": list(plan.blocked_by),
        "path": _path(plan),
        "stops": _stops(plan),
        "pins": _pins(plan),
        "direct": {
            "verdict": plan.direct.verdict,
            "findings": [finding_to_dict(f) for f in plan.direct.findings],
        },
        "state_findings": [finding_to_dict(f) for f in plan.state_findings],
        "steps": [step_to_dict(s) for s in plan.steps],
    }


# --------------------------------------------------------------------------- command results


def moved_to_dict(m: MovedPin, findings: Sequence[Finding] = ()) -> dict[str, Any]:
    """A pin the change moves: ``product`` null when the knowledge does not know the chart;
    ``judged`` when the knowledge, a pack or the checks computed from its charts judged it."""
    return {
        "name": m.chart,
        "object": m.key,
        "before": m.before,
        "after": m.after,
        "source": str(m.where) if m.where is not None else None,
        "product": m.product,
        "judged": moved_judged(m, findings),
    }


def check_to_dict(results: Sequence[CheckResult], exit_code: int) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for r in results:
        item: dict[str, Any] = {
            "name": r.name,
            "verdict": r.shown_verdict,
            "exit_code": r.exit_code,
        }
        if r.reviewed:
            item["reviewed_through"] = dict(sorted(r.reviewed.items()))
        item["unreadable"] = [u.to_dict() for u in r.unreadable]
        if r.moved_pins:
            item["moved"] = [moved_to_dict(m, r.findings) for m in r.moved_pins]
        if r.error is not None:
            item["error"] = r.error
        else:
            plan = r.plan
            item["targets"] = _targets(plan) if plan else []
            item["current"] = _current(plan) if plan else {}
            item["findings"] = [finding_to_dict(f) for f in r.findings]
            if r.notes:
                item["notes"] = list(r.notes)
            rec = r.recommended
            item["recommended"] = (
                None
                if rec is None
                else {
                    "targets": _targets(rec),
                    "verdict": rec.verdict,
                    "blocked_by": list(rec.blocked_by),
                    "path": _path(rec),
                    "stops": _stops(rec, r.findings),
                    "pins": _pins(rec),
                }
            )
            item["to_decide"] = _to_decide(r.findings)
        out.append(item)
    return _results("check", exit_code, out)


def plans_to_dict(results: Sequence[PlanResult], exit_code: int) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for r in results:
        item: dict[str, Any] = {"name": r.name, "exit_code": r.exit_code}
        if r.error is not None:
            item["error"] = r.error
        if r.plan is not None:
            item["plan"] = plan_to_dict(r.plan)
            item["plan"]["verdict"] = r.shown_verdict
            for step, shown in zip(item["plan"]["steps"], r.plan.steps, strict=True):
                step["verdict"] = r.step_verdict(shown)
            if r.reviewed:
                item["plan"]["reviewed_through"] = dict(sorted(r.reviewed.items()))
            steps = [f for st in r.plan.steps for f in st.findings]
            item["to_decide"] = _to_decide(steps if r.plan.steps else r.plan.direct.findings)
        out.append(item)
    return _results("plan", exit_code, out)


def hazard_to_dict(h: Hazard) -> dict[str, Any]:
    return {
        "id": h.id,
        "title": h.title,
        "product": h.product,
        "severity": h.severity,
        "scope": h.scope,
        "stop": h.stop,
        "from_range": h.from_range,
        "to_range": h.to_range,
        "description": h.description,
        "consequence": h.consequence,
        "symptoms": [
            {"pattern": s.pattern, "where": s.where, "example": s.example} for s in h.symptoms
        ],
        "avoid": h.avoid,
        "recover": h.recover,
        "recover_commands": list(h.recover_commands),
        "migrations": list(h.migrations),
        "verify": list(h.verify),
        "references": list(h.references),
        "location": str(h.location),
        "withdrawn": _withdrawn(h.withdrawn),
    }


def release_to_dict(r: Release) -> dict[str, Any]:
    return {
        "product": r.product,
        "version": r.version,
        "title": r.title,
        "date": r.date,
        "summary": r.summary,
        "bom": _plain(r.bom),
        "requires": _plain(r.requires),
        "upgrade_from": r.upgrade_from,
        "changes": [
            {"kind": c.kind, "summary": c.summary, "details": _plain(c.details)} for c in r.changes
        ],
        "effects": _plain(r.effects),
        "notes": [
            {"condition": n.condition, "text": n.text, "commands": list(n.commands)}
            for n in r.notes
        ],
        "verify": list(r.verify),
        "references": list(r.references),
        "location": str(r.location),
        "withdrawn": _withdrawn(r.withdrawn),
    }


def migration_to_dict(m: Migration) -> dict[str, Any]:
    return {
        "id": m.id,
        "title": m.title,
        "kind": m.kind,
        "product": m.product,
        "when": m.when,
        "description": m.description,
        "target": _plain(m.target),
        "params": _plain(m.params),
        "template": m.template,
        "location": str(m.location),
    }


def product_to_dict(p: Product) -> dict[str, Any]:
    return {
        "id": p.id,
        "name": p.name,
        "kind": p.kind,
        "description": p.description,
        "location": str(p.location),
    }


def explanation_to_dict(e: Explanation) -> dict[str, Any]:
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "kind": e.kind, "id": e.id}
    if e.hazard is not None:
        out["hazard"] = hazard_to_dict(e.hazard)
    if e.release is not None:
        out["release"] = release_to_dict(e.release)
    if e.migration is not None:
        out["migration"] = migration_to_dict(e.migration)
    if e.product is not None:
        out["product"] = product_to_dict(e.product)
    out["related"] = list(e.related)
    if e.kind == "hazard" and (e.conditions or e.finding is not None or e.truth):
        out["hop"] = {"from": e.hop[0], "to": e.hop[1]}
        out["truth"] = e.truth
        out["status"] = e.finding.status if e.finding is not None else None
        out["reason"] = e.finding.reason if e.finding is not None else ""
        out["conditions"] = [
            {
                "predicate": c.predicate,
                "description": c.description,
                "result": c.result,
                "negated": c.negated,
                "observed": [{"key": k, "value": v, "source": s} for k, v, s in c.observed],
                "missing": _missing(c.missing),
            }
            for c in e.conditions
        ]
    return out


def diagnoses_to_dict(
    diagnoses: Sequence[Diagnosis], fits: Sequence[int | None] = (), notes: Sequence[str] = ()
) -> dict[str, Any]:
    doc = _diagnoses(diagnoses)
    if notes:
        doc["notes"] = list(notes)
    if fits:
        for match, fit in zip(doc["matches"], fits, strict=False):
            match["state"] = None if fit is None else FIT_WORDS[fit]
    return doc


def _diagnoses(diagnoses: Sequence[Diagnosis]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "matches": [
            {
                "rank": i,
                "hazard": d.hazard.id,
                "title": d.hazard.title,
                "severity": d.hazard.severity,
                "confidence": d.confidence,
                "score": d.score,
                "patterns": d.patterns,
                "lines": sorted({n for m in d.matches for n in (m.lines or (m.line_number,))}),
                "matched": [
                    {
                        "pattern": m.pattern,
                        "line": m.line,
                        "line_number": m.line_number,
                        "lines": list(m.lines or (m.line_number,)),
                        "where": m.where,
                        "read_as": m.read_as,
                        "confidence": m.confidence,
                    }
                    for m in d.matches
                ],
                "confirm": [{"fact": key, "how": how} for key, how in d.confirm],
                "recover": d.hazard.recover,
                "recover_commands": list(d.hazard.recover_commands),
                "migrations": list(d.hazard.migrations),
                "verify": list(d.hazard.verify),
            }
            for i, d in enumerate(diagnoses, start=1)
        ],
    }


# --------------------------------------------------------------------------- serialisers


def to_json(doc: Mapping[str, Any]) -> str:
    """``doc`` as indented JSON (non-ASCII kept as it is) and a newline."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def to_yaml(doc: Mapping[str, Any]) -> str:
    import yaml

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out: str = yaml.dump(
        dict(doc),
        Dumper=dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
    )
    return out


def serialise(doc: Mapping[str, Any], fmt: str) -> str:
    return to_yaml(doc) if fmt == "yaml" else to_json(doc)
