"""Hop weights, in tenths: integers, so a path's cost is exact whatever the order of its terms.

A hop costs ``HOP_COST`` plus what each hazard it meets adds: a hazard that applies adds
``APPLIES_COST`` (``FIXED_COST`` where its migrations fix it), one that may apply
``MAY_APPLY_COST``; a hazard at or above ``--fail-on`` that applies and cannot be fixed adds
``FORBIDDEN_COST`` as well (the hop only appears in a path when no path avoids it).
"""

from __future__ import annotations

HOP_COST = 10
FORBIDDEN_COST = 10_000_000
APPLIES_COST = {"blocking": 10_000, "warning": 100, "notice": 5}
MAY_APPLY_COST = {"blocking": 1000, "warning": 20, "notice": 1}
FIXED_COST = {"blocking": 30, "warning": 20, "notice": 5}

__all__ = ["APPLIES_COST", "FIXED_COST", "FORBIDDEN_COST", "HOP_COST", "MAY_APPLY_COST"]
