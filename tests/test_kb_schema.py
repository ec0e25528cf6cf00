"""The schemas' JSON read by the C scanner is what ``json.loads`` reads, errors included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from upgradeplan.kb.schema import KINDS, json_loads, load_schema

SCHEMAS = Path(__file__).resolve().parent.parent / "upgradeplan" / "schemas"


def test_every_schema_reads_as_json_loads_reads_it() -> None:
    files = sorted(SCHEMAS.glob("*.json"))
    assert len(files) >= len(KINDS)
    for path in files:
        text = path.read_text(encoding="utf-8")
        got = json_loads(text)
        assert got == json.loads(text) and json.dumps(got) == json.dumps(json.loads(text))
    for kind in KINDS:
        assert load_schema(kind) == json.loads((SCHEMAS / f"{kind}.json").read_text("utf-8"))


@pytest.mark.parametrize(
    "text",
    [
        ' \n [1, 2.5, -3e2, "a\\u00e9\\n", true, false, null, {"a": {}, "b": []}] \n',
        '{"a": NaN, "b": -Infinity}',
        "0",
        '"x"',
    ],
)
def test_values_read_as_json_loads_reads_them(text: str) -> None:
    assert repr(json_loads(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", ["[1,]", '{"a" 1}', "[1] x", "", "  ", '"\x01"', "[1"])
def test_bad_json_gives_json_loads_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        json_loads(text)
    assert str(got.value) == str(expected.value)
