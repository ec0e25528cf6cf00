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
    from msgspec.structs import replace

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


# --------------------------------------------------------------------------- GitHub's upload rules


def github_accepts(text: str, root: str) -> dict[str, Any]:
    """The checks GitHub code scanning makes of an uploaded SARIF file, as its documentation
    ("SARIF support for code scanning", docs.github.com) states them, plus the SARIF 2.1.0
    schema where it is here:

    1. ``version`` is ``2.1.0`` and ``$schema`` names the 2.1.0 schema; ``runs`` is a list of
       at most 20 runs.
    2. Each run has ``tool.driver.name``; at most 25,000 rules and 25,000 results.
    3. Each run's category (``automationDetails.id``, up to its last ``/``) is unique for the
       same tool in one file: GitHub refuses several runs with the same tool and category.
    4. Each result has a ``ruleId`` (and a ``ruleIndex`` pointing at the rule with that id),
       ``message.text``, and ``locations`` with at least one and at most 1,000 entries.
    5. Each location has a ``physicalLocation`` whose ``artifactLocation.uri`` is a non-empty
       URI relative to the repository root (or ``file://`` inside the checkout) and a
       ``region.startLine`` of at least 1: results with only logical locations are refused.
    6. ``level`` is one of ``none``, ``note``, ``warning``, ``error``; ``partialFingerprints``
       values are strings.
    7. At most 20 tags per rule; the file is at most 10 MB gzip-compressed.
    And one of this project's: no string of the file holds the machine's absolute path of the
    repository (``root``).
    """
    import gzip

    assert len(gzip.compress(text.encode())) <= 10 * 1024 * 1024
    assert root not in text, "the machine's path leaks into the SARIF file"
    doc = valid_sarif(text)
    assert doc["version"] == "2.1.0" and "2.1.0" in doc["$schema"]
    runs = doc["runs"]
    assert 1 <= len(runs) <= 20
    categories = []
    for run in runs:
        driver = run["tool"]["driver"]
        assert driver["name"]
        rules = driver.get("rules", [])
        assert len(rules) <= 25_000 and len(run["results"]) <= 25_000
        for rule in rules:
            assert len(rule.get("properties", {}).get("tags", [])) <= 20
        ident = run.get("automationDetails", {}).get("id", "")
        categories.append((driver["name"], ident.rsplit("/", 1)[0]))
        for result in run["results"]:
            assert result["ruleId"] and result["message"]["text"]
            if "ruleIndex" in result:
                assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
            assert result.get("level", "warning") in ("none", "note", "warning", "error")
            assert all(isinstance(v, str) for v in result.get("partialFingerprints", {}).values())
            locations = result["locations"]
            assert 1 <= len(locations) <= 1000
            for loc in locations:
                physical = loc["physicalLocation"]
                uri = physical["artifactLocation"]["uri"]
                assert uri and not uri.startswith("/") and "://" not in uri, uri
                assert physical["region"]["startLine"] >= 1
    assert len(categories) == len(set(categories)), categories
    return doc


def _sarif_modes(tmp_path: Any) -> dict[str, tuple[str, list[str]]]:
    """Every output mode's SARIF: (working directory, arguments)."""
    import shutil

    from support.cli import git, s1_repo

    repo = s1_repo(tmp_path / "repo")
    oci = repo / "clusters/prod/agent-platform/ocirepository.yaml"
    oci.write_text(oci.read_text().replace('semver: "4.7.18"', 'semver: "4.8.0"'))
    multi = tmp_path / "multi"
    shutil.copytree(REPO / "tests/fixtures/gitops-layouts/monorepo", multi)
    git(multi, "init", "-q")
    git(multi, "add", ".")
    git(multi, "commit", "-q", "-m", "base")
    bom = multi / "platform/overlays/alpha/bom.yaml"
    bom.write_text(bom.read_text() + "\n")  # a change that moves nothing
    empty = tmp_path / "empty.yaml"
    empty.write_text("apiVersion: v1\nkind: List\nitems: []\n")
    stated = ["--installed", "agent-platform=4.7.18", "--pin", "agent-platform-connectivity=4.7.18"]
    facts = ["--fact", "kubernetes=1.35.0", "--fact", "object.Harness.kagent.kagent.exists=true"]
    return {
        "stated facts, as is": (str(repo), stated),
        "stated facts, --to": (str(repo), [*stated, *facts, "--to", "agent-platform=4.8.0"]),
        "gitops, as is": (str(repo), ["--gitops", "clusters/prod"]),
        "gitops, --to": (str(repo), ["--gitops", "clusters/prod", "--to", "agent-platform=4.7.19"]),
        "PR mode": (str(repo), ["--gitops", "clusters/prod", "--base", "HEAD", *facts]),
        "PR mode, untouched clusters": (str(multi), ["--gitops", ".", "--base", "HEAD"]),
        "several clusters, as is": (str(multi), ["--gitops", "."]),
        "empty snapshot, --to": (
            str(repo),
            ["--snapshot", str(empty), "--to", "agent-platform=4.8.0"],
        ),
        "bad input": (str(repo), ["--installed", "agent-platfrom=4.7.18"]),
    }


def test_every_output_mode_gives_sarif_github_accepts(tmp_path: Any, monkeypatch: Any) -> None:
    from support.cli import invoke

    for mode, (cwd, args) in _sarif_modes(tmp_path).items():
        monkeypatch.chdir(cwd)
        result = invoke("check", *args, "-o", "sarif")
        assert result.stdout, mode
        try:
            doc = github_accepts(result.stdout, str(tmp_path))
        except AssertionError as exc:
            raise AssertionError(f"{mode}: {exc}") from exc
        if mode.startswith("PR mode"):
            assert all(r["results"] is not None for r in doc["runs"])


def test_the_category_is_the_same_however_the_path_is_spelled(
    tmp_path: Any, monkeypatch: Any
) -> None:
    from support.cli import invoke, s1_repo

    repo = s1_repo(tmp_path / "repo")
    monkeypatch.chdir(repo / "clusters/prod")
    seen = set()
    for spelled in (".", "./", str(repo / "clusters/prod")):
        doc = github_accepts(
            invoke("check", "--gitops", spelled, "-o", "sarif").stdout, str(tmp_path)
        )
        seen.add(tuple(r["automationDetails"]["id"] for r in doc["runs"]))
    assert seen == {("upgradeplan/clusters/prod/",)}
