"""Every SARIF log the tests produce is validated against the SARIF 2.1.0 schema in
../shared/conformance (skipped only when that folder does not exist)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conftest import SHARED_CONFORMANCE


def schema_path() -> Path:
    """The schema; ``UPGRADEPLAN_SARIF_SCHEMA`` points elsewhere (a checkout outside the tree)."""
    override = os.environ.get("UPGRADEPLAN_SARIF_SCHEMA")
    return Path(override) if override else SHARED_CONFORMANCE / "sarif-schema-2.1.0.json"


def valid_sarif(text: str) -> dict[str, Any]:
    """Parse a SARIF log and validate it against the 2.1.0 schema (when the schema is here)."""
    doc = json.loads(text)
    assert isinstance(doc, dict)
    if schema_path().is_file():
        import jsonschema

        jsonschema.Draft4Validator(json.loads(schema_path().read_text())).validate(doc)
    return doc
