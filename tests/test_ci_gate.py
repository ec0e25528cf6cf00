"""check as a CI gate: accepted risks, SARIF for code scanning, -o github, the PR comment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from support.cli import invoke, s1_repo
from support.fakeapi import FakeAPIFactory, fake_api
from support.sarif_schema import valid_sarif

__all__ = ["fake_api"]  # the fixture, imported for pytest

GITOPS = REPO / "tests" / "fixtures" / "gitops"
CLUSTER = REPO / "tests" / "fixtures" / "cluster"
GOLDEN = REPO / "tests" / "golden"
# S1 stated: the skip of 4.7.19 applies (blocking): exit 3
S1 = [
    "--installed", "agent-platform=4.7.18",
    "--pin", "agent-platform-connectivity=4.7.18",
    "--fact", "helmrelease.kagent.drift-detection=disabled",
    "--fact", "object.Harness.kagent.kagent.exists=true",
    "--fact", "object.Harness.kagent.kagent.annotations=",
    "--fact", "kubernetes=1.35.0",
    "--to", "agent-platform=4.8.0",
]  # fmt: skip
HARNESS_UNPROTECTED = [
    "--fact", "object.Harness.kagent.kagent.exists=true",
    "--fact", "object.Harness.kagent.kagent.annotations=",
    "--fact", "kubernetes=1.35.0",
]  # fmt: skip


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The CLI in a subprocess (its own working directory), as CI runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "upgradeplan", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def _accept_file(path: Path, expires: str = "2999-12-31", hazard: str = "harness-handover-skipped",
                 extra: str = "") -> Path:  # fmt: skip
    path.write_text(
        "# accepted risks of this repository\n"
        "accept:\n"
        f"  - hazard: {hazard}\n"
        "    product: agent-platform\n"
        '    versions: ">=4.8.0"\n'
        "    reason: the Harness is recreated by our own controller\n"
        "    owner: platform-team\n"
        f"    expires: {expires}\n" + extra,
        encoding="utf-8",
    )
    return path


# --------------------------------------------------------------------------- accepted risks


def test_an_acceptance_turns_a_blocked_check_into_exit_0_shown_as_accepted(tmp_path: Path) -> None:
    acc = str(_accept_file(tmp_path / "accept.yaml"))
    assert invoke("check", *S1, "--accept-file", "").exit_code == 3
    result = invoke("check", *S1, "--accept-file", acc)
    assert result.exit_code == 0, result.output
    assert "Accepted risks" in result.stdout
    assert "harness-handover-skipped" in result.stdout.split("Accepted risks")[1]
    assert "the Harness is recreated by our own controller" in result.stdout
    doc = json.loads(invoke("check", *S1, "--accept-file", acc, "-o", "json").stdout)
    entry = doc["results"][0]
    assert (doc["exit_code"], entry["verdict"]) == (0, "safe-with-actions")
    assert "harness-handover-skipped" not in {f["hazard"] for f in entry["findings"]}
    [accepted] = entry["accepted"]
    assert accepted["hazard"] == "harness-handover-skipped"
    assert accepted["acceptance"]["owner"] == "platform-team"
    assert accepted["acceptance"]["source"].endswith("accept.yaml:3")
    md = invoke("check", *S1, "--accept-file", acc, "-o", "markdown").stdout
    assert "| accepted | `harness-handover-skipped`" in md


def test_sarif_carries_the_suppression_with_its_justification(tmp_path: Path) -> None:
    acc = str(_accept_file(tmp_path / "accept.yaml"))
    result = invoke("check", *S1, "--accept-file", acc, "-o", "sarif")
    assert result.exit_code == 0
    run = valid_sarif(result.stdout)["runs"][0]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    [suppression] = by_rule["harness-handover-skipped"]["suppressions"]
    assert suppression["kind"] == "external"
    assert suppression["status"] == "accepted"
    assert "the Harness is recreated by our own controller" in suppression["justification"]
    assert "platform-team" in suppression["justification"]
    assert suppression["location"]["physicalLocation"]["region"]["startLine"] == 3


def test_an_expired_acceptance_fails_the_gate_naming_it(tmp_path: Path) -> None:
    acc = str(_accept_file(tmp_path / "accept.yaml", expires="2020-01-31"))
    result = invoke("check", *S1, "--accept-file", acc)
    assert result.exit_code == 3
    assert "accepted-risk-expired" in result.stdout
    assert "harness-handover-skipped (agent-platform, >=4.8.0) expired on 2020-01-31" in (
        result.stdout
    )
    doc = json.loads(invoke("check", *S1, "--accept-file", acc, "-o", "json").stdout)
    hazards = {f["hazard"]: f for f in doc["results"][0]["findings"]}
    assert hazards["accepted-risk-expired"]["status"] == "applies"
    assert hazards["harness-handover-skipped"]["status"] == "applies"  # not accepted any more
    # with nothing else to block, the expired acceptance alone still fails
    fixed = invoke("check", *S1, "--accept-file", acc, "--accept", "harness-handover-skipped")
    assert fixed.exit_code == 3
    assert "accepted-risk-expired" in fixed.stdout
    sarif = valid_sarif(invoke("check", *S1, "--accept-file", acc, "-o", "sarif").stdout)
    expired = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "accepted-risk-expired"]
    assert expired[0]["level"] == "error"
    assert expired[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_a_stale_acceptance_is_reported(tmp_path: Path) -> None:
    stale = (
        "  - hazard: kagent-crds-v1alpha2-stored\n"
        "    reason: reviewed in the last upgrade\n"
        "    owner: alice\n"
        "    expires: 2999-01-01\n"
    )
    acc = str(_accept_file(tmp_path / "accept.yaml", extra=stale))
    result = invoke("check", *S1, "--accept-file", acc)
    assert result.exit_code == 0
    assert "Stale acceptances" in result.stdout
    assert "kagent-crds-v1alpha2-stored: reviewed in the last upgrade" in result.stdout
    doc = json.loads(invoke("check", *S1, "--accept-file", acc, "-o", "json").stdout)
    assert [s["hazard"] for s in doc["stale_acceptances"]] == ["kagent-crds-v1alpha2-stored"]
    gh = invoke("check", *S1, "--accept-file", acc, "-o", "github").stdout
    assert "title=stale acceptance::kagent-crds-v1alpha2-stored matches no finding" in gh
    run = valid_sarif(invoke("check", *S1, "--accept-file", acc, "-o", "sarif").stdout)["runs"][0]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    [note] = [n for n in notes if "stale acceptance: kagent-crds" in n["message"]["text"]]
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] == 9
    assert ",line=9,title=stale acceptance::kagent-crds-v1alpha2-stored" in gh
    md = invoke("check", *S1, "--accept-file", acc, "-o", "markdown").stdout
    assert "**Stale acceptances**" in md


def test_an_unknown_id_exits_2_naming_the_file_line(tmp_path: Path) -> None:
    acc = str(_accept_file(tmp_path / "accept.yaml", hazard="harness-handover-skiped"))
    result = invoke("check", *S1, "--accept-file", acc)
    assert result.exit_code == 2
    assert "unknown hazard id" in result.stderr and "accept.yaml:3" in result.stderr
    assert "harness-handover-skipped" in result.stderr  # the nearest known id
    result = invoke("check", *S1, "--accept", "no-such-hazard")
    assert result.exit_code == 2
    assert "unknown hazard id (--accept) 'no-such-hazard'" in result.stderr


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("accept:\n  - hazard: harness-handover-skipped\n    reason: r\n    owner: o\n", "expires"),
        (
            "accept:\n  - hazard: harness-handover-skipped\n    reason: r\n    owner: o\n"
            "    expires: someday\n",
            "not a date",
        ),
        ("accept: {hazard: x}\n", "must be a list"),
        ("accept:\n  - [1, 2\n", "not valid YAML"),
    ],
)
def test_a_malformed_acceptance_exits_2_with_its_line(
    tmp_path: Path, body: str, message: str
) -> None:
    path = tmp_path / "accept.yaml"
    path.write_text(body, encoding="utf-8")
    result = invoke("check", *S1, "--accept-file", str(path))
    assert result.exit_code == 2
    assert message in result.stderr
    assert "accept.yaml:" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_upgradeplan_yaml_is_found_from_the_working_directory_upward(tmp_path: Path) -> None:
    _accept_file(tmp_path / ".upgradeplan.yaml")
    (tmp_path / "clusters" / "prod").mkdir(parents=True)
    code, out, _ = _run(["check", *S1], cwd=tmp_path / "clusters" / "prod")
    assert code == 0
    assert "Accepted risks" in out
    code, _, _ = _run(["check", *S1, "--accept-file", ""], cwd=tmp_path / "clusters" / "prod")
    assert code == 3


def test_an_acceptance_scoped_to_another_installation_accepts_nothing(tmp_path: Path) -> None:
    path = tmp_path / "accept.yaml"
    text = (
        _accept_file(path)
        .read_text()
        .replace("    product: agent-platform\n", "    installation: staging-*\n")
    )
    path.write_text(text, encoding="utf-8")
    result = invoke("check", *S1, "--accept-file", str(path))
    assert result.exit_code == 3
    assert "Stale acceptances" in result.stdout


# --------------------------------------------------------------------------- SARIF


def test_all_contexts_give_one_run_per_context_with_distinct_ids(
    fake_api: FakeAPIFactory,
) -> None:
    lab = fake_api.start(CLUSTER / "s1")
    prod = fake_api.start(CLUSTER / "s2")
    kubeconfig = fake_api.kubeconfig({"lab": lab, "prod": prod})
    result = invoke(
        "check", "--kubeconfig", kubeconfig, "--all-contexts", "--to", "agent-platform=4.8.1",
        "-o", "sarif",
    )  # fmt: skip
    doc = valid_sarif(result.stdout)
    runs = doc["runs"]
    assert len(runs) == 2
    ids = [r["automationDetails"]["id"] for r in runs]
    assert sorted(ids) == ["upgradeplan/lab/", "upgradeplan/prod/"]
    assert {r["properties"]["installation"] for r in runs} == {"lab", "prod"}
    for run in runs:
        assert "informationUri" not in run["tool"]["driver"]  # no address we have not verified
        for res in run["results"]:
            assert res["message"]["text"].startswith(run["properties"]["installation"] + ": ")
    gh = invoke(
        "check", "--kubeconfig", kubeconfig, "--all-contexts", "--to", "agent-platform=4.8.1",
        "-o", "github",
    ).stdout  # fmt: skip
    annotations = [ln for ln in gh.splitlines() if "title=upgradeplan::" not in ln]
    assert annotations
    assert all("title=[lab] " in ln or "title=[prod] " in ln for ln in annotations)


def test_bad_input_with_sarif_writes_a_valid_failed_log_and_exits_2() -> None:
    result = invoke("check", "--installed", "agent-platfrom=4.7.18", "-o", "sarif")
    assert result.exit_code == 2
    assert result.stderr.startswith("upgradeplan: error: unknown product")
    doc = valid_sarif(result.stdout)
    [run] = doc["runs"]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert "agent-platfrom" in note["message"]["text"]
    assert run["results"] == []


def test_bad_input_at_a_file_line_is_located_in_sarif_and_github(tmp_path: Path) -> None:
    (tmp_path / "snapshot.yaml").write_text(
        "kind: upgradeplan-state\nschema_version: 7\nfacts: {}\n", encoding="utf-8"
    )
    args = ["check", "--snapshot", "snapshot.yaml"]
    code, out, err = _run([*args, "-o", "sarif"], cwd=tmp_path)
    assert code == 2
    assert "snapshot.yaml:2" in err and len(err.strip().splitlines()) == 1
    note = valid_sarif(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]
    loc = note["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "snapshot.yaml", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] == 2
    code, out, err = _run([*args, "-o", "github"], cwd=tmp_path)
    assert code == 2
    assert out.startswith("::error file=snapshot.yaml,line=2,title=upgradeplan::")
    assert len(err.strip().splitlines()) == 1 and "snapshot.yaml:2" in err
    # an accept file's line, too
    (tmp_path / "accept.yaml").write_text("accept:\n  - hazard: nope\n", encoding="utf-8")
    code, out, _ = _run(["check", *S1, "--accept-file", "accept.yaml", "-o", "github"], tmp_path)
    assert code == 2
    assert out.startswith("::error file=accept.yaml,line=2,title=upgradeplan::")


def test_automation_ids_are_clean_categories() -> None:
    from upgradeplan.render.sarif import automation_id

    assert automation_id(".") == "upgradeplan/root/"
    assert automation_id("./clusters/prod/") == "upgradeplan/clusters/prod/"
    assert automation_id("clusters/prod@origin/main") == "upgradeplan/clusters/prod/"
    assert automation_id("prod") == "upgradeplan/prod/"


def test_help_uri_from_references_and_rule_ids_stable_across_targets() -> None:
    from upgradeplan.render.sarif import reference_uri

    assert reference_uri("giantswarm/agent-platform#409") == (
        "https://github.com/giantswarm/agent-platform/issues/409"
    )
    assert reference_uri("https://example.com/x") == "https://example.com/x"
    assert reference_uri("see the notes") is None
    old = ["--installed", "agent-platform=4.7.18", "--fact", "kubernetes=1.31.4"]
    ids: list[set[str]] = []
    for target in ("agent-platform=4.8.0", "agent-platform=4.8.1"):
        doc = valid_sarif(invoke("check", *old, "--to", target, "-o", "sarif").stdout)
        run = doc["runs"][0]
        rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
        assert not [r for r in rules if "@" in r], rules.keys()
        ids.append({r["ruleId"] for r in run["results"]})
        for rule in rules.values():
            if rule["id"] == "harness-missing-on-480":
                assert rule["helpUri"] == "https://github.com/giantswarm/agent-platform/issues/409"
    assert "requires:agent-platform" in ids[0] & ids[1]


def test_level_follows_the_exit_code() -> None:
    # S3: the skip hazard may apply (blocking) -> exit 4; it fails the gate, so it is an error
    s3 = ["--installed", "agent-platform=4.7.18", "--to", "agent-platform=4.8.0"]
    result = invoke("check", *s3, "-o", "sarif")
    assert result.exit_code == 4
    run = valid_sarif(result.stdout)["runs"][0]
    levels = {r["ruleId"]: (r["kind"], r["level"], r["properties"]) for r in run["results"]}
    kind, level, props = levels["harness-handover-skipped"]
    assert (kind, level) == ("fail", "error")
    assert (props["severity"], props["status"], props["failsGate"]) == (
        "blocking", "may-apply", True
    )  # fmt: skip
    failing = [r for r in run["results"] if r["properties"]["failsGate"]]
    assert failing and all(r["level"] == "error" for r in failing)
    never = valid_sarif(invoke("check", *s3, "--fail-on", "never", "-o", "sarif").stdout)
    assert all(r["level"] != "error" for r in never["runs"][0]["results"])


def test_state_findings_read_from_files_carry_a_physical_location(tmp_path: Path) -> None:
    # S7: the installation as it is (no target); its facts come from GitOps files
    code, out, _ = _run(["check", "--gitops", str(GITOPS / "s7"), "-o", "sarif"], cwd=tmp_path)
    assert code == 4
    run = valid_sarif(out)["runs"][0]
    assert run["results"], out
    for res in run["results"]:
        assert "physicalLocation" in res["locations"][0], res


def test_uris_are_relative_to_the_repository_root_whatever_the_working_directory(
    tmp_path: Path,
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    shutil.copytree(GITOPS / "s1", repo / "clusters" / "prod")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    args = ["check", *HARNESS_UNPROTECTED, "--to", "agent-platform=4.8.0", "-o", "sarif"]
    uris = []
    for cwd, path in (
        (repo, "clusters/prod"),
        (repo / "clusters", "prod"),
        (tmp_path, str(repo / "clusters" / "prod")),  # absolute, from outside
    ):
        code, out, err = _run([*args[:1], "--gitops", path, *args[1:]], cwd=cwd)
        assert code == 3, err
        run = valid_sarif(out)["runs"][0]
        found = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
        }
        for r in run["results"]:
            assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == (
                "%SRCROOT%"
            )
        uris.append(found)
    assert uris[0] == uris[1] == uris[2]
    assert "clusters/prod/bom.yaml" in uris[0]


# --------------------------------------------------------------------------- --base


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose HEAD holds S1 (4.7.18 pins) under clusters/prod."""
    return s1_repo(tmp_path)


