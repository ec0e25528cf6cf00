"""check/plan output formats, --fail-on, colour, and several cluster contexts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.cli import run_stdout
from support.fakeapi import FakeAPIFactory, fake_api
from support.sarif_schema import valid_sarif
from support.scenarios import S1_STATED, S3_VERSIONS, S8_STATED

from upgradeplan.cli import cli
from upgradeplan.model import KnowledgeBase

__all__ = ["fake_api"]  # the fixture, imported for pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "cluster"

# --------------------------------------------------------------------------- --fail-on


@pytest.mark.parametrize(
    ("fail_on", "expected"),
    [("blocking", 0), ("warning", 3), ("notice", 3), ("never", 0)],
)
def test_fail_on_lowers_the_bar_for_an_applying_warning(fail_on: str, expected: int) -> None:
    code, _ = run_stdout("check", *S1_STATED, "--to", "agent-platform=4.8.1", "--fail-on", fail_on)
    assert code == expected


def test_fail_on_warning_turns_a_may_apply_warning_into_undetermined() -> None:
    code, out = run_stdout(
        "check", *S3_VERSIONS, "--to", "agent-platform=4.8.0", "--fail-on", "warning", "-o", "json"
    )
    assert code == 4
    assert json.loads(out)["results"][0]["verdict"] == "undetermined"


def test_fail_on_never_exits_0_even_when_blocked() -> None:
    code, _ = run_stdout("check", *S1_STATED, "--to", "agent-platform=4.8.0", "--fail-on", "never")
    assert code == 0
    code, _ = run_stdout(
        "plan", *S8_STATED, "--to", "harness-delegate=0.31.2", "--fail-on", "never"
    )
    assert code == 0


def test_check_without_target_on_a_healthy_installation_is_safe() -> None:
    code, out = run_stdout(
        "check",
        "--installed",
        "agent-platform=4.8.1",
        "--pin",
        "agent-platform-connectivity=4.8.1",
        "--fact",
        "helmrelease.kagent.drift-detection=enabled",
        "--fact",
        "object.Harness.kagent.kagent.exists=true",
        "--fact",
        "kubernetes=1.35.0",
    )
    assert code == 0, out
    assert ": safe" in out.splitlines()[0]


# --------------------------------------------------------------------------- formats


def test_json_and_yaml_carry_the_same_document_and_are_deterministic() -> None:
    args = ["check", *S1_STATED, "--to", "agent-platform=4.8.0"]
    _, first = run_stdout(*args, "-o", "json")
    _, second = run_stdout(*args, "-o", "json")
    assert first == second
    _, as_yaml = run_stdout(*args, "-o", "yaml")
    assert yaml.safe_load(as_yaml) == json.loads(first)
    assert json.loads(first)["schema_version"] == 1


def test_plan_json_is_plan_to_dict_with_schema_version() -> None:
    code, out = run_stdout("plan", *S1_STATED, "--to", "agent-platform=4.8.1", "-o", "json")
    doc = json.loads(out)
    plan = doc["results"][0]["plan"]
    assert plan["schema_version"] == 1
    assert list(plan)[:4] == ["schema_version", "state", "targets", "current"]
    assert doc["exit_code"] == code


def test_sarif_output_is_a_sarif_log() -> None:
    code, out = run_stdout("check", *S1_STATED, "--to", "agent-platform=4.8.0", "-o", "sarif")
    assert code == 3
    doc = valid_sarif(out)
    assert doc["version"] == "2.1.0"
    rule_ids = {r["ruleId"] for run in doc["runs"] for r in run["results"]}
    assert "harness-handover-skipped" in rule_ids


def test_github_output_is_workflow_commands() -> None:
    code, out = run_stdout("check", *S1_STATED, "--to", "agent-platform=4.8.0", "-o", "github")
    assert code == 3
    assert any(
        line.startswith("::error ") and "harness-handover-skipped" in line
        for line in out.splitlines()
    )


def test_markdown_runbook_for_check_and_plan() -> None:
    code, out = run_stdout("plan", *S1_STATED, "--to", "agent-platform=4.8.0", "-o", "markdown")
    assert code == 0
    assert out.lstrip().startswith("#")
    assert "4.7.19" in out
    code, out = run_stdout("check", *S1_STATED, "--to", "agent-platform=4.8.0", "-o", "markdown")
    assert code == 3
    assert "4.7.19" in out


# --------------------------------------------------------------------------- colour


def test_no_colour_unless_asked_and_no_color_is_honoured() -> None:
    args = ["check", *S1_STATED, "--to", "agent-platform=4.8.0"]
    _, plain = run_stdout(*args)
    assert "\x1b[" not in plain
    _, coloured = run_stdout("--color", "always", *args)
    assert "\x1b[" in coloured
    _, auto = run_stdout(*args, env={"NO_COLOR": "1"})
    assert "\x1b[" not in auto
    _, never = run_stdout("--color", "never", *args)
    assert never == plain


# --------------------------------------------------------------------------- contexts


def test_each_context_gets_its_result_and_an_unreachable_one_exits_4(
    fake_api: FakeAPIFactory,
) -> None:
    prod = fake_api.start(FIXTURES / "s2")
    kubeconfig = fake_api.kubeconfig({"prod": prod, "down": None})
    code, out = run_stdout(
        "check",
        "--kubeconfig",
        kubeconfig,
        "--all-contexts",
        "--to",
        "agent-platform=4.8.1",
        "-o",
        "json",
    )
    doc = json.loads(out)
    by_name = {r["name"]: r for r in doc["results"]}
    assert set(by_name) == {"prod", "down"}
    assert by_name["prod"]["exit_code"] == 0
    assert by_name["down"]["exit_code"] == 4 and "down" in by_name["down"]["error"]
    assert code == 4
    code, text = run_stdout(
        "check", "--kubeconfig", kubeconfig, "--all-contexts", "--to", "agent-platform=4.8.1"
    )
    assert code == 4
    assert "[down]" in text and "[prod]" in text


def test_a_blocked_context_outranks_an_unreachable_one(fake_api: FakeAPIFactory) -> None:
    lab = fake_api.start(FIXTURES / "s1")
    kubeconfig = fake_api.kubeconfig({"lab": lab, "down": None})
    code, _ = run_stdout(
        "check", "--kubeconfig", kubeconfig, "--all-contexts", "--to", "agent-platform=4.8.0"
    )
    assert code == 3


def test_no_context_reachable_is_exit_1(fake_api: FakeAPIFactory) -> None:
    kubeconfig = fake_api.kubeconfig({"down": None})
    result = CliRunner().invoke(cli, ["check", "--kubeconfig", kubeconfig])
    assert result.exit_code == 1
    assert "down" in result.stderr


# --------------------------------------------------------------------------- inputs


def test_snapshot_from_stdin_merges_under_stated_flags() -> None:
    snapshot = (
        "schema_version: 1\nkind: upgradeplan-state\nname: piped\nfacts:\n"
        "  installed.agent-platform: {value: '4.7.18', source: 'piped'}\n"
        "  pin.agent-platform-connectivity: {value: '4.7.18', source: 'bom.yaml:9'}\n"
    )
    result = CliRunner().invoke(
        cli,
        [
            "check",
            "--state",
            "-",
            "--fact",
            "kubernetes=1.35.0",
            "--to",
            "agent-platform=4.8.1",
            "-o",
            "json",
        ],
        input=snapshot,
    )
    doc = json.loads(result.stdout)
    res = doc["results"][0]
    assert res["name"] == "piped + stated"
    assert res["current"]["agent-platform"] == "4.7.18"
    assert res["current"]["kubernetes"] == "1.35.0"


def test_to_latest_targets_the_newest_release_of_the_installed_product(kb: KnowledgeBase) -> None:
    from upgradeplan import releases

    newest = releases.latest(kb, "agent-platform")
    _, out = run_stdout(
        "plan", "--installed", "agent-platform=4.7.18", "--to", "latest", "-o", "json"
    )
    targets = json.loads(out)["results"][0]["plan"]["targets"]
    assert targets == [{"product": "agent-platform", "version": newest}]


def test_check_text_of_a_blocked_plan_does_not_call_its_path_recommended() -> None:
    code, out = run_stdout("check", *S8_STATED, "--to", "harness-delegate=0.31.2")
    assert code == 3
    assert "No safe path (blocked); the least-bad path:" in out
    assert "Recommended path" not in out
    assert "blocked by: delegate-needs-kubernetes-128" in out
