"""The cert-manager pack (packs/cert-manager) as a user meets it: each hazard applies, does not
apply, or may apply when the fact it reads is unknown, on stated facts; the stepping rule puts
the latest patch of each minor on the path; a Renovate-style bump in a small Flux tree of our
own (tests/fixtures/packs/cert-manager) gets the verdict the upgrade notes give.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import check, git, plan, run

ROOT = Path(__file__).resolve().parent.parent
PACK = ("--pack", "cert-manager")
FIXTURE = ROOT / "tests" / "fixtures" / "packs" / "cert-manager"


def judge(frm: str, to: str, *facts: str) -> tuple[int, dict[str, str]]:
    """``check`` of one stated move: exit code and each hazard's status on the direct jump."""
    args = [*PACK, "--installed", f"cert-manager={frm}", "--to", f"cert-manager={to}"]
    for fact in facts:
        args += ["--fact", fact]
    code, result = check(*args)
    found: list[dict[str, Any]] = result["findings"]
    return code, {f["hazard"]: f["status"] for f in found}


NOTHING_SET = "values.cert-manager={}"


def test_the_pack_lints_clean() -> None:
    code, out = run("kb", "lint", "--strict", *PACK)
    assert (code, out.strip()) == (0, "")


# --------------------------------------------------------------- landing on a broken patch


def test_landing_on_v1_19_0_is_blocked_and_v1_19_1_is_not() -> None:
    code, found = judge("v1.18.6", "v1.19.0", NOTHING_SET, "object.Certificate=[]")
    assert (code, found["cert-manager-v1-19-0-reissues"]) == (3, "applies")
    code, found = judge("v1.18.6", "v1.19.1", NOTHING_SET, "object.Certificate=[]")
    assert found["cert-manager-v1-19-0-reissues"] == "does-not-apply"
    assert code == 0


def test_landing_on_v1_14_0_or_1_is_blocked_and_v1_14_2_is_not() -> None:
    for to in ("v1.14.0", "v1.14.1"):
        code, found = judge("v1.13.6", to, NOTHING_SET)
        assert (code, found["cert-manager-v1-14-early-patches"]) == (3, "applies"), to
    code, found = judge("v1.13.6", "v1.14.2", NOTHING_SET)
    assert (code, found["cert-manager-v1-14-early-patches"]) == (0, "does-not-apply")


# --------------------------------------------------------------- v1.21 removed values keys

REMOVED = "cert-manager-121-metrics-values-removed"


def test_a_removed_metrics_key_in_the_values_blocks_the_move_to_v1_21() -> None:
    values = 'values.cert-manager={"prometheus.servicemonitor.targetPort":"9402"}'
    key = "values.cert-manager.prometheus.servicemonitor.targetPort=9402"
    code, found = judge("v1.20.3", "v1.21.1", values, key)
    assert (code, found[REMOVED]) == (3, "applies")


def test_values_without_the_removed_keys_move_to_v1_21() -> None:
    code, found = judge("v1.20.3", "v1.21.1", NOTHING_SET)
    assert found[REMOVED] == "does-not-apply"
    assert code == 0


def test_unknown_values_leave_the_v1_21_move_undetermined() -> None:
    code, found = judge("v1.20.3", "v1.21.1")
    assert (code, found[REMOVED]) == (4, "may-apply")


# --------------------------------------------------------------- v1.15 gateway flag

GATEWAY = "cert-manager-115-gateway-api-flag"


def test_the_experimental_gateway_gate_in_the_values_blocks_v1_15() -> None:
    gate = "ExperimentalGatewayAPISupport=true"
    code, found = judge(
        "v1.14.7",
        "v1.15.5",
        f'values.cert-manager={{"featureGates":"{gate}"}}',
        f"values.cert-manager.featureGates={gate}",
    )
    assert (code, found[GATEWAY]) == (3, "applies")


def test_values_without_the_gate_move_to_v1_15() -> None:
    code, found = judge("v1.14.7", "v1.15.5", NOTHING_SET)
    assert found[GATEWAY] == "does-not-apply"
    assert code == 0


def test_a_set_but_unread_feature_gates_value_may_apply() -> None:
    code, found = judge("v1.14.7", "v1.15.5", 'values.cert-manager={"featureGates":"x"}')
    assert (code, found[GATEWAY]) == (4, "may-apply")


# --------------------------------------------------------------- v1.18 rotation policy

ROTATION = "cert-manager-118-rotation-policy-always"


