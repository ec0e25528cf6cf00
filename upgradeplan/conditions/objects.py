"""Predicates about objects, workloads, nodes and plain facts of the state."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from upgradeplan import errors
from upgradeplan.conditions.outcome import (
    Outcome,
    _as_list,
    _as_map,
    _pattern,
    _same,
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


def p_drift_detection(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    name, mode = str(args["helmrelease"]), str(args["mode"])
    key = f"helmrelease.{name}.drift-detection"
    claim = f"HelmRelease {name} has drift detection {mode}"
    return _simple(key, claim, state, lambda v: _text("disabled" if v is None else v) == mode)


def p_crd_policy(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    """The HelmRelease's CRD policy for one action (``install`` or ``upgrade``) is one of
    ``policy`` (a name or a list): read from ``helmrelease.<name>.crds``."""
    name, action = str(args["helmrelease"]), str(args["action"])
    wanted = args["policy"] if isinstance(args["policy"], list) else [args["policy"]]
    names = [str(w) for w in wanted]
    key = f"helmrelease.{name}.crds"
    claim = f"HelmRelease {name} applies CRDs on {action} with {' or '.join(names)}"

    def test(value: object) -> bool | None:
        if not isinstance(value, dict) or not isinstance(value.get(action), str):
            return None
        return value[action] in names

    return _simple(key, claim, state, test)


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


def p_fact_matches(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    key, pattern = str(args["fact"]), str(args["pattern"])
    regex = _pattern(pattern, "fact_matches: ")

    def test(value: object) -> bool | None:
        if isinstance(value, list):
            return any(regex.search(_text(item)) for item in value)
        return None if value is None else bool(regex.search(_text(value)))

    return _simple(key, f"{key} matches /{pattern}/", state, test)


def _two(args: Mapping[str, Any], state: State, claim: str) -> tuple[Fact, Fact] | Outcome:
    a, b = state.get(str(args["fact"])), state.get(str(args["other"]))
    missing = [k for k, f in ((str(args["fact"]), a), (str(args["other"]), b)) if f is None]
    if a is None or b is None:
        facts = tuple(f for f in (a, b) if f is not None)
        return _unknown(claim, *missing, facts=facts)
    return a, b


def p_facts_equal(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    claim = f"{args['fact']} equals {args['other']}"
    pair = _two(args, state, claim)
    if isinstance(pair, Outcome):
        return pair
    a, b = pair
    ok = _same(a.value, b.value)
    return Outcome(
        _truth(ok), f"{claim}: {'yes' if ok else 'no'} ({_text(a.value)}; {_text(b.value)})", pair
    )


def _version_in(value: object) -> Any:
    """The version a fact names: a version, or the tag of an image reference (repo:tag)."""

    if not isinstance(value, str):
        return None
    text = value.split("@", 1)[0]
    tag = text.rsplit(":", 1)[1] if ":" in text.rsplit("/", 1)[-1] else text
    return _version(tag)


def p_facts_same_version(args: Mapping[str, Any], state: State, kb: KnowledgeBase) -> Outcome:
    claim = f"{args['fact']} and {args['other']} name the same version"
    pair = _two(args, state, claim)
    if isinstance(pair, Outcome):
        return pair
    a, b = pair
    va, vb = _version_in(a.value), _version_in(b.value)
    if va is None or vb is None:
        bad = [f.key for f, v in ((a, va), (b, vb)) if v is None]
        return Outcome(
            Truth.UNKNOWN,
            f"{claim}: unknown ({', '.join(bad)} names no version)",
            pair,
            tuple(bad),
        )
    ok = bool(va == vb)
    return Outcome(
        _truth(ok), f"{claim}: {'yes' if ok else 'no'} ({_text(a.value)}; {_text(b.value)})", pair
    )
