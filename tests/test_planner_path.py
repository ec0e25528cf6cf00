"""The state a path reaches: a release the path skips moves nothing (planner/paths.py).

Handwritten knowledge: a product ``p`` whose release 1.2.0 alone moves the component ``c`` (its
BOM lists it and ``c`` is pinned exactly, so the pin moves in lockstep), and a later release
that requires, or has a hazard reading, what 1.2.0 moved. A path that skips 1.2.0 must be judged
with ``c`` where it was.
"""

from __future__ import annotations

from typing import Any

from upgradeplan import planner
from upgradeplan.model import (
    Condition,
    Fact,
    Hazard,
    KnowledgeBase,
    Product,
    Recognise,
    Release,
    State,
    Target,
)
from upgradeplan.planner.index import index_of
from upgradeplan.planner.search import Search
from upgradeplan.provenance import flag, in_file

P, C, D = "p", "c", "d"


def release(version: str, **kw: Any) -> Release:
    return Release(P, version, f"r{version}", **kw)


def kb_of(
    rels: list[Release], hazards: list[Hazard], extra: dict[str, Any] | None = None
) -> KnowledgeBase:
    others = {C: tuple(Release(C, x, f"c{x}") for x in ("1.0.0", "2.0.0", "3.0.0"))}
    others.update(extra or {})
    return KnowledgeBase(
        products={x: Product(x, x, "chart", "", Recognise()) for x in (P, C, *(extra or {}))},
        releases={P: tuple(rels), **others},
        hazards={h.id: h for h in hazards},
        migrations={},
    )


WARN_ON_120 = Hazard(
    id="warn-on-120",
    title="1.2.0 warns",
    product=P,
    severity="warning",
    scope="landing",
    consequence="a warning",
    to_range="1.2.0",
)


def start(**more: str) -> State:
    facts = {
        f"installed.{P}": Fact(f"installed.{P}", "1.0.0", flag("--installed")),
        f"pin.{C}": Fact(f"pin.{C}", "1.0.0", in_file("bom.yaml", 3)),
        f"installed.{C}": Fact(f"installed.{C}", "1.0.0", flag("--installed")),
    }
    for key, value in more.items():
        facts[key] = Fact(key, value, flag("--fact"))
    return State(facts=facts)


def requiring(bom_130: dict[str, str] | None = None) -> KnowledgeBase:
    return kb_of(
        [
            release("1.0.0", bom={C: "1.0.0"}),
            release("1.1.0"),
            release("1.2.0", bom={C: "2.0.0"}),
            release("1.3.0", bom=bom_130 or {}),
            release("1.4.0", requires={C: ">=2.0.0"}),
        ],
        [WARN_ON_120],
    )


def test_a_requirement_met_only_by_a_skipped_release_is_not_met() -> None:
    """1.0.0 -> 1.3.0 -> 1.4.0 never installs 1.2.0, so c stays at 1.0.0 and 1.4.0's
    requirement c >= 2.0.0 is unmet: the path must stop at 1.2.0 (and take its warning)."""
    plan = planner.plan(requiring(), start(), [Target(P, "1.4.0")])
    assert plan.path[P] == ["1.0.0", "1.2.0", "1.4.0"]
    assert plan.verdict == "safe-with-actions"
    last = plan.steps[-1]
    req = next(f for f in last.findings if f.hazard == "requires:p@1.4.0")
    assert req.status == "does-not-apply"
    moved = [(m.before, m.after) for s in plan.steps for m in s.moves if m.product == C]
    assert moved == [("1.0.0", "2.0.0"), ("1.0.0", "2.0.0")]  # the pin, then installed


def test_a_later_release_that_moves_the_component_too_makes_the_skip_fine() -> None:
    """When 1.3.0's BOM also moves c to 2.0.0, skipping 1.2.0 loses nothing."""
    plan = planner.plan(requiring({C: "2.0.0"}), start(), [Target(P, "1.4.0")])
    assert plan.path[P] == ["1.0.0", "1.3.0", "1.4.0"]
    assert plan.verdict == "safe"


