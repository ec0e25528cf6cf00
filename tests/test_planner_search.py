"""The search (planner/search.py) finds the cheapest path.

Two generators: small in-memory knowledge (a product whose BOM moves a component in lockstep,
hazards of both with conditions over the component's version, over facts the releases' effects
change and over stated facts; ``upgrade_from`` and requirements on some releases), and the
benchmark's generated knowledge (bench/genkb.py) at small sizes. Each case's path is held to
Dijkstra over every release hop by hop, and on small windows to the ground truth: every path,
each judged on the state it reaches.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from upgradeplan import planner
from upgradeplan.model import (
    Condition,
    Fact,
    Hazard,
    KnowledgeBase,
    Migration,
    Product,
    Recognise,
    Release,
    State,
    Target,
)
from upgradeplan.planner import costs, onepass
from upgradeplan.planner.actions import fixable
from upgradeplan.planner.index import index_of
from upgradeplan.planner.search import Search
from upgradeplan.provenance import flag, in_file
from upgradeplan.state.derive import derive

P, C = "p", "c"
FACT_KEYS = ("cloud.a", "cloud.b")
ROOT = Path(__file__).resolve().parent.parent


def v(i: int) -> str:
    return f"1.{i}.0"


def searched(
    kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str
) -> tuple[list[str], int, Search]:
    """(the path's versions, its cost judged on the states it reaches, the search)."""
    limit = planner.threshold("blocking")
    s = Search(kb, index_of(kb), product, derive(state, kb), cur, tgt, (), limit)
    path = s.search()
    states = s.walk(path)  # each hop weighed on the state the path reaches
    cost = sum(
        s.hop(a, b, states[k], states[k + 1]).cost
        for k, (a, b) in enumerate(itertools.pairwise(path))
    )
    return [s.nodes[i].version for i in path], cost, s


def same_as_hop_by_hop(kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str) -> bool:
    """Assert the search finds the path and cost Dijkstra over every release finds, hop by
    hop (``Search.dijkstra``), where no fact depends on the path; True if the one pass ran."""
    path, cost, s = searched(kb, state, product, cur, tgt)
    if s.dependent:  # the path-aware search: held to the ground truth instead
        return False
    plain = s.dijkstra()
    states = s.walk(plain)
    plain_cost = sum(
        s.hop(a, b, states[k], states[k + 1]).cost
        for k, (a, b) in enumerate(itertools.pairwise(plain))
    )
    assert (path, cost) == ([s.nodes[i].version for i in plain], plain_cost)
    return onepass.applies(s, s.dependent)


# ---- small in-memory knowledge


def pred(name: str, **args: Any) -> Condition:
    return Condition("pred", predicate=name, args=args)


@st.composite
def conditions(draw: st.DrawFn, n: int) -> Condition | None:
    atoms = [
        pred("version_below", product=C, version=v(draw(st.integers(0, n)))),
        pred("fact_equals", fact=draw(st.sampled_from(FACT_KEYS)), value=draw(st.booleans())),
        pred("pin_exact", product=C),
        pred("pin_kind", product=C, kind=draw(st.sampled_from(("exact", "range", "none")))),
    ]
    picked = draw(st.lists(st.sampled_from(atoms), min_size=0, max_size=3))
    if not picked:
        return None
    parts = tuple(Condition("not", (a,)) if draw(st.booleans()) else a for a in picked)
    if len(parts) == 1:
        return parts[0]
    return Condition(draw(st.sampled_from(("all", "any"))), parts)


@st.composite
def hazards(draw: st.DrawFn, n: int, i: int) -> Hazard:
    scope = draw(st.sampled_from(("skip", "landing", "transition", "state")))
    k = draw(st.integers(1, n - 1))
    m = draw(st.integers(k, n - 1))
    since = draw(st.sampled_from((None, f">={v(draw(st.integers(0, k)))}")))
    table: dict[str, dict[str, Any]] = {
        "skip": {"stop": v(k), "to_range": f">={v(m)}", "from_range": since},
        "transition": {"from_range": f"<{v(k)}", "to_range": f">={v(m)}"},
        "landing": {"to_range": draw(st.sampled_from((v(k), f">={v(k)} <{v(m + 1)}")))},
        "state": {"from_range": f">={v(k)}"},
    }
    kw = table[scope]
    return Hazard(
        id=f"h{i:02d}",
        title=f"hazard {i}",
        product=draw(st.sampled_from((P, P, C))),
        severity=draw(st.sampled_from(("blocking", "warning", "notice"))),
        scope=scope,  # type: ignore[arg-type]
        consequence="breaks",
        when=draw(conditions(n)),
        migrations=("fix",) if draw(st.booleans()) else (),
        **kw,
    )


@st.composite
def releases(draw: st.DrawFn, n: int, i: int) -> Release:
    effects: dict[str, bool | str] = {}
    if i and draw(st.integers(0, 3)) == 0:
        effects = {draw(st.sampled_from(FACT_KEYS)): draw(st.booleans())}
    if i and draw(st.integers(0, 4)) == 0:
        # the pin changes kind (exact, range, none) along the window: predicates whose truth
        # depends on the kind alone are judged again only where it changes (onepass.Truths)
        effects = {**effects, f"pin.{C}": draw(st.sampled_from((v(i), f">={v(i)}", "")))}
    requires = {}
    if i and draw(st.integers(0, 3)) == 0:
        requires = {draw(st.sampled_from((C, "k8s"))): f">={v(max(0, i - 2))}"}
    upgrade_from = None
    if i > 2 and draw(st.integers(0, 4)) == 0:
        upgrade_from = f">={v(i - draw(st.integers(1, 3)))}"
    # some releases leave the component where it is (a hop skipping the one that moves it
    # lands with it unmoved: a requirement on it is judged on that)
    bom = {C: v(i)} if i == 0 or draw(st.integers(0, 3)) else {}
    return Release(
        P,
        v(i),
        f"r{i}",
        bom=bom,
        effects=effects,
        requires=requires,
        upgrade_from=upgrade_from,
    )


@dataclass(frozen=True)
class Case:
    kb: KnowledgeBase
    state: State
    current: int
    target: int


@st.composite
def cases(draw: st.DrawFn, most: int = 24) -> Case:
    n = draw(st.integers(4, most))
    target = draw(st.integers(1, n - 1))
    current = draw(st.integers(0, target - 1))
    hz = [draw(hazards(n, i)) for i in range(draw(st.integers(0, 12)))]
    kb = KnowledgeBase(
        products={x: Product(x, x, "chart", "", Recognise()) for x in (P, C)},
        releases={
            P: tuple(draw(releases(n, i)) for i in range(n)),
            C: tuple(Release(C, v(i), f"c{i}") for i in range(n)),
        },
        hazards={h.id: h for h in hz},
        migrations={"fix": Migration("fix", "fix it", "command", P, "echo fix {{ step.to }}")},
    )
    facts = {
        f"installed.{P}": Fact(f"installed.{P}", v(current), flag("--installed")),
        f"pin.{C}": Fact(f"pin.{C}", v(current), in_file("bom.yaml", 3)),
    }
    if draw(st.booleans()):
        facts[f"installed.{C}"] = Fact(f"installed.{C}", v(current), flag("--installed"))
    for key in FACT_KEYS:
        value = draw(st.sampled_from((None, True, False)))
        if value is not None:
            facts[key] = Fact(key, value, flag("--fact"))
    return Case(kb, State(facts=facts), current, target)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_search_finds_the_hop_by_hop_path_on_small_knowledge(case: Case) -> None:
    same_as_hop_by_hop(case.kb, case.state, P, v(case.current), v(case.target))


# ---- the ground truth: every path, each judged on the state it reaches


def ground_truth(
    kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str
) -> dict[tuple[int, ...], tuple[int, list[list[tuple[str, str]]]]]:
    """Every path of the window (node indices) -> (its cost, per hop the findings' hazard and
    status), each hop judged on the state that path reaches: the start with the landing of
    each stop laid on in turn (a release the path skips moves nothing). The cost is derived
    from the findings (not from the search's weights): HOP_COST per hop plus each finding's
    weight by severity, status and whether actions fix it."""
    limit = planner.threshold("blocking")
    state = derive(state, kb)  # as planner.plan does
    s = Search(kb, index_of(kb), product, state, cur, tgt, (), limit)
    out: dict[tuple[int, ...], tuple[int, list[list[tuple[str, str]]]]] = {}

    def walk(path: list[int], here: State, cost: int, found: list[Any]) -> None:
        i = path[-1]
        if i == s.target:
            out[tuple(path)] = (cost, found)
            return
        for j in range(i + 1, len(s.nodes)):
            rel = s.nodes[j].release
            assert rel is not None
            if rel.upgrade_from is not None and not s.idx.may_hop(rel, s.nodes[i].version):
                continue
            there = here
            for fact in s.landing_facts(j):
                there = there.with_facts(fact)
            fs = s.findings_on(i, j, here, there)
            w = costs.HOP_COST + sum(_weight(s, i, j, f, limit) for f in fs)
            hop = [(f.hazard, f.status) for f in fs]
            walk([*path, j], there, cost + w, [*found, hop])

    walk([0], state, 0, [])
    return out


def _weight(s: Search, i: int, j: int, f: Any, limit: int) -> int:
    """What a finding adds to its hop (planner/search.py's weights)."""
    from upgradeplan.model import SEVERITY_RANK

    if f.status == "does-not-apply":
        return 0
    if f.hazard.startswith("requires:"):
        if f.status == "may-apply":
            before, rel = s.nodes[i].release, s.nodes[j].release
            products = [e.key.removeprefix("installed.") for e in f.missing]
            inherited = (
                before is not None
                and rel is not None
                and bool(products)
                and all(before.requires.get(p) == rel.requires.get(p) for p in products)
            )
            return 0 if inherited else costs.MAY_APPLY_COST["blocking"]
        return costs.APPLIES_COST["blocking"] + costs.FORBIDDEN_COST
    if f.status == "may-apply":
        return costs.MAY_APPLY_COST[f.severity]
    if s.fixable(f.hazard):
        return costs.FIXED_COST[f.severity]
    forbids = SEVERITY_RANK[f.severity] >= limit
    return costs.APPLIES_COST[f.severity] + (costs.FORBIDDEN_COST if forbids else 0)


def assert_cheapest_under_ground_truth(
    kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str
) -> None:
    """The planner's path is the cheapest of every path judged on the state it reaches, its
    steps carry that path's findings, and it is blocked exactly when that path is."""
    truth = ground_truth(kb, state, product, cur, tgt)
    best = min(cost for cost, _ in truth.values())
    limit = planner.threshold("blocking")
    s = Search(kb, index_of(kb), product, derive(state, kb), cur, tgt, (), limit)
    path = tuple(s.search())
    p = planner.plan(kb, state, [Target(product, tgt)])
    assert truth[path][0] == best, (path, truth[path][0], best)
    hops = [
        sorted((f.hazard, f.status) for f in st.findings)
        for st in p.steps
        if st.from_version != st.to_version
    ]
    for f in p.state_findings:  # what the installation needs fixed where it stands
        if hops and fixable(kb, f, ()) and (f.hazard, f.status) in hops[0]:
            hops[0].remove((f.hazard, f.status))
    assert hops == [sorted(h) for h in truth[path][1]]
    blocked = best >= costs.FORBIDDEN_COST
    assert (p.verdict == "blocked") == blocked, (p.verdict, best)


def small_cases() -> st.SearchStrategy[Case]:
    """Cases whose window holds at most 9 releases (2^8 paths at most)."""
    return cases(most=10)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(small_cases())
def test_the_chosen_path_is_the_cheapest_judged_on_the_state_each_path_reaches(
    case: Case,
) -> None:
    assert_cheapest_under_ground_truth(case.kb, case.state, P, v(case.current), v(case.target))


# ---- the benchmark's generated knowledge


@cache
def _genkb() -> ModuleType:
    spec = importlib.util.spec_from_file_location("genkb", ROOT / "bench" / "genkb.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("genkb", module)
    spec.loader.exec_module(module)
    return module


_TMP = tempfile.TemporaryDirectory(prefix="upgradeplan-genkb-")


@cache
def generated(products: int, releases: int, hazards: int) -> KnowledgeBase:
    from upgradeplan.kb.loader import load

    root = Path(_TMP.name) / f"{products}x{releases}x{hazards}"
    _genkb().generate(root, products, releases, hazards)
    return load([str(root)], bundled=False)


def generated_state(kb: KnowledgeBase, product: str, start: int, pins: int, drift: str) -> State:
    """Like bench/plan.py: every other product at its first release, some of them pinned."""
    facts: dict[str, Fact] = {}
    installed = {p: kb.releases[p][0].version for p in sorted(kb.products) if p != product}
    for i, (p, ver) in enumerate(installed.items()):
        facts[f"installed.{p}"] = Fact(f"installed.{p}", ver, flag("--installed"))
        if i < pins:
            facts[f"pin.{p}"] = Fact(f"pin.{p}", ver, in_file("bom.yaml", 3 + i))
    own = kb.releases[product][start].version
    facts[f"installed.{product}"] = Fact(f"installed.{product}", own, flag("--installed"))
    key = f"helmrelease.{product}.drift-detection"
    facts[key] = Fact(key, drift, flag("--fact"))
    return State(facts=facts)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(((3, 12, 12), (3, 30, 30), (4, 45, 60))),
    st.data(),
)
def test_the_search_finds_the_hop_by_hop_path_on_generated_knowledge(
    shape: tuple[int, int, int], data: st.DataObject
) -> None:
    kb = generated(*shape)
    product = data.draw(st.sampled_from(sorted(kb.products)))
    n = len(kb.releases[product])
    start = data.draw(st.integers(0, n - 2))
    end = data.draw(st.integers(start + 1, n - 1))
    state = generated_state(
        kb,
        product,
        start,
        pins=data.draw(st.integers(0, shape[0] - 1)),
        drift=data.draw(st.sampled_from(("disabled", "enabled"))),
    )
    same_as_hop_by_hop(
        kb, state, product, kb.releases[product][start].version, kb.releases[product][end].version
    )


def test_a_long_generated_line_takes_the_one_pass_to_the_hop_by_hop_path() -> None:
    """3 products x 200 releases, BOMs moving pinned components in lockstep, requirements and
    an ``upgrade_from`` on every tenth release: the one pass finds Dijkstra's path and cost."""
    kb = generated(3, 200, 60)
    product = "prod-00"
    rels = kb.releases[product]
    state = generated_state(kb, product, 0, pins=2, drift="disabled")
    assert same_as_hop_by_hop(kb, state, product, rels[0].version, rels[-1].version)


def test_generated_knowledge_is_planned_in_one_pass() -> None:
    """First -> last of every product at 4 x 45, three components pinned: the one pass."""
    kb = generated(4, 45, 60)
    for product in sorted(kb.products):
        rels = kb.releases[product]
        state = generated_state(kb, product, 0, pins=3, drift="disabled")
        assert same_as_hop_by_hop(kb, state, product, rels[0].version, rels[-1].version)


def test_a_fact_the_target_reads_before_the_hop_is_judged_on_the_path_s_state() -> None:
    """Landing on the target reads cloud.a from the state before the hop; 1.3.0 sets it (so a
    hop from 1.3.0 meets nothing)."""
    unset = Condition("not", (pred("fact_equals", fact="cloud.a", value=False),))
    when = Condition("any", (pred("version_below", product=C, version=v(0)), unset))
    hazard = Hazard(
        id="h00",
        title="hazard",
        product=P,
        severity="blocking",
        scope="landing",
        consequence="breaks",
        when=when,
        to_range=f">={v(3)} <{v(7)}",
    )
    effects = {3: {"cloud.a": False}, 4: {"cloud.a": False}, 5: {"cloud.a": False}}
    kb = KnowledgeBase(
        products={x: Product(x, x, "chart", "", Recognise()) for x in (P, C)},
        releases={
            P: tuple(
                Release(P, v(i), f"r{i}", bom={C: v(i)}, effects=effects.get(i, {}))
                for i in range(7)
            ),
            C: tuple(Release(C, v(i), f"c{i}") for i in range(7)),
        },
        hazards={"h00": hazard},
        migrations={},
    )
    state = State(
        facts={
            f"installed.{P}": Fact(f"installed.{P}", v(0), flag("--installed")),
            f"pin.{C}": Fact(f"pin.{C}", v(0), in_file("bom.yaml", 3)),
        }
    )
    # 1.6.0 does not set cloud.a: what a hop to it reads depends on the last stop that set
    # it, so the search runs over the path-dependent states (planner/paths.py)
    path, _cost, s = searched(kb, state, P, v(0), v(6))
    assert s.dependent and path == [v(0), v(3), v(6)]
    assert_cheapest_under_ground_truth(kb, state, P, v(0), v(6))
    kb6 = KnowledgeBase(
        products=kb.products,
        releases={
            P: (*kb.releases[P][:6], Release(P, v(6), "r6", bom={C: v(6)}, effects=effects[5])),
            C: kb.releases[C],
        },
        hazards=kb.hazards,
        migrations={},
    )
    # set by every landing from 1.3.0 on: the same whatever the path, the one pass
    assert same_as_hop_by_hop(kb6, state, P, v(0), v(6))
    assert_cheapest_under_ground_truth(kb6, state, P, v(0), v(6))
