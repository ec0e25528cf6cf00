"""The PR gate (``--gitops PATH --base REF``) when the working tree cannot be read in full:
a change is judged by what merging it runs, so what the change's files leave unknown is never
"safe"."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.cli import git as _git
from support.cli import s1_repo

from upgradeplan.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gitops"
PIN_FILE = "clusters/prod/agent-platform/ocirepository.yaml"
KNOWN = [
    "--fact", "object.Harness.kagent.kagent.exists=true",
    "--fact", "object.Harness.kagent.kagent.annotations=",
    "--fact", "kubernetes=1.35.0",
]  # fmt: skip
GATE = ["check", "--gitops", "clusters/prod", "--base", "HEAD", *KNOWN, "-o", "json"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose HEAD pins agent-platform 4.7.18 under clusters/prod."""
    return s1_repo(tmp_path)


def _gate(repo: Path) -> tuple[int, dict[str, Any], str]:
    old = Path.cwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(cli, GATE)
    finally:
        os.chdir(old)
    assert "Traceback" not in result.stderr, result.stderr
    [one] = json.loads(result.stdout)["results"]
    return result.exit_code, one, result.stderr


def _rewrite_pin(repo: Path, new: str) -> None:
    path = repo / PIN_FILE
    path.write_text(path.read_text().replace('semver: "4.7.18"', f"semver: {new}"))


def test_the_gate_is_safe_without_a_change(repo: Path) -> None:
    code, result, err = _gate(repo)
    assert (code, result["verdict"]) == (0, "safe"), err  # the baseline the cases below leave


def test_a_new_pin_nobody_substitutes_leaves_the_change_undetermined(repo: Path) -> None:
    # the change writes the meta chart's pin as a variable no Kustomization sets: merged,
    # Flux would run whatever it substitutes, so the move cannot be called safe
    _rewrite_pin(repo, '"${PLATFORM_VERSION}"')
    code, result, err = _gate(repo)
    assert (code, result["verdict"]) == (4, "undetermined"), err
    [rec] = [r for r in result["unreadable"] if r["source"] == "the new pin of agent-platform"]
    assert rec["location"] == f"{PIN_FILE}:13"
    assert "4.7.18" in rec["detail"] and "PLATFORM_VERSION" in rec["detail"]


def test_a_new_pin_written_as_a_digest_leaves_the_change_undetermined(repo: Path) -> None:
    path = repo / PIN_FILE
    digest = "sha256:" + "ab" * 32
    path.write_text(path.read_text().replace('semver: "4.7.18"', f"digest: {digest}"))
    code, result, err = _gate(repo)
    assert (code, result["verdict"]) == (4, "undetermined"), err
    assert "the new pin of agent-platform" in {r["source"] for r in result["unreadable"]}


def test_a_change_that_breaks_a_file_is_undetermined_and_names_its_line(repo: Path) -> None:
    _rewrite_pin(repo, '["4.8.0"')  # an unclosed flow sequence
    code, result, err = _gate(repo)
    assert (code, result["verdict"]) == (4, "undetermined"), err
    [rec] = [r for r in result["unreadable"] if r["kind"] == "file"]
    assert rec["source"] == PIN_FILE and rec["cause"] == "parse error"
    assert rec["location"].startswith(f"{PIN_FILE}:")


def test_a_change_that_drops_a_release_moves_nothing(repo: Path) -> None:
    # a pin the change removes (its files deleted) is no unknown: nothing is moved
    shutil.rmtree(repo / "clusters/prod/agent-platform")
    kustomization = repo / "clusters/prod/kustomization.yaml"
    kept = [ln for ln in kustomization.read_text().splitlines() if "agent-platform/" not in ln]
    kustomization.write_text("\n".join(kept) + "\n")
    code, result, err = _gate(repo)
    assert code in (0, 4), err
    assert not [r for r in result.get("unreadable", []) if "new pin" in r["source"]]


