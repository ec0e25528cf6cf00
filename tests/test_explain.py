"""explain: a knowledge entry, and with a state the evidence of each condition."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support.cli import run
from support.scenarios import S1_STATED

from upgradeplan.cli import cli

EXPECTED_OBSERVED = [
    ("installed.agent-platform-connectivity", "4.7.18", "derived: exact pin (flag --pin)"),
    ("helmrelease.kagent.drift-detection", "disabled", "flag --fact"),
    ("object.Harness.kagent.kagent.annotations", "{}", "flag --fact"),
]


def test_explain_hazard_alone_shows_the_knowledge() -> None:
    code, out = run("explain", "harness-handover-skipped")
    assert code == 0
    assert "Skipping 4.7.19" in out
    assert "knowledge/hazards/harness-handover-skipped.yaml" in out
    assert "forced-reconcile-kagent" in out
    assert "observed" not in out


def test_explain_with_scenario_1_facts_shows_each_condition_with_value_and_source() -> None:
    code, out = run("explain", "harness-handover-skipped", *S1_STATED)
    assert code == 0
    assert out.count("  condition ") == 3
    for key, value, source in EXPECTED_OBSERVED:
        assert f"observed {key} = {value} (from {source})" in out


def test_explain_with_a_hop_reports_the_status() -> None:
    code, out = run(
        "explain", "harness-handover-skipped", *S1_STATED, "--to", "agent-platform=4.8.0"
    )
    assert code == 0
    assert "(4.7.18 → 4.8.0): applies" in out


def test_explain_json_carries_the_same_evidence() -> None:
    code, out = run("explain", "harness-handover-skipped", *S1_STATED, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema_version"] == 1 and doc["kind"] == "hazard"
    assert doc["truth"] == "true"
    observed = {
        (o["key"], o["value"], o["source"]) for c in doc["conditions"] for o in c["observed"]
    }
    for item in EXPECTED_OBSERVED:
        assert item in observed
    assert len(doc["conditions"]) == 3


def test_explain_missing_facts_say_how_to_supply_them() -> None:
    code, out = run(
        "explain", "harness-handover-skipped", "--installed", "agent-platform=4.7.18", "-o", "json"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["truth"] == "unknown"
    missing = {m["key"]: m["how"] for c in doc["conditions"] for m in c["missing"]}
    assert "helmrelease.kagent.drift-detection" in missing
    assert (
        "--fact helmrelease.kagent.drift-detection="
        in missing["helmrelease.kagent.drift-detection"]
    )


def test_explain_release_migration_and_product() -> None:
    code, out = run("explain", "agent-platform@4.7.19")
    assert code == 0 and "agent-platform@4.7.19" in out
    code, out = run("explain", "forced-reconcile-kagent")
    assert code == 0 and "Fixes:" in out and "harness-missing-on-480" in out
    code, out = run("explain", "harness-delegate")
    assert code == 0 and "delegate-token-secret-type" in out


def test_explain_unknown_id_suggests_near_names() -> None:
    result = CliRunner().invoke(cli, ["explain", "harness-handover-skiped"])
    assert result.exit_code == 2
    assert "harness-handover-skipped" in result.output
    assert "Traceback" not in result.output
