"""The pruned search finds the exhaustive search's path and cost (planner/prune.py).

Two generators: small in-memory knowledge (a product whose BOM moves a component in lockstep,
hazards of both with conditions over the component's version, over facts the releases' effects
change and over stated facts; ``upgrade_from`` and requirements on some releases), and the
benchmark's generated knowledge (bench/genkb.py) at small sizes. Each case is searched with
pruning forced on (every window is "large") and off (every release a candidate).
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
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
from upgradeplan.planner import search as search_mod
from upgradeplan.planner.index import index_of
from upgradeplan.planner.search import Search
from upgradeplan.provenance import flag, in_file

P, C = "p", "c"
FACT_KEYS = ("cloud.a", "cloud.b")
ROOT = Path(__file__).resolve().parent.parent


def v(i: int) -> str:
    return f"1.{i}.0"


EXHAUSTIVE = 10**9  # no window is pruned


@contextmanager
def window(size: int, fanout: bool | None = None, columns: bool = False) -> Iterator[None]:
    """Prune windows over ``size`` releases; weigh hop by hop unless ``fanout`` (default: only
    when pruning, so the exhaustive search is the plain one: every release, every hop alone);
    with ``columns`` (and the fan-out) the one pass in version order (planner/columns.py)
    instead of Dijkstra."""
    saved = search_mod.EXHAUSTIVE_WINDOW, search_mod.FANOUT, search_mod.COLUMNS
    search_mod.EXHAUSTIVE_WINDOW = size
    search_mod.FANOUT = size < EXHAUSTIVE if fanout is None else fanout
    search_mod.COLUMNS = columns
    try:
        yield
    finally:
        search_mod.EXHAUSTIVE_WINDOW, search_mod.FANOUT, search_mod.COLUMNS = saved


def searched(
    kb: KnowledgeBase,
    state: State,
    product: str,
    cur: str,
    tgt: str,
    size: int,
    fanout: bool | None = None,
    columns: bool = False,
) -> tuple[list[str], float, list[int] | None, int]:
    """(path, its cost, the candidates kept, the window's length) with the given threshold."""
    with window(size, fanout, columns):
        s = Search(kb, index_of(kb), product, state, cur, tgt, (), planner.threshold("blocking"))
        path = s.search()
        states = s.walk(path)  # each hop weighed on the state the path reaches
        cost = sum(
            s.hop(a, b, states[k], states[k + 1]).cost
            for k, (a, b) in enumerate(itertools.pairwise(path))
        )
        return [s.nodes[i].version for i in path], cost, s.allowed, len(s.nodes)


def same_plans(kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str) -> bool:
    """Assert pruned == one pass in version order == exhaustive (path, cost, plan steps and
    verdict); True if it pruned."""
    pruned = searched(kb, state, product, cur, tgt, 0)
    one_pass = searched(kb, state, product, cur, tgt, 0, columns=True)
    full = searched(kb, state, product, cur, tgt, EXHAUSTIVE)
    assert full[2] is None
    assert pruned[:2] == full[:2]
    assert one_pass[:2] == full[:2]
    assert_fanout_weighs_like_hops(kb, state, product, cur, tgt)
    plans = []
    for size, columns in ((0, False), (0, True), (EXHAUSTIVE, False)):
        with window(size, columns=columns):
            p = planner.plan(kb, state, [Target(product, tgt)])
        plans.append(
            (
                [(s.from_version, s.to_version, s.verdict, s.findings) for s in p.steps],
                p.verdict,
                p.blocked_by,
            )
        )
    assert plans[0] == plans[2]
    assert plans[1] == plans[2]
    return pruned[2] is not None and len(pruned[2]) < pruned[3]


def assert_fanout_weighs_like_hops(
    kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str, step: int = 1
) -> None:
    """Every hop out of every ``step``-th start costs the same weighed at once and alone."""
    limit = planner.threshold("blocking")
    rows: dict[int, tuple[list[int], list[int]]] = {}
    with window(EXHAUSTIVE, fanout=True):
        fan = Search(kb, index_of(kb), product, state, cur, tgt, (), limit)
        weighed = fan._fan()
        if weighed is None:  # not weighed at once here: the search weighs hop by hop
            return
        for i in range(0, len(fan.nodes) - 1, step):
            ends = fan.successors(i)
            rows[i] = ends, weighed.costs(i, ends)
    with window(EXHAUSTIVE, fanout=False):  # hop by hop, every truth by conditions.truth
        alone = Search(kb, index_of(kb), product, state, cur, tgt, (), limit)
        for i, (ends, costs) in rows.items():
            assert costs == [alone.hop(i, j).cost for j in ends], i


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
        # depends on the kind alone are judged again only where it changes (planner/truths.py)
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
def test_pruned_search_equals_exhaustive_on_small_knowledge(case: Case) -> None:
    same_plans(case.kb, case.state, P, v(case.current), v(case.target))


# ---- the ground truth: every path, each judged on the state it reaches


def ground_truth(
    kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str
) -> dict[tuple[int, ...], tuple[int, list[list[tuple[str, str]]]]]:
    """Every path of the window (node indices) -> (its cost, per hop the findings' hazard and
    status), each hop judged on the state that path reaches: the start with the landing of
    each stop laid on in turn (a release the path skips moves nothing). The cost is derived
    from the findings (not from the search's weights): HOP_COST per hop plus each finding's
    weight by severity, status and whether actions fix it."""
    from upgradeplan.planner.hopfindings import hop_findings
    from upgradeplan.state.derive import derive

    limit = planner.threshold("blocking")
    state = derive(state, kb)  # as planner.plan does
    with window(EXHAUSTIVE, fanout=False):
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
                for fact in s._landing_facts(j):
                    there = there.with_facts(fact)
                moved = [
                    (c, a, b)
                    for c in sorted(s._pins)
                    if c != product
                    and (a := here.installed(c)) is not None
                    and (b := there.installed(c)) is not None
                    and a != b
                ]
                fs = hop_findings(s, i, j, here, there, moved, there, False)
                w = search_mod.HOP_COST + sum(_weight(s, i, j, f, limit) for f in fs)
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
            return 0 if inherited else search_mod.MAY_APPLY_COST["blocking"]
        return search_mod.APPLIES_COST["blocking"] + search_mod.FORBIDDEN_COST
    if f.status == "may-apply":
        return search_mod.MAY_APPLY_COST[f.severity]
    if s.fixable_id(f.hazard):
        return search_mod.FIXED_COST[f.severity]
    forbids = SEVERITY_RANK[f.severity] >= limit
    return search_mod.APPLIES_COST[f.severity] + (search_mod.FORBIDDEN_COST if forbids else 0)


def assert_cheapest_under_ground_truth(
    kb: KnowledgeBase, state: State, product: str, cur: str, tgt: str
) -> None:
    """The planner's path is the cheapest of every path judged on the state it reaches, its
    steps carry that path's findings, and it is blocked exactly when that path is."""
    from upgradeplan.planner.actions import fixable
    from upgradeplan.state.derive import derive

    truth = ground_truth(kb, state, product, cur, tgt)
    best = min(cost for cost, _ in truth.values())
    for size, columns in ((0, False), (0, True), (EXHAUSTIVE, False)):
        with window(size, columns=columns):
            s = Search(
                kb,
                index_of(kb),
                product,
                derive(state, kb),
                cur,
                tgt,
                (),
                planner.threshold("blocking"),
            )
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
        blocked = best >= search_mod.FORBIDDEN_COST
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
def test_pruned_search_equals_exhaustive_on_generated_knowledge(
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
    same_plans(
        kb, state, product, kb.releases[product][start].version, kb.releases[product][end].version
    )


def test_a_long_generated_line_is_weighed_and_pruned_alike() -> None:
    """3 products x 400 releases: the pruned search and the one pass in version order find the
    unpruned one's path and cost, and
    the hops out of every 57th release cost the same weighed at once and alone (the plain
    exhaustive search is too slow for the suite at this length)."""
    kb = generated(3, 400, 120)
    product = "prod-00"
    rels = kb.releases[product]
    state = generated_state(kb, product, 0, pins=1, drift="disabled")
    cur, tgt = rels[0].version, rels[-1].version
    pruned = searched(kb, state, product, cur, tgt, 0)
    whole = searched(kb, state, product, cur, tgt, EXHAUSTIVE, fanout=True)
    one_pass = searched(kb, state, product, cur, tgt, EXHAUSTIVE, fanout=True, columns=True)
    assert pruned[:2] == whole[:2]
    assert one_pass[:2] == whole[:2]
    assert pruned[2] is not None and len(pruned[2]) < pruned[3]
    assert_fanout_weighs_like_hops(kb, state, product, cur, tgt, step=57)


def test_generated_knowledge_is_pruned_and_planned_alike() -> None:
    """First -> last of every product at 4 x 45: the pruned search keeps fewer releases."""
    kb = generated(4, 45, 60)
    pruned = 0
    for product in sorted(kb.products):
        rels = kb.releases[product]
        state = generated_state(kb, product, 0, pins=3, drift="disabled")
        pruned += same_plans(kb, state, product, rels[0].version, rels[-1].version)
    assert pruned == len(kb.products)


def test_a_fact_the_target_reads_before_the_hop_keeps_the_releases_that_set_it() -> None:
    """Landing on the target reads cloud.a from the state before the hop; 1.3.0 sets it (so a
    hop from 1.3.0 meets nothing) and must stay a candidate though nothing else tells it apart."""
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
    # it, so the search runs over the path-dependent states (planner/paths.py), unpruned
    assert not same_plans(kb, state, P, v(0), v(6))
    assert searched(kb, state, P, v(0), v(6), 0)[0] == [v(0), v(3), v(6)]
    assert ground_truth(kb, state, P, v(0), v(6)) == ground_truth(kb, state, P, v(0), v(6))
    kb6 = KnowledgeBase(
        products=kb.products,
        releases={
            P: (*kb.releases[P][:6], Release(P, v(6), "r6", bom={C: v(6)}, effects=effects[5])),
            C: kb.releases[C],
        },
        hazards=kb.hazards,
        migrations={},
    )
    # set by every landing from 1.3.0 on: the same whatever the path, pruned as before
    assert same_plans(kb6, state, P, v(0), v(6))


def test_the_garbage_collector_is_on_again_after_a_search_also_one_that_fails() -> None:
    import gc

    kb = generated(3, 12, 12)
    product = "prod-00"
    rels = kb.releases[product]
    state = generated_state(kb, product, 0, pins=1, drift="disabled")
    assert searched(kb, state, product, rels[0].version, rels[-1].version, 0)[0]
    assert gc.isenabled()
    s = Search(kb, index_of(kb), product, state, rels[0].version, rels[-1].version, (), 1)

    def broken() -> list[int]:
        raise RuntimeError("broken")

    s._search = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        s.search()
    assert gc.isenabled()
