"""The path-aware search's bound (``Search.budget``), on the benchmark's generated
knowledge (bench/genkb.py) with a product whose BOMs list a component at every k-th release only
(bench/plan.py ``--bom-every``), so the component's version depends on the path taken.

The reference is the same search without a bound (``budget=0``): where the bounded search
finishes, the plan is the reference's; where it stops, the plan follows a path that exists, says
so on its first step, is never "safe" nor "blocked", and costs no less than the reference's.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.builders import sometimes_listed
from test_planner_search import generated, generated_state

from upgradeplan import planner
from upgradeplan.model import KnowledgeBase, Plan, State, Target
from upgradeplan.planner import paths
from upgradeplan.planner.index import index_of
from upgradeplan.planner.search import Search
from upgradeplan.state.derive import derive


def searched(
    kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str, budget: int
) -> tuple[list[int], int, Search]:
    """(the path, its cost judged on the states it reaches, the search) with at most
    ``budget`` hops weighed by the path-aware search (0: no bound)."""
    limit = planner.threshold("blocking")
    s = Search(kb, index_of(kb), product, derive(state, kb), cur, tgt, (), limit, budget=budget)
    path = s.search()
    states = s.walk(path)
    cost = sum(
        s.hop(a, b, states[k], states[k + 1]).cost
        for k, (a, b) in enumerate(itertools.pairwise(path))
    )
    return path, cost, s


def planned(kb: KnowledgeBase, state: State, product: str, tgt: str, budget: int) -> Plan:
    return planner.plan(kb, state, [Target(product, tgt)], budget=budget)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(((3, 12, 12), (3, 24, 24), (4, 30, 40))),
    st.integers(2, 4),
    st.integers(1, 400),
    st.data(),
)
def test_the_bounded_search_is_the_exhaustive_one_or_says_it_stopped(
    shape: tuple[int, int, int], every: int, hops: int, data: st.DataObject
) -> None:
    product = data.draw(st.sampled_from(("prod-00", "prod-01")))
    kb = sometimes_listed(generated(*shape), product, every)
    n = len(kb.releases[product])
    start = data.draw(st.integers(0, n - 3))
    end = data.draw(st.integers(start + 2, n - 1))
    state = generated_state(
        kb,
        product,
        start,
        pins=shape[0] - 1,
        drift=data.draw(st.sampled_from(("disabled", "enabled"))),
    )
    cur, tgt = kb.releases[product][start].version, kb.releases[product][end].version
    whole_path, whole_cost, whole = searched(kb, state, product, cur, tgt, 0)
    reference = planned(kb, state, product, tgt, 0)
    assert whole.stopped is None
    path, cost, s = searched(kb, state, product, cur, tgt, hops)
    plan = planned(kb, state, product, tgt, hops)
    if s.stopped is None:
        assert (path, cost) == (whole_path, whole_cost)
        assert plan == reference
        return
    assert s.dependent, "only the path-aware search stops"
    states, weighed = s.stopped
    assert states >= 1
    if weighed:
        assert weighed == hops
    else:  # not started: the graph may hold more than BEYOND times the budget
        assert paths.possible(s, s.dependent) == (states, paths.possible(s, s.dependent)[1])
        assert paths.possible(s, s.dependent)[1] > paths.BEYOND * hops
    assert path[0] == 0 and path[-1] == s.target
    assert cost >= whole_cost
    assert plan.verdict not in ("safe", "safe-with-actions", "blocked")
    assert plan.steps[0].from_version == cur and plan.steps[-1].to_version == tgt
    for a, b in itertools.pairwise(plan.steps):
        assert a.to_version == b.from_version
    bound = [f for f in plan.steps[0].findings if f.hazard == f"{paths.BOUND_PREFIX}{product}"]
    assert len(bound) == 1
    assert bound[0].status == "may-apply" and bound[0].severity == "blocking"
    said = "stopped after" if weighed else "would have to weigh up to"
    assert f"{said} {states} states" in bound[0].title
    for step in plan.steps[1:]:
        assert all(not f.hazard.startswith(paths.BOUND_PREFIX) for f in step.findings)


def test_the_bound_is_not_reached_where_nothing_depends_on_the_path() -> None:
    kb = generated(3, 24, 24)
    state = generated_state(kb, "prod-00", 0, pins=2, drift="disabled")
    rels = kb.releases["prod-00"]
    _path, _cost, s = searched(kb, state, "prod-00", rels[0].version, rels[-1].version, 1)
    assert not s.dependent and s.stopped is None


def test_a_long_window_stops_at_the_bound_and_says_so() -> None:
    """5 x 100 releases, the second component listed at every third release: 34,958 hops
    weighed unbounded, of at most 57,222 (``possible``). With a budget of 20,000 the search
    stops after weighing that many; with 10,000 it is not started. The plan says so."""
    kb = sometimes_listed(generated(5, 100, 100), "prod-00", 3)
    state = generated_state(kb, "prod-00", 0, pins=4, drift="disabled")
    tgt = kb.releases["prod-00"][-1].version
    for hops, said in ((20_000, "(20000 hops weighed)"), (10_000, "57222 hops, more than 4 times")):
        plan = planned(kb, state, "prod-00", tgt, hops)
        assert plan.verdict == "undetermined"
        found = [f for f in plan.steps[0].findings if f.hazard == "path-search-bound:prod-00"]
        assert found and said in found[0].reason, found
