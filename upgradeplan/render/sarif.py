"""SARIF 2.1.0 for code scanning: one run per installation or context, as GitHub takes it.

- One run per ``check`` result, each with its own ``automationDetails.id``
  (``upgradeplan/<installation>/``), so several contexts or installations upload as several
  analyses instead of being refused as duplicates.
- One rule per hazard; the rule id is the same whatever the target (a requirement is
  ``requires:<product>``, never ``requires:<product>@<version>``), so a new target does not
  open new alerts. ``helpUri`` comes from the hazard's references (``owner/repo#N`` is
  turned into its GitHub issue URL).
- ``level`` follows the exit code: a finding that fails the gate (at or above ``--fail-on``,
  applies or may apply, not accepted) is ``error``; below the threshold an applying finding is
  ``warning`` or ``note`` by severity and one that may apply is a ``review`` (level ``none``).
  The severity and status are in ``properties``.
- Every result has a ``physicalLocation`` (GitHub code scanning refuses one without): its own
  ``file:line``, else the first observed fact read from a file, else where another finding
  of its product is or a pin its plan moves is written, else the installation's first file
  (line 1), else ``.upgradeplan.yaml`` (stated facts alone). With ``--base``, a finding the
  change caused points at the changed line, and every chart pin the change moves is a
  note-level ``pin-moved`` result at its line. URIs are relative to the repository root
  (``uriBaseId: %SRCROOT%``) whatever the working directory; no string of the log holds the
  root's absolute path, and the category depends only on the installation's path from the
  repository root.
- An accepted finding carries ``suppressions`` with the acceptance's justification; a stale
  acceptance is a tool notification.
- On an error, :func:`error_log` is a valid log whose invocation failed
  (``executionSuccessful: false``) with the error as a tool notification.

Output is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from upgradeplan import __version__
from upgradeplan.accept import rule_id as stable
from upgradeplan.model import SEVERITY_RANK, Finding, Hazard, KnowledgeBase, Plan
from upgradeplan.provenance import Source
from upgradeplan.render.text import moved_text
from upgradeplan.results import NOTHING_TO_JUDGE

if TYPE_CHECKING:
    from upgradeplan.accept import Acceptance
    from upgradeplan.results import CheckResult, MovedPin

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
ROOT_ID = "%SRCROOT%"

_LEVEL = {"blocking": "error", "warning": "warning", "notice": "note"}
_PLAIN = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+)$")
_REFERENCE = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<number>\d+)$")


def rule_id(hazard: str) -> str:
    """The rule id of a hazard, the same across targets (``requires:P@V`` -> ``requires:P``)."""

    return stable(hazard)


def reference_uri(reference: str) -> str | None:
    """A reference as a URL: ``owner/repo#N`` is the GitHub issue; URLs stay as they are."""
    text = reference.strip()
    if text.startswith(("https://", "http://")):
        return text
    m = _REFERENCE.match(text)
    if m is not None:
        return f"https://github.com/{m.group('repo')}/issues/{m.group('number')}"
    return None


def counts(finding: Finding, fail_on: str) -> bool:
    """Whether ``finding`` (not accepted) counts toward the exit code at ``--fail-on``."""
    if fail_on == "never" or finding.status not in ("applies", "may-apply"):
        return False
    limit = SEVERITY_RANK.get(fail_on, SEVERITY_RANK["blocking"])
    return SEVERITY_RANK[finding.severity] >= limit


# --------------------------------------------------------------------------- locations


def written_at(where: str) -> tuple[str, int] | None:
    """``(file, line)`` of an unreadable record's ``file:line`` text (never a fact's source
    or an acceptance's line, which are typed)."""
    m = _PLAIN.match(where.strip())
    return (m.group("file"), int(m.group("line"))) if m is not None else None


def file_line(source: Source | None) -> tuple[str, int] | None:
    """``(file, line)`` when a source is a line of a file (a pin the plan moved: where it is
    written; a derived value: the pin or BOM entry behind it; a chart default: the values
    line); None for flags, clusters, text and what the planner supposes."""
    if source is None:
        return None
    if source.kind in ("file", "default") and source.line > 0:
        return source.file, source.line
    if source.kind in ("moved", "derived") and source.behind is not None:
        return file_line(source.behind)
    return None


def _artifact(path: str, root: Path | None) -> dict[str, str]:
    from urllib.parse import quote

    base = root or Path.cwd().resolve()
    full = Path(path) if os.path.isabs(path) else Path.cwd() / path
    try:
        rel = full.resolve().relative_to(base)
    except ValueError:  # outside the repository: relative all the same, never the machine's
        return {"uri": quote(Path(os.path.relpath(full.resolve(), base)).as_posix())}
    return {"uri": quote(rel.as_posix()), "uriBaseId": ROOT_ID}


