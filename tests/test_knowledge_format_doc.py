"""docs/knowledge-format.md documents every property of every JSON Schema, strictly.

The rules:

1. every top-level property of a kind appears as a YAML key (``key:``, possibly commented
   out as ``# key:``) in the YAML example of that kind's section (``## Product`` …);
2. every property anywhere in a schema (nested objects, ``$defs``, predicate arguments)
   appears in the doc as a YAML key of an example or in backticks;
3. every enumerated value appears in backticks or in a YAML example;
4. the predicate table has one row per predicate of the schema, whose backticked
   arguments are exactly the schema's, optional ones (only those) marked ``?``;
5. the checks table lists exactly the catalogue's codes with their severities.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from upgradeplan.kb.problems import CATALOGUE
from upgradeplan.kb.schema import KINDS, load_schema

DOC = Path(__file__).resolve().parents[1] / "docs" / "knowledge-format.md"
TEXT = DOC.read_text(encoding="utf-8")
YAML_BLOCKS = re.findall(r"```yaml\n(.*?)```", TEXT, flags=re.S)
# `name` or `name?` (an optional predicate argument)
BACKTICKED = {t.removesuffix("?") for t in re.findall(r"`([^`\n]+)`", TEXT)}
YAML_KEYS = {
    m.group(1)
    for block in YAML_BLOCKS
    for m in re.finditer(r"(?:^|[\s{,\-#])([A-Za-z_][\w.-]*):(?:\s|$)", block, flags=re.M)
}


def section(title: str) -> str:
    m = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", TEXT, flags=re.S | re.M)
    assert m, f"no '## {title}' section in {DOC.name}"
    return m.group(1)


def properties(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(schema path, property name) for every property declared anywhere in a schema."""
    if isinstance(node, dict):
        for name in node.get("properties", {}):
            yield f"{path}/properties/{name}", name
        for key, value in node.items():
            yield from properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from properties(value, f"{path}/{i}")


def enums(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for value in node.get("enum", ()):
            if isinstance(value, str):
                yield value
        for value in node.values():
            yield from enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from enums(value)


@pytest.mark.parametrize("kind", KINDS)
def test_every_top_level_property_is_a_key_of_the_kind_example(kind: str) -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", section(kind.capitalize()), flags=re.S)
    assert blocks, f"the {kind} section has no YAML example"
    example = "\n".join(blocks)
    missing = [
        name
        for name in load_schema(kind)["properties"]
        if not re.search(rf"^\s*(?:#\s*)?(?:- )?{re.escape(name)}:", example, flags=re.M)
    ]
    assert missing == [], f"{kind} example lacks {missing}"


@pytest.mark.parametrize("kind", KINDS)
def test_every_property_anywhere_is_documented(kind: str) -> None:
    missing = sorted(
        {
            f"{name} ({path})"
            for path, name in properties(load_schema(kind))
            if name not in YAML_KEYS and name not in BACKTICKED
        }
    )
    assert missing == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_enumerated_value_is_documented(kind: str) -> None:
    yaml_text = "\n".join(YAML_BLOCKS)
    missing = sorted(
        value
        for value in set(enums(load_schema(kind)))
        if value not in BACKTICKED
        and not re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", yaml_text)
    )
    assert missing == []


def predicate_rows() -> dict[str, str]:
    rows = {}
    table = section("Hazard").split("### Predicates", 1)[1]
    for line in table.splitlines():
        m = re.match(r"^\| `([a-z_]+)` \| ([^|]*) \|", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_the_predicate_table_matches_the_schema() -> None:
    specs = load_schema("hazard")["$defs"]["predicates"]
    rows = predicate_rows()
    assert sorted(rows) == sorted(specs)
    for name, cell in rows.items():
        spec = specs[name]
        tokens = re.findall(r"`([a-z_]+)(\?)?`", cell)
        documented = {arg for arg, _ in tokens}
        assert documented == set(spec["properties"]), name
        required = set(spec.get("required", ()))
        alternatives = {r for alt in spec.get("oneOf", ()) for r in alt.get("required", ())}
        for arg, optional in tokens:
            if optional:
                assert arg not in required and arg not in alternatives, (
                    f"{name}.{arg} is not optional"
                )
            else:
                assert arg in required or arg in alternatives, (
                    f"{name}.{arg} is optional: mark it ?"
                )


def test_the_checks_table_matches_the_catalogue() -> None:
    rows = re.findall(
        r"^\| `(KB\d{3})` \| (error|warning) \|",
        section(r"Checks \(`upgradeplan kb lint`\)"),
        flags=re.M,
    )
    assert rows == [(c.code, c.severity) for c in CATALOGUE]
