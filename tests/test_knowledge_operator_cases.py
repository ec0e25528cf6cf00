"""The operator knowledge of the real agent-platform history, as a user meets it in ``check``.

Each case is stated with flags (or a small GitOps tree) and names the UPGRADE.md section or
CHANGELOG entry of giantswarm/agent-platform it comes from (docs/knowledge-sources.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli import check, run_in
from support.scenarios import statuses_of

GITOPS = Path(__file__).resolve().parent / "fixtures" / "gitops"


def _finding(res: dict[str, Any], hazard: str) -> dict[str, Any]:
    return next(f for f in res["findings"] if f["hazard"] == hazard)


# --------------------------------------------------------------------------- #413


def test_472_to_4714_under_default_deny_egress_is_not_safe() -> None:
    # CHANGELOG #413: the 4.7.13+ backup hook cannot reach the API server under default-deny
    hop = ("--installed", "agent-platform=4.7.12", "--to", "agent-platform=4.7.14")
    _, denied = check(*hop, "--fact", "cloud.default-deny-egress=true")
    assert denied["verdict"] != "safe"
    assert statuses_of(denied["findings"])["storage-version-hook-no-egress"] == "applies"
    _, open_ = check(*hop, "--fact", "cloud.default-deny-egress=false")
    assert statuses_of(open_["findings"])["storage-version-hook-no-egress"] == "does-not-apply"
    _, unknown = check(*hop)
    hook = _finding(unknown, "storage-version-hook-no-egress")
    assert hook["status"] == "may-apply"
    assert "cloud.default-deny-egress" in json.dumps(hook)


def test_an_installation_past_4713_has_run_the_hook_already() -> None:
    _, res = check(
        "--installed",
        "agent-platform=4.7.18",
        "--fact",
        "cloud.default-deny-egress=true",
        "--to",
        "agent-platform=4.7.19",
    )
    assert "storage-version-hook-no-egress" not in {
        f["hazard"] for f in res["findings"] if f["status"] != "does-not-apply"
    }


# --------------------------------------------------------------------------- 4.7.19 skip


def test_a_3x_cutover_to_480_does_not_raise_the_4719_skip_hazards() -> None:
    # seed #409/#410 and UPGRADE "4.7.x → 4.8.0": no 3.x connectivity chart rendered a Harness
    _, res = check(
        "--installed",
        "agent-platform=3.23.1",
        "--pin",
        "agent-platform-connectivity=3.23.1",
        "--fact",
        "helmrelease.kagent.drift-detection=disabled",
        "--to",
        "agent-platform=4.8.0",
    )
    raised = {f["hazard"] for f in res["findings"] if f["status"] != "does-not-apply"}
    assert not raised & {"harness-handover-skipped", "harness-gap-skipping-to-481"}
    # what a cut-over from 3.x does meet is there
    assert "harness-selector-lost-in-merge-patch" in raised


def test_a_cutover_without_the_snapshot_location_is_reported_and_with_it_is_not() -> None:
    # UPGRADE "3.x → 4.0 (the kagent line)": the value is required with kagent on
    hop = ("--installed", "agent-platform=3.23.1", "--to", "agent-platform=4.10.1")
    _, res = check(*hop)
    assert statuses_of(res["findings"])["snapshot-location-unset"] == "may-apply"
    _, res = check(*hop, "--fact", "values.agent-platform.kagent.harness.snapshotLocation=s3://b/p")
    assert statuses_of(res["findings"])["snapshot-location-unset"] == "does-not-apply"


def test_a_4x_exact_pin_skipping_4719_still_raises_it() -> None:
    _, res = check(
        "--installed",
        "agent-platform=4.7.18",
        "--pin",
        "agent-platform-connectivity=4.7.18",
        "--fact",
        "helmrelease.kagent.drift-detection=disabled",
        "--fact",
        "object.Harness.kagent.kagent.annotations=",
        "--to",
        "agent-platform=4.8.0",
    )
    assert statuses_of(res["findings"])["harness-handover-skipped"] == "applies"


# --------------------------------------------------------------------------- #466


def test_a_kagent_range_admitting_a_build_against_another_substrate_is_reported() -> None:
    # CHANGELOG #466: 4.15.2's kagent range admitted 0.11.0-gs.14 (Substrate 0.0.30) under a
    # Substrate 0.0.27-gs.9 range
    _, res = check("--installed", "agent-platform=4.15.2")
    assert res["verdict"] == "blocked"
    pins = _finding(res, "kagent-substrate-pins-apart")
    assert pins["status"] == "applies"
    assert "0.11.0-gs.14" in json.dumps(pins) and "substrate" in json.dumps(pins)


def test_a_bom_pinning_kagent_and_substrate_apart_is_reported_and_together_is_not() -> None:
    apart = ("--pin", "kagent=0.11.0-gs.14", "--pin", "substrate=0.0.27-gs.9")
    _, res = check("--installed", "agent-platform=4.15.5", *apart)
    assert statuses_of(res["findings"])["kagent-substrate-pins-apart"] == "applies"
    together = ("--pin", "kagent=0.11.0-gs.20", "--pin", "substrate=0.0.30-gs.4")
    _, res = check("--installed", "agent-platform=4.15.5", *together)
    assert statuses_of(res["findings"])["kagent-substrate-pins-apart"] == "does-not-apply"


def test_the_workerpool_worker_is_compared_with_the_installed_substrate() -> None:
    # CHANGELOG/UPGRADE #466: `kubectl -n kagent get workerpool kagent-default` and the atelet
    # name the same Substrate version when it worked; 4.15.2 ran a 0.0.30 worker under 0.0.27-gs.9
    image = "object.WorkerPool.kagent.kagent-default.spec.workerImage"
    worker = "ghcr.io/giantswarm/substrate/ateom-gvisor"
    base = ("--installed", "agent-platform=4.15.5", "--installed", "substrate=0.0.30-gs.4")
    _, res = check(*base, "--fact", f"{image}={worker}:0.0.30-gs.4")
    assert statuses_of(res["findings"])["substrate-worker-apart-from-release"] == "does-not-apply"
    _, res = check(*base, "--fact", f"{image}={worker}:0.0.30-gs.1")
    assert statuses_of(res["findings"])["substrate-worker-apart-from-release"] == "applies"
    _, res = check(*base)
    found = _finding(res, "substrate-worker-apart-from-release")
    assert found["status"] == "may-apply" and [m["key"] for m in found["missing"]] == [image]


# --------------------------------------------------------------------------- BOM floors


@pytest.mark.parametrize(
    ("installed", "target", "pin", "hazard", "floor"),
    [
        ("4.9.3", "4.10.0", "kagent=0.11.0-gs.6", "bom-kagent-below-floor", "0.11.0-gs.9"),
        ("4.10.0", "4.10.1", "klaus-gateway=1.0.2", "bom-klaus-gateway-below-floor", "1.1.0"),
        ("3.10.0", "3.18.0", "muster=5.11.0", "bom-muster-below-floor", "5.12.0"),
    ],
)
def test_a_bom_pin_below_a_meta_release_floor_is_reported_with_the_floor(
    installed: str, target: str, pin: str, hazard: str, floor: str
) -> None:
    _, res = check(
        "--installed",
        f"agent-platform={installed}",
        "--pin",
        pin,
        "--to",
        f"agent-platform={target}",
    )
    assert res["verdict"] != "safe"
    found = _finding(res, hazard)
    assert found["status"] == "applies"
    assert floor in found["title"]
    product = pin.split("=")[0]
    _, ok = check(
        "--installed",
        f"agent-platform={installed}",
        "--pin",
        f"{product}={floor}",
        "--to",
        f"agent-platform={target}",
    )
    assert statuses_of(ok["findings"])[hazard] == "does-not-apply"


# --------------------------------------------------------------------------- #287


def test_a_muster_hpa_under_the_muster_release_drift_detection_is_reported() -> None:
    # UPGRADE "the muster release detects and corrects drift": add an ignore rule first; a GitOps
    # read sees the muster HelmRelease's drift detection as disabled, so only the value decides
    hop = ("--installed", "agent-platform=4.8.1", "--to", "agent-platform=4.9.1")
    key = "values.agent-platform.muster.autoscaling.enabled"
    _, on = check(
        *hop, "--fact", f"{key}=true", "--fact", "helmrelease.muster.drift-detection=disabled"
    )
    assert statuses_of(on["findings"])["muster-drift-detection-hpa"] == "applies"
    _, off = check(*hop, "--fact", f"{key}=false")
    assert statuses_of(off["findings"])["muster-drift-detection-hpa"] == "does-not-apply"


# --------------------------------------------------------------------------- klaus-gateway#271


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _gate_on_a_meta_move(tmp_path: Path, values: str) -> dict[str, Any]:
    """A repository on S1's 4.7.18 pins with ``values`` in the BOM; a PR moves the meta chart."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    prod = tmp_path / "clusters" / "prod"
    shutil.copytree(GITOPS / "s1", prod)
    bom = prod / "bom.yaml"
    bom.write_text(bom.read_text() + values)
    who = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    _git(tmp_path, "init", "-q")
    _git(tmp_path, *who, "add", ".")
    _git(tmp_path, *who, "commit", "-qm", "base")
    oci = prod / "agent-platform" / "ocirepository.yaml"
    oci.write_text(oci.read_text().replace('semver: "4.7.18"', 'semver: "4.7.19"'))
    bom.write_text(bom.read_text().replace('versionRange: "4.7.18"', 'versionRange: "4.7.19"', 1))
    gate = ["check", "--gitops", "clusters/prod", "--base", "HEAD", "-o", "json"]
    code, out, err = run_in(gate, cwd=tmp_path)
    assert code in (0, 3, 4), err
    [result] = json.loads(out)["results"]
    assert result["targets"] == [{"product": "agent-platform", "version": "4.7.19"}]
    return dict(result)


