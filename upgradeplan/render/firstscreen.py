"""The first screen of ``check`` and ``plan`` as text: the verdict, the path with why each stop,
what applies or may apply by name, and every missing fact once, ending with one command.

Evidence, what does not apply, action content and verify commands are ``-v``'s
(:mod:`upgradeplan.render.text`). Wrapped to the terminal's width; a pipe gets whole lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from upgradeplan.model import Finding, Plan, Step
from upgradeplan.render.summary import shown, stop_reasons, supply_command, to_decide
from upgradeplan.render.text import (
    _SEVERITY_COLOUR,
    _STATUS_COLOUR,
    ARROW,
    Style,
    _check_full,
    _could_not_read,
    _jump_title,
    moved_lines,
    step_verdict,
    unreadable_lines,
)
from upgradeplan.results import NOTHING_TO_JUDGE, CheckResult, PlanResult

NO_WRAP = 1_000_000  # the width of output that is not wrapped


def terminal_width() -> int:
    """The width to wrap to when stdout is a terminal: its width (``COLUMNS`` when set, as
    ``shutil.get_terminal_size`` reads it; at least 40). Output to a file or a pipe is not
    wrapped (``NO_WRAP``): a log keeps whole lines to search."""
    import sys

    if not sys.stdout.isatty():
        return NO_WRAP
    import shutil  # with the compression modules: only for a terminal

    return max(40, shutil.get_terminal_size((100, 24)).columns)


def _fit(line: str, width: int) -> str:
    """``line`` cut to ``width`` characters, an ellipsis marking the cut."""
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _wrap(text: str, width: int, indent: str, hanging: str) -> list[str]:
    import textwrap

    return textwrap.wrap(
        text,
        width=width,
        initial_indent=indent,
        subsequent_indent=hanging,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _brief(f: Finding, s: Style, width: int, prefix: str = "  ") -> list[str]:
    """A finding by name: status, severity, the hazard, its title. What applies keeps its
    whole title (wrapped); what may apply one line, the title cut to the width."""
    head = f"{prefix}{f.status:<9} {f.severity:<8} {f.hazard}"
    if f.status == "applies":
        lines = _wrap(f"{head}  {f.title}", width, "", " " * (len(prefix) + 19))
    else:
        lines = [_fit(f"{head}  {f.title}", width)]
    first = (
        f"{prefix}{s(f'{f.status:<9}', _STATUS_COLOUR.get(f.status))} "
        f"{s(f'{f.severity:<8}', _SEVERITY_COLOUR.get(f.severity))} {s(f.hazard, bold=True)}"
        + lines[0][len(head) :]
    )
    return [first, *lines[1:]]


def _counts(findings: Sequence[Finding], needed: int) -> str:
    """``2 apply (1 blocking), 4 may apply; 3 facts missing``."""
    parts = []
    for status, label in (("applies", "apply"), ("may-apply", "may apply")):
        group = [f for f in findings if f.status == status]
        if group:
            blocking = sum(1 for f in group if f.severity == "blocking")
            parts.append(f"{len(group)} {label}" + (f" ({blocking} blocking)" if blocking else ""))
    counts = ", ".join(parts)
    if needed:
        counts += f"; {needed} {'fact' if needed == 1 else 'facts'} missing"
    return counts


def _path_summary(
    plan: Plan, direct: Sequence[Finding], s: Style, width: int, label: str = "Path"
) -> list[str]:
    reasons = stop_reasons(plan, direct)
    out: list[str] = []
    for product, versions in sorted(plan.path.items()):
        out.append(f"{label}: {product} {f' {ARROW} '.join(versions)}")
        pad = max(len(v) for v in versions)
        for version in versions[1:-1]:
            why = reasons.get((product, version), "")
            out.append(_fit(f"  {version:<{pad}}  stop: {why}", width))
    for product, pins in sorted(plan.pin_path.items()):
        shown_pins = [p if p is not None else "(none)" for p in pins]
        moved = f"pin {product} {f' {ARROW} '.join(shown_pins)} (moves with the path)"
        out.extend(_wrap(moved, width, "  ", "    "))
    return out


def _decide_lines(
    findings: Sequence[Finding], command: Sequence[str] | None, width: int
) -> list[str]:
    """Each missing fact once, grouped by what shows it, then one command that states them."""
    needed = to_decide(findings)
    if not needed:
        return []
    read = {"--kubeconfig", "--context", "--snapshot", "--gitops", "--cluster", "--all-contexts"}
    if command and read & set(command):
        out = ["To decide, supply:"]
    else:
        header = "To decide, supply (or read them all with --kubeconfig, --snapshot or --gitops):"
        out = _wrap(header, width, "", "  ")
    groups: dict[str, list[str]] = {}
    for n in needed:
        groups.setdefault(n.shown_by, []).append(n.key)
    for shown_by, keys in groups.items():
        out.extend(_wrap(f"{_key_list(keys)}: {shown_by}", width, "  ", "      "))
    if command:
        out.append("  $ " + supply_command(command, needed))
    return out


def _key_list(keys: Sequence[str]) -> str:
    """``pin.{kagent, muster}``: keys that share a prefix up to a dot, written once."""
    if len(keys) < 2:
        return ", ".join(keys)
    first, last = min(keys), max(keys)  # the common prefix of all is that of these two
    same = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
    )
    prefix = first[: first.rfind(".", 0, same) + 1]
    if not prefix:
        return ", ".join(keys)
    return prefix + "{" + ", ".join(k[len(prefix) :] for k in keys) + "}"


def _names_line(severity: str, label: str, names: str, s: Style, width: int) -> list[str]:
    """``may-apply SEVERITY [label]  names``, the names wrapped under themselves."""
    plain = f"  {'may-apply':<9} {severity:<8} " + (f"{label}  " if label else "")
    head = f"  {s('may-apply', _STATUS_COLOUR['may-apply'])} "
    head += s(f"{severity:<8}", _SEVERITY_COLOUR[severity]) + " "
    head += (s(label, bold=True) + "  ") if label else ""
    lines = _wrap(names, width, plain, " " * (21 if label else len(plain)))
    return [head + lines[0][len(plain) :], *lines[1:]]


def _findings_brief(findings: Sequence[Finding], s: Style, width: int) -> list[str]:
    """What applies, and what may apply and blocks: one line each with its title (the
    prerequisites of one crossed release together on one line); what else may apply: by
    name, one wrapped line per severity."""
    entries: list[Finding | str] = []  # a finding, or the release whose crossing is named
    crossings: dict[str, list[str]] = {}
    for f in findings:
        kind, _, rest = f.hazard.partition(":")
        if kind == "crossing" and f.status != "applies" and f.severity == "blocking":
            release, _, name = rest.partition(":")
            if release not in crossings:
                crossings[release] = []
                entries.append(release)
            crossings[release].append(name)
        elif f.status == "applies" or f.severity == "blocking":
            entries.append(f)
    out: list[str] = []
    for entry in entries:
        if isinstance(entry, str):
            names = crossings[entry]
            said = f"{len(names)} prerequisites: " + ", ".join(names)
            out.extend(_names_line("blocking", f"crossing:{entry}", said, s, width))
        else:
            out.extend(_brief(entry, s, width))
    for severity in ("warning", "notice"):
        names = [f.hazard for f in findings if f.status != "applies" and f.severity == severity]
        if names:
            out.extend(_names_line(severity, "", ", ".join(names), s, width))
    return out


def _headline(title: str, verdict: str, live: Sequence[Finding], s: Style, width: int) -> list[str]:
    """The verdict line, then what applies, may apply and is missing, in counts."""
    out = [f"{title}: {s.verdict(verdict)}"]
    counts = _counts(live, len(to_decide(live)))
    if counts:
        out.extend(_wrap(f"{counts}; -v for the evidence", width, "  ", "  "))
    return out


def check_screen(
    results: Sequence[CheckResult],
    color: bool = False,
    command: Sequence[str] | None = None,
    width: int | None = None,
) -> str:
    """``check`` as text: the first screen."""
    s = Style(color)
    width = width or terminal_width()
    out: list[str] = []
    for r in results:
        if out:
            out.append("")
        name = f" [{r.name}]" if r.name else ""
        if r.error is not None or r.shown_verdict == NOTHING_TO_JUDGE:
            out.append(_check_full([r], s).rstrip("\n"))
            continue
        live = shown(r.findings)
        out.extend(moved_lines(r))  # every pin the change moves, known or not
        title = f"check {_jump_title(r.plan)}{name}"
        out.extend(_headline(title, r.verdict_text, live, s, width))
        out.extend(f"  {note}" for note in r.notes)
        if not live:
            out.append("  no known hazard applies to this move or may apply")
        else:
            label = "On the direct jump:" if r.plan and r.plan.targets else "On the installation:"
            out.append(label)
            out.extend(_findings_brief(live, s, width))
        if r.recommended is not None:
            rec = r.recommended
            if rec.verdict == "blocked":
                out.append(f"No safe path ({s.verdict(rec.verdict)}); the least-bad path:")
            else:
                out.append(f"Recommended path ({s.verdict(rec.verdict)}):")
            path = _path_summary(rec, r.findings, s, width - 2, "path")
            out.extend("  " + line for line in path)
            if rec.blocked_by:
                out.append(f"  blocked by: {', '.join(rec.blocked_by)}")
            out.extend(
                _wrap(
                    "'upgradeplan plan' with the same inputs gives its steps and actions",
                    width,
                    "  ",
                    "  ",
                )
            )
        out.extend(_decide_lines(live, command, width))
        noted = " ".join(r.notes)
        out.extend(unreadable_lines([u for u in r.unreadable if u.source not in noted]))
    return "\n".join(out) + "\n"


def _step_summary(
    index: int, step: Step, s: Style, width: int, verdict: str | None = None
) -> list[str]:
    out = [
        f"Step {index}: {step.product} {step.from_version} {ARROW} {step.to_version} "
        + step_verdict(s, verdict or step.verdict)
    ]
    pins = [m for m in step.moves if m.kind == "pin"]
    if pins:
        moved = "; ".join(
            f"{m.product} {m.before or '(none)'} {ARROW} {m.after or '(none)'}"
            + (f" ({m.source})" if m.source else "")
            for m in pins
        )
        out.extend(_wrap(f"move pins: {moved}", width, "  ", "    "))
    out.extend(_findings_brief(shown(step.findings), s, width))
    for when in ("before", "after"):
        for a in [a for a in step.actions if a.when == when]:
            fixes = f" (fixes {', '.join(a.fixes)})" if a.fixes else ""
            out.append(_fit(f"  {when} the upgrade: {a.title} [{a.migration}]{fixes}", width))
            if a.placeholders:
                out.append(f"      fill in: {', '.join(a.placeholders)}")
    if step.notes:
        noun = "notes" if len(step.notes) > 1 else "note"
        out.append(f"  {len(step.notes)} {noun} from the sources (-v shows them)")
    return out


def plan_screen(
    results: Sequence[PlanResult],
    color: bool = False,
    command: Sequence[str] | None = None,
    width: int | None = None,
) -> str:
    """``plan`` as text: the first screen."""
    s = Style(color)
    width = width or terminal_width()
    out: list[str] = []
    for r in results:
        if out:
            out.append("")
        name = f" [{r.name}]" if r.name else ""
        if r.error is not None or r.plan is None:
            out.append(_could_not_read("plan", name, r.error, s))
            continue
        plan = r.plan
        live = shown([f for st in plan.steps for f in st.findings])
        if plan.blocked_by and not plan.steps:
            live = shown(plan.direct.findings)
        out.extend(_headline(f"plan {_jump_title(plan)}{name}", r.verdict_text, live, s, width))
        if plan.held:
            out.append(f"  held: {', '.join(plan.held)}")
        if plan.blocked_by:
            out.append(f"  no safe path; blocked by: {', '.join(plan.blocked_by)}")
        if plan.steps:
            out.extend(_path_summary(plan, (), s, width))
            for i, step in enumerate(plan.steps, start=1):
                out.extend(_step_summary(i, step, s, width, r.step_text(step)))
        elif not plan.blocked_by:
            out.append("  nothing to do: already at the target")
        if plan.blocked_by and not plan.steps and live:
            out.append("On the direct jump:")
            out.extend(_findings_brief(live, s, width))
        out.extend(_decide_lines(live, command, width))
    return "\n".join(out) + "\n"
