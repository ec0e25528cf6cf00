"""``check -o markdown``: a compact summary fit for a sticky pull-request comment.

Per installation: the verdict (the one the exit code reports), a findings table with
``file:line`` links, the safe path, and what to change; then accepted and stale risks. The
first line is a hidden marker (``<!-- upgradeplan-check -->``) a workflow can find the comment
by to update it in place. Nothing depends on the time or the machine, so a rerun on the same
commit gives the same text. Links point at the commit GitHub Actions names
(``GITHUB_SERVER_URL``/``GITHUB_REPOSITORY``/``GITHUB_SHA``, or ``UPGRADEPLAN_LINK_REF`` for
the pull request's head); without them a location is shown as ``path:line``. Every value from
the inputs is escaped for Markdown and HTML.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from upgradeplan import unreadable
from upgradeplan.model import Finding, Plan
from upgradeplan.provenance import Source
from upgradeplan.render.sarif import counts, fallback_locations, file_line, location_of
from upgradeplan.render.text import moved_text
from upgradeplan.results import EXIT_OF_VERDICT, NO_KNOWN_HAZARDS, NOTHING_TO_JUDGE, reviewed_words

if TYPE_CHECKING:
    from upgradeplan.accept import Acceptance
    from upgradeplan.results import CheckResult

MARKER = "<!-- upgradeplan-check -->"
_STATUS = {"applies": "applies", "may-apply": "may apply"}


def _cell(text: str) -> str:
    """Text safe inside a table cell (no HTML, no column breaks, one line)."""
    return html.escape(" ".join(text.split()), quote=False).replace("|", "\\|")


def _relative(path: str, root: Path | None) -> str:
    base = root or Path.cwd().resolve()
    full = Path(path) if os.path.isabs(path) else Path.cwd() / path
    try:
        return full.resolve().relative_to(base).as_posix()
    except ValueError:
        return path


def link(path: str, line: int, root: Path | None, environ: Mapping[str, str] | None = None) -> str:
    """``[path:line](…/blob/<sha>/path#Lline)`` on GitHub Actions, else ``path:line``."""
    env = os.environ if environ is None else environ
    rel = _relative(path, root)
    shown = f"{rel}:{line}"
    server = env.get("GITHUB_SERVER_URL", "")
    repo = env.get("GITHUB_REPOSITORY", "")
    ref = env.get("UPGRADEPLAN_LINK_REF") or env.get("GITHUB_SHA", "")
    if server and repo and ref:
        from urllib.parse import quote

        url = f"{server}/{repo}/blob/{quote(ref)}/{quote(rel)}#L{line}"
        return f"[{_cell(shown)}]({url})"
    return f"`{_cell(shown)}`"


def _where(
    f: Finding,
    fallback: Mapping[str, tuple[str, int]],
    changed: Mapping[str, Source],
    root: Path | None,
) -> str:
    loc = location_of(f, fallback, changed)
    return link(loc[0], loc[1], root) if loc is not None else _cell(f.product or "—")


def _hop(f: Finding) -> str:
    if f.from_version and f.to_version and f.from_version != f.to_version:
        return f"{f.product} {f.from_version} → {f.to_version}"
    return f"{f.product} {f.to_version or f.from_version or ''}".strip()


def _title(plan: Plan | None) -> str:
    if plan is None or not plan.targets:
        return "the installation as it is"
    parts = []
    for t in plan.targets:
        before = plan.current.get(t.product)
        parts.append(
            f"{t.product} {before} → {t.version}" if before else f"{t.product} {t.version}"
        )
    return ", ".join(parts)


def _path(plan: Plan) -> str:
    return "; ".join(f"{p} {' → '.join(vs)}" for p, vs in plan.path.items())


def _changes(
    result: CheckResult, shown: Sequence[Finding], root: Path | None, fail_on: str
) -> list[str]:
    out: list[str] = []
    rec = result.recommended
    if rec is not None and rec.steps:
        first = rec.steps[0]
        moves = []
        pins = {m.product for m in first.moves if m.kind == "pin"}
        for m in first.moves:
            if m.kind == "installed" and m.product in pins:
                continue  # the pin's move says it, with where it is written
            where = ""
            if m.source:
                loc = file_line(m.source)
                where = f" ({link(loc[0], loc[1], root)})" if loc else ""
            what = "pin" if m.kind == "pin" else "version"
            moves.append(f"{what} {_cell(m.product)} `{m.before or '(none)'}` → `{m.after}`{where}")
        rest = len(rec.steps) - 1
        then = f", then {rest} more step{'s' if rest != 1 else ''}" if rest > 0 else ""
        out.append(
            f"- First step: {_cell(first.product)} {first.from_version} → "
            f"{first.to_version}{then}: " + "; ".join(moves)
        )
        if first.actions:
            titles = ", ".join(_cell(a.title) for a in first.actions)
            out.append(f"  - with its actions: {titles} (`upgradeplan plan` shows them)")
    seen: set[str] = set()
    shown = [f for f in shown if counts(f, fail_on) or f.status == "applies"]
    for f in shown:
        if f.avoid and f.hazard not in seen:
            seen.add(f.hazard)
            out.append(f"- `{f.hazard}`: {_cell(f.avoid)}")
    missing = sorted({m.key for f in shown if f.status == "may-apply" for m in f.missing})
    if missing:
        facts = ", ".join(f"`{_cell(k)}`" for k in missing)
        out.append(
            f"- Supply the missing facts {facts} (`--fact KEY=VALUE`, `--snapshot`, `--kubeconfig`)"
        )
    return out


def _fix_words(products: Sequence[str]) -> str:
    """The blocked headline's fix: move the pin of X in this same change."""
    names = ", ".join(f"`{_cell(p)}`" for p in products)
    pins = "pin" if len(products) == 1 else "pins"
    return f"the fix is to move the {pins} of {names} in this same change"


def _result(result: CheckResult, fail_on: str, root: Path | None) -> list[str]:
    name = _cell(result.name) if result.name else "installation"
    if result.error is not None or result.plan is None:
        why = _cell(result.error or "")
        return [f"#### {name}: **undetermined**", "", f"Could not be read: {why}", ""]
    head = f"#### {name}: **{_cell(result.verdict_text)}**"
    if result.fix_in_change:
        head += f": {_fix_words(result.fix_in_change)}"
    out = [head, "", f"Move: {_cell(_title(result.plan))}", ""]
    if result.moved_pins:
        out += ["Pins this change moves:", ""]
        out += [f"- {_cell(moved_text(m))}" for m in result.moved_pins]
        out.append("")
    told = unreadable.told(result.notes, result.unreadable)  # the notes and every unread source
    if told:
        out += [*(f"> {_cell(n)}" for n in told), ""]
    shown = [f for f in result.findings if f.status in ("applies", "may-apply")]
    shown.sort(key=lambda f: (not counts(f, fail_on), f.status != "applies", f.hazard))
    every = [*shown, *(a.finding for a in result.accepted)]
    fallback = fallback_locations(result.plan, every)
    if shown or result.accepted:
        out.append("| | finding | severity | status | where |")
        out.append("|---|---|---|---|---|")
        for f in shown:
            mark = "**fails**" if counts(f, fail_on) else "listed"
            out.append(
                f"| {mark} | `{f.hazard}` {_cell(f.title)} ({_cell(_hop(f))}) | {f.severity} | "
                f"{_STATUS[f.status]} | {_where(f, fallback, result.changed, root)} |"
            )
        for a in result.accepted:
            f = a.finding
            out.append(
                f"| accepted | `{f.hazard}` {_cell(f.title)} ({_cell(_hop(f))}) | {f.severity} | "
                f"{_STATUS.get(f.status, f.status)}, accepted: {_cell(a.acceptance.describe())} | "
                f"{_where(f, fallback, result.changed, root)} |"
            )
        out.append("")
    elif result.shown_verdict == NOTHING_TO_JUDGE:
        out.extend(["No product of the knowledge base is installed here.", ""])
    else:
        out.extend(["No known hazard concerns this move.", ""])
    rec = result.recommended
    if rec is not None and rec.steps:
        label = "Least-bad path (no safe path)" if rec.verdict == "blocked" else "Safe path"
        out.extend([f"**{label}** ({rec.verdict}): {_cell(_path(rec))}", ""])
    changes = _changes(result, shown, root, fail_on)
    if changes:
        out.extend(["**What to change**", "", *changes, ""])
    return out


def render(
    results: Sequence[CheckResult],
    *,
    code: int,
    fail_on: str = "blocking",
    root: Path | None = None,
    stale: Sequence[Acceptance] = (),
) -> str:
    verdicts = [r.shown_verdict for r in results]
    overall = next(
        (v for v in ("blocked", "undetermined") if int(EXIT_OF_VERDICT[v]) == code), None
    )
    if overall is None and verdicts and all(v == NOTHING_TO_JUDGE for v in verdicts):
        overall = NOTHING_TO_JUDGE
    if overall is None:
        reviewed = {p: v for r in results for p, v in r.reviewed.items()}
        if NO_KNOWN_HAZARDS in verdicts and all(v != "safe" for v in verdicts):
            overall = reviewed_words(reviewed)
        else:
            overall = "safe-with-actions" if "safe-with-actions" in verdicts else "safe"
    headline = f"### upgradeplan check: **{overall}** (exit {code})"
    fixes = [r.fix_in_change for r in results if r.verdict == "blocked"]
    if overall == "blocked" and fixes and all(fixes):
        products = tuple(dict.fromkeys(p for fix in fixes for p in fix))
        headline += f": {_fix_words(products)}"
    out = [MARKER, headline, ""]
    for r in results:
        out.extend(_result(r, fail_on, root))
    if stale:
        out.extend(["**Stale acceptances** (they match no finding; remove them)", ""])
        for acc in stale:
            out.append(f"- `{acc.hazard}` {_cell(acc.label)}: {_cell(acc.describe())}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
