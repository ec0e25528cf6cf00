"""The one-pass search (planner/onepass.py) against every pair of releases (hypothesis).

One product, no BOM, releases 1.0.0, 1.1.0, …, some with chart defaults; hazards of every scope
whose conditions read stated facts, the chart's values (the release's default where the
installation does not set it, so the truth changes from release to release) or the installed
version. The oracle weighs every hop with the hop-by-hop weight (``Search.hop``) and keeps, per
release, the cheapest predecessor as Dijkstra does (cost, then the predecessor's cost, then its
index): the pass must find the very same path.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_planner_search import Case, cases

from upgradeplan.model import (
    SEVERITY_RANK,
    Condition,
    Fact,
    Hazard,
    KnowledgeBase,
    Product,
    Recognise,
    Release,
    State,
)
from upgradeplan.planner import onepass
from upgradeplan.planner.index import Index
from upgradeplan.planner.search import Search
from upgradeplan.provenance import flag
from upgradeplan.state.derive import derive

P = "p"


def v(i: int) -> str:
    return f"1.{i}.0"


def _condition(kind: str, arg: int) -> Condition | None:
    if kind == "none":
        return None
    if kind == "fact":
        return Condition("pred", predicate="fact_equals", args={"fact": "cloud.a", "value": "x"})
    if kind == "value":
        args = {"product": P, "key": "crds.job", "value": True}
        return Condition("not", (Condition("pred", predicate="value_equals", args=args),))
    return Condition("pred", predicate="version_below", args={"product": P, "version": v(arg)})


@st.composite
def hazards(draw: st.DrawFn, n: int, i: int) -> Hazard:
    scope = draw(st.sampled_from(("skip", "landing", "transition", "state")))
    k = draw(st.integers(1, n - 1))
    m = draw(st.integers(k, n - 1))
    when = _condition(
        draw(st.sampled_from(("none", "fact", "value", "version"))), draw(st.integers(1, n))
    )
    kw: dict[str, Any] = {}
    if scope == "skip":
        kw = {"stop": v(k), "to_range": f">={v(m)}"}
    elif scope == "transition":
        kw = {"from_range": f"<{v(k)}", "to_range": f">={v(m)}"}
    elif scope == "landing":
        kw = {"to_range": v(k) if draw(st.booleans()) else f">={v(k)}"}
    else:
        kw = {"from_range": f">={v(k)}"}
    return Hazard(
        id=f"h{i}",
        title=f"hazard {i}",
        product=P,
        severity=draw(st.sampled_from(("blocking", "warning", "notice"))),
        scope=scope,  # type: ignore[arg-type]
        consequence="breaks",
        when=when,
        **kw,
    )


@st.composite
def windows(draw: st.DrawFn) -> tuple[KnowledgeBase, State, int, int]:
    n = draw(st.integers(3, 12))
    defaults = [draw(st.sampled_from((None, True, False))) for _ in range(n)]
    releases = tuple(
        Release(P, v(i), f"r{i}", defaults={} if d is None else {"crds": {"job": d}})
        for i, d in enumerate(defaults)
    )
    found = [draw(hazards(n, i)) for i in range(draw(st.integers(0, 8)))]
    kb = KnowledgeBase(
        products={P: Product(P, P, "chart", "", Recognise())},
        releases={P: releases},
        hazards={h.id: h for h in found},
        migrations={},
    )
    current = draw(st.integers(0, n - 3))
    target = draw(st.integers(current + 2, n - 1))
    facts = {f"installed.{P}": Fact(f"installed.{P}", v(current), flag("--installed"))}
    if draw(st.booleans()):
        facts["cloud.a"] = Fact("cloud.a", draw(st.sampled_from(("x", "y"))), flag("--fact"))
    job = draw(st.sampled_from((None, True, False)))
    if job is not None:
        key = f"values.{P}.crds.job"
        facts[key] = Fact(key, job, flag("--fact"))
    return kb, State(facts=facts), current, target


def every_pair(s: Search) -> list[int]:
    """The path Dijkstra over every release finds, from the hop-by-hop weights."""
    n = len(s.nodes)
    dist = [0] + [0] * (n - 1)
    prev = [0] * n
    for j in range(1, n):
        dist[j], _, prev[j] = min((dist[i] + s.hop(i, j).cost, dist[i], i) for i in range(j))
    path = [n - 1]
    while path[-1] != 0:
        path.append(prev[path[-1]])
    return path[::-1]


def one_pass(s: Search) -> list[int]:
    assert onepass.applies(s, s.dependent)
    return onepass.cheapest(s, s.truths, s.turns)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(windows())
def test_the_one_pass_finds_the_path_every_pair_finds(
    window: tuple[KnowledgeBase, State, int, int],
) -> None:
    kb, state, current, target = window
    limit = SEVERITY_RANK["blocking"]
    s = Search(kb, Index(kb), P, state, v(current), v(target), (), limit)
    assert one_pass(s) == every_pair(s) == s.dijkstra()


def test_an_upgrade_from_admits_only_its_starts() -> None:
    """1.3.0 may only be reached from 1.1.0 or above: the pass does not jump to it from 1.0.0
    though that hop is the cheapest (nothing else weighs)."""
    rels = tuple(
        Release(P, v(i), f"r{i}", upgrade_from=">=1.1.0" if i == 3 else None) for i in range(4)
    )
    kb = KnowledgeBase(
        products={P: Product(P, P, "chart", "", Recognise())},
        releases={P: rels},
        hazards={},
        migrations={},
    )
    state = State(facts={f"installed.{P}": Fact(f"installed.{P}", v(0), flag("--installed"))})
    s = Search(kb, Index(kb), P, state, v(0), v(3), (), SEVERITY_RANK["blocking"])
    assert one_pass(s) == s.dijkstra() == [0, 1, 3]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_with_lockstep_requirements_and_upgrade_from_the_pass_finds_dijkstra_s_path(
    case: Case,
) -> None:
    """The search module's cases: a BOM moving a pinned component (sometimes not), effects,
    requirements and ``upgrade_from``; where the pass applies it finds Dijkstra's path."""
    limit = SEVERITY_RANK["blocking"]
    state = derive(case.state, case.kb)
    s = Search(case.kb, Index(case.kb), "p", state, v(case.current), v(case.target), (), limit)
    if onepass.applies(s, s.dependent):
        assert onepass.cheapest(s, s.truths, s.turns) == s.dijkstra()


