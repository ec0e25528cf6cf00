"""Predicates about versions and pins: what runs, what a pin selects, what a release publishes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from upgradeplan import errors, releases
from upgradeplan.conditions.outcome import (
    Outcome,
    _constraint,
    _simple,
    _text,
    _truth,
    _unknown,
    _version,
)
from upgradeplan.model import (
    Fact,
    KnowledgeBase,
    State,
    Truth,
)
from upgradeplan.versions import is_exact, parse_constraint


def _installed_cmp(
    args: Mapping[str, Any], state: State, claim: str, test: Callable[[Any], bool]
) -> Outcome:
    product = str(args["product"])
    key = f"installed.{product}"
    fact = state.get(key)
    if fact is None:
        return _unknown(claim, key)
    if fact.value is None:
        return Outcome(Truth.FALSE, f"{claim}: no (not installed)", (fact,))
    v = _version(fact.value)
    if v is None:
        return Outcome(
            Truth.UNKNOWN, f"{claim}: unknown ({fact.value!r} is not a version)", (fact,), (key,)
        )
    ok = test(v)
    return Outcome(_truth(ok), f"{claim}: {'yes' if ok else 'no'} (runs {fact.value})", (fact,))


def _bound_version(args: Mapping[str, Any], name: str) -> Any:
    text = str(args[name])
    v = _version(text)
    if v is None:
        raise errors.BadInput(f"condition argument {name}={text!r} is not a version")
    return v


def p_version_below(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    bound = _bound_version(args, "version")
    claim = f"{args['product']} runs a version below {args['version']}"
    return _installed_cmp(args, state, claim, lambda v: bool(v < bound))


def p_version_at_least(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    bound = _bound_version(args, "version")
    claim = f"{args['product']} runs {args['version']} or later"
    return _installed_cmp(args, state, claim, lambda v: bool(v >= bound))


def p_version_matches(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    con = _constraint(str(args["range"]))
    claim = f"{args['product']} runs a version in {args['range']}"
    return _installed_cmp(args, state, claim, lambda v: bool(con.check(v)))


def installed_class(predicate: str, args: Mapping[str, Any], value: object) -> object:
    """The class of an installed version for ``version_below``, ``version_at_least`` and
    ``version_matches`` with ``args``: every value of one class gives the same truth (what
    ``_installed_cmp`` answers on it): not installed, not a version, or the test's answer.
    Along a window of releases the class changes only where the comparison turns."""
    if value is None:
        return "absent"
    v = _version(value)
    if v is None:
        return "not a version"
    try:
        if predicate == "version_matches":
            return bool(_constraint(str(args["range"])).check(v))
        bound = _bound_version(args, "version")
    except errors.UpgradeplanError:
        return ("value", value)  # a bad bound: kept by the value itself
    return bool(v < bound) if predicate == "version_below" else bool(v >= bound)


# pin_kind of the pin texts seen (a search asks again for every landing's pin)
_PIN_KINDS: dict[str, str] = {}


def pin_kind(value: object) -> str:
    """What a pin's value is: "none" (no pin), "exact" (one full version) or "range"."""
    if type(value) is str:
        hit = _PIN_KINDS.get(value)
        if hit is None:
            if len(_PIN_KINDS) > 65_536:
                _PIN_KINDS.clear()
            hit = _PIN_KINDS[value] = _pin_kind(value)
        return hit
    return _pin_kind(value)


def _pin_kind(value: object) -> str:
    if value is None or value == "":
        return "none"
    return "exact" if is_exact(str(value)) else "range"


def _pin_fact(args: Mapping[str, Any], state: State, claim: str) -> tuple[Fact | None, Outcome]:
    key = f"pin.{args['product']}"
    fact = state.get(key)
    if fact is None:
        return None, _unknown(claim, key)
    return fact, Outcome(Truth.UNKNOWN, claim)