def test_a_bump_from_a_range_asks_for_what_runs_and_never_says_it_is_not_installed(
    repo: Path,
) -> None:
    # the base pins the meta chart by a range: what runs is not in the files
    _rewrite_pin(repo, '">=4.7.0 <4.8.0"')
    _git(repo, "commit", "-q", "-am", "agent-platform follows 4.7")
    path = repo / PIN_FILE
    path.write_text(path.read_text().replace('">=4.7.0 <4.8.0"', '"4.8.0"'))
    old = Path.cwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(cli, GATE)
        stated = CliRunner().invoke(cli, [*GATE, "--installed", "agent-platform=4.7.18"])
    finally:
        os.chdir(old)
    assert result.exit_code == 2, result.output
    assert "the installed version of agent-platform is unknown" in result.stderr
    assert "--installed agent-platform=VERSION" in result.stderr
    assert "not installed" not in result.stderr  # the files do install it
    [one] = json.loads(stated.stdout)["results"]  # stated, the move is judged
    assert one["targets"] == [{"product": "agent-platform", "version": "4.8.0"}]


KAGENT = '  kagent:\n    versionRange: "0.11.0-gs.6"\n'


def test_a_fact_the_change_leaves_unknown_is_not_judged_on_the_base_value(repo: Path) -> None:
    # the base turns kagent's drift detection on; the change moves to 4.8.0 (connectivity in
    # step) and writes the mode as a variable nothing in the files sets. What merging runs is
    # not the base's "enabled", so the hazard of 4.8.0 without drift detection may apply
    bom = repo / "clusters/prod/bom.yaml"
    mode = "    driftDetection:\n      mode: {}\n"
    bom.write_text(bom.read_text().replace(KAGENT, KAGENT + mode.format("enabled")))
    _git(repo, "commit", "-qam", "kagent drift detection on")
    code, result, err = _gate(repo)
    assert (code, result["verdict"]) == (0, "safe"), err
    _rewrite_pin(repo, '"4.8.0"')
    text = bom.read_text().replace('versionRange: "4.7.18"', 'versionRange: "4.8.0"')
    bom.write_text(text.replace("mode: enabled", "mode: ${KAGENT_DRIFT}"))
    code, result, err = _gate(repo)
    assert (code, result["verdict"]) == (4, "undetermined"), err
    [rec] = [
        r for r in result["unreadable"] if "helmrelease.kagent.drift-detection" in r["unknown"]
    ]
    assert rec["location"] == "clusters/prod/bom.yaml:13"
    statuses = {f["hazard"]: f["status"] for f in result["findings"]}
    assert statuses["no-drift-detection-on-480"] == "may-apply"


def test_a_fact_the_change_rewrites_is_not_judged_on_the_base_value(repo: Path) -> None:
    # the base turns kagent's drift detection on; the change moves to 4.8.0 and turns it off
    # in the same commit. Flux applies both at once, so the base's "enabled" is not what the
    # hazard of 4.8.0 without drift detection must be judged on: it may apply
    bom = repo / "clusters/prod/bom.yaml"
    mode = "    driftDetection:\n      mode: {}\n"
    bom.write_text(bom.read_text().replace(KAGENT, KAGENT + mode.format("enabled")))
    _git(repo, "commit", "-qam", "kagent drift detection on")
    _rewrite_pin(repo, '"4.8.0"')
    text = bom.read_text().replace('versionRange: "4.7.18"', 'versionRange: "4.8.0"')
    bom.write_text(text.replace("mode: enabled", "mode: disabled"))
    code, result, err = _gate(repo)
    assert (code, result["verdict"]) == (4, "undetermined"), err
    [rec] = [
        r for r in result["unreadable"] if "helmrelease.kagent.drift-detection" in r["unknown"]
    ]
    assert rec["location"] == "clusters/prod/bom.yaml:13"
    assert "'disabled'" in rec["detail"] and "'enabled'" in rec["detail"]
    statuses = {f["hazard"]: f["status"] for f in result["findings"]}
    assert statuses["no-drift-detection-on-480"] == "may-apply"


