"""The predicate vocabulary of hazard conditions and their three-valued evaluation.

A hazard's ``when`` is a tree of :class:`~upgradeplan.model.Condition` nodes: ``all``,
``any``, ``not`` and predicates from the fixed table :data:`PREDICATES`. Nothing from the
knowledge is ever executed: a predicate name selects one of the functions below, and its
arguments are plain data.

Evaluation follows Kleene logic over :class:`~upgradeplan.model.Truth`. A predicate whose fact
is not in the state is UNKNOWN; every predicate records an :class:`~upgradeplan.model.Evidence`
(a sentence, the facts read with their sources, the fact keys it missed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from upgradeplan import errors, provenance
from upgradeplan.model import (
    NEXT,
    Condition,
    Evidence,
    Fact,
    KnowledgeBase,
    State,
    Truth,
)
from upgradeplan.provenance import derived_from_pin

Hop = tuple[str | None, str | None]

READERS_HINT = "or read it with --kubeconfig/--snapshot/--gitops"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one predicate found: its truth, a sentence, the facts read and the keys missed."""

    result: Truth
    description: str
    facts: tuple[Fact, ...] = ()
    missing: tuple[str, ...] = ()


PredicateFn = Callable[[Mapping[str, Any], State, KnowledgeBase], Outcome]
KeysFn = Callable[[Mapping[str, Any]], list[str]]


