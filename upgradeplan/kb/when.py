"""`when:` YAML -> :class:`upgradeplan.model.Condition` trees.

``{all: [..]}`` / ``{any: [..]}`` -> op all/any; ``{not: {..}}`` -> op not with one child;
``{<predicate>: {args}}`` -> op pred. The predicate vocabulary and each predicate's arguments
come from the hazard JSON Schema (:func:`upgradeplan.kb.schema.predicate_specs`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from upgradeplan.kb.schema import json_type_ok, predicate_specs
from upgradeplan.model import Condition, Location
from upgradeplan.yamlload import LineDict, LineList, line_of

# report(code, path, message) — path is relative to the document root
Report = Callable[[str, tuple[Any, ...], str], None]


def parse_condition(
    node: Any, doc: Any, path: tuple[Any, ...], file: str, report: Report
) -> Condition | None:
    """Build the condition at ``path`` of ``doc``; report problems; None when unusable."""
    if not isinstance(node, dict) or len(node) != 1:
        report(
            "KB002",
            path,
            "a condition is a mapping with exactly one key (all, any, not or a predicate)",
        )
        return None
    ((key, value),) = node.items()
    location = Location(file, node.line if isinstance(node, LineDict) else line_of(doc, path))
    sub = (*path, key)
    if key in ("all", "any"):
        if not isinstance(value, list) or not value:
            report("KB002", sub, f"`{key}` takes a non-empty list of conditions")
            return None
        children = [
            parse_condition(item, doc, (*sub, i), file, report) for i, item in enumerate(value)
        ]
        if any(c is None for c in children):
            return None
        return Condition(key, tuple(c for c in children if c is not None), location=location)
    if key == "not":
        child = parse_condition(value, doc, sub, file, report)
        return None if child is None else Condition("not", (child,), location=location)
    specs = predicate_specs()
    spec = specs.get(key) if isinstance(key, str) else None
    if spec is None:
        import difflib  # only for a misspelt predicate

        close = difflib.get_close_matches(str(key), list(specs), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(specs))}"
        report("KB018", sub, f"unknown predicate {key!r}{hint}")
        return None
    if not isinstance(value, dict):
        report(
            "KB018",
            sub,
            f"predicate {key!r} takes a mapping ({_shape(spec.required, spec.optional)})",
        )
        return None
    ok = True
    missing = [a for a in spec.required if a not in value]
    if missing:
        report(
            "KB018",
            sub,
            f"predicate {key!r} is missing argument {', '.join(map(repr, missing))} "
            f"({_shape(spec.required, spec.optional)})",
        )
        ok = False
    unknown = [str(a) for a in value if a not in spec.required and a not in spec.optional]
    if unknown:
        report(
            "KB018",
            sub,
            f"predicate {key!r} has no argument {', '.join(map(repr, unknown))} "
            f"({_shape(spec.required, spec.optional)})",
        )
        ok = False
    for arg, types in spec.types.items():
        if arg in value and not json_type_ok(value[arg], types):
            got = value[arg]
            hint = "; quote it" if "string" in types and isinstance(got, (int, float, bool)) else ""
            report(
                "KB002",
                (*sub, arg),
                f"{key}.{arg}: {got!r} is not of type {' or '.join(types)}{hint}",
            )
            ok = False
    if not ok:
        return None
    return Condition("pred", predicate=key, args=_plain(value), location=location)


def _shape(required: tuple[str, ...], optional: tuple[str, ...]) -> str:
    return "arguments: " + ", ".join([*required, *(f"{o}?" for o in optional)])


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, LineList | list):
        return [_plain(v) for v in value]
    return value
