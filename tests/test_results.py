"""results: the verdict every output prints for a state with nothing to judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from upgradeplan.cli import cli
from upgradeplan.kb.loader import load
from upgradeplan.model import Fact, State, Target
from upgradeplan.planner.judge import Judgement, check
from upgradeplan.provenance import flag
from upgradeplan.results import exit_of

_PODINFO = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
    "metadata: {name: podinfo, namespace: default}\n"
    "spec:\n  chart:\n    spec: {chart: podinfo, version: 6.7.0,"
    " sourceRef: {kind: HelmRepository, name: podinfo}}\n"
)


def _check(tree: Path, output: str) -> str:
    result = CliRunner().invoke(cli, ["check", "--gitops", str(tree), "-o", output])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture
def no_known_product(tmp_path: Path) -> Path:
    (tmp_path / "podinfo.yaml").write_text(_PODINFO, encoding="utf-8")
    return tmp_path


def test_json_and_sarif_say_nothing_to_judge_not_safe(no_known_product: Path) -> None:
    doc = json.loads(_check(no_known_product, "json"))
    assert [r["verdict"] for r in doc["results"]] == ["nothing-to-judge"]
    assert doc["exit_code"] == 0
    props = json.loads(_check(no_known_product, "sarif"))["runs"][0]["properties"]
    assert props["verdict"] == "nothing-to-judge" and "recommended_verdict" not in props


def test_github_and_pr_comment_never_claim_safe(no_known_product: Path) -> None:
    github = _check(no_known_product, "github")
    assert "verdict nothing-to-judge (exit 0)" in github and "safe" not in github
    comment = _check(no_known_product, "markdown")
    assert "### upgradeplan check: **nothing-to-judge** (exit 0)" in comment
    assert "safe" not in comment and "No known hazard" not in comment
    assert "No product of the knowledge base is installed here." in comment


def test_an_installed_product_is_still_judged() -> None:
    """A state holding a known product keeps its own verdict (here undetermined: the facts
    its hazards read were not stated)."""
    result = CliRunner().invoke(cli, ["check", "--installed", "agent-platform=4.8.1", "-o", "json"])
    assert result.exit_code == 4, result.output
    assert [r["verdict"] for r in json.loads(result.stdout)["results"]] == ["undetermined"]


def test_a_verdict_becomes_its_exit_code_in_one_place() -> None:
    codes = {v: exit_of(v) for v in ("safe", "safe-with-actions", "blocked", "undetermined")}
    assert codes == {"safe": 0, "safe-with-actions": 0, "blocked": 3, "undetermined": 4}
    assert {exit_of(v, "never") for v in codes} == {0}


def test_the_planner_judges_without_an_exit_code() -> None:
    fact = Fact("installed.agent-platform", "4.7.18", flag("--installed"))
    judged = check(load(), State(facts={fact.key: fact}), [Target("agent-platform", "4.8.0")])
    assert isinstance(judged, Judgement)
    assert not hasattr(judged, "exit_code")
