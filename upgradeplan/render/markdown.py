"""Markdown: the UPGRADE.md of a product, and a runbook for one installation's plan.

Both come from jinja2 templates shipped as package data (``upgradeplan/templates/*.j2``),
rendered in the sandboxed, ``StrictUndefined`` environment of
:func:`upgradeplan.kb.templating.make_env`: a field a template names and the view lacks fails
loudly instead of rendering blank.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from upgradeplan.conditions.hints import hint_parts, missing_fact_hint
from upgradeplan.escape import code, fence, md_text
from upgradeplan.kb.templating import make_env as kb_env
from upgradeplan.model import (
    Action,
    Finding,
    KnowledgeBase,
    MissingFact,
    Move,
    Plan,
    State,
    Step,
)
from upgradeplan.render import upgrade_doc
from upgradeplan.render.graphviz import path_view, to_mermaid
from upgradeplan.results import reviewed_words
from upgradeplan.versions import is_exact

if TYPE_CHECKING:
    from jinja2 import Template

WIDTH = 100


# --------------------------------------------------------------------------- environment


_NBSP = "\u00a0"


def _keep_code_spans(text: str) -> str:
    """Spaces inside `code spans` become no-break spaces so wrapping never splits a span."""
    parts = text.split("`")
    for i in range(1, len(parts), 2):
        if i < len(parts) - 1:  # a closed span
            parts[i] = parts[i].replace(" ", _NBSP)
    return "`".join(parts)


_RAW_TAG = re.compile(r"(?<!\\)<(?=[A-Za-z/!?])")


def escape_md(text: str) -> str:
    """``<name>`` outside code spans as ``\\<name>``: GitHub's sanitiser drops what looks
    like an HTML tag (``a value in <gitops-namespace>`` would read ``a value in ``)."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # outside the code spans
        parts[i] = _RAW_TAG.sub(r"\\<", parts[i])
    if len(parts) % 2 == 0:  # an unclosed backtick: the rest is prose too
        parts[-1] = _RAW_TAG.sub(r"\\<", parts[-1])
    return "`".join(parts)