def test_a_change_that_only_moves_the_pin_keeps_the_base_values(repo: Path) -> None:
    bom = repo / "clusters/prod/bom.yaml"
    _rewrite_pin(repo, '"4.7.19"')
    bom.write_text(bom.read_text().replace('versionRange: "4.7.18"', 'versionRange: "4.7.19"'))
    code, result, err = _gate(repo)
    assert not [r for r in result["unreadable"] if r.get("cause") == "rewritten by the change"]
    assert (code, result["verdict"]) == (0, "safe"), err


# ------------------------------------------- every moved pin named, in every output


CERT_FILE = "clusters/prod/cert-manager.yaml"
CERT_RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cert-manager
spec:
  interval: 30m
  chart:
    spec:
      chart: cert-manager
      version: v1.16.0
      sourceRef:
        kind: HelmRepository
        name: jetstack
"""


def _with_unknown_chart(repo: Path) -> None:
    """A cert-manager HelmRelease (a chart the bundled knowledge does not know) beside S1."""
    (repo / CERT_FILE).write_text(CERT_RELEASE)
    kust = repo / "clusters/prod/kustomization.yaml"
    text = kust.read_text()
    kust.write_text(text.replace("resources:\n", "resources:\n  - cert-manager.yaml\n"))
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "cert-manager")


def _outputs(repo: Path, *extra: str) -> dict[str, tuple[int, str]]:
    args = ["check", "--gitops", "clusters/prod", "--base", "HEAD", *KNOWN, *extra]
    old = Path.cwd()
    os.chdir(repo)
    try:
        out: dict[str, tuple[int, str]] = {}
        for output in ("text", "json", "github", "markdown", "sarif"):
            result = CliRunner().invoke(cli, [*args, "-o", output])
            assert "Traceback" not in result.output
            out[output] = (result.exit_code, result.stdout)
    finally:
        os.chdir(old)
    return out


@pytest.mark.parametrize("bump", ["agent-platform", "unknown", "both"])
def test_every_moved_pin_is_named_in_every_output(repo: Path, bump: str) -> None:
    _with_unknown_chart(repo)
    moved: list[str] = []
    if bump in ("agent-platform", "both"):
        _rewrite_pin(repo, '"4.7.19"')
        bom = repo / "clusters/prod/bom.yaml"
        bom.write_text(bom.read_text().replace('versionRange: "4.7.18"', 'versionRange: "4.7.19"'))
        moved.append("agent-platform 4.7.18 → 4.7.19")
    if bump in ("unknown", "both"):
        cert = repo / CERT_FILE
        cert.write_text(cert.read_text().replace("v1.16.0", "v1.16.1"))
        moved.append("cert-manager v1.16.0 → v1.16.1")
    out = _outputs(repo, "--no-chart-checks")
    codes = {code for code, _ in out.values()}
    assert codes == {0}, out
    first = out["text"][1]
    for pin in moved:
        assert pin in first, first
        assert pin in out["github"][1] and pin in out["markdown"][1]
        notes = [
            r["message"]["text"]
            for r in json.loads(out["sarif"][1])["runs"][0]["results"]
            if r["ruleId"] == "pin-moved"
        ]
        assert any(pin in n for n in notes), notes
    if "cert-manager v1.16.0 → v1.16.1" in moved:
        assert f"cert-manager v1.16.0 → v1.16.1 ({CERT_FILE}:10): not in the knowledge, " in first
    [result] = json.loads(out["json"][1])["results"]
    judged = {m["name"]: m["judged"] for m in result["moved"]}
    assert {m.split(" ")[0] for m in moved} <= set(judged)  # the BOM's component moves too
    if bump != "unknown":
        assert judged["agent-platform"] is True
    if bump != "agent-platform":
        assert judged["cert-manager"] is False  # nothing judged it (chart checks off)
