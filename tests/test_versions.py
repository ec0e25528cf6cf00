"""Behaviour of upgradeplan.versions as Helm/Flux users see it (Masterminds semver v3.4+)."""

from __future__ import annotations

import re

import pytest

from upgradeplan.errors import InvalidConstraint, InvalidVersion
from upgradeplan.versions import (
    Constraint,
    Version,
    check,
    compare,
    is_exact,
    parse_constraint,
    parse_version,
    select,
    sort_versions,
)

# (constraint, version, matches?)
OPERATORS = [
    ("=1.4.2", "1.4.2", True),
    ("=1.4.2", "1.4.3", False),
    ("1.4.2", "1.4.2+ci.7", True),
    ("1.4.2", "1.4.20", False),
    ("!=1.4.2", "1.4.3", True),
    ("!=1.4.2", "1.4.2+other", False),
    (">1.4.2", "1.4.3", True),
    (">1.4.2", "1.4.2", False),
    ("<1.4.2", "1.4.1", True),
    ("<1.4.2", "1.4.2", False),
    (">=1.4.2", "1.4.2", True),
    ("=>1.4.2", "1.4.1", False),
    ("<=1.4.2", "1.4.2", True),
    ("=<1.4.2", "1.4.3", False),
    ("~1.4.2", "1.4.9", True),
    ("~1.4.2", "1.5.0", False),
    ("~>1.4.2", "1.4.1", False),
    ("~>1.4", "1.4.0", True),
    ("^1.4.2", "1.9.0", True),
    ("^1.4.2", "2.0.0", False),
    ("^1.4.2", "1.4.1", False),
    (">= 1.4.2", "1.5.0", True),
]

WILDCARDS_AND_PARTIALS = [
    ("2.x", "2.7.1", True),
    ("2.X", "3.0.0", False),
    ("2.*", "2.0.0", True),
    ("*", "9.9.9", True),
    ("x", "0.0.0", True),
    ("2.3.x", "2.3.9", True),
    ("2.3.x", "2.4.0", False),
    ("2.3", "2.3.5", True),
    ("2", "2.9.0", True),
    ("2", "3.0.0", False),
    ("2.x.7", "2.0.0", True),
    ("x.4.4", "0.1.0", True),
    (">2.3", "2.3.9", False),
    (">2.3", "2.4.0", True),
    (">2", "2.9.9", False),
    (">2", "3.0.0", True),
    ("<=2.3", "2.3.9", True),
    ("<=2.3", "2.4.0", False),
    ("<=2", "2.99.0", True),
    ("<2.3.x", "2.2.9", True),
    ("<2.3.x", "2.3.0", False),
    ("!=2.x", "2.5.0", False),
    ("!=2.x", "3.0.0", True),
    ("!=2.3", "2.3.1", False),
    ("!=2.3", "2.4.0", True),
    ("~2", "2.8.0", True),
    ("^2.x", "2.8.0", True),
    ("<=*", "0.0.5", True),
    ("<=*", "0.1.0", False),
    ("^*", "0.0.0", True),
    ("^*", "0.0.1", False),
    (">*", "0.0.0", False),
    ("<*", "0.0.0", False),
    ("!=*", "0.0.1", True),
    ("!=*", "0.0.0", False),
    ("1.x.|", "1.3.0", True),
]

RANGES_AND_COMBINATIONS = [
    ("1.2 - 1.4.5", "1.4.5", True),
    ("1.2 - 1.4.5", "1.4.6", False),
    ("1.2 - 1.4.5", "1.2.0", True),
    ("1.2 - 1.4.5", "1.1.9", False),
    ("1.2 - 1.4", "1.4.9", True),
    ("v1.0.0 - v2.0.0", "2.0.0", True),
    ("1.2-1.4.5", "1.2.0-1.4.5", True),
    ("1.2-1.4.5", "1.3.0", False),
    ("^1.0.0 || ^3.0.0", "2.0.0", False),
    ("^1.0.0 || ^3.0.0", "3.1.0", True),
    ("<1.0.0 || 1.2.x", "1.2.3", True),
    ("<1.0.0||1.2.x", "1.1.0", False),
    (">=1.0.0,<1.5.0", "1.4.0", True),
    (">=1.0.0 , <1.5.0", "1.5.0", False),
    ("  >=1.0.0\t<1.5.0  ", "1.2.0", True),
    ("\t>=1.0.0\n", "1.0.0", True),
    ("1.2 1.3", "1.2.5", False),
    (">=1.0.0 <2.0.0 !=1.3.0", "1.3.0", False),
]

