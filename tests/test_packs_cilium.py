"""The cilium pack (packs/cilium) as a user meets it: each hazard applies, does not apply, or
may apply when the fact it reads is unknown, on stated facts; the stepping rule (one minor at
a time, from the latest patch); a bump in a small Flux tree of our own
(tests/fixtures/packs/cilium) gets the verdict the 1.17 upgrade notes give.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import check, git, plan, run

ROOT = Path(__file__).resolve().parent.parent
PACK = ("--pack", "cilium")
FIXTURE = ROOT / "tests" / "fixtures" / "packs" / "cilium"
NOTHING_SET = "values.cilium={}"


def judge(frm: str, to: str, *facts: str) -> tuple[int, dict[str, str]]:
    """``check`` of one stated move: exit code and each hazard's status on the direct jump."""
    args = [*PACK, "--installed", f"cilium={frm}", "--to", f"cilium={to}"]
    for fact in facts:
        args += ["--fact", fact]
    code, result = check(*args)
    found: list[dict[str, Any]] = result["findings"]
    return code, {f["hazard"]: f["status"] for f in found}


def values(**keys: object) -> tuple[str, ...]:
    """The values map (flattened keys) and each key as its own fact (``a__b`` is ``a.b``)."""
    import json

    flat = {
        k.replace("__", "."): str(v).lower() if isinstance(v, bool) else str(v)
        for k, v in keys.items()
    }
    one = tuple(f"values.cilium.{k}={v}" for k, v in flat.items())
    return (f"values.cilium={json.dumps(flat)}", *one)


def test_the_pack_lints_clean() -> None:
    code, out = run("kb", "lint", "--strict", *PACK)
    assert (code, out.strip()) == (0, "")


# --------------------------------------------------------------- 1.17: cluster name

NAME = "cilium-117-cluster-name-enforced"


def test_an_invalid_cluster_name_blocks_the_move_to_1_17() -> None:
    code, found = judge("1.16.19", "1.17.0", *values(cluster__name="Prod_EU"))
    assert (code, found[NAME]) == (3, "applies")


def test_a_valid_or_default_cluster_name_moves_to_1_17() -> None:
    code, found = judge("1.16.19", "1.17.0", *values(cluster__name="prod-eu-1"))
    assert (code, found[NAME]) == (0, "does-not-apply")
    code, found = judge("1.16.19", "1.17.0", NOTHING_SET)
    assert (code, found[NAME]) == (0, "does-not-apply")


def test_unknown_values_leave_the_1_17_move_undetermined() -> None:
    code, found = judge("1.16.19", "1.17.0")
    assert (code, found[NAME]) == (4, "may-apply")


# --------------------------------------------------------------- 1.17: WireGuard fallback

WIREGUARD = "cilium-117-wireguard-userspace-fallback-removed"


def test_the_wireguard_userspace_fallback_blocks_1_17() -> None:
    code, found = judge("1.16.19", "1.17.0", *values(wireguard__userspaceFallback=True))
    assert (code, found[WIREGUARD]) == (3, "applies")


def test_without_the_fallback_1_17_is_not_blocked_by_it() -> None:
    _, found = judge("1.16.19", "1.17.0", NOTHING_SET)
    assert found[WIREGUARD] == "does-not-apply"


def test_unknown_values_leave_the_fallback_open() -> None:
    _, found = judge("1.16.19", "1.17.0")
    assert found[WIREGUARD] == "may-apply"


# --------------------------------------------------------------- 1.16: managed etcd, options

ETCD = "cilium-116-managed-etcd-removed"
OPTIONS = "cilium-116-helm-options-removed"
ENVOY = "cilium-116-envoy-daemonset-default"


def test_the_managed_etcd_blocks_1_16() -> None:
    code, found = judge("1.15.19", "1.16.19", *values(etcd__managed=True, envoy__enabled=True))
    assert (code, found[ETCD]) == (3, "applies")
    _, found = judge("1.15.19", "1.16.19", *values(envoy__enabled=True))
    assert found[ETCD] == "does-not-apply"
    _, found = judge("1.15.19", "1.16.19")
    assert found[ETCD] == "may-apply"


