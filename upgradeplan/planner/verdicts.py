"""Verdicts: the ``--fail-on`` threshold and the verdict of a set of findings."""

from __future__ import annotations

from collections.abc import Iterable

from upgradeplan import errors
from upgradeplan.model import SEVERITY_RANK, Finding, Verdict


def threshold(fail_on: str) -> int:
    """The lowest severity rank that fails; above every rank for ``never``."""
    if fail_on == "never":
        return max(SEVERITY_RANK.values()) + 1
    if fail_on not in SEVERITY_RANK:
        raise errors.BadInput(
            f"--fail-on {fail_on!r} is not one of blocking, warning, notice, never"
        )
    return SEVERITY_RANK[fail_on]


def verdict_of(
    findings: Iterable[Finding],
    fail_on: str = "blocking",
    has_actions: bool = False,
    *,
    count_fixed: bool = False,
) -> Verdict:
    """The verdict of ``findings`` relative to ``fail_on`` (docs/exit-codes.md).

    Findings fixed by the plan's actions do not block a step or a path; ``count_fixed`` judges
    them like any other (the direct jump as asked, before any action is taken).
    """
    limit = threshold(fail_on)
    found = list(findings)
    open_ = found if count_fixed else [f for f in found if not f.fixed_by]
    failing = [f for f in open_ if SEVERITY_RANK[f.severity] >= limit]
    if any(f.status == "applies" for f in failing):
        return "blocked"
    if any(f.status == "may-apply" for f in failing):
        return "undetermined"
    if has_actions or any(f.status == "applies" for f in found):
        return "safe-with-actions"
    return "safe"


_VERDICT_RANK: dict[str, int] = {
    "safe": 0,
    "safe-with-actions": 1,
    "undetermined": 2,
    "blocked": 3,
}


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    out: Verdict = "safe"
    for v in verdicts:
        if _VERDICT_RANK[v] > _VERDICT_RANK[out]:
            out = v
    return out
