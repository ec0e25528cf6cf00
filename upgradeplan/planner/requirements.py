"""A release's requirements on a hop of the search: the finding, its status and its weight.

A requirement is judged on the state right after the hop (what the hop's start had, with what
the landing itself sets), not on the state as if every release before it had been installed:
a release the hop skips moves nothing. When every required product's version is set by the
landing itself, or by no release before it in the window, that state reads the same whatever
the start (``alike``), and the judgement is made once per release.

Given the state after the hop (``post``: the state a path reaches, planner/paths.py, or the
direct jump's state after its one step), the requirements are judged on that state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from upgradeplan.model import Finding, State, Truth
from upgradeplan.planner.findings import REQUIREMENT_STATUS, requirement_truth, requires_finding
from upgradeplan.planner.prune import first_set
from upgradeplan.versions import parse_constraint

if TYPE_CHECKING:
    from upgradeplan.planner.search import Search

Status = tuple[str, tuple[str, ...]]  # status, the facts missing when it may apply


def finding(s: Search, i: int, j: int, post: State | None = None) -> Finding | None:
    """The requirement finding of the hop ``i -> j`` (None: release ``j`` requires nothing)."""
    found = found_for(s, i, j, post)
    if found is not None and found.from_version != s.nodes[i].version:
        found = replace(found, from_version=s.nodes[i].version)
    return found


def found_for(s: Search, i: int, j: int, post: State | None = None) -> Finding | None:
    """The requirement finding of hop i -> j, its from_version possibly another start's."""
    rel = s.nodes[j].release
    if rel is None or not rel.requires:
        return None
    before = s.nodes[i].release
    already = before.requires if before else {}
    if post is not None:
        hit = _on(s, s._req_on, i, j, post)
        if hit is None:
            hit = (requires_finding(s.kb, rel, post, s.nodes[i].version, already),)
            s._req_on[(i, j, id(post))] = (post, hit)
        return hit[0]  # type: ignore[no-any-return]
    same = alike(s, j)
    ck = (j, None if same else s.nodes[i].version)
    if ck not in s._req_cache:
        state = s.state_at(j) if same else s.landed_state(i, j)
        s._req_cache[ck] = requires_finding(s.kb, rel, state, s.nodes[i].version, already)
    return s._req_cache[ck]


def _on(s: Search, cache: dict[Any, Any], i: int, j: int, post: State) -> Any:
    """What ``cache`` holds for the hop i -> j judged on ``post`` (None: nothing yet)."""
    hit = cache.get((i, j, id(post)))
    return hit[1] if hit is not None and hit[0] is post else None


def alike(s: Search, j: int) -> bool:
    """Whether the requirements of release ``j`` read the same after every hop landing on it:
    no ``when``, and every required product's version is set by the landing itself or by no
    release before ``j`` in the window (so the releases a hop skips cannot move it)."""
    hit = s._req_alike.get(j)
    if hit is None:
        rel = s.nodes[j].release
        assert rel is not None
        landing = s.landing_map(j)
        first = first_set(s)
        keys = [f"installed.{p}" for p in rel.requires]
        hit = not rel.requires_when and all(k in landing or first.get(k, j) >= j for k in keys)
        s._req_alike[j] = hit
    return hit


def status(s: Search, i: int, j: int, post: State | None = None) -> Status | None:
    """The status of the requirements of hop i -> j and the facts missing when it may apply
    (what ``finding`` says, without building it); None: none."""
    rel = s.nodes[j].release
    if rel is None or not rel.requires:
        return None
    if post is not None:
        hit = _on(s, s._req_status_on, i, j, post)
        if hit is None:
            hit = (_status(s, i, j, post),)
            s._req_status_on[(i, j, id(post))] = (post, hit)
        return hit[0]  # type: ignore[no-any-return]
    same = alike(s, j)
    ck = (j, None if same else s.nodes[i].version)
    if ck in s._req_status:
        return s._req_status[ck]
    found = s._req_status[ck] = _status(s, i, j, s.state_at(j) if same else s.landed_state(i, j))
    return found


def _status(s: Search, i: int, j: int, state: State) -> Status | None:
    rel = s.nodes[j].release
    assert rel is not None
    if not rel.requires_when:
        return _plain_status(rel.requires, state)
    truth, _, missing, checked = requirement_truth(s.kb, rel, state, s.nodes[i].version)
    keys = tuple(missing) if truth is Truth.UNKNOWN else ()
    return (REQUIREMENT_STATUS[truth], keys) if checked else None


def _plain_status(requires: Mapping[str, str], state: State) -> Status:
    """``_status`` of requirements without a ``when`` (every one is checked): what
    planner/findings.py ``requirement_truth`` finds, without its evidence."""
    truth = Truth.FALSE  # "some requirement is unmet"
    missing: list[str] = []
    facts = state.facts
    for product, text in sorted(requires.items()):
        key = f"installed.{product}"
        fact = facts.get(key)
        if fact is None:
            t = Truth.UNKNOWN
            missing.append(key)
        elif not isinstance(fact.value, str):
            t = Truth.TRUE if fact.value is None else Truth.UNKNOWN
        else:
            t = Truth.FALSE if parse_constraint(text).check(fact.value) else Truth.TRUE
        truth = truth | t
    return REQUIREMENT_STATUS[truth], tuple(missing) if truth is Truth.UNKNOWN else ()


def cost(s: Search, i: int, j: int, post: State | None = None) -> int:
    """What the requirements of release ``j`` add to the hop ``i -> j`` (judged on ``post``
    when given; a requirement's severity is blocking)."""
    from upgradeplan.planner.search import FORBIDDEN_COST

    req = status(s, i, j, post)
    if req is None or req[0] == "does-not-apply":
        return 0
    w = s._weight_of("\0blocking", "blocking", False)
    if req[0] == "may-apply":
        return 0 if _inherited(s, i, j, req[1]) else w[0]
    return w[1] + FORBIDDEN_COST if w[2] else w[1]


def _inherited(s: Search, i: int, j: int, missing: Sequence[str]) -> bool:
    """Whether every unknown requirement of hop i -> j is one the release at i already has
    (it may apply to every path alike, so it does not steer the choice of path)."""
    rel, before = s.nodes[j].release, s.nodes[i].release
    if rel is None or before is None:
        return False
    products = [k.removeprefix("installed.") for k in missing]
    return bool(products) and all(before.requires.get(p) == rel.requires.get(p) for p in products)


__all__ = ["Status", "alike", "cost", "finding", "found_for", "status"]
