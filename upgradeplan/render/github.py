"""GitHub Actions workflow commands: one annotation per finding that applies or may apply.

``::error file=clusters/prod/bom.yaml,line=12,title=[prod] …::message`` puts the finding on
the pin's line in the pull request; every title names its installation or context. The
closing summary states the verdict the exit code reports (accepted findings do not count).
Bad input at a known ``file:line`` is an ``::error file=…,line=…::`` annotation too
(:func:`error_annotation`). Values are escaped as the runner expects (``%``, CR, LF in
messages; also ``:`` and ``,`` in properties).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from upgradeplan import unreadable
from upgradeplan.model import Finding, Plan
from upgradeplan.provenance import Source
from upgradeplan.render.sarif import (
    counts,
    fallback_locations,
    file_line,
    location_of,
)
from upgradeplan.render.text import moved_text
from upgradeplan.results import EXIT_OF_VERDICT, NOTHING_TO_JUDGE

if TYPE_CHECKING:
    from upgradeplan.accept import Acceptance
    from upgradeplan.results import CheckResult

_COMMAND = {"blocking": "error", "warning": "warning", "notice": "notice"}
_LEADING_LOCATION = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+)(?::\d+)?: ")


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(f: Finding, fails: bool) -> str:
    if fails:
        return "error"
    if f.severity == "blocking" or f.status == "applies":
        return "warning" if f.severity == "blocking" else _COMMAND[f.severity]
    return "notice"  # may apply below the threshold: an unknown never looks certain


def annotation(
    f: Finding,
    fallback: Source | None = None,
    *,
    name: str = "",
    fails: bool = False,
    where: tuple[str, int] | None = None,
    accepted: Acceptance | None = None,
) -> str:
    """One workflow command line for ``f`` (at ``where``, else its own file or ``fallback``)."""
    props: list[str] = []
    loc = where
    if loc is None:
        own = file_line(fallback)
        loc = location_of(f, {f.product: own} if own is not None else {})
    if loc is not None:
        props.append(f"file={escape_property(loc[0])}")
        props.append(f"line={max(loc[1], 1)}")
    status = "applies" if f.status == "applies" else "may apply"
    if accepted is not None:
        status += ", accepted"
    prefix = f"[{name}] " if name else ""
    props.append(f"title={escape_property(f'{prefix}{f.hazard} ({f.severity}, {status})')}")
    hop = f.product
    if f.from_version and f.to_version and f.from_version != f.to_version:
        hop += f" {f.from_version} → {f.to_version}"
    elif f.to_version or f.from_version:
        hop += f" {f.to_version or f.from_version}"
    lines = [f"{prefix}{f.title} ({hop})." if hop else f"{prefix}{f.title}."]
    if accepted is not None:
        lines.append(f"Accepted: {accepted.describe()}")
    if f.reason:
        lines.append(f.reason)
    if f.status == "may-apply" and f.missing:
        lines.append("Missing facts: " + ", ".join(m.key for m in f.missing))
    if f.consequence:
        lines.append(" ".join(f.consequence.split()))
    if f.avoid:
        lines.append("Avoid: " + " ".join(f.avoid.split()))
    command = "notice" if accepted is not None else _command(f, fails)
    return f"::{command} {','.join(props)}::{escape_data(chr(10).join(lines))}"


def _path_text(plan: Plan) -> str:
    return " ; ".join(f"{p}: {' → '.join(vs)}" for p, vs in plan.path.items())


def summary(result: CheckResult) -> str:
    """The closing line of one result: the verdict its exit code reports, then the path."""
    name = f" [{result.name}]" if result.name else ""
    text = f"upgradeplan{name}: verdict {result.verdict_text} (exit {result.exit_code})"
    if result.error is not None:
        return f"{text}; could not be read: {result.error}"
    if result.moved_pins:
        text += f"; pins moved: {', '.join(m.describe() for m in result.moved_pins)}"
    if result.accepted:
        text += f"; accepted: {', '.join(sorted({a.finding.hazard for a in result.accepted}))}"
    rec = result.recommended
    if rec is not None and rec.steps and rec.verdict == "blocked":
        blockers = ", ".join(rec.blocked_by) or "a blocking hazard"
        text += f"; no safe path ({blockers}): the least-bad path is {_path_text(rec)}"
    elif rec is not None and rec.steps:
        text += f"; recommended path {_path_text(rec)} ({rec.verdict})"
    return text


def render_check(
    results: Sequence[CheckResult],
    *,
    fail_on: str = "blocking",
    code: int | None = None,
    stale: Sequence[Acceptance] = (),
) -> str:
    """Annotations for every result (each naming its installation), then one summary line per
    result and, with several, the run's verdict."""
    out: list[str] = []
    summaries: list[str] = []
    for r in results:
        at = f"[{r.name}] " if r.name else ""
        for m in r.moved_pins:  # --base: every chart pin the change moves, first
            loc = file_line(m.where)
            props = f"file={escape_property(loc[0])},line={loc[1]}," if loc else ""
            title = escape_property(f"upgradeplan {at}pin moved")
            out.append(f"::notice {props}title={title}::{escape_data(moved_text(m))}")
        told = unreadable.told(r.notes, r.unreadable)  # the notes and every unread source
        out += [f"::notice title=upgradeplan {at}read::{escape_data(n)}" for n in told]
        reported = [f for f in r.findings if f.status in ("applies", "may-apply")]
        every = [*reported, *(a.finding for a in r.accepted)]
        fallback = fallback_locations(r.plan, every)
        for f in reported:
            where = location_of(f, fallback, r.changed)
            out.append(annotation(f, name=r.name, fails=counts(f, fail_on), where=where))
        for a in r.accepted:
            where = location_of(a.finding, fallback, r.changed)
            out.append(annotation(a.finding, name=r.name, where=where, accepted=a.acceptance))
        if r.error is not None:
            out.append(
                f"::warning title={escape_property(f'[{r.name}] could not be read')}::"
                f"{escape_data(r.error)}"
            )
        summaries.append(summary(r))
    for acc in stale:
        loc = acc.at.file_line if acc.at is not None else None
        props = f"file={escape_property(loc[0])},line={loc[1]}," if loc else ""
        out.append(
            f"::warning {props}title=stale acceptance::"
            f"{escape_data(f'{acc.label} matches no finding ({acc.describe()})')}"
        )
    for text in summaries:
        level = "error" if " (exit 3)" in text or " (exit 4)" in text else "notice"
        out.append(f"::{level} title=upgradeplan::{escape_data(text)}")
    if len(results) > 1 and code is not None:
        verdicts = {int(v): k for k, v in EXIT_OF_VERDICT.items() if k != "safe-with-actions"}
        overall = verdicts.get(code, "error")
        if all(r.shown_verdict == NOTHING_TO_JUDGE for r in results):
            overall = NOTHING_TO_JUDGE
        out.append(f"::notice title=upgradeplan::upgradeplan: run verdict {overall} (exit {code})")
    return "\n".join(out) + "\n"


def error_annotation(message: str, location: str = "") -> str:
    """Bad input as an annotation, at its ``file:line`` when the error names one."""
    where = location
    if not where:
        m = _LEADING_LOCATION.match(message)
        where = f"{m.group('file')}:{m.group('line')}" if m else ""
    props = ["title=upgradeplan"]
    if where:
        file, _, line = where.rpartition(":")
        if file and line.isdigit():
            props = [f"file={escape_property(file)}", f"line={line}", *props]
    return f"::error {','.join(props)}::{escape_data(message)}"
