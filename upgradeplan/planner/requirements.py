"""A release's requirements on a hop: their status and their finding, on a given state.

A requirement is judged on the state right after the hop (what the hop's start had, with what
the landing itself sets), not on the state as if every release before it had been installed:
a release the hop skips moves nothing. The search (planner/search.py) picks that state and
keeps the answers; these functions only judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from upgradeplan.model import Finding, KnowledgeBase, Release, State, Truth
from upgradeplan.planner.findings import REQUIREMENT_STATUS, requirement_truth, requires_finding
from upgradeplan.planner.window import Status
from upgradeplan.versions import parse_constraint


def finding(
    kb: KnowledgeBase, rel: Release, before: Release | None, state: State, from_version: str
) -> Finding | None:
    """The requirement finding of a hop from ``from_version`` (the release ``before``, if
    one) to ``rel``, judged on ``state`` (None: ``rel`` requires nothing)."""
    if not rel.requires:
        return None
    already = before.requires if before else {}
    return requires_finding(kb, rel, state, from_version, already)


def status(kb: KnowledgeBase, rel: Release, state: State, from_version: str) -> Status | None:
    """The status of ``rel``'s requirements on ``state`` and the facts missing when it may
    apply (what ``finding`` says, without building it); None: none is checked."""
    if not rel.requires:
        return None
    if not rel.requires_when:
        return _plain_status(rel.requires, state)
    truth, _, missing, checked = requirement_truth(kb, rel, state, from_version)
    keys = tuple(missing) if truth is Truth.UNKNOWN else ()
    return (REQUIREMENT_STATUS[truth], keys) if checked else None


def _plain_status(requires: Mapping[str, str], state: State) -> Status:
    """``status`` of requirements without a ``when`` (every one is checked): what
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


def inherited(before: Release | None, rel: Release, missing: Sequence[str]) -> bool:
    """Whether every unknown requirement of a hop from ``before`` to ``rel`` is one
    ``before`` already has (it may apply to every path alike, so it does not steer the
    choice of path)."""
    if before is None:
        return False
    products = [k.removeprefix("installed.") for k in missing]
    return bool(products) and all(before.requires.get(p) == rel.requires.get(p) for p in products)


__all__ = ["finding", "inherited", "status"]
