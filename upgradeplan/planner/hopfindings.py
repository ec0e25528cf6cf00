"""The findings of one hop of a search, with their evidence, on the states given.

The search weighs hops by the status of each in-scope hazard alone; the findings of the hops
of the chosen path (and of the direct jump) are built here: skip and transition hazards judged
on the state before the hop, landing and state hazards and the release's requirements on the
state after it, for the product and for every lockstep component the hop moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from upgradeplan.model import Finding, Hazard, State
from upgradeplan.planner import requirements
from upgradeplan.planner.findings import judge, not_in_scope
from upgradeplan.versions import parse_version

if TYPE_CHECKING:
    from upgradeplan.conditions.evaluate import Memo
    from upgradeplan.planner.search import Search


def hop_findings(
    s: Search,
    i: int,
    j: int,
    pre: State,
    post: State,
    moved: list[tuple[str, str, str]],
    judged: State | None,
    out_of_scope: bool,
) -> list[Finding]:
    """The findings of hop ``i -> j`` from ``pre`` to ``post``; ``moved``: the lockstep
    components it moves (component, from, to); ``judged``: the state the requirements are
    judged on (None: as planner/requirements.py finds it from ``i`` and ``j``)."""
    f, t = s.nodes[i].version, s.nodes[j].version
    fv, tv = s.nodes[i].parsed, s.nodes[j].parsed
    findings = product_findings(s, s.product, f, t, fv, tv, pre, post, out_of_scope)
    for comp, a, b in moved:
        findings += product_findings(
            s, comp, a, b, parse_version(a), parse_version(b), pre, post, False
        )
    req = requirements.finding(s, i, j, judged)
    if req is not None:
        findings.append(req)
    return findings


def product_findings(
    s: Search,
    product: str,
    f: str,
    t: str,
    fv: Any,
    tv: Any,
    pre: State,
    post: State,
    out_of_scope: bool,
) -> list[Finding]:
    """The findings of ``product``'s hazards in scope of the hop f -> t (with
    ``out_of_scope``: every other hazard of the product too, as not in scope)."""
    pidx = s.idx.product(product)
    kb = s.kb
    out: list[Finding] = []
    skipped: list[Hazard] = []
    memos: dict[bool, Memo] = {True: {}, False: {}}  # per state judged on: before, after
    if not out_of_scope and fv is not None and tv is not None:
        # the hazards in scope, in the order of pidx.scopes(), from the index's sides
        a, b = s.idx.sides(product, f, fv), s.idx.sides(product, t, tv)
        before = [h for h in a.skip_pre if h.id in b.skip_post]
        before += [h for h in a.trans_pre if h.id in b.trans_post]
        out = [judge(h, pre, kb, f, t, memos[True]) for h in before]
        return out + [judge(h, post, kb, f, t, memos[False]) for h in b.landed]
    for scope in pidx.scopes():
        if scope.covers(fv, tv):
            st, memo = (pre, memos[True]) if scope.before else (post, memos[False])
            out.append(judge(scope.hazard, st, kb, f, t, memo))
        else:
            skipped.append(scope.hazard)
    if out_of_scope:
        out += [not_in_scope(h, f, t) for h in skipped]
    return out


__all__ = ["hop_findings", "product_findings"]
