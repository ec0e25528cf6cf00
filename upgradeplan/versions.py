"""Helm/Flux chart versions and constraints, with Masterminds/semver v3.4+ semantics.

Helm and Flux both evaluate chart versions with the Go library Masterminds/semver v3
(``NewVersion``, ``StrictNewVersion``, ``Compare``, ``NewConstraint`` + ``Check``). No
Python library reproduces its rules, so this module implements them, quirks included:

* loose versions (``v`` once, missing minor/patch, leading zeros dropped), strict
  versions and Flux's ``ParseVersion`` (at least two dots, then ``NewVersion``);
* ordering (numeric prerelease identifiers are those that fit in uint64; build metadata
  is ignored);
* constraints (``= != > < >= => <= =< ~ ~> ^``, wildcards, partial versions, textual
  hyphen-range rewrite, AND by blanks or one comma, OR by ``||``) with the v3.4 rule that
  a prerelease only matches an AND group that mentions a prerelease;
* the v3.5.0 length limits, and the way Helm and Flux pick a version from a list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Literal

from msgspec import Struct
from msgspec.structs import force_setattr

from upgradeplan.errors import InvalidConstraint, InvalidVersion

MAX_VERSION_LEN = 256
MAX_CONSTRAINT_LEN = 512
MAX_CONSTRAINT_GROUPS = 32
_UINT64_MAX = 2**64 - 1

_WS = r"[ \t\n\f\r]"  # Go's \s; Python's \s would also match Unicode blanks
_ID = r"[0-9A-Za-z-]+"
_LOOSE = re.compile(
    rf"v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-({_ID}(?:\.{_ID})*))?(?:\+({_ID}(?:\.{_ID})*))?"
)
_PART = r"[0-9|xX*]+"  # the Go pattern's character class really includes '|'
_CV = (
    rf"(v?({_PART})(\.{_PART})?(\.{_PART})?(-{_ID}(?:\.{_ID})*)?(?:\+{_ID}(?:\.{_ID})*)?)"
    rf"(?={_WS}|,|\Z)"
)
_COMPARATOR = re.compile(rf"(!=|>=|=>|<=|=<|~>|[=<>~^]|){_WS}*{_CV}")
_RANGE_PATTERN = (
    rf"{_WS}*(v?{_PART}(?:\.{_PART}){{0,2}}(?:-{_ID}(?:\.{_ID})*)?(?:\+{_ID}(?:\.{_ID})*)?)"
    rf"{_WS}+-{_WS}+(v?{_PART}(?:\.{_PART}){{0,2}}(?:-{_ID}(?:\.{_ID})*)?(?:\+{_ID}(?:\.{_ID})*)?)"
    rf"{_WS}*"
)
_BLANKS_SET = frozenset(" \t\n\f\r")  # the characters of _WS
_LEADING_ZERO = re.compile(r"(?:^|\.)0[0-9]+(?=\.|$)")  # in a prerelease: 01, 007 (not 0, 0a)
_BLANKS = re.compile(rf"{_WS}*")
_WILD = frozenset({"x", "X", "*"})
_OPERATORS = frozenset({"", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^"})
_COUNT = {4: "four", 5: "five", 6: "six"}

PreKey = tuple[tuple[int, int, str], ...]
SortKey = tuple[int, int, int, int, PreKey]


def _pre_key(ids: tuple[str, ...]) -> PreKey:
    # An identifier is numeric when it parses as uint64; numeric sorts before text, and
    # text compares byte-wise (ASCII), so an over-long digit run compares as text.
    # (20 digits and more may not fit; fewer always do.)
    return tuple(
        [
            (0, int(i), "") if i.isdigit() and (len(i) < 20 or int(i) <= _UINT64_MAX) else (1, 0, i)
            for i in ids
        ]
    )


class Version(Struct, frozen=True):  # its own __eq__/__hash__/order over _key
    """A chart version; ordered like Masterminds ``Compare``; build metadata is ignored."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()
    original: str = ""
    _key: SortKey = (0, 0, 0, 0, ())  # set from the other fields (never passed)

    def __post_init__(self) -> None:
        rel = 0 if self.prerelease else 1
        key = (self.major, self.minor, self.patch, rel, _pre_key(self.prerelease))
        force_setattr(self, "_key", key)
        if not self.original:
            force_setattr(self, "original", str(self))

    def __repr__(self) -> str:  # every field but _key
        shown = ("major", "minor", "patch", "prerelease", "build", "original")
        return f"Version({', '.join(f'{f}={getattr(self, f)!r}' for f in shown)})"

    @classmethod
    def parse(cls, text: str) -> Version:
        """Parse like ``NewVersion``: ``[v]MAJOR[.MINOR[.PATCH]][-PRE][+META]``."""
        parts = text.split(".")
        if len(parts) == 3 and text.isascii() and len(text) <= MAX_VERSION_LEN:
            a, b, c = parts
            if b.isdigit() and c.isdigit():  # the common [v]MAJOR.MINOR.PATCH
                if a.isdigit():
                    return _plain(cls, text, int(a), int(b), int(c))
                if a[:1] == "v" and a[1:].isdigit():
                    return _plain(cls, text, int(a[1:]), int(b), int(c))
        m = _LOOSE.fullmatch(text) if len(text) <= MAX_VERSION_LEN else None
        if m is None:
            raise InvalidVersion(text, _version_reason(text))
        a, b, c, pre_text, build_text = m.groups()
        major, minor, patch = int(a), int(b) if b else 0, int(c) if c else 0
        pre = tuple(pre_text.split(".")) if pre_text else ()
        if pre_text and _LEADING_ZERO.search(pre_text):  # a numeric identifier, leading zero
            raise InvalidVersion(text, _version_reason(text))
        if major > _UINT64_MAX or minor > _UINT64_MAX or patch > _UINT64_MAX:
            raise InvalidVersion(text, _version_reason(text))
        build = tuple(build_text.split(".")) if build_text else ()
        return cls(major, minor, patch, pre, build, text)

    @classmethod
    def parse_strict(cls, text: str) -> Version:
        """Parse like ``StrictNewVersion``: exactly ``MAJOR.MINOR.PATCH[-PRE][+META]``."""
        version = cls.parse(text)  # strict accepts a subset of what loose accepts
        nums = re.split(r"[-+]", text, maxsplit=1)[0].split(".")
        if text[0] == "v":
            raise InvalidVersion(text, "a strict version has no 'v' prefix")
        if len(nums) != 3:
            raise InvalidVersion(text, "a strict version needs all of MAJOR.MINOR.PATCH")
        for p in nums:
            if len(p) > 1 and p[0] == "0":
                raise InvalidVersion(text, f"numeric part {p!r} has a leading zero")
        return version

    @classmethod
    def parse_flux(cls, text: str) -> Version:
        """Parse like Flux ``version.ParseVersion`` (fluxcd/pkg >= v0.10.0).

        Flux splits on the first two dots (Go ``SplitN(v, ".", 3)``) and wants three
        pieces, so a string needs at least two dots anywhere: ``1.2-beta.5`` passes,
        ``1.2`` and ``1.2-beta5`` do not. The rest is ``NewVersion``.
        """
        if text.count(".") < 2:
            raise InvalidVersion(text, "Flux needs MAJOR.MINOR.PATCH (at least two dots)")
        return cls.parse(text)

    @property
    def key(self) -> SortKey:
        """What the order compares (a prefix of it bounds an interval: ``Bounds``)."""
        return self._key

    def __str__(self) -> str:
        out = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            out += "-" + ".".join(self.prerelease)
        if self.build:
            out += "+" + ".".join(self.build)
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key < other._key

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key <= other._key

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key > other._key

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key >= other._key


