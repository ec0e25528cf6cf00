"""Planner invariants over generated small knowledge bases and states (hypothesis).

Releases of the product are 1.0.0, 1.1.0, …; each publishes a component at the same version in
its BOM, and the component's exact pin moves in lockstep. Hazards of every scope (of the product
or of the component) use ranges over release indices and conditions over three stated facts, so
an independent oracle can tell which hops are forbidden (a blocking hazard applies and cannot be
fixed) and whether a safe path exists.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
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
    Plan,
    Product,
    Recognise,
    Release,
    State,
    Target,
)
from upgradeplan.provenance import flag, in_file

P = "p"
C = "c"  # published in P's BOM, exactly pinned: moves in lockstep
FACT_KEYS = ("cloud.a", "cloud.b", "cloud.c")
VALUES = ("x", "y")


def v(i: int) -> str:
    return f"1.{i}.0"


@dataclass(frozen=True)
class Spec:
    """A hazard in index terms (the oracle's view)."""

    scope: str
    severity: str
    k: int  # stop / landing start / from bound / state start
    m: int  # skip and transition: where `to` starts
    exact: bool  # landing on exactly k
    when: tuple[str, str, bool] | None  # (fact, value, negated)
    fixable: bool
    product: str = P

    def in_scope(self, a: int, b: int) -> bool:
        if self.scope == "skip":
            return a < self.k and b >= self.m
        if self.scope == "transition":
            return a < self.k and b >= self.m
        if self.scope == "landing":
            return b == self.k if self.exact else b >= self.k
        return b >= self.k

    def truth(self, facts: dict[str, str]) -> bool | None:
        if self.when is None:
            return True
        key, value, negated = self.when
        if key not in facts:
            return None
        return (facts[key] == value) != negated

    def forbids(self, a: int, b: int, facts: dict[str, str]) -> bool:
        return (
            self.severity == "blocking"
            and self.in_scope(a, b)
            and self.truth(facts) is True
            and (self.scope == "skip" or not self.fixable)
        )


@st.composite
def specs(draw: st.DrawFn, n: int) -> Spec:
    scope = draw(st.sampled_from(("skip", "landing", "transition", "state")))
    k = draw(st.integers(1, n - 1))
    m = draw(st.integers(k, n - 1)) if scope in ("skip", "transition") else k
    when = draw(
        st.none() | st.tuples(st.sampled_from(FACT_KEYS), st.sampled_from(VALUES), st.booleans())
    )
    return Spec(
        scope=scope,
        severity=draw(st.sampled_from(("blocking", "blocking", "warning", "notice"))),
        k=k,
        m=m,
        exact=draw(st.booleans()),
        when=when,
        fixable=draw(st.booleans()),
        product=draw(st.sampled_from((P, P, C))),
    )


def to_hazard(i: int, s: Spec) -> Hazard:
    when: Condition | None = None
    if s.when is not None:
        key, value, negated = s.when
        when = Condition("pred", predicate="fact_equals", args={"fact": key, "value": value})
        if negated:
            when = Condition("not", (when,))
    kw: dict[str, Any] = {}
    if s.scope == "skip":
        kw = {"stop": v(s.k), "to_range": f">={v(s.m)}"}
    elif s.scope == "transition":
        kw = {"from_range": f"<{v(s.k)}", "to_range": f">={v(s.m)}"}
    elif s.scope == "landing":
        kw = {"to_range": v(s.k) if s.exact else f">={v(s.k)}"}
    else:
        kw = {"from_range": f">={v(s.k)}"}
    return Hazard(
        id=f"h{i}",
        title=f"hazard {i}",
        product=s.product,
        severity=s.severity,  # type: ignore[arg-type]
        scope=s.scope,  # type: ignore[arg-type]
        consequence="breaks",
        when=when,
        migrations=("fix",) if s.fixable else (),
        **kw,
    )


@dataclass(frozen=True)
class Case:
    n: int
    current: int
    target: int
    hazards: tuple[Spec, ...]
    facts: dict[str, str]

    def kb(self) -> KnowledgeBase:
        return KnowledgeBase(
            products={x: Product(x, x, "chart", "", Recognise()) for x in (P, C)},
            releases={
                P: tuple(Release(P, v(i), f"r{i}", bom={C: v(i)}) for i in range(self.n)),
                C: tuple(Release(C, v(i), f"c{i}") for i in range(self.n)),
            },
            hazards={f"h{i}": to_hazard(i, s) for i, s in enumerate(self.hazards)},
            migrations={"fix": Migration("fix", "fix it", "command", P, "echo fix {{ step.to }}")},
        )

    def state(self) -> State:
        facts = {
            f"installed.{P}": Fact(f"installed.{P}", v(self.current), flag("--installed")),
            f"pin.{C}": Fact(f"pin.{C}", v(self.current), in_file("bom.yaml", 3)),
        }
        for key, value in self.facts.items():
            facts[key] = Fact(key, value, flag("--fact"))
        return State(facts=facts)

    def safe_path_exists(self) -> bool:
        """Oracle: some rising sequence of releases avoids every forbidden hop."""
        reach = {self.current}
        for b in range(self.current + 1, self.target + 1):
            if any(
                not any(h.forbids(a, b, self.facts) for h in self.hazards) for a in reach if a < b
            ):
                reach.add(b)
        return self.target in reach


@st.composite
def cases(draw: st.DrawFn) -> Case:
    n = draw(st.integers(2, 7))
    target = draw(st.integers(1, n - 1))
    current = draw(st.integers(0, target - 1))
    hazards = tuple(draw(st.lists(specs(n), max_size=6)))
    facts = draw(st.dictionaries(st.sampled_from(FACT_KEYS), st.sampled_from(VALUES)))
    return Case(n, current, target, hazards, facts)


def run(case: Case) -> Plan:
    return planner.plan(case.kb(), case.state(), [Target(P, v(case.target))])


def index(version: str) -> int:
    return int(version.split(".")[1])


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(cases())
def test_every_step_rises_and_the_steps_chain(case: Case) -> None:
    plan = run(case)
    hops = [s for s in plan.steps if s.product == P]
    assert hops, "a target above the installed version needs at least one hop"
    assert len(hops) == len(plan.steps)  # fixes of the component ride on the product's steps
    assert hops[0].from_version == v(case.current)
    for a, b in itertools.pairwise(hops):
        assert a.to_version == b.from_version
    for s in hops:
        assert index(s.from_version) < index(s.to_version)


@SETTINGS
@given(cases())
def test_path_ends_at_target_or_is_blocked_naming_the_blocker(case: Case) -> None:
    plan = run(case)
    assert plan.path[P][-1] == v(case.target)
    if plan.verdict == "blocked":
        assert plan.blocked_by
        applying = {
            f.hazard
            for s in plan.steps
            for f in s.findings
            if f.status == "applies" and f.severity == "blocking" and not f.fixed_by
        }
        assert set(plan.blocked_by) <= applying
    else:
        assert not plan.blocked_by


@SETTINGS
@given(cases())
def test_no_step_crosses_a_required_stop_that_applies(case: Case) -> None:
    plan = run(case)
    if plan.verdict == "blocked":
        return
    for s in plan.steps:
        for f in s.findings:
            assert not (f.scope == "skip" and f.severity == "blocking" and f.status == "applies")
            if f.severity == "blocking" and f.status == "applies":
                assert f.fixed_by, f"{f.hazard} applies on {s.from_version} -> {s.to_version}"


@SETTINGS
@given(cases())
def test_blocked_exactly_when_no_safe_path_exists(case: Case) -> None:
    plan = run(case)
    assert (plan.verdict == "blocked") == (not case.safe_path_exists())


@SETTINGS
@given(cases())
def test_a_clean_direct_jump_is_taken_in_one_step(case: Case) -> None:
    plan = run(case)
    if all(f.status == "does-not-apply" for f in plan.direct.findings):
        assert plan.path[P] == [v(case.current), v(case.target)]
