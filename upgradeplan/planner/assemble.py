"""The plan: the direct jump, the steps of the recommended path and the overall verdict."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

from msgspec import Struct, field
from msgspec.structs import replace

from upgradeplan import conditions, errors
from upgradeplan.model import (
    SEVERITY_RANK,
    Action,
    Finding,
    Jump,
    KnowledgeBase,
    Move,
    Plan,
    State,
    Step,
    Target,
    Verdict,
)
from upgradeplan.planner.actions import fixable, merge_actions, render_action
from upgradeplan.planner.findings import current_findings
from upgradeplan.planner.index import Index, index_of
from upgradeplan.planner.paths import HOP_BUDGET
from upgradeplan.planner.search import Search
from upgradeplan.planner.targets import check_resolved, current_version, order_targets, parse_named
from upgradeplan.planner.verdicts import threshold, verdict_of, worst
from upgradeplan.state.derive import derive
from upgradeplan.versions import parse_version


class _Acc(Struct):
    """What the plan collects while it walks the targets."""

    steps: list[Step] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    fixed: set[str] = field(default_factory=set)  # hazard ids whose actions were given


def _moves(before: State, after: State, product: str, comps: Iterable[str]) -> tuple[Move, ...]:
    out: list[Move] = [
        Move("installed", product, before.installed(product), after.installed(product))
    ]
    for comp in sorted(comps):
        pb, pa = before.value(f"pin.{comp}"), after.value(f"pin.{comp}")
        if pb != pa:
            src = after.get(f"pin.{comp}")
            out.append(Move("pin", comp, pb, pa, src.source.unmoved() if src else None))
        ib, ia = before.installed(comp), after.installed(comp)
        if ib != ia and comp != product:
            out.append(Move("installed", comp, ib, ia))
    return tuple(out)


def _step(
    kb: KnowledgeBase,
    search: Search | None,
    product: str,
    f: str,
    t: str,
    pre: State,
    post: State,
    findings: Sequence[Finding],
    extra: Sequence[Finding],
    acc: _Acc,
    holds: Sequence[str],
    fail_on: str,
    bom: Mapping[str, str],
    verify: Sequence[str],
) -> Step:
    """A step: fix what can be fixed (once per plan), collect actions and verification."""
    out_findings: list[Finding] = []
    actions: list[Action] = []
    checks: list[str] = []
    for fd in [*extra, *findings]:
        h = kb.hazards.get(fd.hazard)
        if fixable(kb, fd, holds) and h is not None:
            if fd.hazard in acc.fixed:
                fd = replace(
                    fd,
                    fixed_by=h.migrations,
                    reason=fd.reason + " (fixed by the actions of an earlier step)",
                )
            else:
                acc.fixed.add(fd.hazard)
                fd = replace(fd, fixed_by=h.migrations)
                for mid in h.migrations:
                    m = kb.migrations[mid]
                    st = pre if m.when == "before" else post
                    actions.append(
                        render_action(
                            m,
                            st,
                            product=product,
                            from_version=f,
                            to_version=t,
                            bom=bom,
                            fixes=(fd.hazard,),
                        )
                    )
        if h is not None and fd.status != "does-not-apply":
            checks += [c for c in h.verify if c not in checks]
        out_findings.append(fd)
    checks += [c for c in verify if c not in checks]
    merged = merge_actions(actions)
    verdict = verdict_of(out_findings, fail_on, bool(merged))
    comps = search.pins if search is not None else ()
    return Step(
        product=product,
        from_version=f,
        to_version=t,
        moves=_moves(pre, post, product, comps) if f != t else (),
        findings=tuple(out_findings),
        actions=merged,
        verify=tuple(checks),
        verdict=verdict,
    )


def _involved(
    kb: KnowledgeBase, targets: Sequence[Target], currents: Mapping[str, str]
) -> set[str]:
    """The targets, the components their releases publish and the products they require."""
    out: set[str] = set()
    for t in targets:
        out.add(t.product)
        low, high = parse_version(currents[t.product]), parse_version(t.version)
        pidx = index_of(kb).product(t.product)
        for rel, v in zip(pidx.releases, pidx.versions, strict=True):
            if low <= v <= high:
                out.update(rel.bom)
                out.update(rel.requires)
    return out


def plan(
    kb: KnowledgeBase,
    state: State,
    targets: Sequence[Target],
    *,
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
    budget: int = HOP_BUDGET,
) -> Plan:
    """The direct jump, the recommended path and the verdicts for ``targets`` from ``state``.

    ``targets`` are resolved (:func:`upgradeplan.planner.targets.resolve_targets`): releases
    of the knowledge, spelled as it spells them, none withdrawn. ``budget``: the most hops
    the path-aware search weighs per target (planner/paths.py; 0: no bound).
    """
    return _plan(kb, state, targets, holds, fail_on, budget)


def _plan(
    kb: KnowledgeBase,
    state: State,
    targets: Sequence[Target],
    holds: Sequence[str],
    fail_on: str,
    budget: int,
) -> Plan:
    limit = threshold(fail_on)
    holds = tuple(dict.fromkeys(holds))
    for h in holds:
        if h not in kb.products:
            raise errors.UnknownName("product", h, sorted(kb.products))
    state = derive(state, kb)
    check_resolved(kb, targets)
    resolved = list(targets)
    if len({t.product for t in resolved}) != len(resolved):
        raise errors.BadInput(
            "a product is named twice as a target", hint="give one --to per product"
        )
    idx = index_of(kb)
    currents = {t.product: current_version(state, t.product) for t in resolved}
    for t in resolved:
        if parse_named(t.version, t.product) < parse_named(currents[t.product], t.product):
            raise errors.BadInput(
                f"target {t.product} {t.version} is below the installed {currents[t.product]}",
                hint="upgradeplan plans upgrades only",
            )
    ordered = order_targets(kb, resolved)
    involved = _involved(kb, resolved, currents) if resolved else None
    state_findings = current_findings(kb, state, products=involved)

    acc = _Acc()
    pending = [f for f in state_findings if fixable(kb, f, holds)]
    evolving = state
    searches: list[tuple[Target, Search, list[int]]] = []
    sure: set[str] = set()  # blockers not found by a search stopped at its bound (paths.py)
    for t in ordered:
        # an earlier target's BOM may already have moved this one (lockstep)
        cur = evolving.installed(t.product) or currents[t.product]
        if parse_named(cur, t.product) >= parse_named(t.version, t.product):
            continue
        search = Search(kb, idx, t.product, evolving, cur, t.version, holds, limit, budget=budget)
        path = search.search()
        if not path:
            acc.blocked_by.append(f"no-upgrade-path:{t.product}")
            sure.add(acc.blocked_by[-1])
            continue
        searches.append((t, search, path))
        evolving = search.walk(path)[-1]  # the state this path reaches
    # the searches keep their own truths (planner/onepass.py); the findings of the steps and
    # of the direct jump judge the same predicates on the same facts again: the outcome found
    # first is taken
    with conditions.shared_outcomes():
        # a target's search from the installation as it is serves the direct jump as well: the
        # same landing facts (so the same predicate outcomes), not built again
        same = {s.product: s for _t, s, _p in searches if s.start_state is state}
        direct = _direct(kb, idx, state, ordered, currents, holds, limit, fail_on, same)

        # fixes the installation needs where it stands (no hop of its product in the plan)
        moving = {p for _t, s, _p in searches for p in (s.product, *s.carried)}
        by_product: dict[str, list[Finding]] = {}
        for f in pending:
            if f.product not in moving:
                by_product.setdefault(f.product, []).append(f)
        for product, found in sorted(by_product.items()):
            cur = state.installed(product) or ""
            acc.steps.append(
                _step(
                    kb,
                    None,
                    product,
                    cur,
                    cur,
                    state,
                    state,
                    [],
                    found,
                    acc,
                    holds,
                    fail_on,
                    {},
                    (),
                )
            )
        unsure = False  # a search so far stopped at its bound: what follows starts from its path
        for _t, search, path in searches:
            unsure = unsure or search.stopped is not None
            states = search.walk(path)
            for k, (a, b) in enumerate(itertools.pairwise(path)):
                pre, post = states[k], states[k + 1]
                hop = search.hop(a, b, pre, post)
                hop_findings = search.hop_findings(a, b, pre, post)
                for hz in hop.forbidden:
                    if hz not in acc.blocked_by:
                        acc.blocked_by.append(hz)
                    if not unsure:
                        sure.add(hz)
                mine = [f for f in pending if f.product in (search.product, *search.carried)]
                pending = [f for f in pending if f not in mine]
                rel = search.nodes[b].release
                acc.steps.append(
                    _step(
                        kb,
                        search,
                        search.product,
                        search.nodes[a].version,
                        search.nodes[b].version,
                        pre,
                        post,
                        hop_findings,
                        mine,
                        acc,
                        holds,
                        fail_on,
                        rel.bom if rel else {},
                        rel.verify if rel else (),
                    )
                )
        if acc.blocked_by:
            # a search stopped at its bound has not ruled out a path around what blocks its path
            verdict: Verdict = "blocked" if sure else "undetermined"
        elif acc.steps:
            verdict = worst(s.verdict for s in acc.steps)
        else:
            verdict = verdict_of(state_findings, fail_on)
            if verdict == "blocked":
                acc.blocked_by += [
                    f.hazard
                    for f in state_findings
                    if f.status == "applies" and SEVERITY_RANK[f.severity] >= limit
                ]
        current_map: dict[str, str | None] = {p: state.installed(p) for p in sorted(currents)}
        for p in sorted(kb.products):
            if p not in current_map and state.installed(p) is not None:
                current_map[p] = state.installed(p)
        return Plan(
            schema_version=1,
            targets=tuple(resolved),
            current=current_map,
            direct=direct,
            steps=tuple(acc.steps),
            verdict=verdict,
            blocked_by=tuple(acc.blocked_by),
            state_findings=state_findings,
            held=holds,
            state_name=state.name,
        )


def _direct(
    kb: KnowledgeBase,
    idx: Index,
    state: State,
    targets: Sequence[Target],
    currents: Mapping[str, str],
    holds: Sequence[str],
    limit: int,
    fail_on: str,
    made: Mapping[str, Search],
) -> Jump:
    """Every target in one step: skip/transition on the state before, the rest after
    (``made``: searches from ``state`` already made, by product)."""
    searches: list[Search] = []
    post = state
    for t in targets:
        cur = currents[t.product]
        if parse_named(cur, t.product) == parse_named(t.version, t.product):
            continue
        s = made.get(t.product)  # from the same state, current version and target: reused
        if s is None or (s.nodes[0].version, s.nodes[s.target].version) != (cur, t.version):
            s = Search(kb, idx, t.product, state, cur, t.version, holds, limit)
        searches.append(s)
        end = s.landed_state(0, s.target)
        changed = [f for k, f in end.facts.items() if state.facts.get(k) is not f]
        post = post.with_facts(*changed)
    findings: list[Finding] = []
    for s in searches:
        findings += s.jump_findings(post)
    return Jump(findings=tuple(findings), verdict=verdict_of(findings, fail_on))
