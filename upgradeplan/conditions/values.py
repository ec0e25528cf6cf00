"""Predicates about chart values: what the installation sets, else the default of the release
it runs (``defaults:`` in the knowledge), with the source ``default of <release>``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct

from upgradeplan import keypath, provenance
from upgradeplan.conditions.outcome import Outcome, _same, _text, _truth, _unknown
from upgradeplan.model import Fact, KnowledgeBase, State, Truth


class ValueLookup(Struct, frozen=True):
    """A chart value as the installation sets it, or as the release's defaults give it."""

    state: str  # "set" | "default" | "unknown"
    value: Any = None
    facts: tuple[Fact, ...] = ()
    missing: tuple[str, ...] = ()
    why: str = ""  # for "unknown": what is not known


def _set_value(state: State, product: str, parts: list[str]) -> tuple[str, Any, Fact | None]:
    """("set", value, fact) / ("unset", None, fact) / ("unknown", None, None) for a key."""

    for i in range(len(parts), 0, -1):
        key = f"values.{product}.{keypath.join(parts[:i])}"
        fact = state.get(key)
        if fact is None:
            continue
        found = fact.value if i == len(parts) else keypath.get(fact.value, parts[i:])
        if found is keypath.ABSENT or found is None:
            return "unset", None, fact
        return "set", found, fact
    whole = state.get(f"values.{product}")
    if whole is not None and isinstance(whole.value, dict):
        found = keypath.get(whole.value, parts)
        if found is keypath.ABSENT or found is None:
            return "unset", None, whole
        return "set", found, whole
    return "unknown", None, None


def lookup_value(state: State, kb: KnowledgeBase, product: str, key: str) -> ValueLookup:
    """The value of ``key`` for ``product``: the installation's, else the default of the
    release it runs (``defaults:``); unknown when neither is known."""

    full = f"values.{product}.{key}"
    parts = keypath.split(key)
    how, value, fact = _set_value(state, product, parts)
    if how == "set":
        assert fact is not None
        shown = fact if fact.key == full else Fact(full, value, fact.source)
        return ValueLookup("set", value, (shown,))
    if how == "unknown":
        return ValueLookup("unknown", missing=(full,), why=f"{full} not known")
    seen = (fact,) if fact is not None else ()
    installed = state.get(f"installed.{product}")
    if installed is None or not isinstance(installed.value, str):
        return ValueLookup(
            "unknown",
            facts=seen,
            missing=(full, f"installed.{product}"),
            why=f"the installation does not set it and the {product} version is not known",
        )
    rel = kb.release(product, installed.value)
    default = keypath.get(rel.defaults, parts) if rel is not None else keypath.ABSENT
    if rel is None or default is keypath.ABSENT:
        return ValueLookup(
            "unknown",
            facts=(*seen, installed),
            missing=(full,),
            why=f"the installation does not set it and the knowledge has no default of it for "
            f"{product} {installed.value}",
        )
    source = provenance.release_default(rel.key)
    return ValueLookup("default", default, (*seen, installed, Fact(full, default, source)))


def _value_test(
    args: Mapping[str, Any],
    state: State,
    kb: KnowledgeBase,
    claim: str,
    test: Callable[[Any], bool | None],
) -> Outcome:
    product, key = str(args["product"]), str(args["key"])
    found = lookup_value(state, kb, product, key)
    if found.state == "unknown":
        return Outcome(Truth.UNKNOWN, f"{claim}: unknown ({found.why})", found.facts, found.missing)
    ok = test(found.value)
    origin = "set by the installation" if found.state == "set" else str(found.facts[-1].source)
    if ok is None:
        return Outcome(
            Truth.UNKNOWN,
            f"{claim}: unknown (cannot read {_text(found.value)!r}, {origin})",
            found.facts,
            (f"values.{product}.{key}",),
        )
    return Outcome(
        _truth(ok),
        f"{claim}: {'yes' if ok else 'no'} ({key} = {_text(found.value)}, {origin})",
        found.facts,
    )


def p_value_set(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    product, key = str(args["product"]), str(args["key"])
    claim = f"the installation sets {key} for {product}"
    how, value, fact = _set_value(state, product, _split_key(key))
    full = f"values.{product}.{key}"
    if how == "unknown":
        return _unknown(claim, full)
    assert fact is not None
    seen = (fact,)
    if how == "unset":
        return Outcome(Truth.FALSE, f"{claim}: no (not in its values)", seen)
    return Outcome(Truth.TRUE, f"{claim}: yes ({key} = {_text(value)})", seen)


def _split_key(key: str) -> list[str]:
    return keypath.split(key)


def p_value_equals(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    want = args["value"]
    claim = f"{args['product']} value {args['key']} is {_text(want)}"
    return _value_test(args, state, kb, claim, lambda v: _same(v, want))


def p_value_in(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    values = args["values"] if isinstance(args["values"], list) else [args["values"]]
    claim = f"{args['product']} value {args['key']} is one of {_text(list(values))}"
    return _value_test(args, state, kb, claim, lambda v: any(_same(v, w) for w in values))


def p_value_contains(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    want = str(args["value"])
    claim = f"{args['product']} value {args['key']} contains {want}"

    def test(value: object) -> bool | None:
        if isinstance(value, dict):
            return want in value
        if isinstance(value, list):
            return any(_text(item) == want for item in value)
        return None

    return _value_test(args, state, kb, claim, test)