def _plain(cls: type[Version], text: str, major: int, minor: int, patch: int) -> Version:
    """A version without prerelease or build, its fields set directly (see Version.parse)."""
    if major > _UINT64_MAX or minor > _UINT64_MAX or patch > _UINT64_MAX:
        raise InvalidVersion(text, _version_reason(text))
    return cls(major, minor, patch, (), (), text)


def _ids_reason(kind: str, text: str) -> str:
    """What is wrong with a prerelease or build part ("" when nothing is)."""
    if not text:
        return f"empty {kind} after '{'-' if kind == 'prerelease' else '+'}'"
    for ident in text.split("."):
        if not ident:
            return f"empty {kind} identifier in {text!r}"
        bad = re.search(r"[^0-9A-Za-z-]", ident)
        if bad:
            return f"invalid character {bad.group()!r} in {kind} {text!r}"
        if kind == "prerelease" and len(ident) > 1 and ident[0] == "0" and ident.isdigit():
            return f"numeric prerelease identifier {ident!r} has a leading zero"
    return ""


def _version_reason(text: str) -> str:
    """Say what is wrong with a string ``NewVersion`` rejects (slow path, errors only)."""
    if not text:
        return "empty string"
    if not text.isascii():
        return "contains a non-ASCII character"
    if len(text) > MAX_VERSION_LEN:
        return f"longer than {MAX_VERSION_LEN} bytes"
    if re.search(r"\s", text):
        return "contains whitespace"
    if text[0] == "V":
        return "uppercase 'V' prefix; use 'v' or nothing"
    body = text[1:] if text[0] == "v" else text
    if body.startswith("v"):
        return "more than one 'v' prefix"
    core = re.split(r"[-+]", body, maxsplit=1)[0]
    rest = body[len(core) :]
    nums = core.split(".")
    if len(nums) > 3:
        return f"{_COUNT.get(len(nums), str(len(nums)))} numeric parts (at most MAJOR.MINOR.PATCH)"
    for p in nums:
        if not p:
            return "missing or empty numeric part"
        if not p.isdigit():
            return f"numeric part {p!r} is not a number"
        if int(p) > _UINT64_MAX:
            return f"{p} does not fit in 64 bits"
    pre, plus, meta = rest.partition("+")
    reason = (_ids_reason("prerelease", pre[1:]) if pre else "") or (
        _ids_reason("build", meta) if plus else ""
    )
    if reason:
        return reason
    return "not a version of the form [v]MAJOR[.MINOR[.PATCH]][-PRERELEASE][+BUILD]"