def test_a_condition_that_reads_no_landed_key_is_evaluated_once() -> None:
    cond = Condition("pred", predicate="fact_equals", args={"fact": "cloud.a", "value": "x"})
    h = Hazard("h", "h", P, "warning", "state", "breaks", when=cond, from_range=">=1.0.0")
    kb = KnowledgeBase(
        products={P: Product(P, P, "chart", "", Recognise())},
        releases={},
        hazards={"h": h},
        migrations={},
    )
    truths = onepass.Truths(kb, frozenset({f"installed.{P}"}))
    a = State(facts={"cloud.a": Fact("cloud.a", "x", flag("--fact"))})
    truths.of(h, a)
    assert truths.fixed == {"h": truths.of(h, a)}


_LEAVES = st.sampled_from(
    [
        Condition("pred", predicate="version_below", args={"product": "c", "version": "1.3.0"}),
        Condition("pred", predicate="version_at_least", args={"product": P, "version": "1.2.0"}),
        Condition("pred", predicate="version_matches", args={"product": "c", "range": "~1.1"}),
        Condition("pred", predicate="fact_equals", args={"fact": "cloud.a", "value": "x"}),
    ]
)
_TREES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.builds(lambda c: Condition("not", children=(c,)), inner)
        | st.builds(lambda cs: Condition("all", children=tuple(cs)), st.lists(inner, min_size=1))
        | st.builds(lambda cs: Condition("any", children=tuple(cs)), st.lists(inner, min_size=1))
    ),
    max_leaves=5,
)
_STATES = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            f"installed.{P}": st.sampled_from([v(i) for i in range(4)]),
            "installed.c": st.sampled_from([None, "x", *(v(i) for i in range(5))]),
            "cloud.a": st.sampled_from(["x", "y"]),
        },
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_TREES, min_size=1, max_size=3), _STATES)
def test_kept_truths_are_what_each_condition_gives_on_each_state(
    whens: list[Condition], states: list[dict[str, Any]]
) -> None:
    # Truths keeps each hazard's truth by what its predicates see of a state; on every state
    # of a window, in any order, it must answer what evaluating the condition answers
    from upgradeplan import conditions

    hazards = [
        Hazard(f"h{k}", "h", P, "warning", "state", "breaks", when=w, from_range=">=1.0.0")
        for k, w in enumerate(whens)
    ]
    kb = KnowledgeBase(
        products={P: Product(P, P, "chart", "", Recognise())},
        releases={},
        hazards={h.id: h for h in hazards},
        migrations={},
    )
    # every key may change from state to state: every one is set by some landing
    truths = onepass.Truths(kb, frozenset({f"installed.{P}", "installed.c", "cloud.a"}))
    for facts in states:
        state = State(facts={k: Fact(k, x, flag("--fact")) for k, x in facts.items()})
        for h in hazards:
            assert h.when is not None
            assert truths.of(h, state) is conditions.truth(h.when, state, kb)
