"""Fixes for the installation as it is: the migrations of findings that apply now.

A plan's steps carry the actions that make each hop safe; an installation already in trouble
(a landing or state hazard applies to what runs today, e.g. a Secret type Harness CD refuses)
needs its fixes without any hop. :func:`current_actions` renders those migrations from the
state, the same way the planner renders a step's (:func:`.actions.render_action`).
"""

from __future__ import annotations

from collections.abc import Sequence

from upgradeplan.model import Action, Finding, KnowledgeBase, Plan, State
from upgradeplan.planner.actions import fixable, render_action


def current_actions(
    kb: KnowledgeBase,
    state: State,
    findings: Sequence[Finding],
    *,
    holds: Sequence[str] = (),
    skip: Sequence[str] = (),
) -> tuple[Action, ...]:
    """The migrations that fix ``findings`` that apply (once each; none in ``skip``)."""
    out: list[Action] = []
    seen: set[str] = set(skip)
    applying = {f.hazard for f in findings if f.status == "applies"}
    for f in findings:
        if f.status != "applies" or not fixable(kb, f, holds):
            continue
        installed = state.installed(f.product) or f.to_version or ""
        rel = kb.release(f.product, installed)
        for mid in kb.hazards[f.hazard].migrations:
            if mid in seen or mid not in kb.migrations:
                continue
            seen.add(mid)
            fixes = tuple(
                sorted(
                    h.id for h in kb.hazards.values() if mid in h.migrations and h.id in applying
                )
            )
            out.append(
                render_action(
                    kb.migrations[mid],
                    state,
                    product=f.product,
                    from_version=installed,
                    to_version=installed,
                    bom=rel.bom if rel is not None else {},
                    fixes=fixes,
                )
            )
    return tuple(out)


def now_actions(kb: KnowledgeBase, plan: Plan, state: State) -> tuple[Action, ...]:
    """The fixes for the installation as it is that the plan's first step does not already give."""
    planned = sorted({a.migration for st in plan.steps[:1] for a in st.actions})
    return current_actions(kb, state, plan.state_findings, holds=plan.held, skip=planned)