def test_a_pr_moving_the_meta_chart_with_klausgateway_crd_install_set_is_reported(
    tmp_path: Path,
) -> None:
    # klaus-gateway#271: the closed schema refuses klausGateway.crd.* once the chart rolls
    result = _gate_on_a_meta_move(tmp_path, "klausGateway:\n  crd:\n    install: true\n")
    crd = _finding(result, "klaus-gateway-crd-keys-refused")
    assert crd["status"] == "applies"
    assert "bom.yaml" in json.dumps(crd)


def test_the_same_pr_without_the_key_does_not_raise_it(tmp_path: Path) -> None:
    result = _gate_on_a_meta_move(tmp_path, "klausGateway:\n  routing:\n    store: valkey\n")
    assert statuses_of(result["findings"]).get("klaus-gateway-crd-keys-refused") != "applies"


# --------------------------------------------------------------------------- BOM floors, as is


def test_a_bom_still_pinning_kagent_below_the_floor_on_a_later_release_is_not_silent() -> None:
    # UPGRADE.md (#418): a BOM pins kagent/kagent-crds to 0.11.0-gs.9 or later after 4.9.3; an
    # installation already past 4.9.3 whose BOM kept an older pin is reported as it is, not
    # only on the move across 4.9.3
    _, res = check("--installed", "agent-platform=4.15.5", "--pin", "kagent=0.11.0-gs.6")
    assert res["verdict"] != "safe"
    assert statuses_of(res["findings"])["bom-kagent-below-floor"] == "applies"
    _, res = check("--installed", "agent-platform=4.15.5", "--pin", "kagent=0.11.0-gs.20")
    assert statuses_of(res["findings"])["bom-kagent-below-floor"] == "does-not-apply"