def entry_location(result: CheckResult) -> tuple[str, int]:
    """Where a result with no file line of its own is shown: the first file the installation
    was read from, line 1; for stated facts alone, the repository's accepted-risk file
    (``.upgradeplan.yaml``, where a finding would be accepted)."""
    files = sorted(
        {loc[0] for f in (result.state or ()) if (loc := file_line(f.source)) is not None},
        key=lambda p: (p.count("/"), p),
    )
    return (files[0], 1) if files else (".upgradeplan.yaml", 1)


def _own_location(f: Finding) -> tuple[str, int] | None:
    loc = file_line(f.location)
    if loc is not None:
        return loc
    for ev in f.evidence:
        for fact in ev.facts:
            loc = file_line(fact.source)
            if loc is not None:
                return loc
    return None


def fallback_locations(
    plan: Plan | None, findings: Sequence[Finding]
) -> dict[str, tuple[str, int]]:
    """Per product, a ``file:line`` to show a finding at when it has none of its own: where
    another finding of the product is located, else where a pin its steps move is written."""
    out: dict[str, tuple[str, int]] = {}
    for f in findings:
        loc = _own_location(f)
        if loc is not None:
            out.setdefault(f.product, loc)
    for step in plan.steps if plan is not None else ():
        for move in step.moves:
            loc = file_line(move.source)
            if loc is not None:
                out.setdefault(step.product, loc)
    return out


def location_of(
    f: Finding,
    fallback: Mapping[str, tuple[str, int]],
    changed: Mapping[str, Source] | None = None,
) -> tuple[str, int] | None:
    """Where to show ``f``: with ``--base`` the changed line when the change caused it, else its
    own file line, else its product's fallback; None when nothing was read from a file."""
    own = _own_location(f)
    if changed and f.scope != "state":
        lines = {p: file_line(c) for p, c in sorted(changed.items())}
        if own is not None and own in lines.values():
            return own
        loc = lines.get(f.product) or next((v for v in lines.values() if v is not None), None)
        if loc is not None:
            return loc
    if own is not None:
        return own
    return fallback.get(f.product)


# --------------------------------------------------------------------------- rules


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


def _rule_title(finding: Finding) -> str:
    if finding.hazard.startswith("requires:"):
        return f"A release of {finding.product} requires something the installation lacks"
    return finding.title


def _rule(finding: Finding, hazard: Hazard | None) -> dict[str, Any]:
    ident = rule_id(finding.hazard)
    text, markdown = _help(finding, hazard)
    rule: dict[str, Any] = {
        "id": ident,
        "name": "".join(p.capitalize() for p in re.split(r"[^A-Za-z0-9]+", ident) if p),
        "shortDescription": {"text": _rule_title(finding)},
        "fullDescription": {"text": _flat(finding.consequence or _rule_title(finding))},
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
        urls = [u for u in (reference_uri(r) for r in hazard.references) if u]
        if urls:
            rule["helpUri"] = urls[0]
    return rule


# --------------------------------------------------------------------------- results


def _hop(f: Finding) -> str:
    if f.from_version and f.to_version and f.from_version != f.to_version:
        return f"{f.product} {f.from_version} → {f.to_version}"
    if f.to_version or f.from_version:
        return f"{f.product} {f.to_version or f.from_version}"
    return f.product


def _message(f: Finding, name: str) -> str:
    status = "applies" if f.status == "applies" else "may apply"
    where = f"{name}: " if name else ""
    hop = _hop(f)
    parts = [f"{where}{f.title} ({f.severity}, {status}{'; ' + hop if hop else ''})."]
    if f.reason:
        parts.append(_flat(f.reason).rstrip(".") + ".")
    if f.status == "may-apply" and f.missing:
        parts.append("Missing facts: " + ", ".join(m.key for m in f.missing) + ".")
    if f.consequence:
        parts.append(_flat(f.consequence))
    return " ".join(parts)


def _level(f: Finding, fails: bool) -> tuple[str, str]:
    """(kind, level): error when it fails the gate; SARIF §3.27.9 wants level none unless fail."""
    if fails:
        return "fail", "error"
    if f.status == "applies":
        return "fail", "warning" if f.severity == "blocking" else _LEVEL[f.severity]
    return "review", "none"


def _result(
    f: Finding,
    rule_index: int,
    name: str,
    where: tuple[str, int],
    root: Path | None,
    *,
    fails: bool,
    accepted: Acceptance | None = None,
) -> dict[str, Any]:
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": _artifact(where[0], root),
            "region": {"startLine": max(where[1], 1)},
        }
    }
    ident = rule_id(f.hazard)
    kind, level = _level(f, fails)
    result: dict[str, Any] = {
        "ruleId": ident,
        "ruleIndex": rule_index,
        "kind": kind,
        "level": level,
        "message": {"text": _message(f, name)},
        "locations": [location],
        "partialFingerprints": {
            "upgradeplan/v2": hashlib.sha256(
                "|".join((ident, f.product, name)).encode()
            ).hexdigest()[:32]
        },
        "properties": {
            "installation": name,
            "status": f.status,
            "severity": f.severity,
            "failsGate": fails,
            "product": f.product,
            "from": f.from_version,
            "to": f.to_version,
            "evidence": [
                {"predicate": e.predicate, "description": e.description, "result": e.result.value}
                for e in f.evidence
            ],
        },
    }
    if accepted is not None:
        result["suppressions"] = [
            {
                "kind": "external",
                "status": "accepted",
                "justification": accepted.describe(),
                **(
                    {"location": _suppression_location(accepted.at, root)}
                    if accepted.at is not None and accepted.at.file_line
                    else {}
                ),
            }
        ]
    return result


