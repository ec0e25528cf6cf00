"""The kube-prometheus-stack pack: every CRD hazard with stated facts, and a GitOps fixture
judged as the pull-request gate judges a Renovate bump of the chart."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.cli import check, git, run

from upgradeplan import api
from upgradeplan.kb import packs
from upgradeplan.kb.loader import load
from upgradeplan.model import Fact, KnowledgeBase, State
from upgradeplan.provenance import flag
from upgradeplan.versions import parse_version

P = "kube-prometheus-stack"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "packs" / P
DEFAULT = {"install": "Create", "upgrade": "Create"}  # what helm-controller applies unset
REPLACE = {"install": "Create", "upgrade": "CreateReplace"}


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load(packs.directories([P]))


def _majors(kb: KnowledgeBase) -> list[int]:
    return sorted(int(h.split("-")[-1]) for h in kb.hazards if h.startswith("kps-crds-before-"))


MAJORS = _majors(load(packs.directories([P])))


def _hop(kb: KnowledgeBase, major: int) -> tuple[str, str]:
    """The last release below ``major``.0.0 and the first at or above it."""
    line = kb.releases[P]
    bound = parse_version(f"{major}.0.0")
    below = [r.version for r in line if parse_version(r.version) < bound]
    above = [r.version for r in line if parse_version(r.version) >= bound]
    return below[-1], above[0]


def _status(kb: KnowledgeBase, major: int, **facts: Any) -> tuple[str, int]:
    """The status of kps-crds-before-<major> on the hop across it, and check's exit code."""
    frm, to = _hop(kb, major)
    given = {f"installed.{P}": frm, **facts}
    state = State(facts={k: Fact(k, v, flag("--fact")) for k, v in given.items()})
    result = api.check(kb, state, [f"{P}={to}"])
    (finding,) = [f for f in result.findings if f.hazard == f"kps-crds-before-{major}"]
    return finding.status, result.exit_code


def test_the_pack_has_every_crd_section_and_the_whole_line(kb: KnowledgeBase) -> None:
    assert len(MAJORS) == 49
    assert len(kb.releases[P]) == 1113
    assert kb.products[P].reviewed_through == kb.releases[P][-1].version == "88.5.3"
    assert kb.release(P, "88.5.3").app_version == "v0.93.1"  # type: ignore[union-attr]


@pytest.mark.parametrize("major", MAJORS)
def test_with_flux_defaults_the_crd_hazard_applies(kb: KnowledgeBase, major: int) -> None:
    status, code = _status(kb, major, **{f"values.{P}": {}, f"helmrelease.{P}.crds": DEFAULT})
    assert (status, code) == ("applies", 3)


@pytest.mark.parametrize("major", MAJORS)
def test_create_replace_applies_the_crds_so_it_does_not(kb: KnowledgeBase, major: int) -> None:
    status, _ = _status(kb, major, **{f"values.{P}": {}, f"helmrelease.{P}.crds": REPLACE})
    assert status == "does-not-apply"


@pytest.mark.parametrize("major", [m for m in MAJORS if m >= 49])
def test_create_replace_with_the_crd_subchart_off_still_applies(
    kb: KnowledgeBase, major: int
) -> None:
    facts = {f"values.{P}": {"crds": {"enabled": False}}, f"helmrelease.{P}.crds": REPLACE}
    assert _status(kb, major, **facts)[0] == "applies"


@pytest.mark.parametrize("major", [m for m in MAJORS if m >= 69])
def test_the_charts_upgrade_job_applies_the_crds(kb: KnowledgeBase, major: int) -> None:
    facts = {
        f"values.{P}": {"crds": {"upgradeJob": {"enabled": True}}},
        f"helmrelease.{P}.crds": DEFAULT,
    }
    assert _status(kb, major, **facts)[0] == "does-not-apply"


@pytest.mark.parametrize("major", [MAJORS[0], 49, MAJORS[-1]])
def test_without_the_crd_policy_it_may_apply(kb: KnowledgeBase, major: int) -> None:
    assert _status(kb, major, **{f"values.{P}": {}}) == ("may-apply", 4)


@pytest.mark.parametrize(
    ("values", "status"),
    [
        ({}, "applies"),  # the chart's default: Grafana on, no password of its own
        ({"grafana": {"adminPassword": "s3cret"}}, "does-not-apply"),
        ({"grafana": {"admin": {"existingSecret": "grafana-admin"}}}, "does-not-apply"),
        ({"grafana": {"enabled": False}}, "does-not-apply"),
    ],
    ids=["default", "password", "existing-secret", "no-grafana"],
)
def test_grafana_admin_password_79(kb: KnowledgeBase, values: dict[str, Any], status: str) -> None:
    given: dict[str, Any] = {
        f"installed.{P}": "78.5.0",
        f"values.{P}": values,
        f"helmrelease.{P}.crds": REPLACE,
    }
    state = State(facts={k: Fact(k, v, flag("--fact")) for k, v in given.items()})
    result = api.check(kb, state, [f"{P}=79.0.0"])
    (finding,) = [f for f in result.findings if f.hazard == "kps-grafana-admin-password-79"]
    assert finding.status == status
    assert result.exit_code == 0  # a warning: reported, not failing the default threshold