def test_a_bom_still_pinning_klaus_gateway_below_the_floor_is_not_silent() -> None:
    _, res = check("--installed", "agent-platform=4.11.0", "--pin", "klaus-gateway=1.0.2")
    assert statuses_of(res["findings"])["bom-klaus-gateway-below-floor"] == "applies"


# --------------------------------------------------------------------------- #416, settled


def test_the_cutover_race_does_not_apply_once_no_crd_is_stored_at_v1alpha2() -> None:
    # the race is the backup hook's deletion of CRDs still stored at v1alpha2 (UPGRADE.md,
    # 3.x → 4.0): stating that none is settles it; it no longer "applies" regardless
    hop = ("--installed", "agent-platform=3.23.1", "--to", "agent-platform=4.7.14")
    stored = [
        f"crd.{crd}.kagent.dev.stored-versions=v1alpha3"
        for crd in ("modelconfigs", "remotemcpservers", "modelproviderconfigs")
    ]
    facts = [a for s in stored for a in ("--fact", s)]
    _, res = check(*hop, *facts)
    assert statuses_of(res["findings"])["cutover-pr-race"] == "does-not-apply"
    facts[1] = "crd.modelconfigs.kagent.dev.stored-versions=v1alpha2"
    _, res = check(*hop, *facts)
    assert statuses_of(res["findings"])["cutover-pr-race"] == "applies"
    _, res = check(*hop)
    assert statuses_of(res["findings"])["cutover-pr-race"] == "may-apply"
