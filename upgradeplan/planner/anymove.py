"""Hazards judged on every move of their product, told on the installation as it is.

A transition hazard whose ``from`` and ``to`` are one range admitting every release of its
product is a change the sources do not place in a release: the planner judges it on every move,
and a component range may bring the change with no move at all. :func:`on_any_move` adds it to
the findings of a check of the installation as it is where its condition already holds (a value
the next roll refuses). It adds nothing while the condition is unknown, and it never touches a
plan: no path or stop changes.
"""

from __future__ import annotations

from msgspec.structs import replace

from upgradeplan.model import NEXT, Finding, KnowledgeBase
from upgradeplan.planner.findings import judge as judge_hazard
from upgradeplan.planner.judge import Judgement, judge
from upgradeplan.state.derive import derive
from upgradeplan.versions import check as admits

_RANK = {"safe": 0, "safe-with-actions": 1, "undetermined": 2, "blocked": 3}


def on_any_move(kb: KnowledgeBase, judged: Judgement, fail_on: str) -> Judgement:
    """The installation as it is, with the hazards judged on every move of their product
    (a transition scope whose ``from`` and ``to`` are one range admitting every release: the
    sources name no release, and a component range can bring the change with no move of the
    product) whose condition already holds on it: a value the next roll refuses, say, is
    then told now, not only on a planned move. Nothing is added while the condition is
    unknown, so a check that did not state or read the values is as before."""
    state = derive(judged.state, kb)
    seen = {f.hazard for f in judged.findings}
    extra: list[Finding] = []
    for h in kb.hazards.values():
        installed = state.installed(h.product)
        rng = h.to_range
        if h.scope != "transition" or h.withdrawn is not None or h.id in seen or not installed:
            continue
        if not rng or h.from_range != rng or not admits(rng, installed):
            continue
        released = [r.version for r in kb.releases.get(h.product, ()) if r.version != NEXT]
        if not all(admits(rng, v) for v in released):
            continue
        found = judge_hazard(h, state, kb, installed, installed)
        if found.status == "applies":
            said = found.reason.split("; ", 1)[-1]
            why = f"applies as it is: judged on every move of {h.product} ({rng}), and {said}"
            extra.append(replace(found, reason=why, from_version=None))
    if not extra:
        return judged
    findings = (*judged.findings, *extra)
    verdict = judge(findings, fail_on)
    if _RANK[verdict] < _RANK[judged.verdict]:
        verdict = judged.verdict
    return replace(judged, findings=findings, verdict=verdict)


__all__ = ["on_any_move"]
