"""Human text output. Colour only when asked for or on a terminal; NO_COLOR is honoured.

Every function returns a string; nothing here prints. Output is deterministic.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from upgradeplan.model import Evidence, Finding, Plan, Step
from upgradeplan.results import FIT_WORDS, NOTHING_TO_JUDGE
from upgradeplan.unreadable import Unreadable

if TYPE_CHECKING:
    from upgradeplan.results import (
        CheckResult,
        ConditionResult,
        Diagnosis,
        Explanation,
        MovedPin,
        PlanResult,
    )

ARROW = "→"

_STATUS_COLOUR = {"applies": "red", "may-apply": "yellow", "does-not-apply": "green"}
_VERDICT_COLOUR = {
    "blocked": "red",
    "undetermined": "yellow",
    "safe-with-actions": "cyan",
    "safe": "green",
}
_SEVERITY_COLOUR = {"blocking": "red", "warning": "yellow", "notice": "blue"}


def use_color(mode: str, stream: IO[Any] | None = None) -> bool:
    """--color always/never win; auto means a terminal and no NO_COLOR."""
    if mode == "always":
        return True
    if mode == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, fg: str | None = None, bold: bool = False) -> str:
        if not self.color or (fg is None and not bold):
            return text
        import click  # only for colour: a check's plain text needs no click

        return click.style(text, fg=fg, bold=bold)

    def verdict(self, verdict: str) -> str:
        return self(verdict, _VERDICT_COLOUR.get(verdict), bold=True)

    def status(self, status: str) -> str:
        return self(f"{status:<14}", _STATUS_COLOUR.get(status))

    def severity(self, severity: str) -> str:
        return self(f"{severity:<8}", _SEVERITY_COLOUR.get(severity))


def _value(value: object) -> str:
    if isinstance(value, str):
        return value if value else '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null (known absent)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={value[k]}" for k in sorted(value)) + "}"
    import json  # lists and numbers only: most outputs never get here

    return json.dumps(value)


def _indent(text: str, prefix: str) -> list[str]:
    return [prefix + line if line else prefix.rstrip() for line in text.rstrip("\n").splitlines()]


def _first_sentence(text: str) -> str:
    """The first sentence of the first paragraph, on one line."""
    paragraph = text.strip().split("\n\n", 1)[0]
    flat = " ".join(paragraph.split())
    match = _SENTENCE.match(flat)
    return match.group(1) if match else flat


_SENTENCE = re.compile(r"(.+?[.!?])(?=\s+[A-Z`(]|$)")


def evidence_lines(evidence: Sequence[Evidence], prefix: str) -> list[str]:
    """``observed <key> = <value> (from <source>)`` once per fact, then the missing keys."""
    out: list[str] = []
    seen: set[str] = set()
    for ev in evidence:
        for fact in ev.facts:
            if fact.key in seen:
                continue
            seen.add(fact.key)
            out.append(f"{prefix}observed {fact.key} = {_value(fact.value)} (from {fact.source})")
    return out


def finding_lines(f: Finding, s: Style, prefix: str = "  ") -> list[str]:
    hop = ""
    if f.from_version and f.to_version and f.from_version != f.to_version:
        hop = f" [{f.product} {f.from_version} {ARROW} {f.to_version}]"
    elif f.to_version:
        hop = f" [{f.product} {f.to_version}]"
    out = [f"{prefix}{s.status(f.status)} {s.severity(f.severity)} {s(f.hazard, bold=True)}{hop}"]
    inner = prefix + "    "
    out.append(f"{inner}{f.title}")
    if f.reason:
        out.append(f"{inner}why: {f.reason}")
    if f.location:
        out.append(f"{inner}at: {f.location}")
    out.extend(evidence_lines(f.evidence, inner))
    for m in f.missing:
        out.append(f"{inner}missing {m.key}: supply it with {m.how}")
    fixed_by = getattr(f, "fixed_by", ())
    if fixed_by:
        out.append(f"{inner}fixed by the actions: {', '.join(fixed_by)}")
    if f.status != "does-not-apply" and f.consequence:
        out.append(f"{inner}if ignored: {_first_sentence(f.consequence)}")
    if f.status != "does-not-apply" and f.avoid:
        out.append(f"{inner}avoid: {_first_sentence(f.avoid)}")
    return out


def out_of_scope(f: Finding) -> bool:
    """A finding whose hazard does not concern the hop at all (no condition was evaluated)."""
    return f.status == "does-not-apply" and not f.evidence and f.reason.startswith("not in scope")


def _order(findings: Sequence[Finding]) -> list[Finding]:
    rank = {"applies": 0, "may-apply": 1, "does-not-apply": 2}
    sev = {"blocking": 0, "warning": 1, "notice": 2}
    return sorted(findings, key=lambda f: (rank[f.status], sev[f.severity], f.hazard))


def path_lines(plan: Plan, prefix: str = "  ") -> list[str]:
    out = []
    for product, versions in sorted(plan.path.items()):
        out.append(f"{prefix}{product} {f' {ARROW} '.join(versions)}")
    for product, pins in sorted(plan.pin_path.items()):
        shown = [p if p is not None else "(none)" for p in pins]
        out.append(f"{prefix}pin {product} {f' {ARROW} '.join(shown)}")
    return out


def _missing_footer(findings: Sequence[Finding]) -> list[str]:
    keys = sorted({m.key for f in findings if f.status == "may-apply" for m in f.missing})
    if not keys:
        return []
    return [
        "Missing facts: " + ", ".join(keys),
        "  state them with --fact KEY=VALUE (docs/state-format.md), or read them with "
        "--kubeconfig, --snapshot or --gitops",
    ]


def _jump_title(plan: Plan | None) -> str:
    if plan is None:
        return ""
    if not plan.targets:
        current = ", ".join(f"{p} {v}" for p, v in sorted(plan.current.items()) if v)
        return f"the installation as it is ({current})" if current else "the installation as it is"
    parts = []
    for t in plan.targets:
        before = plan.current.get(t.product) or "?"
        parts.append(f"{t.product} {before} {ARROW} {t.version}")
    return ", ".join(parts)


def _could_not_read(command: str, name: str, error: str | None, s: Style) -> str:
    return f"{command}{name}: {s.verdict('undetermined')}: could not read: {error}"


def _findings_section(label: str, findings: Sequence[Finding], s: Style) -> list[str]:
    out = [label]
    for f in _order(findings):
        out.extend(finding_lines(f, s))
    return out


def _check_full(results: Sequence[CheckResult], s: Style) -> str:
    out: list[str] = []
    for r in results:
        if out:
            out.append("")
        name = f" [{r.name}]" if r.name else ""
        if r.error is not None:
            out.append(_could_not_read("check", name, r.error, s))
            continue
        out.extend(moved_lines(r))
        if r.shown_verdict == NOTHING_TO_JUDGE:
            out.append(f"check {_jump_title(r.plan)}{name}: nothing to judge")
            out.extend(f"  {note}" for note in r.notes)
            if not r.notes:
                out.append("  no product of the knowledge base was found installed here")
            out.extend(unreadable_lines(r.unreadable))
            continue
        out.append(f"check {_jump_title(r.plan)}{name}: {s.verdict(r.verdict_text)}")
        out.extend(f"  {note}" for note in r.notes)
        shown = [f for f in r.findings if not out_of_scope(f)]
        if not shown:
            out.append("  no known hazard concerns this move")
        else:
            label = "Findings on the direct jump:" if r.plan and r.plan.targets else "Findings:"
            out.extend(_findings_section(label, shown, s))
        others = sorted({f.hazard for f in r.findings if out_of_scope(f)})
        if others:
            out.append(f"  not in scope of this move: {', '.join(others)}")
        if r.recommended is not None:
            rec = r.recommended
            if rec.verdict == "blocked":
                out.append(f"No safe path ({s.verdict(rec.verdict)}); the least-bad path:")
            else:
                out.append(f"Recommended path ({s.verdict(rec.verdict)}):")
            out.extend(path_lines(rec))
            if rec.blocked_by:
                out.append(f"  blocked by: {', '.join(rec.blocked_by)}")
            out.append("  run 'upgradeplan plan' with the same inputs for the steps and actions")
        out.extend(_missing_footer(r.findings))
        noted = " ".join(r.notes)
        out.extend(unreadable_lines([u for u in r.unreadable if u.source not in noted]))
    return "\n".join(out) + "\n"


def computed_for(m: MovedPin, findings: Sequence[Finding]) -> list[Finding]:
    """The findings of the checks computed from the charts of the moved pin ``m``."""
    return [
        f
        for f in findings
        if f.hazard.startswith("chart.") and f.product == m.chart and f.to_version == m.after
    ]


def moved_judged(m: MovedPin, findings: Sequence[Finding]) -> bool:
    """Whether something judged the moved pin: the knowledge or a pack (it pins a product),
    or the checks computed from its charts (their archives were read)."""
    computed = computed_for(m, findings)
    return m.product is not None or (
        bool(computed) and not any(f.reason.startswith(CHARTS_UNREAD) for f in computed)
    )


def moved_text(
    m: MovedPin,
    findings: Sequence[Finding] = (),
    reviewed: Mapping[str, str] | None = None,
    *,
    located: bool = True,
    unread_notes: dict[str, int] | None = None,
) -> str:
    """``cert-manager v1.16.0 → v1.16.1 (file:line): not in the knowledge, no known hazards``;
    with the checks computed from its charts among ``findings``, what they did; for a product
    the move takes above its ``reviewed_through`` (``reviewed``), that no hazard is known.
    With ``unread_notes``, why an archive could not be read is numbered there, said once."""
    where = f" ({m.where})" if m.where is not None and located else ""
    computed = computed_for(m, findings)
    unread = next((f.reason for f in computed if f.reason.startswith(CHARTS_UNREAD)), "")
    if unread and unread_notes is not None:
        number = unread_notes.setdefault(unread[len(CHARTS_UNREAD) :], len(unread_notes) + 1)
        said = f"checks computed from the charts may apply: archive not read [{number}]"
    elif unread:
        said = "checks computed from the charts may apply: " + unread[len(CHARTS_UNREAD) :]
    elif computed:
        said = "checks computed from the charts below"
    else:
        said = ""
    if m.product is None:
        return f"{m.describe()}{where}: not in the knowledge, " + (said or "no known hazards")
    through = (reviewed or {}).get(m.product)
    if through is not None:
        said = f"no known hazards (knowledge reviewed through {through})" + (
            f"; {said}" if said else ""
        )
    return f"{m.describe()}{where}: {m.product}, judged below" + (f"; {said}" if said else "")


CHARTS_UNREAD = "the chart archive could not be read: "  # upgradeplan.charts.checks says so


def moved_lines(r: CheckResult) -> list[str]:
    """With ``--base``: every chart pin the change moves, before the verdict."""
    if not r.moved_pins:
        return []
    name = f" [{r.name}]" if r.name else ""
    notes: dict[str, int] = {}
    shown = [f"  {moved_text(m, r.findings, r.reviewed, unread_notes=notes)}" for m in r.moved_pins]
    why = [f"  [{n}] {CHARTS_UNREAD}{reason}" for reason, n in notes.items()]
    return [f"pins this change moves{name}:", *shown, *why]


def unreadable_lines(unread: Sequence[Unreadable]) -> list[str]:
    """``Could not be read`` and one line per source, with the facts it leaves unknown."""
    if not unread:
        return []
    out = ["Could not be read (what it would tell is unknown, never assumed):"]
    for rec in unread:
        keys = f" [unknown: {', '.join(rec.keys)}]" if rec.keys else ""
        out.append(f"  {rec}{keys}")
    return out


def step_verdict(s: Style, words: str) -> str:
    """A step's verdict after its title: ``(safe)``; a verdict that carries its own
    parenthesis (``no known hazards (knowledge reviewed through X)``) follows a dash."""
    return f"— {s.verdict(words)}" if "(" in words else f"({s.verdict(words)})"


def step_lines(index: int, step: Step, s: Style, verdict: str | None = None) -> list[str]:
    out = [
        f"Step {index}: {step.product} {step.from_version} {ARROW} {step.to_version} "
        + step_verdict(s, verdict or step.verdict)
    ]
    for m in step.moves:
        where = f" ({m.source})" if m.source else ""
        before = m.before if m.before is not None else "(none)"
        after = m.after if m.after is not None else "(none)"
        out.append(f"  move {m.kind} {m.product}: {before} {ARROW} {after}{where}")
    shown = [f for f in step.findings if f.status != "does-not-apply"]
    if shown:
        out.append("  findings:")
        for f in _order(shown):
            out.extend(finding_lines(f, s, prefix="    "))
    for when in ("before", "after"):
        for a in [a for a in step.actions if a.when == when]:
            fixes = f" (fixes {', '.join(a.fixes)})" if a.fixes else ""
            out.append(f"  {when} the upgrade: {a.title} [{a.migration}, {a.kind}]{fixes}")
            out.extend(_indent(a.content, "      "))
            if a.placeholders:
                out.append(f"      fill in: {', '.join(a.placeholders)}")
    if step.notes:
        out.append("  notes from the sources:")
        out.extend(f"    {note}" for note in step.notes)
    if step.verify:
        out.append("  verify:")
        out.extend(f"    $ {cmd}" for cmd in step.verify)
    return out


def _plan_full(results: Sequence[PlanResult], s: Style) -> str:
    out: list[str] = []
    for r in results:
        if out:
            out.append("")
        name = f" [{r.name}]" if r.name else ""
        if r.error is not None or r.plan is None:
            out.append(_could_not_read("plan", name, r.error, s))
            continue
        plan = r.plan
        out.append(f"plan {_jump_title(plan)}{name}: {s.verdict(r.verdict_text)}")
        if plan.held:
            out.append(f"  held: {', '.join(plan.held)}")
        if plan.blocked_by:
            out.append(f"  no safe path; blocked by: {', '.join(plan.blocked_by)}")
        if plan.steps:
            out.append("Path:")
            out.extend(path_lines(plan))
            for i, step in enumerate(plan.steps, start=1):
                out.extend(step_lines(i, step, s, r.step_text(step)))
        elif not plan.blocked_by:
            out.append("  nothing to do: already at the target")
        blocking = [f for f in plan.direct.findings if f.status != "does-not-apply"]
        if plan.blocked_by and blocking and not plan.steps:
            out.extend(_findings_section("Findings on the direct jump:", blocking, s))
        all_findings = [f for st in plan.steps for f in st.findings] + list(plan.direct.findings)
        out.extend(_missing_footer(all_findings))
    return "\n".join(out) + "\n"


def render_check(results: Sequence[CheckResult], color: bool = False) -> str:
    """``check`` as text with everything (``-v``): evidence, what does not apply, what is not
    in scope. The first screen is :func:`upgradeplan.render.firstscreen.check_screen`."""
    return _check_full(results, Style(color))


def render_plan(results: Sequence[PlanResult], color: bool = False) -> str:
    """``plan`` as text with everything (``-v``): evidence, action content, verify commands.
    The first screen is :func:`upgradeplan.render.firstscreen.plan_screen`."""
    return _plan_full(results, Style(color))


_TRUTH_TEXT = {
    "true": "the conditions hold",
    "false": "the conditions do not hold",
    "unknown": "undetermined (facts are missing)",
}


def _condition_state(result: str, negated: bool) -> str:
    """Whether the condition (with its ``not``) holds on the state."""
    if result == "unknown":
        return "unknown"
    holds = (result == "true") != negated
    return "holds" if holds else "does not hold"


def _claim(c: ConditionResult) -> str:
    return f"NOT ({c.description})" if c.negated else c.description


def render_explain(e: Explanation, color: bool = False) -> str:
    s = Style(color)
    out: list[str] = []
    if e.hazard is not None:
        h = e.hazard
        out.append(f"{s(h.id, bold=True)}: {h.title}")
        scope: str = h.scope
        if h.stop:
            scope += f", stop {h.stop}"
        if h.from_range:
            scope += f", from {h.from_range}"
        if h.to_range:
            scope += f", to {h.to_range}"
        out.append(
            f"  product {h.product}, severity {s.severity(h.severity).strip()}, scope {scope}"
        )
        out.append(f"  defined at {h.location}")
        for label, text in (("What happens", h.consequence), ("Why", h.description)):
            if text:
                out.append(f"{label}:")
                out.extend(_indent(text, "  "))
        if e.conditions or e.finding is not None or e.truth:
            hop_from, hop_to = e.hop
            hop = f"{hop_from or '?'} {ARROW} {hop_to or '?'}"
            if e.finding is not None:
                status = s.status(e.finding.status).strip()
            else:
                status = _TRUTH_TEXT.get(e.truth, e.truth)
            out.append(f"On this installation ({hop}): {status}")
            if hop_to is None and h.scope in ("skip", "transition"):
                out.append("  (no hop given: pass --to PRODUCT=VERSION to judge a hop)")
            if e.finding is not None and e.finding.reason:
                out.append(f"  why: {e.finding.reason}")
            for c in e.conditions:
                out.append(f"  condition {_condition_state(c.result, c.negated)}: {_claim(c)}")
                for key, value, source in c.observed:
                    out.append(f"    observed {key} = {value} (from {source})")
                for m in c.missing:
                    out.append(f"    missing {m.key}: supply it with {m.how}")
        for label, text in (("Avoid", h.avoid), ("Recover", h.recover)):
            if text:
                out.append(f"{label}:")
                out.extend(_indent(text, "  "))
        if h.recover_commands:
            out.extend(f"  $ {cmd}" for cmd in h.recover_commands)
        if h.migrations:
            out.append(f"Migrations: {', '.join(h.migrations)}")
        if h.verify:
            out.append("Verify:")
            out.extend(f"  $ {cmd}" for cmd in h.verify)
        if h.symptoms:
            out.append("Symptoms:")
            out.extend(f"  /{sym.pattern}/ in {sym.where}" for sym in h.symptoms)
    elif e.release is not None:
        r = e.release
        out.append(f"{s(r.key, bold=True)}: {r.title}")
        if r.date:
            out.append(f"  released {r.date}")
        out.append(f"  defined at {r.location}")
        if r.summary:
            out.extend(_indent(r.summary, "  "))
        if r.bom:
            out.append("BOM: " + ", ".join(f"{p}={v}" for p, v in sorted(r.bom.items())))
        if r.requires:
            out.append("Requires: " + ", ".join(f"{p} {c}" for p, c in sorted(r.requires.items())))
        for change in r.changes:
            out.append(f"  change ({change.kind}): {change.summary}")
        for n in r.notes:
            out.append(f"  {n.condition} {n.text}")
            out.extend(f"    $ {cmd}" for cmd in n.commands)
        if r.verify:
            out.append("Verify:")
            out.extend(f"  $ {cmd}" for cmd in r.verify)
    elif e.migration is not None:
        mig = e.migration
        out.append(f"{s(mig.id, bold=True)}: {mig.title}")
        out.append(f"  kind {mig.kind}, product {mig.product}, runs {mig.when} the step")
        out.append(f"  defined at {mig.location}")
        if mig.description:
            out.extend(_indent(mig.description, "  "))
        out.append("Template:")
        out.extend(_indent(mig.template, "  "))
    elif e.product is not None:
        p = e.product
        out.append(f"{s(p.id, bold=True)}: {p.name} ({p.kind})")
        out.append(f"  defined at {p.location}")
        if p.description:
            out.extend(_indent(p.description, "  "))
    if e.related:
        if e.kind == "migration":
            out.append(f"Fixes: {', '.join(e.related)}")
        elif e.kind != "hazard":
            out.append(f"Hazards: {', '.join(e.related)}")
    return "\n".join(out) + "\n"


def render_diagnose(
    diagnoses: Sequence[Diagnosis],
    color: bool = False,
    fits: Sequence[int | None] = (),
    notes: Sequence[str] = (),
) -> str:
    """Best match first; ``fits`` (per diagnosis, with a state) and ``notes`` (placeholders
    filled, the cloud chosen) from :mod:`upgradeplan.triage`."""

    s = Style(color)
    out: list[str] = [f"Note: {n}" for n in notes]
    if not diagnoses:
        return "\n".join([*out, "No known symptom matches this text."]) + "\n"
    for i, d in enumerate(diagnoses, start=1):
        h = d.hazard
        if out:
            out.append("")
        fit = fits[i - 1] if i - 1 < len(fits) else None
        said = f" [{FIT_WORDS[fit]}]" if fit is not None else ""
        hint = ", a hint only: a generic line" if d.confidence == "low" else ""
        out.append(
            f"{i}. {s(h.id, bold=True)} ({s.severity(h.severity).strip()}; "
            f"{d.confidence} confidence{hint}): {h.title}{said}"
        )
        for m in d.matches:
            span = m.lines or (m.line_number,)
            at = f"line {span[0]}" if len(span) == 1 else f"lines {span[0]}-{span[-1]}"
            out.append(f"   {at}: {m.line}")
            out.append(f"     matches /{m.pattern}/")
        if d.confirm:
            out.append("   Confirm with:")
            out.extend(f"     {key}" + (f": {how}" if how else "") for key, how in d.confirm)
        if h.recover:
            out.append("   Recover:")
            out.extend(_indent(h.recover, "     "))
        out.extend(f"     $ {cmd}" for cmd in h.recover_commands)
        if h.migrations:
            out.append(f"   Migrations: {', '.join(h.migrations)}")
        if h.verify:
            out.append("   Verify:")
            out.extend(f"     $ {cmd}" for cmd in h.verify)
    return "\n".join(out) + "\n"
