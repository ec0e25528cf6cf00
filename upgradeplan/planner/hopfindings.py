"""The findings of one product's hazards on one hop, with their evidence, on the states given.

The search weighs hops by the status of each in-scope hazard alone; the findings of the hops
of the chosen path (and of the direct jump) are built here: skip and transition hazards judged
on the state before the hop, landing and state hazards on the state after it. The search
(planner/search.py ``Search.hop_findings``) calls this for the product and for every lockstep
component the hop moves, and adds the release's requirements.
"""

from __future__ import annotations

from typing import Any

from upgradeplan.conditions.evaluate import Memo
from upgradeplan.model import Finding, Hazard, KnowledgeBase, State
from upgradeplan.planner.findings import judge, not_in_scope
from upgradeplan.planner.index import Index


def product_findings(
    idx: Index,
    kb: KnowledgeBase,
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
    pidx = idx.product(product)
    out: list[Finding] = []
    skipped: list[Hazard] = []
    memos: dict[bool, Memo] = {True: {}, False: {}}  # per state judged on: before, after
    if not out_of_scope and fv is not None and tv is not None:
        # the hazards in scope, in the order of pidx.scopes(), from the index's sides
        a, b = idx.sides(product, f, fv), idx.sides(product, t, tv)
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


__all__ = ["product_findings"]
