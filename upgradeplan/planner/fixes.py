"""Fixes for the installation as it is: the migrations of findings that apply now.

A plan's steps carry the actions that make each hop safe; an installation already in trouble
(a landing or state hazard applies to what runs today, e.g. a Secret type Harness CD refuses)
needs its fixes without any hop. :func:`current_actions` renders those migrations from the
state, the same way the planner renders a step's (:func:`upgradeplan.planner.render_action`).
"""

from __future__ import annotations

from collections.abc import Sequence

from upgradeplan.model import Action, Finding, KnowledgeBase, State


def current_actions(
    kb: KnowledgeBase,
    state: State,
    findings: Sequence[Finding],
    *,
    holds: Sequence[str] = (),
    skip: Sequence[str] = (),
) -> tuple[Action, ...]:
    """The migrations that fix ``findings`` that apply (once each; none in ``skip``)."""
    from upgradeplan import planner

    out: list[Action] = []
    seen: set[str] = set(skip)
    applying = {f.hazard for f in findings if f.status == "applies"}
    for f in findings:
        if f.status != "applies" or not planner.fixable(kb, f, holds):
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
                planner.render_action(
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