def compare(a: Version, b: Version) -> int:
    """-1, 0 or 1 like Masterminds ``Compare`` (build metadata ignored)."""
    return (a._key > b._key) - (a._key < b._key)


@lru_cache(maxsize=65536)
def parse_version(text: str) -> Version:
    """Cached :meth:`Version.parse`."""
    return Version.parse(text)


@lru_cache(maxsize=65536)
def _try_parse(text: str, flavour: str = "loose") -> Version | None:
    try:
        return Version.parse_flux(text) if flavour == "flux" else Version.parse(text)
    except InvalidVersion:
        return None


Test = Callable[[Version], bool]


def _comparator_test(op: str, con: Version, level: int) -> Test:
    """Build the check for one comparator; level 0 full, 1 patch-wild, 2 minor-wild, 3 all-wild.

    Lower bounds use the full order (prerelease included); the upper bounds of wildcards,
    ``~`` and ``^`` look at the major/minor numbers only, as Masterminds does.
    """
    ck, cmaj, cmin, cpat = con._key, con.major, con.minor, con.patch
    if op in ("", "=") and level:
        op = "~"
    if op in ("", "="):
        return lambda v: v._key == ck
    if op == "!=":
        if level == 2:
            return lambda v: v.major != cmaj
        if level == 1:
            cpre = con.prerelease
            return lambda v: v.major != cmaj or v.minor != cmin or v.prerelease != cpre
        return lambda v: v._key != ck
    if op == ">":
        if level == 2:
            return lambda v: v.major > cmaj
        if level == 1:
            return lambda v: v.major > cmaj or (v.major == cmaj and v.minor > cmin)
        return lambda v: v._key > ck
    if op == "<":
        return lambda v: v._key < ck
    if op in (">=", "=>"):
        return lambda v: v._key >= ck
    if op in ("<=", "=<"):
        if level == 0:
            return lambda v: v._key <= ck
        strict_minor = level != 2
        return lambda v: (
            v.major < cmaj or (v.major == cmaj and (v.minor <= cmin or not strict_minor))
        )
    if op in ("~", "~>"):
        if cmaj == cmin == cpat == 0 and level in (0, 3):
            return lambda v: v._key >= ck  # ~0.0.0 and ~* accept anything from the base up
        if level == 2:
            return lambda v: v._key >= ck and v.major == cmaj
        return lambda v: v._key >= ck and v.major == cmaj and v.minor == cmin
    # op == "^": the leftmost non-zero part is kept; ^0.0.3 and ^* are exact on the patch
    if cmaj > 0 or level == 2:
        return lambda v: v._key >= ck and v.major == cmaj
    if cmin > 0 or level == 1:
        return lambda v: v._key >= ck and v.major == 0 and v.minor == cmin
    return lambda v: v._key >= ck and v.major == 0 and v.minor == 0 and v.patch == cpat