def test_a_certificate_without_rotation_policy_warns_on_the_move_to_v1_18() -> None:
    code, found = judge(
        "v1.17.4",
        "v1.18.6",
        NOTHING_SET,
        'object.Certificate=["web/site"]',
        "object.Certificate.web.site.spec.privateKey.rotationPolicy=null",
    )
    assert found[ROTATION] == "applies"
    assert code == 0  # a warning: the move is safe with an action, not blocked


def test_certificates_that_all_say_never_do_not_warn() -> None:
    code, found = judge(
        "v1.17.4",
        "v1.18.6",
        NOTHING_SET,
        'object.Certificate=["web/site"]',
        "object.Certificate.web.site.spec.privateKey.rotationPolicy=Never",
    )
    assert found[ROTATION] == "does-not-apply"
    assert code == 0


def test_certificates_not_listed_leave_the_rotation_warning_open() -> None:
    _, found = judge("v1.17.4", "v1.18.6", NOTHING_SET)
    assert found[ROTATION] == "may-apply"


# --------------------------------------------------------------- the stepping rule


def test_a_long_jump_stops_on_the_latest_patch_of_every_minor() -> None:
    code, p = plan(
        *PACK,
        *("--installed", "cert-manager=v1.16.2", "--to", "cert-manager=v1.19.6"),
        *("--fact", NOTHING_SET, "--fact", "object.Certificate=[]"),
    )
    assert p["path"] == {"cert-manager": ["v1.16.2", "v1.16.5", "v1.17.4", "v1.18.6", "v1.19.6"]}
    assert code == 0
    skipped = {f["hazard"] for f in p["direct"]["findings"] if f["status"] == "applies"}
    assert "stepping:cert-manager@v1.17.4" in skipped


# --------------------------------------------------------------- a Flux tree of our own


def test_gitops_tree_moved_to_v1_21_with_a_removed_key_exits_3() -> None:
    code, out = run(*PACK, "check", "--gitops", str(FIXTURE), "--to", "cert-manager=v1.21.1")
    assert code == 3, out
    assert REMOVED in out


def bumped(root: Path, keep_key: bool) -> Path:
    """The fixture as a git repository at v1.20.3 (with or without the removed key), and the
    Renovate bump to v1.21.1 in its working tree."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = root / "repo"
    shutil.copytree(FIXTURE, repo)
    release = repo / "clusters" / "home" / "infra" / "helmrelease.yaml"
    if not keep_key:
        release.write_text(release.read_text().replace("        targetPort: 9402\n", ""))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    release.write_text(release.read_text().replace("version: v1.20.3", "version: v1.21.1"))
    return repo


def test_gitops_renovate_bump_to_v1_21_is_blocked_at_review(tmp_path: Path) -> None:
    repo = bumped(tmp_path, keep_key=True)
    code, out = run(*PACK, "check", "--gitops", str(repo), "--base", "HEAD")
    assert code == 3, out
    assert REMOVED in out and "v1.20.3 → v1.21.1" in out


def test_gitops_renovate_bump_without_the_removed_key_passes(tmp_path: Path) -> None:
    repo = bumped(tmp_path, keep_key=False)
    code, out = run(*PACK, "check", "--gitops", str(repo), "--base", "HEAD")
    assert code == 0, out


def test_gitops_bump_that_removes_the_key_in_the_same_change_passes(tmp_path: Path) -> None:
    # the base commit sets the key v1.21 removed; the change bumps the chart and drops the
    # key: Flux applies the head's values with the new chart, which the hazard must read
    repo = bumped(tmp_path, keep_key=True)
    release = repo / "clusters" / "home" / "infra" / "helmrelease.yaml"
    release.write_text(release.read_text().replace("        targetPort: 9402\n", ""))
    code, out = run(*PACK, "check", "--gitops", str(repo), "--base", "HEAD", "--no-chart-checks")
    assert code == 0, out
    assert REMOVED not in out
    assert "cert-manager v1.20.3 → v1.21.1" in out  # the moved pin, on the first screen


def test_gitops_bump_that_removes_the_whole_prometheus_block_passes(tmp_path: Path) -> None:
    repo = bumped(tmp_path, keep_key=True)
    release = repo / "clusters" / "home" / "infra" / "helmrelease.yaml"
    text = release.read_text()
    release.write_text(text[: text.index("    prometheus:")])
    code, out = run(*PACK, "check", "--gitops", str(repo), "--base", "HEAD", "--no-chart-checks")
    assert code == 0, out