@dataclass(frozen=True)
class PredicateSpec:
    """One entry of the vocabulary: its arguments, the facts it reads and its function."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    reads: KeysFn
    fn: PredicateFn
    version_args: tuple[str, ...] = ()  # arguments that may be $from / $to


@dataclass(frozen=True)
class Result:
    """The evaluation of a whole condition tree."""

    truth: Truth
    evidence: tuple[Evidence, ...]
    missing: tuple[str, ...]  # keys that could change the outcome (only when UNKNOWN)


# --------------------------------------------------------------------------- helpers


def _version(text: object) -> Any:
    from upgradeplan.versions import parse_version

    if not isinstance(text, str):
        return None
    try:
        return parse_version(text)
    except errors.InvalidVersion:
        return None


def _constraint(text: str) -> Any:
    from upgradeplan.versions import parse_constraint

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


# --------------------------------------------------------------------------- predicates


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


def _pin_kind(value: object) -> str:
    from upgradeplan.versions import is_exact

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
    kind = _pin_kind(fact.value)
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
    kind = _pin_kind(fact.value)
    return Outcome(
        _truth(kind == want),
        f"{claim}: {'yes' if kind == want else 'no'} (pin {_text(fact.value)}, {kind})",
        (fact,),
    )


def known_versions(kb: KnowledgeBase, product: str) -> list[str]:
    """Released, non-withdrawn versions of ``product`` in the knowledge, oldest first."""
    return [
        r.version for r in kb.releases.get(product, ()) if r.version != NEXT and r.withdrawn is None
    ]


def resolve_pin(kb: KnowledgeBase, product: str, pin: str) -> str | None:
    """The version a pin selects among the known releases (an exact pin selects itself)."""
    from upgradeplan.versions import parse_constraint, select

    try:
        con = parse_constraint(pin)
    except errors.InvalidConstraint:
        return None
    exact = con.exact_version
    if exact is not None:
        return str(exact)
    return select(pin, known_versions(kb, product), flavour="flux")


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


def p_drift_detection(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    name, mode = str(args["helmrelease"]), str(args["mode"])
    key = f"helmrelease.{name}.drift-detection"
    claim = f"HelmRelease {name} has drift detection {mode}"
    return _simple(key, claim, state, lambda v: _text("disabled" if v is None else v) == mode)


def _bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def _object_prefix(args: Mapping[str, Any]) -> str:
    return f"object.{args['kind']}.{args['namespace']}.{args['name']}"


def p_object_exists(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    key = f"{_object_prefix(args)}.exists"
    claim = f"{args['kind']} {args['namespace']}/{args['name']} exists"
    return _simple(key, claim, state, _bool)


def _object_meta(args: Mapping[str, Any], state: State, which: str) -> Outcome:
    prefix = _object_prefix(args)
    wanted = str(args["key"]) + (f"={args['value']}" if "value" in args else "")
    noun = "annotation" if which == "annotations" else "label"
    claim = f"{args['kind']} {args['namespace']}/{args['name']} carries the {noun} {wanted}"
    exists = state.get(f"{prefix}.exists")
    meta = state.get(f"{prefix}.{which}")
    facts = tuple(f for f in (exists, meta) if f is not None)
    missing: list[str] = []
    ex_truth = Truth.UNKNOWN
    if exists is None:
        missing.append(f"{prefix}.exists")
    else:
        b = _bool(exists.value)
        if b is None:
            missing.append(f"{prefix}.exists")
        else:
            ex_truth = _truth(b)
    has_truth = Truth.UNKNOWN
    if meta is None:
        missing.append(f"{prefix}.{which}")
    else:
        m = _as_map(meta.value) if meta.value is not None else {}
        if m is None:
            missing.append(f"{prefix}.{which}")
        else:
            key = str(args["key"])
            found = key in m and ("value" not in args or m[key] == str(args["value"]))
            has_truth = _truth(found)
    truth = ex_truth & has_truth
    if truth is Truth.FALSE and ex_truth is Truth.FALSE:
        return Outcome(truth, f"{claim}: no (it does not exist)", facts)
    if truth is Truth.UNKNOWN:
        return Outcome(
            truth, f"{claim}: unknown ({', '.join(missing)} not known)", facts, tuple(missing)
        )
    seen = _text(meta.value) if meta is not None else "?"
    return Outcome(
        truth, f"{claim}: {'yes' if truth is Truth.TRUE else 'no'} ({which} {seen})", facts
    )


def p_object_annotation(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    return _object_meta(args, state, "annotations")


def p_object_label(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    return _object_meta(args, state, "labels")


def p_container_arg(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    product, arg = str(args["product"]), str(args["arg"])
    key = f"workload.{product}.args"
    claim = f"a container of {product} has the argument {arg}"

    def test(value: object) -> bool | None:
        items = _as_list(value) if value is not None else []
        if items is None:
            return None
        return any(a == arg or a.startswith(arg + "=") for a in items)

    return _simple(key, claim, state, test)


def p_secret_type(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    product, wanted = str(args["product"]), str(args["type"])
    claim = f"a Secret {product} references has type {wanted}"
    ns_key, sec_key = f"workload.{product}.namespace", f"workload.{product}.env-secrets"
    ns, secrets = state.get(ns_key), state.get(sec_key)
    facts: list[Fact] = [f for f in (ns, secrets) if f is not None]
    missing = [k for k, f in ((ns_key, ns), (sec_key, secrets)) if f is None]
    if secrets is not None:
        names = _as_list(secrets.value) if secrets.value is not None else []
        if names is not None and not names:
            return Outcome(Truth.FALSE, f"{claim}: no (it references no Secret)", tuple(facts))
    if missing:
        return Outcome(
            Truth.UNKNOWN,
            f"{claim}: unknown ({', '.join(missing)} not known)",
            tuple(facts),
            tuple(missing),
        )
    assert ns is not None and secrets is not None
    names = _as_list(secrets.value) or []
    unknown: list[str] = []
    seen: list[str] = []
    for name in names:
        key = f"secret.{ns.value}.{name}.type"
        fact = state.get(key)
        if fact is None:
            unknown.append(key)
            continue
        facts.append(fact)
        seen.append(f"{name}: {_text(fact.value)}")
        if _text(fact.value) == wanted:
            return Outcome(
                Truth.TRUE, f"{claim}: yes (Secret {ns.value}/{name} is {wanted})", tuple(facts)
            )
    if unknown:
        return Outcome(
            Truth.UNKNOWN,
            f"{claim}: unknown ({', '.join(unknown)} not known)",
            tuple(facts),
            tuple(unknown),
        )
    return Outcome(Truth.FALSE, f"{claim}: no ({'; '.join(seen)})", tuple(facts))


def p_namespace_label(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    wanted = str(args["key"]) + (f"={args['value']}" if "value" in args else "")
    facts: list[Fact] = []
    if "namespace" in args:
        namespace = str(args["namespace"])
    elif "product" in args:
        ns_key = f"workload.{args['product']}.namespace"
        ns = state.get(ns_key)
        if ns is None or not isinstance(ns.value, str):
            return _unknown(f"the namespace of {args['product']} has the label {wanted}", ns_key)
        facts.append(ns)
        namespace = ns.value
    else:
        raise errors.BadInput("namespace_label needs `namespace` or `product`")
    key = f"namespace.{namespace}.labels"
    claim = f"namespace {namespace} has the label {wanted}"
    fact = state.get(key)
    if fact is None:
        return _unknown(claim, key, facts=facts)
    m = _as_map(fact.value) if fact.value is not None else {}
    if m is None:
        return Outcome(Truth.UNKNOWN, f"{claim}: unknown", (*facts, fact), (key,))
    k = str(args["key"])
    ok = k in m and ("value" not in args or m[k] == str(args["value"]))
    return Outcome(
        _truth(ok), f"{claim}: {'yes' if ok else 'no'} (labels {_text(m)})", (*facts, fact)
    )


def _taint_parts(taint: str) -> tuple[str, str]:
    body, _, effect = taint.rpartition(":") if ":" in taint else (taint, "", "")
    key = body.split("=", 1)[0]
    return key, effect


def p_node_taint(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    key, effect = str(args["key"]), args.get("effect")
    claim = f"a node has a taint {key}" + (f" with effect {effect}" if effect else "")

    def test(value: object) -> bool | None:
        items = _as_list(value) if value is not None else []
        if items is None:
            return None
        for item in items:
            k, e = _taint_parts(item)
            if k == key and (not effect or e == str(effect)):
                return True
        return False

    return _simple("nodes.taints", claim, state, test)


def p_tolerates(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    product, key = str(args["product"]), str(args["key"])
    claim = f"{product} tolerates the taint {key}"

    def test(value: object) -> bool | None:
        items = _as_list(value) if value is not None else []
        if items is None:
            return None
        for item in items:
            parts = item.split(":")
            k = parts[0]
            op = parts[1] if len(parts) > 1 else ""
            if k == key or (k == "" and op == "Exists"):
                return True
        return False

    return _simple(f"workload.{product}.tolerations", claim, state, test)


def p_crd_stored_version(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    crd, version = str(args["crd"]), str(args["version"])
    claim = f"CRD {crd} lists {version} in storedVersions"

    def test(value: object) -> bool | None:
        items = _as_list(value) if value is not None else []
        return None if items is None else version in items

    return _simple(f"crd.{crd}.stored-versions", claim, state, test)


def p_storage_class_exists(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    name = str(args["name"])
    return _simple(f"storageclass.{name}.exists", f"StorageClass {name} exists", state, _bool)


def p_fact_equals(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    key, want = str(args["fact"]), args["value"]
    return _simple(key, f"{key} is {_text(want)}", state, lambda v: _same(v, want))


def p_fact_in(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    key = str(args["fact"])
    values = args["values"] if isinstance(args["values"], list) else [args["values"]]
    claim = f"{key} is one of {_text(list(values))}"
    return _simple(key, claim, state, lambda v: any(_same(v, w) for w in values))


def p_fact_contains(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    key, want = str(args["fact"]), str(args["value"])

    def test(value: object) -> bool | None:
        if value is None:
            return False
        if isinstance(value, dict):
            return want in value
        items = _as_list(value)
        return None if items is None else want in items

    return _simple(key, f"{key} contains {want}", state, test)


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
    from upgradeplan.versions import parse_constraint

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
    admitted = [
        r
        for r in kb.releases.get(comp, ())
        if r.version != NEXT and r.withdrawn is None and con.check(_version(r.version))
    ]
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


@dataclass(frozen=True, slots=True)
class ValueLookup:
    """A chart value as the installation sets it, or as the release's defaults give it."""

    state: str  # "set" | "default" | "unknown"
    value: Any = None
    facts: tuple[Fact, ...] = ()
    missing: tuple[str, ...] = ()
    why: str = ""  # for "unknown": what is not known