def test_a_removed_helm_option_warns_on_1_16_and_stays_safe() -> None:
    code, found = judge(
        "1.15.19", "1.16.19", *values(proxy__prometheus__enabled=True, envoy__enabled=True)
    )
    assert (code, found[OPTIONS]) == (0, "applies")
    _, found = judge("1.15.19", "1.16.19", *values(envoy__enabled=True))
    assert found[OPTIONS] == "does-not-apply"
    _, found = judge("1.15.19", "1.16.19")
    assert found[OPTIONS] == "may-apply"


def test_the_envoy_daemonset_warns_only_where_the_values_leave_it_to_the_default() -> None:
    _, found = judge("1.15.19", "1.16.19", NOTHING_SET)
    assert found[ENVOY] == "applies"
    _, found = judge("1.15.19", "1.16.19", *values(upgradeCompatibility="1.15"))
    assert found[ENVOY] == "does-not-apply"
    _, found = judge("1.15.19", "1.16.19")
    assert found[ENVOY] == "may-apply"


# --------------------------------------------------------------- 1.19: BGPv1, local cluster

BGP = "cilium-119-bgpv1-removed"
LOCAL = "cilium-119-policy-default-local-cluster"


def test_a_bgpv1_peering_policy_blocks_1_19() -> None:
    code, found = judge(
        "1.18.12",
        "1.19.0",
        NOTHING_SET,
        'object.CiliumBGPPeeringPolicy=["_/rack-1"]',
        'object.CiliumBGPPeeringPolicy._.rack-1.spec.virtualRouters=["asn-64512"]',
    )
    assert (code, found[BGP]) == (3, "applies")


def test_no_peering_policies_leave_1_19_with_no_known_hazard() -> None:
    code, found = judge("1.18.12", "1.19.0", NOTHING_SET, "object.CiliumBGPPeeringPolicy=[]")
    # 1.19 is above the pack's reviewed_through (1.17.0): "no known hazards", never "safe",
    # and like a chart the knowledge does not know it does not fail the run
    assert (code, found[BGP]) == (0, "does-not-apply")
    assert check(*PACK, "--installed", "cilium=1.18.12", "--to", "cilium=1.19.0", "--fact",
                 NOTHING_SET, "--fact", "object.CiliumBGPPeeringPolicy=[]")[1]["verdict"] == (
        "no-known-hazards"
    )  # fmt: skip


def test_peering_policies_not_listed_leave_1_19_undetermined() -> None:
    code, found = judge("1.18.12", "1.19.0", NOTHING_SET)
    assert (code, found[BGP]) == (4, "may-apply")


def test_a_cluster_mesh_without_the_policy_option_blocks_1_19() -> None:
    mesh = values(clustermesh__useAPIServer=True)
    code, found = judge("1.18.12", "1.19.0", *mesh, "object.CiliumBGPPeeringPolicy=[]")
    assert (code, found[LOCAL]) == (3, "applies")
    kept = values(clustermesh__useAPIServer=True, clustermesh__policyDefaultLocalCluster=False)
    code, found = judge("1.18.12", "1.19.0", *kept, "object.CiliumBGPPeeringPolicy=[]")
    assert (code, found[LOCAL]) == (0, "does-not-apply")  # above reviewed_through: not "safe"


def test_no_cluster_mesh_no_local_cluster_finding() -> None:
    _, found = judge("1.18.12", "1.19.0", NOTHING_SET)
    assert found[LOCAL] == "does-not-apply"
    _, found = judge("1.18.12", "1.19.0")
    assert found[LOCAL] == "may-apply"


# --------------------------------------------------------------- the stepping rule


