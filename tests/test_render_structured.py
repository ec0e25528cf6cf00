"""JSON/YAML documents: schema_version 1, stable key order, plain values."""

from __future__ import annotations

import json

import yaml
from test_render_text import CHECK, PLAN

from upgradeplan.render import structured


def test_plan_to_dict_has_schema_version_and_a_stable_key_order() -> None:
    doc = structured.plan_to_dict(PLAN)
    assert list(doc) == [
        "schema_version",
        "state",
        "targets",
        "current",
        "held",
        "verdict",
        "blocked_by",
        "path",
        "stops",
        "pins",
        "direct",
        "state_findings",
        "steps",
    ]
    assert doc["schema_version"] == 1
    assert doc["path"] == {"platform": ["4.7.18", "4.7.19", "4.8.0"]}
    assert doc["pins"] == {"connectivity": ["4.7.18", "4.7.19", "4.8.0"]}


def test_findings_carry_evidence_with_sources_and_missing_facts() -> None:
    findings = [structured.finding_to_dict(f) for f in PLAN.direct.findings]
    first = findings[0]
    assert first["evidence"][0]["observed"] == [
        {"key": "pin.connectivity", "value": "4.7.18", "source": "clusters/prod/bom.yaml:9"}
    ]
    assert first["evidence"][0]["result"] == "true"
    assert findings[1]["missing"][0]["key"] == "object.Harness.kagent.kagent.exists"


def test_json_and_yaml_serialise_the_same_document() -> None:
    doc = structured.check_to_dict([CHECK], 3)
    as_json = structured.serialise(doc, "json")
    as_yaml = structured.serialise(doc, "yaml")
    assert json.loads(as_json) == yaml.safe_load(as_yaml) == json.loads(json.dumps(doc))
    assert structured.serialise(doc, "json") == as_json
