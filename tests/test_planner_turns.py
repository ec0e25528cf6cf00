"""planner/turns.py: a hazard's truth along a window changes only at a release its turns name.

Held on whole windows, release by release against the truth judged on each state: the
hypothesis-made small knowledge of tests/test_planner_search.py (conditions on values, pins,
versions and facts that landings set), the generated knowledge of the benchmark (version
comparisons of components a BOM moves, found by bisection) and the kube-prometheus-stack pack
(1,113 releases whose value conditions read the release's defaults).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_planner_search import Case, cases, generated, generated_state, pred

from upgradeplan import conditions
from upgradeplan.kb import packs
from upgradeplan.kb.loader import load
from upgradeplan.model import (
    Condition,
    Fact,
    Hazard,
    KnowledgeBase,
    Product,
    Recognise,
    Release,
    State,
)
from upgradeplan.planner import threshold
from upgradeplan.planner.index import index_of
from upgradeplan.planner.search import Search
from upgradeplan.provenance import flag
from upgradeplan.state.derive import derive


def window(kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str) -> Search:
    limit = threshold("blocking")
    return Search(kb, index_of(kb), product, derive(state, kb), cur, tgt, (), limit)


def turned_unannounced(s: Search) -> list[tuple[str, int]]:
    """(hazard, release) where the truth changed from the release before and no turn says so;
    also checks that some turns are narrower than 'every release'."""
    missed = []
    movers = (s.product, *s.comps)
    for h in (h for p in movers for h in s.idx.by_product.get(p, ())):
        turns = s.turns.of(h)
        if turns is None or h.when is None:
            continue
        before = conditions.truth(h.when, s.state_at(0), s.kb)
        for i in range(1, len(s.nodes)):
            now = conditions.truth(h.when, s.state_at(i), s.kb)
            if now is not before and i not in turns:
                missed.append((h.id, i))
            before = now
    return missed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_turns_name_every_change_of_truth_on_small_knowledge(case: Case) -> None:
    v = [r.version for r in case.kb.releases["p"]]
    s = window(case.kb, case.state, "p", v[case.current], v[case.target])
    assert turned_unannounced(s) == []


_DEFAULTS: list[dict[str, Any]] = [{}, {"a": {"b": True}}, {"a": {"b": False}}, {"a": 1}]
_VALUES: list[Any] = [None, {}, {"a": {"b": True}}, {"a": {"c": 2}}]


@st.composite
def value_windows(draw: st.DrawFn) -> tuple[KnowledgeBase, State, str, str]:
    """A line whose releases' chart defaults change, with value conditions on them, and
    values that landings may set (effects) or the installation sets."""
    n = draw(st.integers(3, 12))
    rels = []
    for i in range(n):
        effects = {}
        if i and draw(st.integers(0, 4)) == 0:
            effects = {"values.p.a.b": draw(st.booleans())}
        defaults = draw(st.sampled_from(_DEFAULTS))
        rels.append(Release("p", f"1.{i}.0", f"r{i}", defaults=defaults, effects=effects))
    atoms = [
        pred("value_equals", product="p", key="a.b", value=True),
        pred("value_set", product="p", key="a.b"),
        pred("value_in", product="p", key="a", values=[1, 2]),
        pred("value_contains", product="p", key="a", value="b"),
    ]
    hazards = {}
    for k in range(draw(st.integers(1, 4))):
        picked = tuple(draw(st.lists(st.sampled_from(atoms), min_size=1, max_size=2)))
        when = (
            picked[0]
            if len(picked) == 1
            else Condition(draw(st.sampled_from(("all", "any"))), picked)
        )
        hazards[f"h{k}"] = Hazard(
            f"h{k}", "t", "p", "blocking", "landing", "c", to_range=">=1.0.0", when=when
        )
    kb = KnowledgeBase(
        products={"p": Product("p", "p", "chart", "", Recognise())},
        releases={"p": tuple(rels)},
        hazards=hazards,
        migrations={},
    )
    facts = {"installed.p": Fact("installed.p", "1.0.0", flag("--installed"))}
    values = draw(st.sampled_from(_VALUES))
    if values is not None:
        facts["values.p"] = Fact("values.p", values, flag("--fact"))
    return kb, State(facts=facts), "1.0.0", f"1.{n - 1}.0"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value_windows())
def test_turns_name_every_change_of_truth_of_value_conditions(
    case: tuple[KnowledgeBase, State, str, str],
) -> None:
    kb, state, cur, tgt = case
    assert turned_unannounced(window(kb, state, "p", cur, tgt)) == []


def test_turns_name_every_change_of_truth_on_generated_knowledge() -> None:
    kb = generated(4, 45, 60)
    for product in sorted(kb.products):
        rels = kb.releases[product]
        state = generated_state(kb, product, 0, pins=3, drift="disabled")
        s = window(kb, state, product, rels[0].version, rels[-1].version)
        assert turned_unannounced(s) == [], product
        # a component's version comparisons turn once along its rising BOM versions
        counts = [len(t) for h in kb.hazards.values() if (t := s.turns.of(h)) is not None]
        assert counts and max(counts) < len(s.nodes) // 2


def test_a_pack_line_turns_only_where_its_defaults_or_facts_change() -> None:
    """kube-prometheus-stack first -> last with no values set: every value condition reads the
    defaults of the running release, one mapping along the line, so nothing turns."""
    kb = load(packs.directories(["kube-prometheus-stack"]))
    product = "kube-prometheus-stack"
    line = kb.releases[product]

    def fact(key: str, value: object) -> Fact:
        return Fact(key, value, flag("--fact"))  # type: ignore[arg-type]

    crds = {"install": "Create", "upgrade": "Create"}
    facts = {
        f"installed.{product}": fact(f"installed.{product}", line[0].version),
        f"values.{product}": fact(f"values.{product}", {}),
        f"helmrelease.{product}.crds": fact(f"helmrelease.{product}.crds", crds),
    }
    s = window(kb, State(facts=facts), product, line[0].version, line[-1].version)
    assert len(s.nodes) > 1000
    assert turned_unannounced(s) == []
    pidx = s.idx.product(product)
    counts = s.turns.counts(x.hazard for x in (*pidx.skip, *pidx.transition))
    assert counts[-1] <= 5  # turns are few: the start classes are judged a few times only
