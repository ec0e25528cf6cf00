"""What a predicate returns (:class:`Outcome`), the vocabulary entry (:class:`PredicateSpec`),
the result of a whole tree (:class:`Result`), and the small readers of fact values every
predicate shares."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from msgspec import Struct

from upgradeplan import errors
from upgradeplan.model import (
    Evidence,
    Fact,
    KnowledgeBase,
    State,
    Truth,
)
from upgradeplan.versions import parse_constraint, parse_version

Hop = tuple[str | None, str | None]


class Outcome(Struct, frozen=True):
    """What one predicate found: its truth, a sentence, the facts read and the keys missed."""

    result: Truth
    description: str
    facts: tuple[Fact, ...] = ()
    missing: tuple[str, ...] = ()


PredicateFn = Callable[[Mapping[str, Any], State, KnowledgeBase], Outcome]
KeysFn = Callable[[Mapping[str, Any]], list[str]]


class PredicateSpec(Struct, frozen=True):
    """One entry of the vocabulary: its arguments, the facts it reads and its function."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    reads: KeysFn
    fn: PredicateFn
    version_args: tuple[str, ...] = ()  # arguments that may be $from / $to


class Result(Struct, frozen=True):
    """The evaluation of a whole condition tree."""

    truth: Truth
    evidence: tuple[Evidence, ...]
    missing: tuple[str, ...]  # keys that could change the outcome (only when UNKNOWN)


# --------------------------------------------------------------------------- helpers


# the parsed version of each text read (None: not a version); a predicate reads the same few
# versions again on every state of a window, and an import statement in the function that
# parses them cost ten times the parse
_VERSIONS: dict[str, Any] = {}
_UNSEEN = object()


def _version(text: object) -> Any:
    if not isinstance(text, str):
        return None
    hit = _VERSIONS.get(text, _UNSEEN)
    if hit is _UNSEEN:
        try:
            hit = parse_version(text)
        except errors.InvalidVersion:
            hit = None
        if len(_VERSIONS) > 65_536:
            _VERSIONS.clear()
        _VERSIONS[text] = hit
    return hit


def _constraint(text: str) -> Any:
    return parse_constraint(text)


def _as_list(value: object) -> list[str] | None:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    return None


def _as_map(value: object) -> dict[str, str] | None:
    if isinstance(value, dict):
        return {str(k): "" if v is None else str(v) for k, v in value.items()}
    if isinstance(value, str):
        out: dict[str, str] = {}
        for part in value.split(","):
            if part.strip():
                key, _, val = part.partition("=")
                out[key.strip()] = val.strip()
        return out
    if isinstance(value, list):
        return _as_map(",".join(str(v) for v in value))
    return None


def _text(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={v}" for k, v in sorted(value.items())) + "}"
    return str(value)


def _pattern(pattern: str, who: str = "") -> Any:
    """``pattern`` compiled; bad input naming it (``who`` before it) when it does not compile."""
    import re

    try:
        return re.compile(pattern)
    except re.error as exc:
        raise errors.BadInput(
            f"{who}pattern {pattern!r} does not compile: {exc}",
            hint="run upgradeplan kb lint on the knowledge",
        ) from None


def _truth(flag: bool) -> Truth:
    return Truth.TRUE if flag else Truth.FALSE


def _unknown(claim: str, *keys: str, facts: Iterable[Fact] = ()) -> Outcome:
    return Outcome(
        Truth.UNKNOWN, f"{claim}: unknown ({', '.join(keys)} not known)", tuple(facts), tuple(keys)
    )


def _same(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return _text(a).lower() == _text(b).lower()
    if a is None or b is None:
        return a is None and b is None
    return _text(a) == _text(b)


def _simple(key: str, claim: str, state: State, test: Callable[[Any], bool | None]) -> Outcome:
    fact = state.get(key)
    if fact is None:
        return _unknown(claim, key)
    ok = test(fact.value)
    if ok is None:
        return Outcome(
            Truth.UNKNOWN, f"{claim}: unknown (cannot read {_text(fact.value)!r})", (fact,), (key,)
        )
    return Outcome(
        _truth(ok), f"{claim}: {'yes' if ok else 'no'} ({key} = {_text(fact.value)})", (fact,)
    )