def p_pin_exact(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    claim = f"the pin of {args['product']} is one exact version"
    fact, unknown = _pin_fact(args, state, claim)
    if fact is None:
        return unknown
    kind = pin_kind(fact.value)
    return Outcome(
        _truth(kind == "exact"),
        f"{claim}: {'yes' if kind == 'exact' else 'no'} "
        f"(pin {_text(fact.value) if kind != 'none' else 'none'})",
        (fact,),
    )


def p_pin_kind(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    want = str(args["kind"])
    claim = f"the pin of {args['product']} is {'no pin' if want == 'none' else 'a ' + want}"
    fact, unknown = _pin_fact(args, state, claim)
    if fact is None:
        return unknown
    kind = pin_kind(fact.value)
    return Outcome(
        _truth(kind == want),
        f"{claim}: {'yes' if kind == want else 'no'} (pin {_text(fact.value)}, {kind})",
        (fact,),
    )


def known_versions(kb: KnowledgeBase, product: str) -> list[str]:
    """Released, non-withdrawn versions of ``product`` in the knowledge, oldest first."""
    return releases.known_versions(kb, product)


def resolve_pin(kb: KnowledgeBase, product: str, pin: str) -> str | None:
    """The version a pin selects (releases.selects); None for an empty or invalid pin."""
    try:
        return releases.selects(kb, product, pin) if pin else None
    except errors.InvalidConstraint:
        return None


def p_pin_resolves_below(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    product = str(args["product"])
    bound = _bound_version(args, "version")
    claim = f"the pin of {product} selects a version below {args['version']}"
    fact, unknown = _pin_fact(args, state, claim)
    if fact is None:
        return unknown
    if fact.value is None or fact.value == "":
        return Outcome(Truth.FALSE, f"{claim}: no ({product} is not pinned)", (fact,))
    chosen = resolve_pin(kb, product, str(fact.value))
    v = _version(chosen)
    if v is None:
        return Outcome(
            Truth.UNKNOWN,
            f"{claim}: unknown (pin {fact.value} selects no known release of {product})",
            (fact,),
        )
    ok = bool(v < bound)
    return Outcome(
        _truth(ok), f"{claim}: {'yes' if ok else 'no'} (pin {fact.value} selects {chosen})", (fact,)
    )


def p_fact_version_below(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    key = str(args["fact"])
    bound = _bound_version(args, "version")

    def test(value: object) -> bool | None:
        v = _version(value)
        return None if v is None else bool(v < bound)

    return _simple(key, f"{key} is a version below {args['version']}", state, test)


def _published(rel: Any, product: str) -> str | None:
    """The range (or exact version) a release publishes for ``product``, if any."""
    if product in rel.components:
        return str(rel.components[product])
    if product in rel.bom:
        return str(rel.bom[product])
    return None


def p_component_range_admits(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    """The range the release publishes for a component admits a known release of it that
    (optionally) was built against another release of ``built_against_other`` than the one
    the release publishes, and (optionally) is above ``above``."""

    product, comp = str(args["product"]), str(args["component"])
    other = args.get("built_against_other")
    above = _bound_version(args, "above") if "above" in args else None
    what = f"a release of {comp}" + (f" above {args['above']}" if above is not None else "")
    if other:
        what += f" built against another {other} than it publishes"
    key = f"installed.{product}"
    version = args.get("version")
    facts: tuple[Fact, ...] = ()
    if version is None:
        fact = state.get(key)
        if fact is None or not isinstance(fact.value, str):
            return _unknown(f"the range of {comp} in {product} admits {what}", key)
        version, facts = fact.value, (fact,)
    claim = f"the range of {comp} in {product} {version} admits {what}"
    rel = kb.release(product, str(version))
    if rel is None:
        return Outcome(
            Truth.UNKNOWN, f"{claim}: unknown ({product} {version} is not in the knowledge)", facts
        )
    rng = _published(rel, comp)
    if rng is None:
        return Outcome(Truth.FALSE, f"{claim}: no ({product} {version} publishes no {comp})", facts)
    con = parse_constraint(rng)
    admitted = [r for r in releases.planned(kb, comp) if con.check(_version(r.version))]
    if above is not None:
        admitted = [r for r in admitted if _version(r.version) > above]
    unsure: list[str] = []
    for r in admitted:
        if not other:
            return Outcome(Truth.TRUE, f"{claim}: yes ({rng} admits {r.version})", facts)
        built = r.built_against.get(str(other))
        theirs = _published(rel, str(other))
        if built is None or theirs is None:
            unsure.append(r.version)
            continue
        if not parse_constraint(theirs).check(_version(built)):
            return Outcome(
                Truth.TRUE,
                f"{claim}: yes ({rng} admits {comp} {r.version}, built against {other} {built}; "
                f"{product} {version} publishes {other} {theirs})",
                facts,
            )
    if unsure:
        return Outcome(
            Truth.UNKNOWN,
            f"{claim}: unknown ({rng} admits {comp} {', '.join(unsure)}, which the knowledge "
            f"does not say what {other} they were built against, or {product} {version} "
            f"publishes no {other})",
            facts,
        )
    seen = ", ".join(r.version for r in admitted) or "no known release"
    return Outcome(Truth.FALSE, f"{claim}: no ({rng} admits {seen})", facts)


def p_app_version_matches(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    """The app version (the chart's ``appVersion``) of release ``version`` of the product
    (default: the one it runs) satisfies ``range``; unknown where the release records none."""

    product, rng = str(args["product"]), str(args["range"])
    key = f"installed.{product}"
    version = args.get("version")
    facts: tuple[Fact, ...] = ()
    if version is None:
        fact = state.get(key)
        if fact is None:
            return _unknown(f"the app version of {product} satisfies {rng}", key)
        if fact.value is None:
            claim = f"the app version of {product} satisfies {rng}"
            return Outcome(Truth.FALSE, f"{claim}: no (not installed)", (fact,))
        version, facts = str(fact.value), (fact,)
    claim = f"the app version of {product} {version} satisfies {rng}"
    rel = kb.release(product, str(version))
    if rel is None or not rel.app_version:
        why = "not in the knowledge" if rel is None else "recorded without an app version"
        return Outcome(Truth.UNKNOWN, f"{claim}: unknown ({product} {version} is {why})", facts)
    app = _version(rel.app_version)
    if app is None:
        return Outcome(
            Truth.UNKNOWN, f"{claim}: unknown ({rel.app_version!r} is not a version)", facts
        )
    ok = bool(parse_constraint(rng).check(app))
    return Outcome(_truth(ok), f"{claim}: {'yes' if ok else 'no'} ({rel.app_version})", facts)


def p_change_moves(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    product = str(args["product"])
    key = f"change.{product}"
    claim = f"the change moves the pin of {product}"

    def test(value: object) -> bool | None:
        return {"moved": True, "kept": False}.get(str(value)) if value is not None else None

    return _simple(key, claim, state, test)