# A comparator's versions as an interval of the version order: (low, low included, high, high
# included), None for no bound; a bound may be a prefix of a key, ``(2,)`` sorting below every
# 2.x version and above every 1.x one. ``!=`` is not an interval (None).
Bounds = tuple[tuple[object, ...] | None, bool, tuple[object, ...] | None, bool]


def _comparator_bounds(op: str, con: Version, level: int) -> Bounds | None:
    """The interval ``_comparator_test`` accepts (None for ``!=``), case by case as it."""
    ck, cmaj, cmin, cpat = con._key, con.major, con.minor, con.patch
    if op in ("", "=") and level:
        op = "~"
    if op in ("", "="):
        return ck, True, ck, True
    if op == "!=":
        return None
    if op == ">":
        if level == 2:
            return (cmaj + 1,), True, None, False
        if level == 1:
            return (cmaj, cmin + 1), True, None, False
        return ck, False, None, False
    if op in ("<", ">=", "=>"):
        return (None, False, ck, False) if op == "<" else (ck, True, None, False)
    if op in ("<=", "=<"):
        if level == 0:
            return None, False, ck, True
        return None, False, ((cmaj, cmin + 1) if level != 2 else (cmaj + 1,)), False
    if op in ("~", "~>"):
        if cmaj == cmin == cpat == 0 and level in (0, 3):
            return ck, True, None, False
        return ck, True, ((cmaj + 1,) if level == 2 else (cmaj, cmin + 1)), False
    if cmaj > 0 or level == 2:  # "^"
        return ck, True, (cmaj + 1,), False
    if cmin > 0 or level == 1:
        return ck, True, (0, cmin + 1), False
    return ck, True, (0, 0, cpat + 1), False


class _Comparator(Struct, frozen=True):
    op: str
    version: Version
    level: int


