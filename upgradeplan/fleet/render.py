"""The fleet roll-up as text, json, yaml, csv or markdown (deterministic: sorted, no times)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from upgradeplan.fleet.judge import FindingRow, Fleet, HazardHits, Installation
from upgradeplan.render import structured

SCHEMA_VERSION = 1
VERDICTS = (
    "blocked",
    "undetermined",
    "safe-with-actions",
    "safe",
    "no-known-hazards",
    "nothing-to-judge",
    "unreadable",
)
TEXT_NAMES = 8  # installation names shown per hazard in text output before "+N more"


def _versions(pairs: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{p}={v}" for p, v in pairs) or "-"


def _path_text(inst: Installation) -> str:
    if not inst.path:
        return "-"
    return "; ".join(f"{p} {' -> '.join(vs)}" for p, vs in inst.path)


def _findings_text(rows: Sequence[FindingRow]) -> str:
    return ", ".join(f"{r.hazard} ({r.status})" for r in rows) or "-"


def _targets_text(inst: Installation) -> str:
    return ", ".join(f"{t.product}={t.version}" for t in inst.targets) or "as it is"


def counts(fleet: Fleet) -> dict[str, int]:
    out = dict.fromkeys(VERDICTS, 0)
    for inst in fleet.installations:
        out[UNREADABLE_KEY if inst.error is not None else inst.verdict] += 1
    return out


UNREADABLE_KEY = "unreadable"


def _rows(fleet: Fleet) -> tuple[Installation, ...]:
    """The installations a rendering lists: with --hazard, those it hits."""
    return fleet.hit_installations() if fleet.hazard is not None else fleet.judged


# --------------------------------------------------------------------------- structured


def installation_to_dict(inst: Installation, hazard: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "name": inst.name,
        "source": inst.source,
        "verdict": inst.verdict,
        "exit_code": inst.exit_code,
        "current": dict(inst.current),
        "targets": [{"product": t.product, "version": t.version} for t in inst.targets],
        "path": {p: list(v) for p, v in inst.path},
        "path_verdict": inst.path_verdict,
        "blocked_by": list(inst.blocked_by),
        "blocking": [_finding(r) for r in inst.blocking],
        "findings": [_finding(r) for r in inst.findings],
        "missing": list(inst.missing),
        "not_applied": list(inst.not_applied),
        "could_not_read": list(inst.could_not_read),
    }
    if hazard is not None:
        item["status"] = inst.status_of(hazard)
    return item


def _finding(r: FindingRow) -> dict[str, Any]:
    return {
        "hazard": r.hazard,
        "title": r.title,
        "severity": r.severity,
        "status": r.status,
        "product": r.product,
        "missing": list(r.missing),
    }


def _who(pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": n, "source": s} for n, s in pairs]


def _hazard(h: HazardHits) -> dict[str, Any]:
    return {
        "hazard": h.hazard,
        "title": h.title,
        "severity": h.severity,
        "applies": len(h.applies),
        "may_apply": len(h.may_apply),
        "applies_to": _who(h.applies),
        "may_apply_to": _who(h.may_apply),
    }


def to_dict(fleet: Fleet) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "command": "fleet",
        "exit_code": fleet.exit_code,
        "fail_on": fleet.fail_on,
        "to": list(fleet.to),
        "summary": {
            "installations": len(fleet.installations),
            **counts(fleet),
        },
        "installations": [installation_to_dict(i, fleet.hazard) for i in _rows(fleet)],
        "hazards": [_hazard(h) for h in fleet.hazards if fleet.hazard in (None, h.hazard)],
        "unreadable": [
            {"name": i.name, "source": i.source, "reason": i.error} for i in fleet.unreadable
        ],
    }
    if fleet.hazard is not None:
        doc["hazard"] = fleet.hazard
    return doc


def _serialise(fleet: Fleet, fmt: str) -> str:
    return structured.serialise(to_dict(fleet), fmt)


# --------------------------------------------------------------------------- csv

CSV_COLUMNS = (
    "name",
    "source",
    "verdict",
    "exit_code",
    "current",
    "targets",
    "path",
    "blocking",
    "missing",
    "not_applied",
    "could_not_read",
    "error",
)


def to_csv(fleet: Fleet) -> str:
    """One row per installation (unreadable ones too, with the reason in ``error``); with
    --hazard, the installations it hits, with a ``status`` column."""
    out = io.StringIO()
    columns = (*CSV_COLUMNS[:3], "status", *CSV_COLUMNS[3:]) if fleet.hazard else CSV_COLUMNS
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    rows = list(_rows(fleet)) + list(fleet.unreadable)
    for inst in rows:
        cells: dict[str, Any] = {
            "name": inst.name,
            "source": inst.source,
            "verdict": inst.verdict,
            "status": inst.status_of(fleet.hazard) if fleet.hazard else "",
            "exit_code": inst.exit_code,
            "current": " ".join(f"{p}={v}" for p, v in inst.current),
            "targets": " ".join(f"{t.product}={t.version}" for t in inst.targets),
            "path": "; ".join(f"{p} {' -> '.join(vs)}" for p, vs in inst.path),
            "blocking": " ".join(f"{r.hazard}:{r.status}" for r in inst.blocking),
            "missing": " ".join(inst.missing),
            "not_applied": " ".join(inst.not_applied),
            "could_not_read": "; ".join(inst.could_not_read),
            "error": inst.error or "",
        }
        writer.writerow([cells[c] for c in columns])
    return out.getvalue()


# --------------------------------------------------------------------------- text


def _summary_line(fleet: Fleet) -> str:
    c = counts(fleet)
    parts = [f"{c[v]} {v}" for v in VERDICTS if c[v]]
    against = f"against {', '.join(fleet.to)}" if fleet.to else "as they are"
    return (
        f"Fleet: {len(fleet.installations)} installations ({', '.join(parts) or 'none'}); "
        f"judged {against}; exit {fleet.exit_code}"
    )


def _names(pairs: Sequence[tuple[str, str]]) -> str:
    names = [n for n, _ in pairs]
    shown = ", ".join(names[:TEXT_NAMES])
    more = len(names) - TEXT_NAMES
    return shown + (f", +{more} more" if more > 0 else "")


def to_text(fleet: Fleet) -> str:
    lines = [_summary_line(fleet)]
    if fleet.hazard is not None:
        hits = fleet.hits(fleet.hazard)
        a = len(hits.applies) if hits else 0
        m = len(hits.may_apply) if hits else 0
        lines.append(f"Hazard {fleet.hazard}: applies to {a}, may apply to {m}")
    for inst in _rows(fleet):
        lines.append("")
        status = f" [{inst.status_of(fleet.hazard)}]" if fleet.hazard else ""
        lines.append(f"{inst.name}: {inst.verdict}{status}  ({inst.source})")
        rows = [("runs", _versions(inst.current)), ("target", _targets_text(inst))]
        if inst.not_applied:
            rows.append(("not a target here", ", ".join(inst.not_applied)))
        good = inst.path_verdict in (None, "safe", "safe-with-actions")
        verdict = f" ({inst.path_verdict})" if inst.path_verdict else ""
        rows.append(("path" if good else "best path", _path_text(inst) + verdict))
        if inst.blocked_by:
            rows.append(("blocked by", ", ".join(inst.blocked_by)))
        if inst.blocking:
            rows.append(("blocking", _findings_text(inst.blocking)))
        if inst.missing:
            rows.append(("missing", ", ".join(inst.missing)))
        rows.extend(("not read", u) for u in inst.could_not_read)
        if inst.error:
            rows.append(("not judged", inst.error))
        lines.extend(f"  {label + ':':<11} {value}" for label, value in rows)
    shown = [h for h in fleet.hazards if fleet.hazard in (None, h.hazard)]
    if shown and fleet.hazard is None:
        lines.append("")
        lines.append("Hazards (installations where each applies / may apply):")
        for h in shown:
            lines.append(
                f"  {h.hazard} [{h.severity}]: applies {len(h.applies)}, "
                f"may apply {len(h.may_apply)}"
            )
            if h.applies:
                lines.append(f"      applies: {_names(h.applies)}")
            if h.may_apply:
                lines.append(f"      may apply: {_names(h.may_apply)}")
    if fleet.unreadable:
        lines.append("")
        lines.append(f"Not judged ({len(fleet.unreadable)}):")
        for inst in fleet.unreadable:
            error = inst.error or ""
            lines.append(
                f"  {error}" if error.startswith(inst.source) else f"  {inst.source}: {error}"
            )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- markdown


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(fleet: Fleet) -> str:
    lines = ["# Fleet", "", _summary_line(fleet), ""]
    status_col = fleet.hazard is not None
    head = ["installation", "verdict"] + (["status"] if status_col else [])
    head += ["runs", "target", "safe path", "blocking", "missing facts"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for inst in _rows(fleet):
        cells = [f"{inst.name} ({inst.source})", inst.verdict]
        if status_col:
            cells.append(inst.status_of(fleet.hazard or "") or "")
        cells += [
            _versions(inst.current),
            _targets_text(inst),
            _path_text(inst) + (f" ({inst.path_verdict})" if inst.path_verdict else ""),
            _findings_text(inst.blocking),
            ", ".join(inst.missing) or "-",
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    shown = [h for h in fleet.hazards if fleet.hazard in (None, h.hazard)]
    if shown:
        lines += ["", "## Hazards", "", "| hazard | severity | applies | may apply |"]
        lines.append("|---|---|---|---|")
        for h in shown:
            lines.append(
                f"| {_cell(h.hazard)} | {h.severity} | {len(h.applies)} | {len(h.may_apply)} |"
            )
    if fleet.unreadable:
        lines += ["", "## Not judged", "", "| source | reason |", "|---|---|"]
        for inst in fleet.unreadable:
            lines.append(f"| {_cell(inst.source)} | {_cell(inst.error or '')} |")
    return "\n".join(lines) + "\n"


def render(fleet: Fleet, fmt: str) -> str:
    if fmt == "text":
        return to_text(fleet)
    if fmt in ("json", "yaml"):
        return _serialise(fleet, fmt)
    if fmt == "csv":
        return to_csv(fleet)
    if fmt == "markdown":
        return to_markdown(fleet)
    raise ValueError(f"unknown fleet format {fmt!r}")