PRERELEASES = [
    (">=1.0.0", "1.1.0-rc.1", False),
    ("*", "1.0.0-rc.1", False),
    ("*-0", "1.0.0-rc.1", True),
    (">=0.0.0-0", "0.0.1-a", True),
    (">0.0.0-0", "3.0.0-beta", True),
    (">=1.0.0-0 <2.0.0", "1.7.0-beta.2", True),
    (">=1.0.0-0 <2.0.0 || >=3.0.0", "3.1.0-beta.1", False),
    (">=1.0.0-0 <2.0.0 || >=3.0.0", "1.1.0-rc.1", True),
    ("<2.0.0-0", "2.0.0-alpha", False),
    ("<2.0.0-0", "1.9.9", True),
    ("<2.0.0", "2.0.0-alpha", False),
    (">=0.0.30-gs.4 <0.0.31-0", "0.0.30-gs.10", True),
    (">=0.0.30-gs.4 <0.0.31-0", "0.0.30-gs.3", False),
    (">=0.0.30-gs.4 <0.0.31-0", "0.0.31-gs.1", False),
    (">=0.0.30-gs.4 <0.0.31-0", "0.0.30+build", True),
    ("^1.2.3-alpha.1", "1.6.0-beta", True),
    ("~1.2.3-beta.2", "1.2.3-beta.10", True),
    ("~1.2.3-beta.2", "1.3.0-alpha", False),
    ("!=1.4.0-rc.1", "1.4.0-rc.2", True),
    ("!=1.4.0-rc.1", "1.4.0-rc.1", False),
    ("!=1.4.0", "1.4.1-rc.1", False),
    ("1.x-0", "1.3.0-rc.1", True),
    (">1.2-0", "1.3.0-alpha", True),
    ("!=4.1-alpha", "4.1.0", True),
    ("!=4.1-alpha", "4.1.5-alpha", False),
    ("4.7.18", "4.7.18-rc.1", False),
]

PREFIX_BUILD_ZERO = [
    ("v1.3.0", "1.3.0", True),
    ("v1.3.0", "1.3.0-rc.1", False),
    (">=v1.3.0", "v1.4.0", True),
    ("~v1.3", "1.3.7", True),
    ("1.0.0+b1", "1.0.0+b2", True),
    ("1.x+meta", "1.5.0", True),
    (">=2025.1.0", "2025.01.15", True),
    ("01.2.3", "1.2.3", True),
    ("^0.4.2", "0.4.9", True),
    ("^0.4.2", "0.5.0", False),
    ("^0.0.4", "0.0.4", True),
    ("^0.0.4", "0.0.5", False),
    ("^0.0", "0.0.9", True),
    ("^0.0", "0.1.0", False),
    ("^0", "0.9.0", True),
    ("^0", "1.0.0", False),
    ("^0.0.0", "0.0.1", False),
    ("~0.0.0", "7.0.0", True),
    ("~0.0.2", "0.0.9", True),
    ("~0.0.2", "0.1.0", False),
    ("~0", "0.8.0", True),
    ("~0.3", "0.4.0", False),
]


@pytest.mark.parametrize(
    ("constraint", "version", "expected"),
    OPERATORS + WILDCARDS_AND_PARTIALS + RANGES_AND_COMBINATIONS + PRERELEASES + PREFIX_BUILD_ZERO,
)
def test_constraint_check(constraint: str, version: str, expected: bool) -> None:
    assert Constraint.parse(constraint).check(version) is expected
    assert check(constraint, version) is expected
    assert parse_constraint(constraint).check(parse_version(version)) is expected


ASCENDING = [
    "0.9.0",
    "1.0.0-0",
    "1.0.0-0.0",
    "1.0.0-1",
    "1.0.0-10",
    "1.0.0-18446744073709551615",
    "1.0.0--",
    "1.0.0-0abc",
    "1.0.0-100000000000000000000",
    "1.0.0-99999999999999999999",
    "1.0.0-Alpha",
    "1.0.0-RC.1",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-rc.2",
    "1.0.0-rc.10",
    "1.0.0-rc1",
    "1.0.0",
    "1.0.1-alpha",
    "1.0.1",
    "1.1.0",
    "1.10.0",
    "2.0.0",
]


@pytest.mark.parametrize("index", range(len(ASCENDING) - 1))
def test_ordering_chain(index: int) -> None:
    lower, higher = Version.parse(ASCENDING[index]), Version.parse(ASCENDING[index + 1])
    assert compare(lower, higher) == -1
    assert compare(higher, lower) == 1
    assert lower < higher and higher > lower and lower != higher


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1.0.0+a", "1.0.0+b"),
        ("v1.2", "1.2.0"),
        ("2025.01.15", "2025.1.15"),
        ("1.2-5", "1.2.0-5"),
    ],
)
def test_equal_versions(a: str, b: str) -> None:
    va, vb = Version.parse(a), Version.parse(b)
    assert compare(va, vb) == 0
    assert va == vb and hash(va) == hash(vb)


