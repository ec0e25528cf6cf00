"""The external-secrets pack (packs/external-secrets) as a user meets it: each hazard applies,
does not apply, or may apply when its fact is unknown, on stated facts; the stepping rule (one
minor at a time); a Flux tree of our own (tests/fixtures/packs/external-secrets) on 0.16.2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.cli import check, plan, run

ROOT = Path(__file__).resolve().parent.parent
PACK = ("--pack", "external-secrets")
FIXTURE = ROOT / "tests" / "fixtures" / "packs" / "external-secrets"
ON_V1 = "prerequisite.external-secrets.manifests-on-v1"
UNSERVED = "external-secrets-017-v1beta1-unserved"
PROVIDERS = "external-secrets-200-providers-removed"


def judge(frm: str, to: str, *facts: str) -> tuple[int, dict[str, str]]:
    """``check`` of one stated move: exit code and each hazard's status on the direct jump."""
    args = [*PACK, "--installed", f"external-secrets={frm}", "--to", f"external-secrets={to}"]
    for fact in facts:
        args += ["--fact", fact]
    code, result = check(*args)
    found: list[dict[str, Any]] = result["findings"]
    return code, {f["hazard"]: f["status"] for f in found}


def test_the_pack_lints_clean() -> None:
    code, out = run("kb", "lint", "--strict", *PACK)
    assert (code, out.strip()) == (0, "")


# --------------------------------------------------------------- 0.17: v1beta1 no longer served


def test_manifests_still_on_v1beta1_block_the_move_to_0_17() -> None:
    code, found = judge("0.16.2", "0.17.0", f"{ON_V1}=false")
    assert (code, found[UNSERVED]) == (3, "applies")


def test_manifests_moved_to_v1_let_0_17_through() -> None:
    code, found = judge("0.16.2", "0.17.0", f"{ON_V1}=true")
    assert (code, found[UNSERVED]) == (0, "does-not-apply")


def test_unstated_manifests_leave_0_17_undetermined_and_name_the_fact() -> None:
    code, out = run(
        *PACK, "check", "--installed", "external-secrets=0.16.2", "--to", "external-secrets=0.17.0"
    )
    assert code == 4
    assert ON_V1 in out


# --------------------------------------------------------------- 2.0: providers removed

STORES = ('object.SecretStore=["app/cn"]', "object.ClusterSecretStore=[]")


def test_a_store_on_the_alibaba_provider_blocks_2_0() -> None:
    code, found = judge(
        "1.3.2",
        "2.0.0",
        *STORES,
        'object.SecretStore.app.cn.spec.provider.alibaba={"regionID":"cn-hangzhou"}',
        "object.SecretStore.app.cn.spec.provider.device42=null",
    )
    assert (code, found[PROVIDERS]) == (3, "applies")


def test_stores_on_other_providers_move_to_2_0() -> None:
    code, found = judge(
        "1.3.2",
        "2.0.0",
        *STORES,
        "object.SecretStore.app.cn.spec.provider.alibaba=null",
        "object.SecretStore.app.cn.spec.provider.device42=null",
    )
    assert (code, found[PROVIDERS]) == (0, "does-not-apply")


def test_stores_not_listed_leave_2_0_undetermined() -> None:
    code, found = judge("1.3.2", "2.0.0")
    assert (code, found[PROVIDERS]) == (4, "may-apply")


# --------------------------------------------------------------- the stepping rule


def test_a_long_jump_stops_on_every_minor() -> None:
    code, p = plan(
        *PACK,
        *("--installed", "external-secrets=0.15.0", "--to", "external-secrets=0.17.0"),
        *("--fact", f"{ON_V1}=true"),
    )
    assert p["path"] == {"external-secrets": ["0.15.0", "0.16.0", "0.17.0"]}
    assert code == 0


# --------------------------------------------------------------- a Flux tree of our own


def test_gitops_tree_on_0_16_moving_to_0_17_asks_for_the_manifests() -> None:
    args = (*PACK, "check", "--gitops", str(FIXTURE), "--to", "external-secrets=0.17.0")
    code, out = run(*args)
    assert code == 4, out
    assert UNSERVED in out and ON_V1 in out
    code, out = run(*args, "--fact", f"{ON_V1}=false")
    assert code == 3, out
    code, out = run(*args, "--fact", f"{ON_V1}=true")
    assert code == 0, out