def test_a_long_jump_stops_on_the_latest_patch_of_every_minor() -> None:
    code, p = plan(
        *PACK, "--installed", "cilium=1.15.3", "--to", "cilium=1.17.0", "--fact", NOTHING_SET
    )
    assert p["path"] == {"cilium": ["1.15.3", "1.15.19", "1.16.19", "1.17.0"]}
    skipped = {f["hazard"] for f in p["direct"]["findings"] if f["status"] == "applies"}
    assert {"stepping:cilium@1.15.19", "stepping:cilium@1.16.19"} <= skipped
    assert code == 0


# --------------------------------------------------------------- a Flux tree of our own


def test_gitops_tree_with_an_invalid_cluster_name_cannot_move_to_1_17() -> None:
    code, out = run(*PACK, "check", "--gitops", str(FIXTURE), "--to", "cilium=1.17.0")
    assert code == 3, out
    assert NAME in out


def test_gitops_bump_with_the_cluster_renamed_first_passes(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    release = repo / "clusters" / "lab" / "kube-system" / "helmrelease.yaml"
    release.write_text(release.read_text().replace("name: Lab_West", "name: lab-west"))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    release.write_text(release.read_text().replace("version: 1.16.19", "version: 1.17.0"))
    code, out = run(*PACK, "check", "--gitops", str(repo), "--base", "HEAD")
    assert code == 0, out


# --------------------------------------------------------------- newer than the pack


def test_a_release_newer_than_the_pack_is_judged_not_refused() -> None:
    # 1.20.1 came out after the pack's snapshot (it lists 1.20.0 and 1.21.0-pre.0)
    for command in ("check", "plan"):
        code, out = run(*PACK, command, "--installed", "cilium=1.20.0", "--to", "cilium=1.20.1")
        assert code == 0, out
        assert "no known hazards (knowledge reviewed through 1.17.0)" in out.splitlines()[0]
    code, res = check(*PACK, "--installed", "cilium=1.20.1")
    assert (code, res["verdict"]) == (0, "no-known-hazards")
    assert not any("not in the knowledge base" in n for n in res["notes"])


def test_a_malformed_or_unlisted_older_version_is_still_bad_input() -> None:
    code, out = run(*PACK, "check", "--installed", "cilium=1.19.6", "--to", "cilium=1.20.x")
    assert code == 2 and "invalid version '1.20.x'" in out
    # below the newest listed release of its line: one the chart index never had (a typo)
    code, out = run(*PACK, "check", "--installed", "cilium=1.18.0", "--to", "cilium=1.19.3-rc.5")
    assert code == 2 and "unknown cilium release (--to) '1.19.3-rc.5'" in out


def test_a_late_patch_of_an_older_line_is_newer_than_the_pack() -> None:
    # 1.19.7 would be a patch of the 1.19 line released after the snapshot (which lists 1.20.0)
    code, out = run(*PACK, "check", "--installed", "cilium=1.19.6", "--to", "cilium=1.19.7")
    assert code == 0, out
    assert "no known hazards (knowledge reviewed through 1.17.0)" in out.splitlines()[0]


def test_gitops_bump_past_the_pack_goes_green_naming_the_review(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    release = repo / "clusters" / "lab" / "kube-system" / "helmrelease.yaml"
    text = release.read_text().replace("name: Lab_West", "name: lab-west")
    release.write_text(text.replace("version: 1.16.19", "version: 1.20.0"))
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    release.write_text(release.read_text().replace("version: 1.20.0", "version: 1.20.1"))
    code, out = run(*PACK, "check", "--gitops", str(repo), "--base", "HEAD", "--no-chart-checks")
    assert code == 0, out
    assert "cilium 1.20.0 → 1.20.1" in out
    assert "no known hazards (knowledge reviewed through 1.17.0)" in out
    assert "selects no release" not in out


def test_a_step_above_the_review_reads_its_verdict_after_a_dash() -> None:
    code, out = run(*PACK, "plan", "--installed", "cilium=1.17.3", "--to", "cilium=1.18.12")
    assert code == 0, out
    steps = [line for line in out.splitlines() if line.startswith("Step ")]
    assert steps, out
    assert all("— no known hazards (knowledge reviewed through 1.17.0)" in s for s in steps), steps
    assert not any("((" in s or "))" in s for s in steps), steps
