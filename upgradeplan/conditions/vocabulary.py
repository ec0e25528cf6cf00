"""The fixed predicate vocabulary: each name, its arguments, the facts it reads, its function.

Nothing from the knowledge is ever executed: a predicate name selects one entry of
:data:`PREDICATES`, and its arguments are plain data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from upgradeplan.conditions.objects import (
    p_container_arg,
    p_crd_policy,
    p_crd_stored_version,
    p_drift_detection,
    p_fact_contains,
    p_fact_equals,
    p_fact_in,
    p_fact_matches,
    p_facts_equal,
    p_facts_same_version,
    p_namespace_label,
    p_node_taint,
    p_object_annotation,
    p_object_exists,
    p_object_label,
    p_secret_type,
    p_storage_class_exists,
    p_tolerates,
)
from upgradeplan.conditions.objectsets import p_all_objects, p_any_object
from upgradeplan.conditions.outcome import (
    KeysFn,
    PredicateFn,
    PredicateSpec,
)
from upgradeplan.conditions.values import (
    p_value_contains,
    p_value_equals,
    p_value_in,
    p_value_set,
)
from upgradeplan.conditions.versions import (
    installed_class,
    p_app_version_matches,
    p_change_moves,
    p_component_range_admits,
    p_fact_version_below,
    p_pin_exact,
    p_pin_kind,
    p_pin_resolves_below,
    p_version_at_least,
    p_version_below,
    p_version_matches,
    pin_kind,
)


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
_OBJ_TESTS = ("namespace", "empty", "equals", "matches")


def _objects_keys(args: Mapping[str, Any]) -> list[str]:
    kind, ns = args["kind"], args.get("namespace", "<namespace>")
    return [f"object.{kind}", f"object.{kind}.{ns}.<name>.{args['field']}"]


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
            "crd_policy",
            ("helmrelease", "action", "policy"),
            (),
            _keys("helmrelease.{helmrelease}.crds"),
            p_crd_policy,
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
        _spec(
            "app_version_matches",
            ("product", "range"),
            ("version",),
            _component_keys,
            p_app_version_matches,
            ("version",),
        ),
        _spec("value_set", ("product", "key"), (), _value_keys, p_value_set),
        _spec("value_equals", ("product", "key", "value"), (), _value_keys, p_value_equals),
        _spec("value_in", ("product", "key", "values"), (), _value_keys, p_value_in),
        _spec("value_contains", ("product", "key", "value"), (), _value_keys, p_value_contains),
        _spec("fact_matches", ("fact", "pattern"), (), _keys("{fact}"), p_fact_matches),
        _spec("facts_equal", ("fact", "other"), (), _keys("{fact}", "{other}"), p_facts_equal),
        _spec(
            "facts_same_version",
            ("fact", "other"),
            (),
            _keys("{fact}", "{other}"),
            p_facts_same_version,
        ),
        _spec("any_object", ("kind", "field"), _OBJ_TESTS, _objects_keys, p_any_object),
        _spec("all_objects", ("kind", "field"), _OBJ_TESTS, _objects_keys, p_all_objects),
        _spec("change_moves", ("product",), (), _keys("change.{product}"), p_change_moves),
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

# Per predicate whose truth depends on a class of its facts' values alone (every value of one
# class gives the same truth, with the same arguments and the other facts alike): that class
# of a value. The planner keeps such a predicate's truth by the class (a pin moved from one
# exact version to another is not judged again); any other predicate's by the value itself.
VALUE_CLASS: dict[str, Callable[[Any], Any]] = {
    "pin_exact": pin_kind,  # the kind of the pin: none, exact or range
    "pin_kind": pin_kind,
}

# Per predicate whose truth depends, with the same arguments, on a class of the value of the
# one fact it reads (``installed.<product>``), computed from the arguments and the value: the
# planner keeps its truth by that class, so that along a window a version comparison is judged
# again only where it turns.
ARG_CLASS: dict[str, Callable[[Mapping[str, Any], Any], Any]] = {
    name: functools.partial(installed_class, name)
    for name in ("version_below", "version_at_least", "version_matches")
}
