"""SARIF 2.1.0: valid against the OASIS schema, findings at the pin's file and line."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import REPO, fixture_path
from support.plans import github_text, sarif_text
from support.sarif_schema import schema_path, valid_sarif
from support.sources import at

from upgradeplan.model import Evidence, Finding, Jump, Plan, Target, Truth
from upgradeplan.render import github


def _finding(hazard: str, severity: str, status: str, location: str = "") -> Finding:
    return Finding(
        hazard=hazard,
        title=f"{hazard} title",
        severity=severity,  # type: ignore[arg-type]
        scope="skip",
        status=status,  # type: ignore[arg-type]
        product="agent-platform",
        from_version="4.7.18",
        to_version="4.8.0",
        evidence=(Evidence("version_below", "connectivity below 4.7.19", Truth.TRUE),),
        consequence="The Harness\nis deleted.",
        avoid="Stop at 4.7.19.",
        location=at(location) if location else None,
        reason="applies: the hop skips 4.7.19",
    )


def _plan(*findings: Finding) -> Plan:
    return Plan(
        schema_version=1,
        targets=(Target("agent-platform", "4.8.0"),),
        current={"agent-platform": "4.7.18"},
        direct=Jump(findings=findings, verdict="blocked"),
        steps=(),
        verdict="safe-with-actions",
    )


PLAN = _plan(
    _finding("harness-handover-skipped", "blocking", "applies", "clusters/prod/bom.yaml:12"),
    _finding("no-drift-detection-on-480", "warning", "may-apply"),
    _finding("harness-gap-skipping-to-481", "warning", "does-not-apply"),
)


def _log(plan: Plan = PLAN) -> dict[str, Any]:
    return valid_sarif(sarif_text(plan))


def test_validates_against_the_sarif_schema() -> None:
    if not schema_path().is_file():
        pytest.skip(f"SARIF schema not found at {schema_path()} (../shared/conformance is absent)")
    import jsonschema

    schema = json.loads(schema_path().read_text())
    jsonschema.Draft4Validator(schema).validate(_log())
    jsonschema.Draft4Validator(schema).validate(_log(_plan()))  # no findings at all


def test_structure_results_rules_and_locations() -> None:
    doc = _log()
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    # does-not-apply findings are not reported
    assert [r["ruleId"] for r in results] == [
        "harness-handover-skipped",
        "no-drift-detection-on-480",
    ]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    first, second = results
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "clusters/prod/bom.yaml"
    assert loc["region"]["startLine"] == 12
    assert (first["kind"], first["level"]) == ("fail", "error")
    # may apply: "review", whose level must be "none" (SARIF §3.27.9)
    assert (second["kind"], second["level"]) == ("review", "none")
    # no file of its own: shown at its product's pin
    assert second["locations"][0]["physicalLocation"]["region"]["startLine"] == 12
    bare = valid_sarif(sarif_text(_plan(_finding("x", "warning", "applies"))))
    # no file read at all (stated facts): code scanning refuses a result without a physical
    # location, so it is shown at the repository's accepted-risk file, line 1
    bare_loc = bare["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert bare_loc["artifactLocation"]["uri"] == ".upgradeplan.yaml"
    assert bare_loc["region"]["startLine"] == 1
    rule = rules[first["ruleIndex"]]
    assert "Stop at 4.7.19." in rule["help"]["text"]
    assert rule["defaultConfiguration"]["level"] == "error"
    assert "\n" not in first["message"]["text"]


def test_output_is_deterministic() -> None:
    assert sarif_text(PLAN) == sarif_text(PLAN)


def test_check_on_gitops_files_points_at_the_pin_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from upgradeplan.cli import cli

    monkeypatch.chdir(REPO)
    fixture = fixture_path("gitops", "s1").relative_to(REPO)
    result = CliRunner().invoke(
        cli,
        [
            "check",
            "--gitops",
            str(fixture),
            # GitOps files cannot show the Harness; without it the handover hazard only may apply
            "--fact",
            "object.Harness.kagent.kagent.exists=true",
            "--fact",
            "object.Harness.kagent.kagent.annotations=",
            "--to",
            "agent-platform=4.8.0",
            "-o",
            "sarif",
        ],
    )
    assert result.exit_code == 3, result.output
    doc = valid_sarif(result.stdout)
    located = {
        r["ruleId"]: r["locations"][0].get("physicalLocation") for r in doc["runs"][0]["results"]
    }
    loc = located["harness-handover-skipped"]
    assert loc is not None
    assert loc["artifactLocation"]["uri"] == "tests/fixtures/gitops/s1/bom.yaml"
    bom_lines = (fixture / "bom.yaml").read_text().splitlines()
    assert '"4.7.18"' in bom_lines[loc["region"]["startLine"] - 1]


def test_github_annotations() -> None:
    out = github_text(PLAN).splitlines()
    assert out[0].startswith(
        "::error file=clusters/prod/bom.yaml,line=12,title=harness-handover-skipped "
        "(blocking%2C applies)::"
    )
    assert "%0A" in out[0] and "\n" not in out[0]
    assert out[1].startswith(
        "::notice file=clusters/prod/bom.yaml,line=12,title=no-drift-detection-on-480 "
        "(warning%2C may apply)::"
    )
    assert out[-1].startswith("::error title=upgradeplan::upgradeplan: verdict blocked (exit 3)")
    assert len(out) == 3


def test_github_escapes_data_and_properties() -> None:
    assert github.escape_data("50%\nx\r") == "50%25%0Ax%0D"
    assert github.escape_property("a:b,c") == "a%3Ab%2Cc"


def test_a_finding_without_a_file_is_shown_at_its_products_pin() -> None:
    """Code scanning needs a file location on every result: borrow the product's."""
    doc = valid_sarif(
        sarif_text(
            _plan(
                _finding("harness-handover-skipped", "blocking", "applies", "bom.yaml:9"),
                _finding("no-drift-detection-on-480", "warning", "applies"),
            )
        )
    )
    locs = [r["locations"][0]["physicalLocation"] for r in doc["runs"][0]["results"]]
    assert [(x["artifactLocation"]["uri"], x["region"]["startLine"]) for x in locs] == [
        ("bom.yaml", 9),
        ("bom.yaml", 9),
    ]


def test_github_summary_of_a_blocked_plan_names_what_blocks_it() -> None:
    from dataclasses import replace

    from upgradeplan.model import Step

    step = Step("agent-platform", "4.7.18", "4.8.1", verdict="blocked")
    blocked = replace(
        PLAN, steps=(step,), verdict="blocked", blocked_by=("harness-handover-skipped",)
    )
    summary = github_text(blocked).splitlines()[-1]
    assert "no safe path (harness-handover-skipped)" in summary
    assert "recommended" not in summary
    safe = replace(PLAN, steps=(replace(step, verdict="safe"),), verdict="safe")
    assert (
        "recommended path agent-platform: 4.7.18 → 4.8.1 (safe)"
        in github_text(safe).splitlines()[-1]
    )
