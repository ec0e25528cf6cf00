"""The JSON Schemas of the knowledge files (package data) and full validation for lint.

``jsonschema`` is imported only inside :func:`validate`; the loader uses the schemas'
property lists and predicate table, which are plain JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import cache
from typing import Any

from msgspec import Struct

KINDS: tuple[str, ...] = ("product", "release", "hazard", "migration")


@cache
def load_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one kind of knowledge file."""
    # the package's own directory, not importlib.resources (see kb.loader.bundled_dir)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "schemas", f"{kind}.json"), encoding="utf-8") as f:
        text = f.read()
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def top_level_properties(kind: str) -> frozenset[str]:
    return frozenset(load_schema(kind)["properties"])


class PredicateSpec(Struct, frozen=True):
    """The argument shape of one predicate, as the hazard schema states it."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    description: str
    # argument -> the JSON types it may have ("string", "array", …); absent = any
    types: dict[str, tuple[str, ...]]


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "array": (list,),
    "object": (dict,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "null": (type(None),),
}


def json_type_ok(value: object, types: tuple[str, ...]) -> bool:
    """Whether ``value`` has one of the JSON ``types`` (bool is not an integer)."""
    for t in types:
        if isinstance(value, _PY_TYPES[t]) and not (
            isinstance(value, bool) and t in ("integer", "number")
        ):
            return True
    return False


def _types_of(prop: dict[str, Any], defs: dict[str, Any]) -> tuple[str, ...]:
    while "$ref" in prop and "type" not in prop:
        prop = defs[prop["$ref"].rsplit("/", 1)[1]]
    t = prop.get("type")
    if isinstance(t, str):
        return (t,)
    if isinstance(t, list):
        return tuple(t)
    if "enum" in prop:
        return ("string",)
    return ()


@cache
def predicate_specs() -> dict[str, PredicateSpec]:
    """The fixed predicate vocabulary of `when`, read from the hazard schema."""
    schema = load_schema("hazard")
    defs = schema["$defs"]
    out: dict[str, PredicateSpec] = {}
    for name, spec in defs["predicates"].items():
        required = tuple(spec.get("required", ()))
        optional = tuple(p for p in spec["properties"] if p not in required)
        types = {arg: t for arg, prop in spec["properties"].items() if (t := _types_of(prop, defs))}
        out[name] = PredicateSpec(name, required, optional, spec.get("description", ""), types)
    return out


class SchemaError(Struct, frozen=True):
    path: tuple[str | int, ...]
    message: str


@cache
def _validator(kind: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(kind))


def validate(data: Any, kind: str) -> Iterator[SchemaError]:
    """Every schema violation of ``data`` (deepest, most specific first per branch)."""
    from jsonschema.exceptions import best_match

    for error in _validator(kind).iter_errors(data):
        if list(error.relative_schema_path)[:1] == ["allOf"] and not error.absolute_path:
            # the hazard's scope/parameter pairing (top-level allOf of if/then): the loader
            # reports it at the offending key with a plain message, which always runs
            continue
        err = error
        if error.context:
            # oneOf/anyOf: report the sub-error that is most telling
            err = best_match(error.context)
        path = tuple(err.absolute_path)
        if err.validator == "additionalProperties" and isinstance(err.instance, dict):
            allowed = err.schema.get("properties", {})
            extra = [k for k in err.instance if k not in allowed]
            if extra:  # point at the first unexpected key, not at its parent
                path = (*path, extra[0])
        yield SchemaError(path, _message(err))


def _message(err: Any) -> str:
    where = ".".join(str(p) for p in err.absolute_path)
    prefix = f"{where}: " if where else ""
    validator = err.validator
    instance = err.instance
    if (
        validator == "type"
        and err.validator_value == "string"
        and isinstance(instance, (int, float, bool))
    ):
        kind = type(instance).__name__
        return f"{prefix}{instance!r} is not a string; quote it (YAML read it as a {kind})"
    if validator in ("minProperties", "maxProperties") and isinstance(instance, dict):
        keys = ", ".join(map(str, instance)) or "none"
        return (
            f"{prefix}a condition has exactly one key (all, any, not or a predicate); found: {keys}"
        )
    if validator == "additionalProperties" and isinstance(instance, dict):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(str(k) for k in instance if k not in allowed)
        if allowed and extra:
            names = ", ".join(map(repr, extra))
            return f"{prefix}unknown property {names}; allowed: {', '.join(sorted(allowed))}"
    message = str(err.message)
    if len(message) > 200:  # jsonschema quotes the whole instance; keep the line readable
        message = message[:160] + " …"
    return f"{prefix}{message}"