def wrap_md(text: str, indent: str = "", first: str = "") -> str:
    """Wrap a paragraph at :data:`WIDTH` (code spans kept whole, raw ``<tags>`` escaped);
    continuation lines get ``indent``, the first line starts with ``first``."""
    flat = escape_md(" ".join(str(text).split()))
    if not flat:
        return first.rstrip()
    wrapped = textwrap.fill(
        _keep_code_spans(flat),
        width=WIDTH,
        initial_indent=first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return wrapped.replace(_NBSP, " ")


def bullet_md(bullet: upgrade_doc.Bullet) -> str:
    """``- **Condition** (aside): text`` (``- **None.** text`` when the condition is a sentence)."""
    head = f"**{bullet.condition}**"
    if bullet.aside:
        head += f" {bullet.aside}"
    if bullet.text:
        head += bullet.sep + bullet.text
    return wrap_md(head, indent="  ", first="- ")


def _value(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def finding_md(f: FindingView) -> str:
    """A finding as a bullet: what, why (with the observed facts and their sources), what
    happens and how to recover; a finding that may apply names the facts that would settle it."""
    status = {"applies": "applies", "may-apply": "may apply"}.get(f.status, f.status)
    head = f"**`{f.hazard}`** ({f.severity}, {status}): {f.title}"
    if f.where:
        head += f" — {f.where}"
    lines = [wrap_md(head, indent="  ", first="- ")]
    if f.status == "may-apply":
        if f.missing:
            lines.append(wrap_md("; ".join(f.missing), indent="    ", first="  - Missing: "))
        return "\n".join(lines)
    if f.reason:
        lines.append(wrap_md(f.reason, indent="  ", first="  "))
    for fact in f.evidence:
        lines.append(wrap_md(fact, indent="    ", first="  - Observed: "))
    if f.consequence:
        lines.append(wrap_md(f.consequence, indent="    ", first="  - What happens: "))
    if f.recover:
        lines.append(wrap_md(f.recover, indent="    ", first="  - Recover: "))
    return "\n".join(lines)


def action_md(a: ActionView) -> str:
    """An action as a bullet (what, which migration, what it fixes) and its code block."""
    lines = [wrap_md(a.head, indent="  ", first="- ")]
    if a.placeholders:
        lines.append(wrap_md(f"Fill in: {a.placeholders}.", indent="  ", first="  "))
    ticks = fence(a.lines)  # longer than any backtick run in the content
    lines += ["", f"  {ticks}{a.lang}"]
    lines += [f"  {line}" if line else "" for line in a.lines]
    lines.append(f"  {ticks}")
    return "\n".join(lines)


def make_env() -> Any:
    env = kb_env()
    env.filters["wrap_md"] = wrap_md
    env.filters["bullet_md"] = bullet_md
    env.filters["finding_md"] = finding_md
    env.filters["action_md"] = action_md
    return env


@lru_cache(maxsize=8)
def template(name: str) -> Template:
    """A template from ``upgradeplan/templates`` (package data)."""
    from importlib.resources import files

    source = (files("upgradeplan") / "templates" / name).read_text(encoding="utf-8")
    tpl: Template = make_env().from_string(source)
    return tpl


def _finish(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line == "" and out and out[-1] == "":
            continue  # one blank line between blocks
        out.append(line)
    while out and out[0] == "":
        out.pop(0)
    return "\n".join(out).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- UPGRADE.md


def upgrade_md(
    kb: KnowledgeBase,
    product: str,
    *,
    from_version: str | None = None,
    to_version: str | None = None,
    next_only: bool = False,
) -> str:
    """The UPGRADE.md of ``product``: the whole document, or the chosen sections only."""
    releases = upgrade_doc.select(
        kb, product, from_version=from_version, to_version=to_version, next_only=next_only
    )
    doc = upgrade_doc.document(kb, product, releases)
    whole = not (from_version or to_version or next_only)
    return _finish(template("upgrade_md.j2").render(doc=doc, whole=whole))


# --------------------------------------------------------------------------- runbook


class FindingView(Struct, frozen=True):
    hazard: str
    title: str
    severity: str
    status: str
    where: str
    reason: str
    evidence: tuple[str, ...]
    missing: tuple[str, ...]
    consequence: str
    recover: str


class ActionView(Struct, frozen=True):
    head: str  # "**Before the step**: title (`migration`; fixes …)"
    placeholders: str
    lang: str
    lines: tuple[str, ...]


class StepView(Struct, frozen=True):
    heading: str
    summary: str
    moves: tuple[str, ...]
    findings: tuple[FindingView, ...]
    ruled_out: str
    actions: tuple[ActionView, ...]
    move_label: str
    move_text: str
    verify: tuple[str, ...]


class RunbookView(Struct, frozen=True):
    title: str
    intro: str
    verdict_line: str
    direct_line: str
    blocked_by: str
    mermaid: str
    direct_findings: tuple[FindingView, ...]
    state_findings: tuple[FindingView, ...]
    now_actions: tuple[ActionView, ...]
    steps: tuple[StepView, ...]


_VERDICT_WORDS = {
    "safe": "safe — nothing applies and nothing needs doing beyond the version moves.",
    "safe-with-actions": "safe with actions — follow the steps in order, with their actions.",
    "blocked": "blocked — no path avoids a blocking hazard.",
    "undetermined": "undetermined — a fact needed to rule out a blocking hazard is missing.",
}


def _how(m: MissingFact) -> str:
    """A missing fact's hint as Markdown: the text escaped, each kubectl command a code span."""

    if m.how != missing_fact_hint(m.key):
        return md_text(m.how)  # a hint worded elsewhere: all text
    how, shown = hint_parts(m.key)
    said = [code(cmd) + (f" ({md_text(field)})" if field else "") for cmd, field in shown]
    return md_text(how) + (f"; shown by {' or '.join(said)}" if said else "")


def _finding_view(f: Finding) -> FindingView:
    observed: list[str] = []
    for ev in f.evidence:
        for fact in ev.facts:
            line = f"{code(fact.key)} = {code(_value(fact.value))} ({md_text(fact.source)})"
            if line not in observed:
                observed.append(line)
    missing = tuple(f"{code(m.key)} ({_how(m)})" for m in f.missing)
    return FindingView(
        hazard=f.hazard,
        title=f.title,
        severity=f.severity,
        status=f.status,
        where=code(f.location) if f.location else "",
        reason=f.reason,
        evidence=tuple(observed),
        missing=missing,
        consequence=" ".join(f.consequence.split()) if f.status == "applies" else "",
        recover=" ".join(f.recover.split()) if f.status == "applies" else "",
    )


def _key(f: Finding) -> tuple[str, str]:
    return (f.hazard, f.status)


def _relevant(
    findings: Sequence[Finding], shown: set[tuple[str, str]] | None = None
) -> tuple[FindingView, ...]:
    """Findings that apply or may apply, applying ones first; those already ``shown``
    (state hazards listed once for the installation as it is) are left out."""
    chosen = [
        f
        for f in findings
        if f.status in ("applies", "may-apply") and (shown is None or _key(f) not in shown)
    ]
    chosen.sort(key=lambda f: 0 if f.status == "applies" else 1)
    return tuple(_finding_view(f) for f in chosen)


def _move_text(m: Move, state: State | None, pin_moves: frozenset[str] = frozenset()) -> str:
    what = f"`{m.product}`" if m.kind == "installed" else f"pin of `{m.product}`"
    text = f"{what}: {code(m.before or 'none')} → {code(m.after or 'none')}"
    if m.source is not None and m.source.file_line is not None:
        text += f" (in {code(m.source)})"
    elif m.kind == "installed" and state is not None and m.product not in pin_moves:
        # a product pinned exactly in a file moves by editing that pin
        pin = state.get(f"pin.{m.product}")
        value = pin.value if pin is not None and pin.source.file_line else None
        if pin is not None and isinstance(value, str) and is_exact(value):
            text += f" (pinned in {code(pin.source)})"
    return text


_LANG = {
    "command": "sh",
    "helmrelease-patch": "yaml",
    "json6902": "yaml",
    "manifest": "yaml",
    "bom-pin": "yaml",
    "values-edit": "yaml",
}


def _action_view(a: Action, *, now: bool = False) -> ActionView:
    label = "Now" if now else ("Before the step" if a.when == "before" else "After the step")
    head = f"**{label}**: {a.title} (`{a.migration}`"
    if a.fixes:
        head += "; fixes " + ", ".join(f"`{h}`" for h in a.fixes)
    head += ")"
    return ActionView(
        head=head,
        placeholders=", ".join(f"`{p}`" for p in a.placeholders),
        lang=_LANG.get(a.kind, ""),
        lines=tuple(a.content.rstrip("\n").split("\n")),
    )


def _step_view(
    kb: KnowledgeBase,
    n: int,
    total: int,
    step: Step,
    shown: set[tuple[str, str]],
    state: State | None,
) -> StepView:
    rel = kb.release(step.product, step.to_version)
    pin_moves = frozenset(m.product for m in step.moves if m.kind == "pin")
    title = f" ({rel.title})" if rel is not None and rel.title else ""
    heading = f"Step {n} of {total}: {step.product} {step.from_version} → {step.to_version}{title}"
    ruled = [f"`{f.hazard}`" for f in step.findings if f.status == "does-not-apply"]
    verify = step.verify or (rel.verify if rel is not None else ())
    befores = [a for a in step.actions if a.when == "before"]
    afters = [a for a in step.actions if a.when != "before"]
    return StepView(
        heading=heading,
        summary=" ".join(rel.summary.split()) if rel is not None else "",
        moves=tuple(dict.fromkeys(_move_text(m, state, pin_moves) for m in step.moves)),
        findings=_relevant(step.findings, shown),
        ruled_out=", ".join(ruled),
        actions=tuple(_action_view(a) for a in (*befores, *afters)),
        move_label="The step",
        move_text="make the changes listed above (`upgradeplan patch` writes them as diffs "
        "of your files) and let Flux reconcile; do not start the next step before this one "
        "has rolled out.",
        verify=tuple(verify),
    )


_NOW_WORDS = {
    "safe": "safe — nothing applies to what runs now.",
    "safe-with-actions": "safe with actions — apply the fixes below.",
    "blocked": "blocked — a blocking hazard applies to what runs now; apply the fixes below.",
    "undetermined": "undetermined — a fact needed to rule out a blocking hazard is missing.",
}


def _verdict_line(plan: Plan, reviewed: Mapping[str, str]) -> str:
    if reviewed and plan.verdict in ("safe", "safe-with-actions"):
        return (
            f"{reviewed_words(reviewed)} — nothing known applies, but the knowledge was not "
            "reviewed this far, so this is not called safe."
        )
    return (_VERDICT_WORDS if plan.targets else _NOW_WORDS)[plan.verdict]


def runbook(
    plan: Plan,
    kb: KnowledgeBase,
    state: State | None = None,
    *,
    now: Sequence[Action] = (),
    reviewed: Mapping[str, str] | None = None,
) -> str:
    """An UPGRADE-style runbook for this installation: one section per step of ``plan``.

    ``reviewed`` (product -> ``reviewed_through``) names the products the path takes above
    their reviewed knowledge: a green verdict then reads "no known hazards", never "safe".

    ``now`` are the migrations that fix what applies to the installation as it is (state
    and landing hazards on what runs now; :func:`upgradeplan.api.now_actions`), rendered
    with this installation's names. Without targets the runbook is about the installation
    as it is.
    """

    targets = "; ".join(
        f"{t.product} {plan.current.get(t.product) or '?'} → {t.version}" for t in plan.targets
    )
    name = (state.name if state is not None else "") or plan.state_name
    if name and name != "stated":
        who = f"the installation {code(name)}"
    else:
        who = "this installation (as stated on the command line)"
    n = len(plan.steps)
    names = (
        "Every command and patch below uses this installation's names; a value in "
        "`<angle brackets>` was not known and must be filled in."
    )
    if plan.targets:
        intro = f"For {who}: {n} step{'s' if n != 1 else ''}, in order. {names}"
    else:
        intro = f"For {who}, as it is: no upgrade was asked. {names}"
    if plan.held:
        intro += " Held pins (not moved): " + ", ".join(f"`{p}`" for p in plan.held) + "."
    direct_hazards = [f.hazard for f in plan.direct.findings if f.status == "applies"]
    direct_line = ""
    if plan.targets:
        direct_line = f"{plan.direct.verdict}"
        if reviewed and plan.direct.verdict in ("safe", "safe-with-actions"):
            direct_line = reviewed_words(reviewed)
        if direct_hazards:
            direct_line += " (" + ", ".join(f"`{h}` applies" for h in direct_hazards) + ")"
        direct_line += "."
    # a state hazard is about the installation whatever the path: listed once, up front
    shown = {_key(f) for f in plan.state_findings if f.scope == "state"}
    view = RunbookView(
        title=f"Runbook: {targets}" if targets else "Runbook: the installation as it is",
        intro=intro,
        verdict_line=_verdict_line(plan, reviewed or {}),
        direct_line=direct_line,
        blocked_by=", ".join(f"`{h}`" for h in plan.blocked_by),
        mermaid=to_mermaid(path_view(plan)).rstrip("\n") if plan.steps else "",
        direct_findings=_relevant(plan.direct.findings, shown) if plan.targets else (),
        state_findings=_relevant(plan.state_findings),
        now_actions=tuple(_action_view(a, now=True) for a in now),
        steps=tuple(_step_view(kb, i, n, s, shown, state) for i, s in enumerate(plan.steps, 1)),
    )
    return _finish(template("runbook.j2").render(rb=view))


__all__ = ["runbook", "upgrade_md"]
