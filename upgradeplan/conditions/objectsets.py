"""Predicates over every object of a custom-resource kind: ``any_object``, ``all_objects``.

The members of a kind come from ``object.<Kind>`` (every object a complete list of the kind
named) or, without it, from the objects known one by one (``object.<Kind>.<ns>.<name>.exists``).
Only a complete list can make ``any_object`` false or ``all_objects`` true: a kind that was
not listed (a 403, a snapshot of a filtered ``kubectl get``) leaves them "may apply".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from upgradeplan import errors
from upgradeplan.conditions.outcome import Outcome, _pattern, _same, _text
from upgradeplan.model import Fact, KnowledgeBase, State, Truth

_Test = Callable[[Any], bool | None]


def members(state: State, kind: str, namespace: str | None) -> tuple[list[str], Fact | None]:
    """``namespace/name`` of the kind's objects, and the listing fact (None: the list may
    be incomplete, the members are the objects known one by one)."""
    listing = state.get(f"object.{kind}")
    if listing is not None and isinstance(listing.value, list):
        names = [str(v) for v in listing.value]
    else:
        listing = None
        prefix, suffix = f"object.{kind}.", ".exists"
        names = []
        for fact in state:
            key = fact.key
            if key.startswith(prefix) and key.endswith(suffix) and fact.value is True:
                ns, _, name = key[len(prefix) : -len(suffix)].partition(".")
                names.append(f"{ns}/{name}")
    if namespace is not None:
        names = [n for n in names if n.partition("/")[0] == namespace]
    return sorted(names), listing


def _field_key(kind: str, member: str, field: str) -> str:
    ns, _, name = member.partition("/")
    return f"object.{kind}.{ns or '_'}.{name}.{field}"


def _empty(value: object) -> bool:
    return value is None or value in ("", [], {})


def _test(args: Mapping[str, Any]) -> tuple[str, _Test]:
    """The per-object test the arguments ask for, and how to say it."""
    tests: list[tuple[str, _Test]] = []
    field = str(args["field"])
    if "empty" in args:
        want = bool(args["empty"])
        tests.append((f"{field} {'empty' if want else 'not empty'}", lambda v: _empty(v) is want))
    if "equals" in args:
        other = args["equals"]
        tests.append((f"{field} = {_text(other)}", lambda v: _same(v, other)))
    if "matches" in args:
        pattern = str(args["matches"])
        regex = _pattern(pattern)

        def search(value: object) -> bool | None:
            if value is None:
                return False
            items = value if isinstance(value, list) else [value]
            return any(regex.search(_text(item)) for item in items)

        tests.append((f"{field} matches /{pattern}/", search))
    if not tests:
        raise errors.BadInput(
            f"{args.get('kind')}: an object test needs empty, equals or matches",
            hint="run upgradeplan kb lint on the knowledge",
        )

    def every(value: object) -> bool | None:
        results = [t(value) for _, t in tests]
        if False in results:
            return False
        return None if None in results else True

    return " and ".join(claim for claim, _ in tests), every


def _over(args: Mapping[str, Any], state: State, quantifier: str) -> Outcome:
    kind, field = str(args["kind"]), str(args["field"])
    namespace = str(args["namespace"]) if args.get("namespace") is not None else None
    said, test = _test(args)
    where = f" in {namespace}" if namespace else ""
    claim = f"{quantifier} {kind}{where} with {said}"
    names, listing = members(state, kind, namespace)
    read: dict[str, Fact] = {}
    hits: list[str] = []
    misses: list[str] = []
    missing: list[str] = [] if listing is not None else [f"object.{kind}"]
    for member in names:
        key = _field_key(kind, member, field)
        fact = state.get(key)
        ok = None if fact is None else test(fact.value)
        if fact is not None:
            read[member] = fact
        if ok is None:
            missing.append(key)
        elif ok:
            hits.append(member)
        else:
            misses.append(member)
    # the evidence: the list and the objects that decide (not every object of a large kind)
    deciding = hits if quantifier == "any" else misses
    shown = [read[m] for m in deciding[:5] if m in read]
    complete = [listing] if listing is not None and not deciding else []  # "none" / "all"
    facts = tuple(complete + shown)
    return _judged(quantifier, claim, hits, misses, missing, facts, listing is not None)


def _judged(
    quantifier: str,
    claim: str,
    hits: list[str],
    misses: list[str],
    missing: list[str],
    facts: tuple[Fact, ...],
    complete: bool,
) -> Outcome:
    def names(items: list[str]) -> str:
        return ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")

    if quantifier == "any":
        if hits:
            return Outcome(Truth.TRUE, f"{claim}: yes ({names(hits)})", facts)
        if not missing:
            return Outcome(Truth.FALSE, f"{claim}: no ({len(misses)} listed, none)", facts)
    else:
        if misses:
            return Outcome(Truth.FALSE, f"{claim}: no ({names(misses)} not)", facts)
        if not missing:
            return Outcome(Truth.TRUE, f"{claim}: yes (all {len(hits)} listed)", facts)
    why = "the kind was not listed" if not complete else f"{', '.join(missing)} not known"
    return Outcome(Truth.UNKNOWN, f"{claim}: unknown ({why})", facts, tuple(missing))


def p_any_object(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    return _over(args, state, "any")


def p_all_objects(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    return _over(args, state, "every")