def test_the_path_cost_is_judged_on_the_state_the_path_reaches() -> None:
    """The search's own weights: the hop 1.3.0 -> 1.4.0 after skipping 1.2.0 is forbidden."""
    kb, state = requiring(), start()
    s = Search(kb, index_of(kb), P, state, "1.0.0", "1.4.0", (), planner.threshold("blocking"))
    path = s.search()
    assert [s.nodes[i].version for i in path] == ["1.0.0", "1.2.0", "1.4.0"]
    skipped = s.walk([0, 3, 4])
    assert skipped[1].installed(C) == "1.0.0"
    assert s.hop(3, 4, skipped[1], skipped[2]).forbidden == ("requires:p@1.4.0",)


def test_a_landing_hazard_reading_an_effect_of_a_skipped_release() -> None:
    """1.2.0's effects switch a fact on; a blocking landing hazard of 1.4.0 applies while it is
    off. Skipping 1.2.0 leaves it off."""
    when = Condition("pred", predicate="fact_equals", args={"fact": "feature.on", "value": False})
    blocked = Hazard(
        id="needs-feature",
        title="1.4.0 needs the feature 1.2.0 turns on",
        product=P,
        severity="blocking",
        scope="landing",
        consequence="breaks",
        to_range="1.4.0",
        when=when,
    )
    kb = kb_of(
        [
            release("1.0.0"),
            release("1.1.0"),
            release("1.2.0", effects={"feature.on": True}),
            release("1.3.0"),
            release("1.4.0"),
        ],
        [WARN_ON_120, blocked],
    )
    state = start()
    state = state.with_facts(Fact("feature.on", False, flag("--fact")))
    plan = planner.plan(kb, state, [Target(P, "1.4.0")])
    assert plan.path[P] == ["1.0.0", "1.2.0", "1.4.0"]
    assert plan.verdict == "safe-with-actions"


def test_the_next_target_starts_from_the_state_the_path_reached() -> None:
    """The second target's search starts where the first one's path left the installation:
    c at 1.0.0 when the path skipped 1.2.0 (its BOM moved c), not 2.0.0."""
    kb = kb_of(
        [
            release("1.0.0", bom={C: "1.0.0"}),
            release("1.1.0"),
            release("1.2.0", bom={C: "2.0.0"}),
            release("1.3.0"),
        ],
        [WARN_ON_120],
    )
    plan = planner.plan(kb, start(), [Target(P, "1.3.0"), Target(C, "3.0.0")])
    assert plan.path[P] == ["1.0.0", "1.3.0"]
    assert plan.path[C] == ["1.0.0", "3.0.0"]


def test_the_direct_jump_judges_hazards_and_requirements_on_one_state() -> None:
    """Two targets in one step: p 1.2.0 requires d >= 2.0.0 and has a landing hazard while d
    runs below 2.0.0; d moves to 2.0.0 in the same step, so neither applies (before, the
    requirement saw d's move but the hazard did not)."""
    low = Condition("pred", predicate="version_below", args={"product": D, "version": "2.0.0"})
    hazard = Hazard(
        id="needs-new-d",
        title="p 1.2.0 with an old d",
        product=P,
        severity="blocking",
        scope="landing",
        consequence="breaks",
        to_range="1.2.0",
        when=low,
    )
    d_rels = tuple(Release(D, x, f"d{x}") for x in ("1.0.0", "2.0.0"))
    kb = kb_of(
        [release("1.0.0"), release("1.1.0"), release("1.2.0", requires={D: ">=2.0.0"})],
        [hazard],
        {D: d_rels},
    )
    state = start().with_facts(Fact(f"installed.{D}", "1.0.0", flag("--installed")))
    plan = planner.plan(kb, state, [Target(P, "1.2.0"), Target(D, "2.0.0")])
    statuses = {f.hazard: f.status for f in plan.direct.findings if f.product == P}
    assert statuses["requires:p@1.2.0"] == "does-not-apply"
    assert statuses["needs-new-d"] == "does-not-apply"