class Constraint:
    """A parsed Masterminds constraint: OR groups of AND-ed comparators."""

    __slots__ = ("_groups", "_tests", "original")

    def __init__(self, original: str, groups: tuple[tuple[_Comparator, ...], ...]) -> None:
        self.original = original
        self._groups = groups
        # per group: does any comparator carry a prerelease (the v3.4 admission rule)
        self._tests: tuple[tuple[bool, tuple[Test, ...]], ...] = tuple(
            (
                any(c.version.prerelease for c in g),
                tuple(_comparator_test(c.op, c.version, c.level) for c in g),
            )
            for g in groups
        )

    @classmethod
    def parse(cls, text: str) -> Constraint:
        """Parse like ``NewConstraint``; raises :class:`InvalidConstraint`."""
        if len(text.encode()) > MAX_CONSTRAINT_LEN:
            raise InvalidConstraint(text[:60] + "...", f"longer than {MAX_CONSTRAINT_LEN} bytes")
        if not text.isascii():
            raise InvalidConstraint(text, "contains a non-ASCII character")
        if _BLANKS.fullmatch(text):
            raise InvalidConstraint(text, "empty constraint; use '*' to accept any version")
        rewritten = _rewrite_ranges(text)
        ors = rewritten.split("||")
        if len(ors) > MAX_CONSTRAINT_GROUPS:
            raise InvalidConstraint(text, f"more than {MAX_CONSTRAINT_GROUPS} '||' groups")
        try:
            return cls(text, tuple(_parse_group(text, g, len(ors)) for g in ors))
        except InvalidConstraint as err:
            if rewritten == text:
                raise
            note = f" (after rewriting 'A - B' ranges: {rewritten!r})"
            raise InvalidConstraint(text, err.reason + note) from None

    def check(self, v: Version | str) -> bool:
        """Does ``v`` satisfy the constraint? A string is parsed loosely; invalid -> False."""
        if isinstance(v, str):
            parsed = _try_parse(v)
            if parsed is None:
                return False
            v = parsed
        is_pre = bool(v.prerelease)
        for has_pre, tests in self._tests:
            if is_pre and not has_pre:
                continue
            for test in tests:
                if not test(v):
                    break
            else:
                return True
        return False

    def intervals(self) -> list[tuple[bool, list[Bounds]]] | None:
        """Per OR group: whether it admits pre-releases, and the interval of the version order
        each of its comparators admits; None where one is ``!=`` (not an interval)."""
        out = []
        for (has_pre, _), group in zip(self._tests, self._groups, strict=True):
            bounds = [_comparator_bounds(c.op, c.version, c.level) for c in group]
            if any(b is None for b in bounds):
                return None
            out.append((has_pre, [b for b in bounds if b is not None]))
        return out

    @property
    def is_exact(self) -> bool:
        """One group with one bare or ``=`` comparator on a full version."""
        return self.exact_version is not None

    @property
    def exact_version(self) -> Version | None:
        if len(self._groups) == 1 and len(self._groups[0]) == 1:
            c = self._groups[0][0]
            if c.op in ("", "=") and c.level == 0:
                return c.version
        return None

    def __str__(self) -> str:
        return self.original

    def __repr__(self) -> str:
        return f"Constraint({self.original!r})"


def _rewrite_ranges(text: str) -> str:
    # Textual, like Go: each "A - B" found in the input is replaced (first occurrence of
    # that text, wherever it is now) by ">= A, <= B ".
    if not _spaced_hyphen(text):
        return text  # no "A - B" can be in it (and its regex, the costliest, is not compiled)
    out = text
    for m in _range().finditer(text):
        out = out.replace(m.group(0), f">= {m.group(1)}, <= {m.group(2)} ", 1)
    return out


def _spaced_hyphen(text: str) -> bool:
    """Is there a "-" with a blank on both sides (what every "A - B" range has)?"""
    at = text.find("-", 1)
    while at != -1:
        if text[at - 1] in _BLANKS_SET and text[at + 1 : at + 2] in _BLANKS_SET:
            return True
        at = text.find("-", at + 1)
    return False


@lru_cache(maxsize=1)
def _range() -> re.Pattern[str]:
    """The "A - B" range pattern, compiled when a constraint first may hold one."""
    return re.compile(_RANGE_PATTERN)


def _skip_blanks(group: str, pos: int) -> int:
    m = _BLANKS.match(group, pos)
    return m.end() if m else pos


def _parse_group(text: str, group: str, n_groups: int) -> tuple[_Comparator, ...]:
    comps: list[_Comparator] = []
    end = len(group)
    pos = _skip_blanks(group, 0)
    if pos == end:
        raise InvalidConstraint(text, "empty OR group" if n_groups > 1 else "no version given")
    while True:
        m = _COMPARATOR.match(group, pos)
        if m is None:
            raise InvalidConstraint(text, _bad_term(group, pos))
        comps.append(_make_comparator(text, m))
        pos = m.end()
        after = _skip_blanks(group, pos)
        if after == end:
            return tuple(comps)
        if group[after] == ",":
            pos = _skip_blanks(group, after + 1)
            if pos == end:
                raise InvalidConstraint(text, "trailing comma")
        elif after > pos:
            pos = after
        else:
            raise InvalidConstraint(text, _bad_term(group, pos))


