"""planner.targets.resolve_targets: every --to form and the gate's targets, resolved once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.builders import AP, CONN, KB, state
from support.cli import git as _git
from support.cli import run

from upgradeplan import errors, planner, releases
from upgradeplan.model import KnowledgeBase, Target

S1 = state({AP: "4.7.18"}, {CONN: "4.7.18"})
GITOPS_S1 = Path(__file__).parent / "fixtures" / "gitops" / "s1"


def test_every_form_names_a_release_of_the_knowledge() -> None:
    assert planner.resolve_targets(KB, S1, [f"{AP}=4.8.1"]) == [Target(AP, "4.8.1")]
    assert planner.resolve_targets(KB, S1, ["v4.8.1"]) == [Target(AP, "4.8.1")]
    assert planner.resolve_targets(KB, S1, [f" {AP} = v4.8.1 "]) == [Target(AP, "4.8.1")]
    assert planner.resolve_targets(KB, S1, ["latest"]) == [Target(AP, "4.8.2")]
    assert planner.resolve_targets(KB, S1, [f"{AP}=latest"]) == [Target(AP, "4.8.2")]
    assert releases.latest(KB, AP) == "4.8.2"


def test_a_to_value_overrides_a_given_target_of_the_same_product() -> None:
    given = [Target(AP, "4.8.0")]
    assert planner.resolve_targets(KB, S1, [], given) == [Target(AP, "4.8.0")]
    assert planner.resolve_targets(KB, S1, [f"{AP}=4.8.2"], given) == [Target(AP, "4.8.2")]


def test_unknown_product_and_release_are_typed_errors() -> None:
    with pytest.raises(errors.UnknownName) as exc:
        planner.resolve_targets(KB, S1, ["agent-platfrom=4.8.0"])
    assert exc.value.what == "product" and AP in exc.value.suggestions
    with pytest.raises(errors.UnknownName) as exc2:
        planner.resolve_targets(KB, S1, [f"{AP}=4.8.9"])
    assert exc2.value.what == f"{AP} release (--to)"
    assert "4.8.2" in exc2.value.known


def test_unknown_target_version_suggests_neighbours_in_version_order(kb: KnowledgeBase) -> None:
    with pytest.raises(errors.UnknownName) as info:
        planner.resolve_targets(kb, S1, ["agent-platform=4.7.17"])
    assert set(info.value.suggestions) >= {"4.7.14", "4.7.18"}


def test_plan_takes_resolved_targets_only() -> None:
    """planner.plan does not resolve: 'latest' or an unknown release is the caller's mistake."""
    for target in (Target(AP, "latest"), Target(AP, "4.8.9"), Target("nope", "1.0.0")):
        with pytest.raises(ValueError, match="resolve_targets"):
            planner.plan(KB, S1, [target])


# --------------------------------------------------------------------------- withdrawn


WITHDRAWN = """\
schema_version: 1
kind: release
product: agent-platform
version: "4.9.0"
date: "2026-10-01"
title: a release pulled the next day
withdrawn: {date: "2026-10-02", reason: "Pulled: the chart failed to render."}
"""


def test_a_withdrawn_release_gets_one_message_whichever_form_names_it(tmp_path: Path) -> None:
    assert shutil.which("git") is not None, "the --base form needs git"
    kb = tmp_path / "kb"
    (kb / "releases" / "agent-platform").mkdir(parents=True)
    (kb / "releases" / "agent-platform" / "4.9.0.yaml").write_text(WITHDRAWN)
    repo = tmp_path / "repo"
    shutil.copytree(GITOPS_S1, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "agent-platform 4.7.18")
    oci = repo / "agent-platform" / "ocirepository.yaml"
    oci.write_text(oci.read_text().replace('semver: "4.7.18"', 'semver: "4.9.0"'))

    stated = ("--installed", "agent-platform=4.7.18")
    forms = [
        ["check", *stated, "--to", "agent-platform=4.9.0"],
        ["check", *stated, "--to", "4.9.0"],
        ["check", "--gitops", str(repo), "--base", "HEAD"],
        ["plan", "--gitops", str(repo), "--base", "HEAD"],
    ]
    outputs = {run("--kb", str(kb), *args) for args in forms}
    assert len(outputs) == 1, outputs
    code, text = outputs.pop()
    assert code == 2
    assert text.startswith(
        "upgradeplan: error: agent-platform@4.9.0 was withdrawn (2026-10-02: Pulled: the chart"
        " failed to render.); pick another release: "
    )