def test_base_gate_points_at_the_changed_meta_chart_line(repo: Path) -> None:
    oci = repo / "clusters/prod/agent-platform/ocirepository.yaml"
    lines = oci.read_text().splitlines()
    changed = next(i for i, ln in enumerate(lines, 1) if 'semver: "4.7.18"' in ln)
    oci.write_text(oci.read_text().replace('semver: "4.7.18"', 'semver: "4.8.0"'))
    gate = ["check", "--gitops", "clusters/prod", "--base", "HEAD", *HARNESS_UNPROTECTED]
    code, out, err = _run([*gate, "-o", "sarif"], cwd=repo)
    assert code == 3, err
    run = valid_sarif(out)["runs"][0]
    assert run["automationDetails"]["id"] == "upgradeplan/clusters/prod/"
    failing = [r for r in run["results"] if r["properties"]["failsGate"]]
    assert failing
    for res in failing:
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "clusters/prod/agent-platform/ocirepository.yaml"
        assert loc["region"]["startLine"] == changed
    code, out, _ = _run([*gate, "-o", "github"], cwd=repo)
    assert code == 3
    errors_ = [ln for ln in out.splitlines() if ln.startswith("::error file=")]
    assert errors_
    for line in errors_:
        assert line.startswith(
            f"::error file=clusters/prod/agent-platform/ocirepository.yaml,line={changed},"
        )
    assert out.splitlines()[-1].startswith(
        "::error title=upgradeplan::upgradeplan [clusters/prod@HEAD"
    )
    assert ": verdict blocked (exit 3)" in out.splitlines()[-1]