def _set_value(state: State, product: str, parts: list[str]) -> tuple[str, Any, Fact | None]:
    """("set", value, fact) / ("unset", None, fact) / ("unknown", None, None) for a key."""
    from upgradeplan import keypath

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
    from upgradeplan import keypath

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
    source = provenance.text(f"default of {rel.key}")
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
    from upgradeplan import keypath

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


def p_fact_matches(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    import re

    key, pattern = str(args["fact"]), str(args["pattern"])
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise errors.BadInput(
            f"fact_matches: pattern {pattern!r} does not compile: {exc}",
            hint="run upgradeplan kb lint on the knowledge",
        ) from None

    def test(value: object) -> bool | None:
        if isinstance(value, list):
            return any(regex.search(_text(item)) for item in value)
        return None if value is None else bool(regex.search(_text(value)))

    return _simple(key, f"{key} matches /{pattern}/", state, test)


# --------------------------------------------------------------------------- the vocabulary


def _keys(*templates: str) -> KeysFn:
    def reads(args: Mapping[str, Any]) -> list[str]:
        return [
            t.format(**{k: v for k, v in args.items() if isinstance(k, str)}) for t in templates
        ]

    return reads


def _ns_label_keys(args: Mapping[str, Any]) -> list[str]:
    if "namespace" in args:
        return [f"namespace.{args['namespace']}.labels"]
    return [f"workload.{args.get('product')}.namespace", "namespace.<namespace>.labels"]


def _value_keys(args: Mapping[str, Any]) -> list[str]:
    # the key, a mapping above it or the whole values, and the version whose defaults apply
    p = args["product"]
    return [f"values.{p}.{args['key']}", f"values.{p}.<a key above it>", f"installed.{p}"]


def _component_keys(args: Mapping[str, Any]) -> list[str]:
    return [] if "version" in args else [f"installed.{args['product']}"]


def _spec(
    name: str,
    required: tuple[str, ...],
    optional: tuple[str, ...],
    reads: KeysFn,
    fn: PredicateFn,
    version_args: tuple[str, ...] = (),
) -> tuple[str, PredicateSpec]:
    return name, PredicateSpec(name, required, optional, reads, fn, version_args)


_OBJ = ("kind", "namespace", "name")

PREDICATES: dict[str, PredicateSpec] = dict(
    [
        _spec(
            "version_below",
            ("product", "version"),
            (),
            _keys("installed.{product}"),
            p_version_below,
            ("version",),
        ),
        _spec(
            "version_at_least",
            ("product", "version"),
            (),
            _keys("installed.{product}"),
            p_version_at_least,
            ("version",),
        ),
        _spec(
            "version_matches",
            ("product", "range"),
            (),
            _keys("installed.{product}"),
            p_version_matches,
        ),
        _spec("pin_exact", ("product",), (), _keys("pin.{product}"), p_pin_exact),
        _spec("pin_kind", ("product", "kind"), (), _keys("pin.{product}"), p_pin_kind),
        _spec(
            "pin_resolves_below",
            ("product", "version"),
            (),
            _keys("pin.{product}"),
            p_pin_resolves_below,
            ("version",),
        ),
        _spec(
            "drift_detection",
            ("helmrelease", "mode"),
            (),
            _keys("helmrelease.{helmrelease}.drift-detection"),
            p_drift_detection,
        ),
        _spec(
            "object_exists",
            _OBJ,
            (),
            _keys("object.{kind}.{namespace}.{name}.exists"),
            p_object_exists,
        ),
        _spec(
            "object_annotation",
            (*_OBJ, "key"),
            ("value",),
            _keys(
                "object.{kind}.{namespace}.{name}.exists",
                "object.{kind}.{namespace}.{name}.annotations",
            ),
            p_object_annotation,
        ),
        _spec(
            "object_label",
            (*_OBJ, "key"),
            ("value",),
            _keys(
                "object.{kind}.{namespace}.{name}.exists", "object.{kind}.{namespace}.{name}.labels"
            ),
            p_object_label,
        ),
        _spec(
            "container_arg",
            ("product", "arg"),
            (),
            _keys("workload.{product}.args"),
            p_container_arg,
        ),
        _spec(
            "secret_type",
            ("product", "type"),
            (),
            _keys(
                "workload.{product}.namespace",
                "workload.{product}.env-secrets",
                "secret.<namespace>.<name>.type",
            ),
            p_secret_type,
        ),
        _spec(
            "namespace_label",
            ("key",),
            ("namespace", "product", "value"),
            _ns_label_keys,
            p_namespace_label,
        ),
        _spec("node_taint", ("key",), ("effect",), _keys("nodes.taints"), p_node_taint),
        _spec(
            "tolerates",
            ("product", "key"),
            (),
            _keys("workload.{product}.tolerations"),
            p_tolerates,
        ),
        _spec(
            "crd_stored_version",
            ("crd", "version"),
            (),
            _keys("crd.{crd}.stored-versions"),
            p_crd_stored_version,
        ),
        _spec(
            "storage_class_exists",
            ("name",),
            (),
            _keys("storageclass.{name}.exists"),
            p_storage_class_exists,
        ),
        _spec(
            "component_range_admits",
            ("product", "component"),
            ("version", "built_against_other", "above"),
            _component_keys,
            p_component_range_admits,
            ("version",),
        ),
        _spec("value_set", ("product", "key"), (), _value_keys, p_value_set),
        _spec("value_equals", ("product", "key", "value"), (), _value_keys, p_value_equals),
        _spec("value_in", ("product", "key", "values"), (), _value_keys, p_value_in),
        _spec("value_contains", ("product", "key", "value"), (), _value_keys, p_value_contains),
        _spec("fact_matches", ("fact", "pattern"), (), _keys("{fact}"), p_fact_matches),
        _spec("fact_equals", ("fact", "value"), (), _keys("{fact}"), p_fact_equals),
        _spec("fact_in", ("fact", "values"), (), _keys("{fact}"), p_fact_in),
        _spec("fact_contains", ("fact", "value"), (), _keys("{fact}"), p_fact_contains),
        _spec(
            "fact_version_below",
            ("fact", "version"),
            (),
            _keys("{fact}"),
            p_fact_version_below,
            ("version",),
        ),
    ]
)


# --------------------------------------------------------------------------- evaluation


def bind(args: Mapping[str, Any], spec: PredicateSpec, hop: Hop) -> tuple[dict[str, Any], str]:
    """Replace ``$from`` / ``$to`` in version arguments; returns (args, unbound name or "")."""
    if not any(args.get(name) in ("$from", "$to") for name in spec.version_args):
        return args if isinstance(args, dict) else dict(args), ""
    out = dict(args)
    for name in spec.version_args:
        value = out.get(name)
        if value in ("$from", "$to"):
            bound = hop[0] if value == "$from" else hop[1]
            if bound is None:
                return out, str(value)
            out[name] = bound
    return out, ""


_CHECKED: dict[int, tuple[Condition, PredicateSpec]] = {}


def _spec_of(cond: Condition) -> PredicateSpec:
    hit = _CHECKED.get(id(cond))
    if hit is not None and hit[0] is cond:
        return hit[1]
    spec = PREDICATES.get(cond.predicate)
    if spec is None:
        raise errors.UnknownName("predicate", cond.predicate, sorted(PREDICATES))
    missing = [a for a in spec.required if a not in cond.args]
    if missing:
        where = f"{cond.location}: " if cond.location.line else ""
        raise errors.BadInput(
            f"{where}predicate {cond.predicate!r} is missing argument {', '.join(missing)}"
        )
    if len(_CHECKED) > 100_000:
        _CHECKED.clear()
    _CHECKED[id(cond)] = (cond, spec)
    return spec


def evaluate_full(
    cond: Condition, state: State, kb: KnowledgeBase, *, hop: Hop = (None, None)
) -> Result:
    """Evaluate ``cond``; ``missing`` lists only the keys that could change an UNKNOWN."""
    evidence: list[Evidence] = []
    truth, missing = _eval(cond, state, kb, hop, False, evidence)
    return Result(truth, tuple(evidence), tuple(dict.fromkeys(missing)))


def evaluate(
    cond: Condition, state: State, kb: KnowledgeBase, *, hop: Hop = (None, None)
) -> tuple[Truth, tuple[Evidence, ...]]:
    """Kleene evaluation of ``cond`` on ``state``; ``hop`` binds ``$from`` / ``$to``."""
    res = evaluate_full(cond, state, kb, hop=hop)
    return res.truth, res.evidence


def truth(cond: Condition, state: State, kb: KnowledgeBase, *, hop: Hop = (None, None)) -> Truth:
    """Only the truth of ``cond`` (short-circuit Kleene evaluation, no evidence kept)."""
    if cond.op == "pred":
        spec = _spec_of(cond)
        args, unbound = bind(cond.args, spec, hop)
        return Truth.UNKNOWN if unbound else spec.fn(args, state, kb).result
    if cond.op == "not":
        return ~truth(cond.children[0], state, kb, hop=hop)
    stop = Truth.FALSE if cond.op == "all" else Truth.TRUE
    seen_unknown = False
    for child in cond.children:
        t = truth(child, state, kb, hop=hop)
        if t is stop:
            return stop
        seen_unknown = seen_unknown or t is Truth.UNKNOWN
    if seen_unknown:
        return Truth.UNKNOWN
    return Truth.TRUE if cond.op == "all" else Truth.FALSE


def _eval(
    cond: Condition,
    state: State,
    kb: KnowledgeBase,
    hop: Hop,
    negated: bool,
    evidence: list[Evidence],
) -> tuple[Truth, list[str]]:
    if cond.op == "pred":
        spec = _spec_of(cond)
        args, unbound = bind(cond.args, spec, hop)
        if unbound:
            out = Outcome(Truth.UNKNOWN, f"{cond.predicate}: {unbound} has no value outside a hop")
        else:
            out = spec.fn(args, state, kb)
        evidence.append(
            Evidence(cond.predicate, out.description, out.result, out.facts, out.missing, negated)
        )
        return out.result, list(out.missing) if out.result is Truth.UNKNOWN else []
    if cond.op == "not":
        if len(cond.children) != 1:
            raise errors.BadInput("`not` takes exactly one condition")
        t, inner = _eval(cond.children[0], state, kb, hop, not negated, evidence)
        return ~t, inner
    if cond.op not in ("all", "any"):
        raise errors.BadInput(f"unknown condition operator {cond.op!r}")
    results = [_eval(c, state, kb, hop, negated, evidence) for c in cond.children]
    truth = Truth.TRUE if cond.op == "all" else Truth.FALSE
    for t, _ in results:
        truth = (truth & t) if cond.op == "all" else (truth | t)
    if truth is not Truth.UNKNOWN:
        return truth, []
    missing: list[str] = []
    for t, m in results:
        if t is Truth.UNKNOWN:
            missing.extend(m)
    return truth, missing


def facts_read(cond: Condition | None, hop: Hop = (None, None)) -> list[str]:
    """Every fact key ``cond`` may read (templated keys keep ``<placeholders>``)."""
    if cond is None:
        return []
    if cond.op == "pred":
        spec = _spec_of(cond)
        args, _ = bind(cond.args, spec, hop)
        return spec.reads(args)
    out: list[str] = []
    for child in cond.children:
        out.extend(k for k in facts_read(child, hop) if k not in out)
    return out


def hop_refs(cond: Condition | None) -> set[str]:
    """Which of ``$from`` / ``$to`` the condition refers to."""
    if cond is None:
        return set()
    if cond.op == "pred":
        return {v for v in cond.args.values() if v in ("$from", "$to")}
    out: set[str] = set()
    for child in cond.children:
        out |= hop_refs(child)
    return out


def missing_fact_hint(key: str) -> str:
    """How a user supplies the fact ``key``."""
    if key.startswith("installed."):
        return f"--installed {key[len('installed.') :]}=VERSION, {READERS_HINT}"
    if key.startswith("pin."):
        return f"--pin {key[len('pin.') :]}=CONSTRAINT, {READERS_HINT}"
    if key.startswith("cloud."):
        return f"--fact {key}=VALUE (cloud facts can only be stated)"
    return f"--fact {key}=VALUE, {READERS_HINT}"


# --------------------------------------------------------------------------- derived facts


def derive(state: State, kb: KnowledgeBase | None = None) -> State:
    """Add ``installed.X`` from an exact ``pin.X`` where the installed version is unknown."""
    from upgradeplan.versions import parse_constraint

    added: list[Fact] = []
    for key, fact in state.facts.items():
        if not key.startswith("pin.") or not isinstance(fact.value, str):
            continue
        product = key[len("pin.") :]
        if f"installed.{product}" in state.facts:
            continue
        try:
            exact = parse_constraint(fact.value).exact_version
        except errors.InvalidConstraint:
            continue
        if exact is None:
            continue
        added.append(Fact(f"installed.{product}", str(exact), derived_from_pin(fact.source)))
    if kb is not None:
        added.extend(_published_ranges(state, kb))
    return state.with_facts(*added) if added else state


def _published_ranges(state: State, kb: KnowledgeBase) -> list[Fact]:
    """``pin.X`` from ``components.X.versionRange`` of the release a product runs, where the
    installation does not pin X itself (it follows the range the release publishes)."""
    out: list[Fact] = []
    for key, fact in state.facts.items():
        if not key.startswith("installed.") or not isinstance(fact.value, str):
            continue
        rel = kb.release(key[len("installed.") :], fact.value)
        if rel is None or not rel.components:
            continue
        for comp, rng in sorted(rel.components.items()):
            if f"pin.{comp}" not in state.facts and f"pin.{comp}" in state.unreadable:
                continue  # the pin was there but could not be read: stays unknown
            if f"pin.{comp}" not in state.facts:
                source = f"default of {rel.key} (components.{comp}.versionRange)"
                out.append(Fact(f"pin.{comp}", rng, provenance.text(source)))
    return out


__all__ = [
    "PREDICATES",
    "Outcome",
    "PredicateSpec",
    "Result",
    "derive",
    "evaluate",
    "evaluate_full",
    "facts_read",
    "hop_refs",
    "known_versions",
    "missing_fact_hint",
    "resolve_pin",
    "truth",
]