def _suppression_location(source: Source, root: Path | None) -> dict[str, Any]:
    loc = source.file_line
    assert loc is not None
    return {
        "physicalLocation": {
            "artifactLocation": _artifact(loc[0], root),
            "region": {"startLine": loc[1]},
        }
    }


def _driver(rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": "upgradeplan",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": rules,
    }


def automation_id(name: str, root: Path | None = None) -> str:
    """``upgradeplan/<installation>/``: one category per installation or context (a ``@ref``
    of a ``--base`` run is left out, so the category stays the same from one PR to the next).
    An installation named by its path is named by its path from the repository root, so
    ``--gitops .``, ``./`` and ``"$PWD"`` give one category."""
    import posixpath

    clean = name.rsplit("@", 1)[0] if "@" in name else name
    if root is not None and clean and (os.path.isabs(clean) or os.path.exists(clean)):
        rel = os.path.relpath(os.path.abspath(clean), root)
        clean = "" if rel == "." else rel
    clean = posixpath.normpath(clean.replace(os.sep, "/")).strip("/") if clean else ""
    if clean in ("", "."):
        clean = "root"  # --gitops . : the repository itself
    return f"upgradeplan/{clean}/"


def _notification(
    level: str, text: str, loc: tuple[str, int] | None = None, root: Path | None = None
) -> Any:
    note: dict[str, Any] = {"level": level, "message": {"text": text}}
    if loc is not None:
        note["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(loc[0], root),
                    "region": {"startLine": max(loc[1], 1)},
                }
            }
        ]
    return note


def run_of(
    result: CheckResult,
    kb: KnowledgeBase | None,
    *,
    fail_on: str = "blocking",
    root: Path | None = None,
    stale: Sequence[Acceptance] = (),
) -> dict[str, Any]:
    """One SARIF run for one ``check`` result (an installation or context)."""
    hazards: Mapping[str, Hazard] = kb.hazards if kb is not None else {}
    name = result.name
    reported = [f for f in result.findings if f.status in ("applies", "may-apply")]
    accepted = list(result.accepted)
    every = [*reported, *(a.finding for a in accepted)]
    rule_ids: list[str] = []
    rules: list[dict[str, Any]] = []
    for f in sorted(every, key=lambda x: rule_id(x.hazard)):
        if rule_id(f.hazard) not in rule_ids:
            rule_ids.append(rule_id(f.hazard))
            rules.append(_rule(f, hazards.get(f.hazard)))
    fallback = fallback_locations(result.plan, every)
    changed = result.changed
    entry = entry_location(result)
    results = [
        _result(
            f,
            rule_ids.index(rule_id(f.hazard)),
            name,
            location_of(f, fallback, changed) or entry,
            root,
            fails=counts(f, fail_on),
        )
        for f in reported
    ]
    results += [
        _result(
            a.finding,
            rule_ids.index(rule_id(a.finding.hazard)),
            name,
            location_of(a.finding, fallback, changed) or entry,
            root,
            fails=False,
            accepted=a.acceptance,
        )
        for a in accepted
    ]
    if result.moved_pins:
        rules.append(_MOVED_RULE)
        results += [_moved(m, len(rules) - 1, name, entry, root, result) for m in result.moved_pins]
    notes: list[Any] = []
    if result.error is not None:
        notes.append(_notification("error", f"{name}: could not be read: {result.error}"))
    for text in result.notes:  # what was read, what could not be (GitOps files)
        level = "warning" if text.startswith("could not be read") else "note"
        notes.append(_notification(level, f"{name}: {text}", written_at(text), root))
    for rec in result.unreadable:  # each source that could not be read, with its cause
        notes.append(
            _notification(
                "warning",
                f"{name}: could not be read: {rec}",
                rec.at or written_at(rec.location),
                root,
            )
        )
    for acc in stale:
        notes.append(
            _notification(
                "warning",
                f"stale acceptance: {acc.label} matches no finding ({acc.describe()})",
                acc.at.file_line if acc.at is not None else None,
                root,
            )
        )
    invocation: dict[str, Any] = {"executionSuccessful": result.error is None}
    if notes:
        invocation["toolExecutionNotifications"] = notes
    properties: dict[str, Any] = {
        "installation": name,
        "verdict": result.shown_verdict,
        "exitCode": result.exit_code,
    }
    if result.reviewed:
        properties["reviewed_through"] = dict(sorted(result.reviewed.items()))
    if result.plan is not None and properties["verdict"] != NOTHING_TO_JUDGE:
        properties["recommended_verdict"] = (result.recommended or result.plan).verdict
    return {
        "tool": {"driver": _driver(rules)},
        "automationDetails": {"id": automation_id(name, root)},
        "invocations": [invocation],
        "originalUriBaseIds": {ROOT_ID: {"description": {"text": "The repository root."}}},
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": properties,
    }


