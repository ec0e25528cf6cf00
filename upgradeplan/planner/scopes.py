"""Hazard scopes: is this hop (or this running version) in this hazard's scope? Answered here only.

The four scopes, as knowledge-format.md defines them:

- ``skip``: a hop from below ``stop`` (and in ``from`` when given) into ``to``, judged on the
  state before the hop;
- ``transition``: a hop from ``from`` into ``to``, judged on the state before the hop;
- ``landing``: landing on (or running) a version in ``to``, judged on the state after;
- ``state``: running a version in ``from`` (any version when absent), judged on the state after.

A :class:`Scope` holds a hazard's scope with its versions parsed once; the planner's index keeps
them per product, the search, the findings and ``explain`` ask them. :class:`Ordered` finds the
releases of a sorted line a range admits by bisection (the index's sides of every release).
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

from msgspec import Struct

from upgradeplan.model import Hazard
from upgradeplan.versions import Bounds, Constraint, Version, parse_constraint, parse_version

KINDS = ("skip", "transition", "landing", "state")


class Scope(Struct, frozen=True):
    """One hazard's scope with its stop and ranges parsed (None where the scope has none)."""

    hazard: Hazard
    stop: Any = None  # Version (skip)
    from_range: Any = None  # Constraint (skip: optional, transition, state: optional)
    to_range: Any = None  # Constraint (skip, transition, landing)

    @property
    def kind(self) -> str:
        return self.hazard.scope

    @property
    def before(self) -> bool:
        """Judged on the state before the hop (skip, transition) rather than after it."""
        return judged_before(self.hazard)

    def starts(self, fv: Any) -> bool:
        """Can a hop starting at ``fv`` be in scope? (Always, for landing and state.)"""
        if self.kind == "skip":
            return bool(fv < self.stop) and (self.from_range is None or _in(self.from_range, fv))
        if self.kind == "transition":
            return _in(self.from_range, fv)
        return True

    def lands(self, tv: Any) -> bool:
        """Can a hop landing on ``tv`` be in scope; for landing and state: is running ``tv``?"""
        if self.kind == "state":
            return self.from_range is None or _in(self.from_range, tv)
        return _in(self.to_range, tv)

    def covers(self, fv: Any, tv: Any) -> bool:
        """Is the hop ``fv`` → ``tv`` in scope (``fv`` is None for the installation as it is)?"""
        if self.before:
            return fv is not None and tv is not None and self.starts(fv) and self.lands(tv)
        return self.lands(tv)


def _in(con: Any, version: Any) -> bool:
    return version is not None and bool(con.check(version))


def judged_before(hazard: Hazard) -> bool:
    """Skip and transition hazards are judged on the state before the hop."""
    return hazard.scope in ("skip", "transition")


def scope_of(hazard: Hazard) -> Scope | None:
    """The parsed scope; None when its parameters are missing (then nothing is in scope)."""
    h = hazard
    if h.scope == "skip":
        if not (h.stop and h.to_range):
            return None
        start = parse_constraint(h.from_range) if h.from_range else None
        return Scope(
            h, stop=parse_version(h.stop), from_range=start, to_range=parse_constraint(h.to_range)
        )
    if h.scope == "landing":
        return Scope(h, to_range=parse_constraint(h.to_range)) if h.to_range else None
    if h.scope == "transition":
        if not (h.from_range and h.to_range):
            return None
        return Scope(
            h, from_range=parse_constraint(h.from_range), to_range=parse_constraint(h.to_range)
        )
    return Scope(h, from_range=parse_constraint(h.from_range) if h.from_range else None)


