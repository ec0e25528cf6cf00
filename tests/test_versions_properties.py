"""Property tests: ordering laws, round trips and constraint/compare agreement."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from upgradeplan.versions import Constraint, Version, compare

SETTINGS = settings(max_examples=200, deadline=None)

_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-"

# small numbers collide often (interesting for ordering); a few huge ones exercise uint64
numbers = st.one_of(st.integers(0, 3), st.integers(0, 2**64 - 1))
numeric_ids = st.one_of(st.integers(0, 12), st.integers(0, 10**21)).map(str)
text_ids = st.text(_ALNUM, min_size=1, max_size=5).filter(lambda s: not s.isdigit())
pre_ids = st.one_of(numeric_ids, text_ids, st.sampled_from(["alpha", "beta", "rc", "0"]))
build_ids = st.text(_ALNUM, min_size=1, max_size=5)


@st.composite
def version_texts(draw: st.DrawFn, *, prerelease: bool = True) -> str:
    text = "v" if draw(st.booleans()) else ""
    text += ".".join(str(draw(numbers)) for _ in range(3))
    if prerelease and draw(st.booleans()):
        text += "-" + ".".join(draw(st.lists(pre_ids, min_size=1, max_size=3)))
    if draw(st.booleans()):
        text += "+" + ".".join(draw(st.lists(build_ids, min_size=1, max_size=2)))
    return text


versions = version_texts().map(Version.parse)
releases = version_texts(prerelease=False).map(Version.parse)


@SETTINGS
@given(versions, versions)
def test_compare_is_antisymmetric_and_consistent_with_eq_and_hash(a: Version, b: Version) -> None:
    assert compare(a, b) == -compare(b, a)
    assert (compare(a, b) == 0) == (a == b)
    if a == b:
        assert hash(a) == hash(b)
    assert [a < b, a == b, a > b].count(True) == 1  # totality: exactly one relation holds
    assert (a <= b) == (compare(a, b) <= 0) and (a >= b) == (compare(a, b) >= 0)


@SETTINGS
@given(versions, versions, versions)
def test_compare_is_transitive(a: Version, b: Version, c: Version) -> None:
    x, y, z = sorted([a, b, c])
    assert compare(x, y) <= 0 and compare(y, z) <= 0 and compare(x, z) <= 0
    if compare(a, b) <= 0 and compare(b, c) <= 0:
        assert compare(a, c) <= 0


@SETTINGS
@given(version_texts())
def test_parse_str_parse_round_trips(text: str) -> None:
    first = Version.parse(text)
    again = Version.parse(str(first))
    assert again == first
    assert str(again) == str(first)
    assert again.build == first.build
    assert first.original == text
    assert Version.parse_strict(str(first)) == first  # the normalised form is strict SemVer


@SETTINGS
@given(versions, versions)
def test_bare_full_version_matches_exactly_itself(pinned: Version, other: Version) -> None:
    constraint = Constraint.parse(str(pinned))
    assert constraint.is_exact
    assert constraint.check(pinned)
    assert constraint.check(other) == (other == pinned)


@SETTINGS
@given(releases, releases, releases)
def test_half_open_range_agrees_with_compare(low: Version, high: Version, v: Version) -> None:
    constraint = Constraint.parse(f">={low} <{high}")
    assert constraint.check(v) == (compare(v, low) >= 0 and compare(v, high) < 0)


@SETTINGS
@given(st.one_of(version_texts(), st.text("0123456789.v-+a", max_size=12)))
def test_parse_builds_what_the_constructor_builds(text: str) -> None:
    """Version.parse sets the fields directly (it is the hot path); the result is the object
    the constructor makes from the same fields, and the errors are the same."""
    try:
        parsed = Version.parse(text)
    except ValueError:
        assert not _constructible(text)
        return
    built = Version(
        parsed.major, parsed.minor, parsed.patch, parsed.prerelease, parsed.build, parsed.original
    )
    assert (repr(parsed), str(parsed), parsed._key, hash(parsed)) == (
        repr(built),
        str(built),
        built._key,
        hash(built),
    )
    assert parsed.original == text


def _constructible(text: str) -> bool:
    """Whether the loose grammar (regex path only) accepts ``text``."""
    import re

    from upgradeplan import versions as v

    m = v._LOOSE.fullmatch(text)
    if m is None:
        return False
    nums = [int(g) if g else 0 for g in m.group(1, 2, 3)]
    pre = m.group(4).split(".") if m.group(4) else []
    return max(nums) <= 2**64 - 1 and not any(re.fullmatch(r"0[0-9]+", i) for i in pre)