MOVED_RULE_ID = "pin-moved"
_MOVED_RULE: dict[str, Any] = {
    "id": MOVED_RULE_ID,
    "name": "PinMoved",
    "shortDescription": {"text": "A chart pin this change moves"},
    "fullDescription": {"text": "A chart version the change moves, known or not."},
    "help": {"text": "Informational.", "markdown": "Informational."},
    "defaultConfiguration": {"level": "note"},
    "properties": {"tags": ["upgrade", "change"]},
}


def _moved(
    m: MovedPin, index: int, name: str, entry: tuple[str, int], root: Path | None, r: CheckResult
) -> dict[str, Any]:
    """A note-level result at the changed line of a moved pin: what the text says of it."""
    where = file_line(m.where) or entry
    said = moved_text(m, r.findings, r.reviewed, located=False).replace(" below", "")
    prefix = f"{name}: " if name else ""
    return {
        "ruleId": MOVED_RULE_ID,
        "ruleIndex": index,
        "kind": "informational",
        "level": "none",
        "message": {"text": f"{prefix}{said}."},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(where[0], root),
                    "region": {"startLine": max(where[1], 1)},
                }
            }
        ],
        "partialFingerprints": {
            "upgradeplan/v2": hashlib.sha256(
                "|".join((MOVED_RULE_ID, m.key, name, m.after or "")).encode()
            ).hexdigest()[:32]
        },
        "properties": {
            "installation": name,
            "failsGate": False,
            "object": m.key,
            "before": m.before,
            "after": m.after,
            "product": m.product,
        },
    }


def _relative(value: Any, prefixes: Sequence[tuple[str, str]]) -> Any:
    """``value`` with every absolute path under the repository root's folders written
    relative to the root (``prefixes``: absolute folder + ``/`` -> its relative spelling)."""
    if isinstance(value, str):
        for prefix, rel in prefixes:
            value = value.replace(prefix, rel)
        return value
    if isinstance(value, dict):
        return {k: _relative(v, prefixes) for k, v in value.items()}
    if isinstance(value, list):
        return [_relative(v, prefixes) for v in value]
    return value


def _prefixes(root: Path) -> list[tuple[str, str]]:
    """The root and its parent folders (not ``/`` itself), deepest first, each with the
    relative spelling of the same folder from the root (``""``, ``../``, ``../../``)."""
    out: list[tuple[str, str]] = []
    for depth, folder in enumerate([root, *root.parents]):
        if folder.parent == folder:
            break
        out.append((str(folder).rstrip("/") + "/", "../" * depth))
    return out


def log(
    results: Sequence[CheckResult],
    kb: KnowledgeBase | None,
    *,
    fail_on: str = "blocking",
    root: Path | None = None,
    stale: Sequence[Acceptance] = (),
) -> dict[str, Any]:
    """The SARIF log of a ``check`` run: one run per result (installation or context)."""
    runs = [
        run_of(r, kb, fail_on=fail_on, root=root, stale=stale if i == 0 else ())
        for i, r in enumerate(results)
    ]
    prefixes = _prefixes(root or Path.cwd().resolve())
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": _relative(runs, prefixes)}


def error_log(message: str, location: str = "", *, root: Path | None = None) -> dict[str, Any]:
    """A valid log for a run that failed before judging anything (bad input, an error)."""
    note = _notification("error", message, written_at(location) if location else None, root)
    note = _relative(note, _prefixes(root or Path.cwd().resolve()))
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": _driver([])},
                "automationDetails": {"id": "upgradeplan/error/"},
                "invocations": [
                    {"executionSuccessful": False, "toolExecutionNotifications": [note]}
                ],
                "results": [],
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