def test_sort_versions_ascending_and_rejects_invalid() -> None:
    assert sort_versions(["1.10.0", "1.9.0", "1.9.0-rc.1", "v1.0"]) == [
        "v1.0",
        "1.9.0-rc.1",
        "1.9.0",
        "1.10.0",
    ]
    with pytest.raises(InvalidVersion, match="'latest'"):
        sort_versions(["1.0.0", "latest"])


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("v1.2-rc.1+b.2", "1.2.0-rc.1+b.2"),
        ("1", "1.0.0"),
        ("2025.01.15", "2025.1.15"),
        ("20221209-update-renovatejson-v4", "20221209.0.0-update-renovatejson-v4"),
        ("1.0.0-0abc", "1.0.0-0abc"),
        ("18446744073709551615.0.0", "18446744073709551615.0.0"),
        ("1.0.0-99999999999999999999", "1.0.0-99999999999999999999"),
    ],
)
def test_loose_parse(text: str, normalised: str) -> None:
    version = Version.parse(text)
    assert str(version) == normalised
    assert version.original == text


def test_version_fields() -> None:
    version = Version.parse("v3.1-beta.2+sha.abc")
    assert (version.major, version.minor, version.patch) == (3, 1, 0)
    assert version.prerelease == ("beta", "2")
    assert version.build == ("sha", "abc")
    assert Version(3, 1, 0, ("beta", "2")) == version


@pytest.mark.parametrize(
    ("text", "strict_ok", "flux_ok"),
    [
        ("1.2.3-rc.1+b", True, True),
        ("v1.2.3", False, True),
        ("1.2", False, False),
        ("01.2.3", False, True),
        ("1.2-beta.5", False, True),
        ("v2025.07.03", False, True),
        ("v1", False, False),
        ("v1.2.0-x.Y.0+metadata", False, True),
        ("1.2-beta5", False, False),
    ],
)
def test_strict_and_flux_parsers(text: str, strict_ok: bool, flux_ok: bool) -> None:
    Version.parse(text)  # every row is a valid loose version
    for parser, ok in ((Version.parse_strict, strict_ok), (Version.parse_flux, flux_ok)):
        if ok:
            assert parser(text) == Version.parse(text)
        else:
            with pytest.raises(InvalidVersion, match=re.escape(repr(text))):
                parser(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1.2.3.4", "four numeric parts"),
        ("V1.2.3", "uppercase 'V'"),
        ("vv1.2.3", "more than one 'v'"),
        ("1.2.3-beta.01", "'01' has a leading zero"),
        ("1.2.3-", "empty prerelease"),
        ("1.2.3-rc..1", "empty prerelease identifier"),
        ("1.2.3-rc_1", "invalid character '_'"),
        ("1.2.3+a+b", "invalid character '+'"),
        ("18446744073709551616.0.0", "does not fit in 64 bits"),
        (" 1.2.3", "whitespace"),
        ("1.2.3\n", "whitespace"),
        ("\uff11.2.3", "non-ASCII"),
        ("1.2.3-b\u00e9ta", "non-ASCII"),
        ("", "empty string"),
        ("1" * 257, "longer than 256 bytes"),
        ("1.x", "not a number"),
    ],
)
def test_invalid_version_messages(text: str, reason: str) -> None:
    with pytest.raises(InvalidVersion) as info:
        Version.parse(text)
    assert reason in str(info.value)
    assert repr(text) in str(info.value)
    assert info.value.text == text


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("==1.2.3", "unknown operator '=='"),
        ("~=1.2", "unknown operator '~='"),
        ("", "empty constraint"),
        (">=1.0.0 ||", "empty OR group"),
        ("|| 1.0.0", "empty OR group"),
        ("1.2.3.4", "four numeric parts"),
        ("1.0.0 | 2.0.0", "'||' for OR"),
        (">=1;<2", "';' is not a separator"),
        (">=1 && <2", "'&&' is not a separator"),
        (">=1,", "trailing comma"),
        (">=1,,<2", "stray comma"),
        ("^1.2.3-beta.01", "leading zero"),
        ("1.0 - 2.0 - 3.0", "'-' needs a version"),
        (">1 - 2", "unknown operator '>>='"),
        ("1x", "wildcard glued"),
        ("V1", "uppercase 'V'"),
        ("latest", "'latest' is not a version"),
        (">=", "has no version"),
        ("> =1.0", "blank inside the operator"),
        (">=1.2.3\u00a0", "non-ASCII"),
        (">=1.2.3\v", "'1.2.3\\x0b': contains whitespace"),
        ("18446744073709551616", "64 bits"),
        (" || ".join(["1.x"] * 33), "more than 32 '||' groups"),
    ],
)
def test_invalid_constraint_messages(text: str, reason: str) -> None:
    with pytest.raises(InvalidConstraint) as info:
        Constraint.parse(text)
    assert reason in str(info.value)
    assert repr(text) in str(info.value)


