"""planner.scopes: the four hazard scopes, asked of hops and running versions."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from upgradeplan.model import Hazard
from upgradeplan.planner import scopes
from upgradeplan.versions import Constraint, Version, parse_version


def hazard(scope: str, **params: Any) -> Hazard:
    return Hazard("h", "t", "p", "blocking", scope, "c", **params)  # type: ignore[arg-type]


def covers(h: Hazard, f: str | None, t: str) -> bool:
    scope = scopes.scope_of(h)
    assert scope is not None
    return scope.covers(parse_version(f) if f else None, parse_version(t))


SKIP = hazard("skip", stop="1.5.0", to_range=">=2.0.0")
SKIP_FROM = hazard("skip", stop="1.5.0", to_range=">=2.0.0", from_range=">=1.2.0")
TRANSITION = hazard("transition", from_range="<2.0.0", to_range=">=2.0.0")
LANDING = hazard("landing", to_range=">=2.0.0 <2.1.0")
STATE = hazard("state", from_range="<1.5.0")


@pytest.mark.parametrize(
    ("h", "f", "t", "expected"),
    [
        (SKIP, "1.0.0", "2.0.0", True),  # jumps over the stop into the range
        (SKIP, "1.5.0", "2.0.0", False),  # starts at the stop
        (SKIP, "1.0.0", "1.9.0", False),  # lands below the range
        (SKIP, None, "2.0.0", False),  # no hop
        (SKIP_FROM, "1.0.0", "2.0.0", False),  # starts below `from`
        (SKIP_FROM, "1.3.0", "2.0.0", True),
        (TRANSITION, "1.9.0", "2.0.0", True),
        (TRANSITION, "2.0.0", "2.1.0", False),
        (LANDING, "1.0.0", "2.0.5", True),
        (LANDING, None, "2.0.5", True),  # running it is in scope too
        (LANDING, "1.0.0", "2.1.0", False),
        (STATE, None, "1.4.0", True),
        (STATE, None, "1.5.0", False),
        (hazard("state"), None, "9.0.0", True),  # no range: any version
    ],
)
def test_covers(h: Hazard, f: str | None, t: str, expected: bool) -> None:
    assert covers(h, f, t) is expected


def test_a_scope_missing_its_parameters_covers_nothing() -> None:
    assert scopes.scope_of(hazard("skip", to_range=">=2.0.0")) is None
    assert scopes.scope_of(hazard("transition", from_range="<2.0.0")) is None
    assert scopes.scope_of(hazard("landing")) is None


def test_hop_scopes_are_judged_before_the_hop_the_others_after() -> None:
    assert [scopes.judged_before(hazard(k)) for k in scopes.KINDS] == [True, True, False, False]


def test_the_words_say_why() -> None:
    assert scopes.phrase(SKIP, "1.0.0", "2.0.0") == "the hop 1.0.0 → 2.0.0 skips 1.5.0"
    assert scopes.outside(SKIP_FROM, "1.0.0", "2.0.0") == (
        "the hop 1.0.0 → 2.0.0 does not skip 1.5.0 into >=2.0.0 from >=1.2.0"
    )


def test_a_transition_without_a_version_window_says_what_is_in_scope() -> None:
    # from and to the same range: every hop inside it (not "goes from >=3.0.0-0 to >=3.0.0-0")
    every = hazard("transition", from_range=">=3.0.0-0", to_range=">=3.0.0-0")
    assert scopes.phrase(every, "4.8.0", "4.8.1") == (
        "the hop 4.8.0 → 4.8.1 is an upgrade of p within >=3.0.0-0"
    )
    assert scopes.outside(every, "2.0.0", "4.8.1") == (
        "the hop 2.0.0 → 4.8.1 is not an upgrade of p within >=3.0.0-0"
    )
    assert scopes.phrase(TRANSITION, "1.9.0", "2.0.0") == (
        "the hop 1.9.0 → 2.0.0 goes from <2.0.0 to >=2.0.0"
    )


# small numbers so that bounds land on, between and around the versions of a line
_small = st.integers(0, 3).map(str)
_bound_part = st.one_of(_small, st.sampled_from(["x", "X", "*"]))


@st.composite
def _comparators(draw: st.DrawFn) -> str:
    op = draw(st.sampled_from(["", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^"]))
    parts = [draw(_bound_part) for _ in range(draw(st.integers(1, 3)))]
    text = ".".join(parts)
    if draw(st.integers(0, 3)) == 0:  # sometimes a pre-release bound
        text += "-" + draw(st.sampled_from(["alpha", "rc.1", "0", "beta.2"]))
    return op + text


@st.composite
def _constraints(draw: st.DrawFn) -> str:
    groups = []
    for _ in range(draw(st.integers(1, 3))):
        sep = draw(st.sampled_from([" ", ", "]))
        groups.append(sep.join(draw(st.lists(_comparators(), min_size=1, max_size=3))))
    return " || ".join(groups)


_line_versions = st.builds(
    lambda nums, pre: Version.parse(".".join(nums) + (f"-{pre}" if pre else "")),
    st.lists(_small, min_size=3, max_size=3),
    st.one_of(st.none(), st.sampled_from(["alpha", "rc.1", "0", "beta.2"])),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_line_versions, max_size=30), _constraints())
def test_ordered_runs_are_the_plain_scan(line: list[Version], text: str) -> None:
    """Bisecting a sorted line for a constraint's runs admits exactly the versions that
    ``check`` admits one by one, pre-release rule and wildcards included."""
    try:
        con = Constraint.parse(text)
    except ValueError:
        return
    line.sort()
    runs = scopes.Ordered(line).runs(con)
    admitted = [i for a, b in runs for i in range(a, b)]
    assert admitted == [i for i, v in enumerate(line) if con.check(v)]
    assert all(b > a for a, b in runs)
    assert all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(runs))  # maximal