class Ordered:
    """Versions in ascending order, and the runs of them a constraint admits, by bisection.

    Each comparator but ``!=`` admits an interval of the version order
    (``Constraint.intervals``), so an AND group of them admits a contiguous run of the sorted
    versions, except the pre-releases in it, which a group admits only when one of its
    comparators names a pre-release (the v3.4 rule of ``Constraint.check``): ``runs`` bisects
    for each group's run and takes those pre-releases out. A constraint with ``!=`` is checked
    version by version. The answer is the plain scan's (tests/test_planner_scopes.py).
    """

    __slots__ = ("keys", "pre", "versions")

    def __init__(self, versions: Sequence[Version]) -> None:
        self.versions = versions
        self.keys = [v.key for v in versions]
        if any(b < a for a, b in itertools.pairwise(self.keys)):
            raise ValueError("Ordered: versions must be in ascending order")
        self.pre = [i for i, v in enumerate(versions) if v.prerelease]  # ascending

    def below(self, v: Version) -> int:
        """How many of the versions are below ``v``."""
        return bisect_left(self.keys, v.key)

    def runs(self, con: Constraint) -> list[tuple[int, int]]:
        """The indices of the versions ``con`` admits, as ascending, disjoint, maximal runs
        ``[a, b)``."""
        groups = con.intervals()
        if groups is None:
            return _runs_of(i for i, v in enumerate(self.versions) if con.check(v))
        found: list[tuple[int, int]] = []
        for has_pre, bounds in groups:
            found += self._group(has_pre, bounds)
        found.sort()
        out: list[tuple[int, int]] = []
        for a, b in found:
            if out and a <= out[-1][1]:
                out[-1] = (out[-1][0], max(b, out[-1][1]))
            else:
                out.append((a, b))
        return out

    def _group(self, has_pre: bool, bounds: list[Bounds]) -> list[tuple[int, int]]:
        keys = self.keys
        lo, hi = 0, len(keys)
        for low, low_in, high, high_in in bounds:
            if low is not None:
                lo = max(lo, bisect_left(keys, low) if low_in else bisect_right(keys, low))
            if high is not None:
                hi = min(hi, bisect_right(keys, high) if high_in else bisect_left(keys, high))
        if lo >= hi:
            return []
        if has_pre:
            return [(lo, hi)]
        out = []
        pre = self.pre
        for p in pre[bisect_left(pre, lo) : bisect_left(pre, hi)]:  # pre-releases split it
            if p > lo:
                out.append((lo, p))
            lo = p + 1
        if lo < hi:
            out.append((lo, hi))
        return out


def _runs_of(indices: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for i in indices:
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def phrase(h: Hazard, f: str | None, t: str | None) -> str:
    """Why the hop ``f`` → ``t`` is in ``h``'s scope, in words."""
    if h.scope == "skip":
        return f"the hop {f} → {t} skips {h.stop}"
    if h.scope == "landing":
        return f"{h.product} {t} is in {h.to_range}"
    if h.scope == "transition":
        if h.from_range == h.to_range:  # no version window: every hop inside the range
            return f"the hop {f} → {t} is an upgrade of {h.product} within {h.to_range}"
        return f"the hop {f} → {t} goes from {h.from_range} to {h.to_range}"
    return f"{h.product} runs {t}" + (f" (in {h.from_range})" if h.from_range else "")


def outside(h: Hazard, f: str | None, t: str | None) -> str:
    """Why the hop ``f`` → ``t`` is not in ``h``'s scope, in words."""
    if h.scope == "skip":
        return f"the hop {f} → {t} does not skip {h.stop} into {h.to_range}" + (
            f" from {h.from_range}" if h.from_range else ""
        )
    if h.scope == "landing":
        return f"{h.product} {t} is not in {h.to_range}"
    if h.scope == "transition":
        if h.from_range == h.to_range:
            return f"the hop {f} → {t} is not an upgrade of {h.product} within {h.to_range}"
        return f"the hop {f} → {t} is not from {h.from_range} to {h.to_range}"
    return f"{h.product} {t} is not in {h.from_range}"


__all__ = ["KINDS", "Ordered", "Scope", "judged_before", "outside", "phrase", "scope_of"]