def test_a_jump_across_the_line_stops_before_every_crd_major_with_its_commands() -> None:
    code, plan = _plan(
        "--installed", f"{P}=9.3.4", "--to", f"{P}=88.5.3",
        "--fact", f"values.{P}={{}}", "--fact", f"helmrelease.{P}.crds={json.dumps(DEFAULT)}",
    )  # fmt: skip
    assert code == 0, plan
    applied = {m for s in plan["steps"] for m in _migrations(s)}
    assert {f"kps-apply-crds-{m}" for m in MAJORS} <= applied


def _plan(*args: str) -> tuple[int, dict[str, Any]]:
    code, out = run("--pack", P, "plan", "-o", "json", *args)
    doc = json.loads(out)
    return code, dict(doc["results"][0]["plan"])


def _migrations(step: dict[str, Any]) -> list[str]:
    return [a.get("migration", "") for a in step.get("actions", [])]


def test_explain_gives_the_charts_own_commands() -> None:
    code, out = run("--pack", P, "explain", "kps-crds-before-88")
    assert code == 0
    assert "Migrations: kps-apply-crds-88" in out
    code, out = run("--pack", P, "explain", "kps-apply-crds-88")
    assert code == 0
    assert "kubectl apply --server-side -f https://raw.githubusercontent.com/" in out
    assert "/v0.93.0/example/prometheus-operator-crd/monitoring.coreos.com_prometheuses.yaml" in out


def test_above_reviewed_through_is_never_safe(tmp_path: Path) -> None:
    pack = tmp_path / P
    shutil.copytree(Path(packs.packs_path()) / P, pack)
    line = pack / "releases" / P
    (line / "88.6.0.yaml").write_text(
        (line / "88.5.3.yaml").read_text().replace('"88.5.3"', '"88.6.0"')
    )
    code, result = check(
        "--kb", str(pack), "--installed", f"{P}=88.5.3", "--to", f"{P}=88.6.0",
        "--fact", f"values.{P}={{}}", "--fact", f"helmrelease.{P}.crds={json.dumps(DEFAULT)}",
    )  # fmt: skip
    # "no known hazards (knowledge reviewed through 88.5.3)": exit 0, never "safe"
    assert (code, result["verdict"]) == (0, "no-known-hazards")
    assert result["reviewed_through"] == {P: "88.5.3"}
    assert any("reviewed through 88.5.3" in n for n in result["notes"])


# --------------------------------------------------------------------------- GitOps fixture


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose HEAD pins kube-prometheus-stack 87.1.0 (Flux's CRD defaults)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    shutil.copytree(FIXTURE, tmp_path / "cluster")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


REPLACE_SPEC = "  interval: 1h\n  upgrade:\n    crds: CreateReplace\n"


def _bump(repo: Path, tag: str) -> None:
    pin = repo / "cluster" / "observability" / "ocirepository.yaml"
    pin.write_text(pin.read_text().replace("tag: 87.1.0", f"tag: {tag}"))


def _gate(repo: Path) -> tuple[int, dict[str, Any]]:
    old = Path.cwd()
    os.chdir(repo)
    try:
        args = ["--pack", P, "check", "--gitops", "cluster", "--base", "HEAD", "-o", "json"]
        result = CliRunner().invoke(__import__("upgradeplan.cli").cli.cli, args)
    finally:
        os.chdir(old)
    assert "Traceback" not in result.output
    [one] = json.loads(result.stdout)["results"]
    return result.exit_code, one


def test_gate_a_renovate_bump_across_a_crd_major_is_blocked(repo: Path) -> None:
    _bump(repo, "88.0.0")
    code, result = _gate(repo)
    assert (code, result["verdict"]) == (3, "blocked")
    (finding,) = [f for f in result["findings"] if f["hazard"] == "kps-crds-before-88"]
    assert finding["status"] == "applies"
    assert "observability/helmrelease.yaml" in json.dumps(finding)


def test_gate_a_bump_within_the_major_is_safe(repo: Path) -> None:
    _bump(repo, "87.2.0")
    code, result = _gate(repo)
    assert (code, result["verdict"]) == (0, "safe")


def test_gate_a_bump_where_the_release_replaces_crds_is_safe(repo: Path) -> None:
    hr = repo / "cluster" / "observability" / "helmrelease.yaml"
    hr.write_text(hr.read_text().replace("  interval: 1h\n", REPLACE_SPEC))
    git(repo, "commit", "-q", "-am", "CRDs: CreateReplace")
    _bump(repo, "88.0.0")  # the Renovate bump, on a base that already replaces CRDs
    code, result = _gate(repo)
    assert (code, result["verdict"]) == (0, "safe"), result["findings"]


def test_gate_without_the_pack_says_not_in_the_knowledge(repo: Path) -> None:
    _bump(repo, "88.0.0")
    old = Path.cwd()
    os.chdir(repo)
    try:
        from upgradeplan.cli import cli

        result = CliRunner().invoke(cli, ["check", "--gitops", "cluster", "--base", "HEAD"])
    finally:
        os.chdir(old)
    assert "kps-crds-before-88" not in result.output
