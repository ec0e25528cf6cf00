"""Plans: the direct jump, the recommended path and their findings. Pure functions.

The planner evaluates hazards on an evolving state. For one product it searches the releases
between the installed version and the target (Dijkstra on hop weights, edges computed lazily):
each hop costs 1 plus the cost of the hazards it meets; a hop on which a hazard at or above
``fail_on`` applies and cannot be fixed by actions is *forbidden* (it only appears in a path
when no path avoids it, and the plan is then blocked).

The state a hop ``F -> T`` starts from is a function of ``F`` alone: the installed version of
the product is ``F``; every exact pin of a component published in a BOM of a release in
``(current, F]`` has moved in lockstep (unless held) to the newest such BOM entry; and the
``effects`` of those releases hold (later ones override earlier ones). The state the hop lands
on adds what ``T`` itself brings (its version, its BOM pins, the product's own exact pin, its
effects); releases the hop skips bring nothing, so the direct jump never borrows the effects of
a required stop it jumps over.

This package is the planner's public face; the work is done in one module per concept:
``verdicts`` (the ``--fail-on`` threshold, verdicts), ``index`` (hazards by
product and scope with parsed constraints), ``targets`` (resolving targets, installed
versions, target order), ``findings`` (judging a hazard on a hop or on the installation,
requirements, locations), ``actions`` (fixability, rendering and merging migrations),
``costs`` (hop weights), ``search`` (the window, landing states, hop weights, the path),
``onepass`` (the cheapest path in one pass in version order), ``paths`` (the search where a
fact depends on the path taken), ``window`` (what those passes read of a search),
``requirements`` and ``hopfindings`` (a release's requirements and a product's findings on a
hop) and ``assemble`` (steps, the direct jump, the plan).
"""

from __future__ import annotations

from upgradeplan.planner.actions import fixable, render_action
from upgradeplan.planner.assemble import plan
from upgradeplan.planner.costs import (
    APPLIES_COST,
    FIXED_COST,
    FORBIDDEN_COST,
    HOP_COST,
    MAY_APPLY_COST,
)
from upgradeplan.planner.findings import current_findings, evaluate_hazard
from upgradeplan.planner.targets import resolve_targets
from upgradeplan.planner.verdicts import threshold, verdict_of, worst

__all__ = [
    "APPLIES_COST",
    "FIXED_COST",
    "FORBIDDEN_COST",
    "HOP_COST",
    "MAY_APPLY_COST",
    "current_findings",
    "evaluate_hazard",
    "fixable",
    "plan",
    "render_action",
    "resolve_targets",
    "threshold",
    "verdict_of",
    "worst",
]