def _make_comparator(text: str, m: re.Match[str]) -> _Comparator:
    op, cv, major, minor, patch, pre = m.group(1, 2, 3, 4, 5, 6)
    pre = pre or ""
    if major in _WILD:
        level, ver = 3, "0.0.0" + pre
    elif minor is None or minor[1:] in _WILD:
        level, ver = 2, f"{major}.0.0{pre}"
    elif patch is None or patch[1:] in _WILD:
        level, ver = 1, f"{major}{minor}.0{pre}"
    else:
        level, ver = 0, cv
    if "|" in ver:
        raise InvalidConstraint(text, "a single '|' is not an operator; use '||' for OR")
    try:
        return _Comparator(op, Version.parse(ver), level)
    except InvalidVersion as err:
        reason = err.reason
        if "x" in ver or "X" in ver or "*" in ver:
            reason = f"wildcard glued to a number in {cv!r}"
        raise InvalidConstraint(text, reason) from None


_TERM = re.compile(rf"([=!<>~^&;|]*)({_WS}*)([^ \t\n\f\r,]*)")


def _bad_term(group: str, pos: int) -> str:
    """Say why no comparator starts at ``pos`` (slow path, errors only)."""
    if group[pos] == ",":
        return "stray comma (separate AND terms with one comma or with blanks)"
    m = _TERM.match(group, pos)
    op, blank, term = m.group(1, 2, 3) if m else ("", "", group[pos:])
    sep = re.search(r"[;|]|&+", op + term)
    if sep and sep.group() == "|":
        return "a single '|' is not an operator; use '||' for OR"
    if sep:
        return f"{sep.group()!r} is not a separator; separate AND terms with blanks or one comma"
    if op not in _OPERATORS:
        return f"unknown operator {op!r}"
    if term[:1] in ("=", "<", ">", "~", "^", "!"):
        return f"blank inside the operator {op + blank + term[:1]!r}"
    if not term:
        return f"operator {op!r} has no version" if op else "missing version"
    glued = re.search(r"[~^<>=!]", term)
    if glued:
        return f"operator {glued.group()!r} glued to a version in {term!r}"
    if term == "-" or term.startswith("-"):
        return "'-' needs a version and a blank on both sides, as in '1.0 - 2.0'"
    if not re.match(r"[vV]*[0-9xX*]", term):
        return f"{term!r} is not a version"
    return f"{term!r}: {_version_reason(term)}"


@lru_cache(maxsize=8192)
def parse_constraint(text: str) -> Constraint:
    """Cached :meth:`Constraint.parse`."""
    return Constraint.parse(text)


def check(constraint: str, version: str) -> bool:
    """Convenience: an invalid constraint raises, an invalid version does not match."""
    return parse_constraint(constraint).check(version)


def is_exact(constraint: str) -> bool:
    """Is ``constraint`` a pin to one full version? False for invalid constraints."""
    try:
        return parse_constraint(constraint).is_exact
    except InvalidConstraint:
        return False


def select(
    request: str, candidates: Iterable[str], *, flavour: Literal["helm", "flux"] = "flux"
) -> str | None:
    """Pick a version from ``candidates`` the way Helm or Flux does.

    Candidates that ``NewVersion`` rejects are dropped (both tools drop them when loading an
    index); an exact string match wins; otherwise the highest candidate that satisfies the
    request (empty -> ``*``) is returned, parsed loosely for Helm and with Flux's
    ``ParseVersion`` for Flux (unparsable ones skipped). Ties (versions differing only in
    build metadata) go to the earliest candidate. An invalid request raises.
    """
    valid = [c for c in candidates if _try_parse(c) is not None]
    if request in valid:
        return request
    con = parse_constraint(request or "*")
    parse_flavour = "flux" if flavour == "flux" else "loose"
    best: Version | None = None
    best_text: str | None = None
    for text in valid:
        v = _try_parse(text, parse_flavour)
        if v is not None and (best is None or v > best) and con.check(v):
            best, best_text = v, text
    return best_text


def sort_versions(versions: Iterable[str]) -> list[str]:
    """Sort ascending by :func:`compare` (stable); an invalid version raises."""
    return sorted(versions, key=lambda t: parse_version(t)._key)