def test_constraint_length_limits() -> None:
    thirty_two = " || ".join(["1.x"] * 32)
    assert Constraint.parse(thirty_two).check("1.0.0")
    long_and = " ".join([">=1.0.0"] * 64)  # 511 bytes
    assert Constraint.parse(long_and).check("1.0.0")
    with pytest.raises(InvalidConstraint, match="longer than 512 bytes"):
        Constraint.parse(long_and + " 1")


def test_check_with_invalid_version_string_is_false() -> None:
    assert Constraint.parse("*").check("not-a-version") is False
    assert check(">=0.0.0-0", "V1.0.0") is False
    with pytest.raises(InvalidConstraint):
        check("==1", "1.0.0")


@pytest.mark.parametrize(
    ("text", "exact"),
    [
        ("1.2.3", True),
        ("=1.2.3", True),
        ("v1.2.3", True),
        ("1.2.3-rc.1", True),
        ("1.2", False),
        ("1.2.x", False),
        (">=1.2.3", False),
        ("~1.2.3", False),
        ("1.2.3 || 1.2.4", False),
        ("1.2.3 1.2.3", False),
        ("garbage", False),
    ],
)
def test_is_exact(text: str, exact: bool) -> None:
    assert is_exact(text) is exact


def test_exact_version_keeps_the_pinned_version() -> None:
    pinned = Constraint.parse("=v4.7.18+build.3").exact_version
    assert pinned is not None and str(pinned) == "4.7.18+build.3"
    assert Constraint.parse("4.7").exact_version is None
    assert str(Constraint.parse(" ~4.7 ")) == " ~4.7 "


INDEX = ["1.0.0", "1.2.0", "2.0.0-rc.1", "1.5", "v1.3.0", "garbage"]


@pytest.mark.parametrize(
    ("request_", "flavour", "expected"),
    [
        ("", "flux", "v1.3.0"),
        ("", "helm", "1.5"),
        ("*", "flux", "v1.3.0"),
        ("2.0.0-rc.1", "flux", "2.0.0-rc.1"),
        (">=1.0.0-0", "flux", "2.0.0-rc.1"),
        ("~1.2", "helm", "1.2.0"),
        ("1.5", "flux", "1.5"),
        ("~1.5", "flux", None),
        ("~1.5", "helm", "1.5"),
        (">=3", "helm", None),
        ("1.0.0 || 1.2.0", "flux", "1.2.0"),
    ],
)
def test_select(request_: str, flavour: str, expected: str | None) -> None:
    assert flavour in ("helm", "flux")
    got = select(request_, INDEX, flavour="flux" if flavour == "flux" else "helm")
    assert got == expected


def test_select_exact_string_wins_and_ties_go_to_first() -> None:
    assert select("v1.0.0", ["1.0.0", "v1.0.0"]) == "v1.0.0"
    assert select("1.0", ["1.0", "1.0.7"], flavour="flux") == "1.0"
    assert select("1.0.0", ["1.0.0+a", "1.0.0+b"]) == "1.0.0+a"


def test_select_invalid_request_raises() -> None:
    with pytest.raises(InvalidConstraint, match="'latest'"):
        select("latest", ["latest", "1.0.0"], flavour="helm")


@pytest.mark.parametrize("text", ["1.2.3", "v1.2.3", "1.2.3-rc.1+b.2", "0.0.31-0", "2025.01.15"])
def test_a_parsed_version_is_a_frozen_version_like_a_constructed_one(text: str) -> None:
    import pickle

    from msgspec.structs import astuple

    parsed = Version.parse(text)
    assert type(parsed) is Version
    with pytest.raises(AttributeError, match="immutable"):
        parsed.major = 9  # type: ignore[misc]
    again = pickle.loads(pickle.dumps(parsed))
    assert again == parsed and again.original == parsed.original
    assert (
        astuple(parsed)[:5]
        == astuple(
            Version(parsed.major, parsed.minor, parsed.patch, parsed.prerelease, parsed.build)
        )[:5]
    )

    class Sub(Version, frozen=True):
        extra: str = ""

    sub = Sub.parse(text)
    assert type(sub) is Sub and sub == parsed and sub.original == text
