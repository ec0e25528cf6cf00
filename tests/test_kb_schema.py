"""The schemas ship as package data and load as the JSON they are."""

from __future__ import annotations

import json
from pathlib import Path

from upgradeplan.kb.schema import KINDS, load_schema

SCHEMAS = Path(__file__).resolve().parent.parent / "upgradeplan" / "schemas"


def test_every_schema_loads_as_its_json() -> None:
    for kind in KINDS:
        assert load_schema(kind) == json.loads((SCHEMAS / f"{kind}.json").read_text("utf-8"))