# --------------------------------------------------------------------------- -o github


@pytest.mark.parametrize(("args", "code"), [(S1, 3), ([*S1[:-1], "agent-platform=4.8.1"], 0)])
def test_github_summary_states_the_verdict_of_the_exit_code(args: list[str], code: int) -> None:
    result = invoke("check", *args, "-o", "github")
    assert result.exit_code == code
    last = result.stdout.splitlines()[-1]
    verdict = json.loads(invoke("check", *args, "-o", "json").stdout)["results"][0]["verdict"]
    assert f": verdict {verdict} (exit {code})" in last
    assert last.startswith("::error" if code else "::notice")


# --------------------------------------------------------------------------- -o markdown


def test_markdown_is_a_compact_pr_comment_stable_across_reruns(
    repo: Path, update_golden: bool
) -> None:
    oci = repo / "clusters/prod/agent-platform/ocirepository.yaml"
    oci.write_text(oci.read_text().replace('semver: "4.7.18"', 'semver: "4.8.0"'))
    gate = ["check", "--gitops", "clusters/prod", "--base", "HEAD", *HARNESS_UNPROTECTED]
    env = {
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "example/fleet",
        "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
    }
    code, first, _ = _run([*gate, "-o", "markdown"], cwd=repo, env=env)
    _, second, _ = _run([*gate, "-o", "markdown"], cwd=repo, env=env)
    assert code == 3
    assert first == second
    assert first.startswith(
        "<!-- upgradeplan-check -->\n### upgradeplan check: **blocked** (exit 3)"
    )
    assert "| **fails** |" in first
    assert (
        "[clusters/prod/agent-platform/ocirepository.yaml:13](https://github.com/example/fleet/"
        "blob/0123456789abcdef0123456789abcdef01234567/clusters/prod/agent-platform/"
        "ocirepository.yaml#L13)"
    ) in first
    assert "**Least-bad path (no safe path)** (blocked)" in first
    assert "**What to change**" in first
    golden = GOLDEN / "pr-comment-s1-base-4.8.0.md"
    if update_golden:
        golden.write_text(first, encoding="utf-8")
    assert golden.read_text(encoding="utf-8") == first


def test_a_two_installation_gitops_tree_gives_one_run_per_installation(tmp_path: Path) -> None:
    tree = REPO / "tests" / "fixtures" / "gitops-layouts" / "kustomize-helm"
    code, out, err = _run(["check", "--gitops", str(tree), "-o", "sarif"], cwd=tmp_path)
    assert code in (0, 3, 4), err
    runs = valid_sarif(out)["runs"]
    ids = [r["automationDetails"]["id"] for r in runs]
    assert len(runs) == 2 and len(set(ids)) == 2, ids
    assert sorted(ids) == ["upgradeplan/production/", "upgradeplan/staging/"]
