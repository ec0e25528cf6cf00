"""Hazard scopes: is this hop (or this running version) in this hazard's scope? Answered here only.

The four scopes, as knowledge-format.md defines them:

- ``skip``: a hop from below ``stop`` (and in ``from`` when given) into ``to``, judged on the
  state before the hop;
- ``transition``: a hop from ``from`` into ``to``, judged on the state before the hop;
- ``landing``: landing on (or running) a version in ``to``, judged on the state after;
- ``state``: running a version in ``from`` (any version when absent), judged on the state after.

A :class:`Scope` holds a hazard's scope with its versions parsed once; the planner's index keeps
them per product, the search, the findings and ``explain`` ask them.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from upgradeplan.model import Hazard
from upgradeplan.versions import parse_constraint, parse_version

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


__all__ = ["KINDS", "Scope", "judged_before", "outside", "phrase", "scope_of"]
