"""Whole repositories in the four common Flux layouts, read from their root.

The trees under ``tests/fixtures/gitops-layouts/`` are our own, each written in one layout's
style with the agent-platform installation of ``tests/fixtures/gitops/s1``:

- ``kustomize-helm``: clusters/apps/infrastructure with base and overlays (two clusters; the
  staging overlay patches the OCIRepository with a patch that carries only its name);
- ``multi-tenant``: tenants onboarded from the cluster, one tenant from another repository;
- ``home-ops``: namespace directories listing ``ks.yaml`` files (>= 40 HelmReleases,
  post-build substitution of ``${APP}``, a Flux-level patch of every child Kustomization);
- ``monorepo``: three clusters sharing bases, each with its overlay.

Each test copies a tree into a temporary git repository (the base commit), makes the pull
request's change, commits it, and runs the CLI at the root.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_in

LAYOUTS = Path(__file__).resolve().parent / "fixtures" / "gitops-layouts"

HOME_APPS = {
    "atuin", "bazarr", "radarr", "sonarr", "prowlarr", "sabnzbd", "plex",
    "immich", "navidrome", "audiobookshelf", "kavita", "komga", "calibre-web",
    "cloudflared", "external-dns", "envoy-gateway", "k8s-gateway", "echo",
    "grafana", "kube-prometheus-stack", "loki", "gatus", "unpoller", "vector",
    "cilium", "coredns", "metrics-server", "reloader", "spegel", "snapshot-controller",
    "rook-ceph", "volsync", "openebs", "minio",
    "cloudnative-pg", "dragonfly", "emqx",
    "external-secrets", "onepassword", "cert-manager",
    "flux-instance", "agent-platform",
}  # fmt: skip

# layout -> installation -> the HelmReleases Flux applies there
APPLIED: dict[str, dict[str, set[str]]] = {
    "kustomize-helm": {
        "staging": {"cert-manager", "ingress-nginx", "podinfo", "agent-platform"},
        "production": {"cert-manager", "ingress-nginx", "podinfo", "agent-platform"},
    },
    "multi-tenant": {"production": {"kyverno", "agent-platform"}},
    "home-ops": {"cluster": HOME_APPS},
    "monorepo": {
        c: {"kube-prometheus-stack", "agent-platform"} for c in ("alpha", "beta", "gamma")
    },
}

# layout -> (installation, file, the pin line before, after): the pull request's change
PULL_REQUEST: dict[str, tuple[str, str, str, str]] = {
    "kustomize-helm": (
        "production",
        "apps/production/agent-platform-version.yaml",
        'semver: "4.7.18"',
        'semver: "4.8.0"',
    ),
    "multi-tenant": (
        "production",
        "teams/platform/production/agent-platform.yaml",
        'semver: "4.7.18"',
        'semver: "4.8.0"',
    ),
    "home-ops": (
        "cluster",
        "kubernetes/apps/flux-giantswarm/agent-platform/app/ocirepository.yaml",
        'semver: "4.7.18"',
        'semver: "4.8.0"',
    ),
    "monorepo": (
        "alpha",
        "platform/overlays/alpha/kustomization.yaml",
        'value: "4.7.18"',
        'value: "4.8.0"',
    ),
}

# where the connectivity pin left behind is (installation's BOM)
CONNECTIVITY_PIN = {
    "kustomize-helm": "apps/production/bom.yaml:7",
    "multi-tenant": "teams/platform/production/bom.yaml:7",
    "home-ops": "kubernetes/apps/flux-giantswarm/agent-platform/app/resources/bom.yaml:7",
    "monorepo": "platform/overlays/alpha/bom.yaml:7",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=ci@example.com", "-c", "user.name=ci", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def _repository(tmp_path: Path, layout: str) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / layout
    shutil.copytree(LAYOUTS / layout, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def _pull_request(repo: Path, layout: str) -> str:
    """Bump agent-platform to 4.8.0 and leave the connectivity pin behind; the changed line."""
    _, rel, before, after = PULL_REQUEST[layout]
    path = repo / rel
    text = path.read_text()
    assert text.count(before) == 1
    path.write_text(text.replace(before, after))
    _git(repo, "commit", "-q", "-am", "agent-platform 4.8.0")
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if after in t)
    return f"{rel}:{line}"


def _scan(repo: Path, *extra: str) -> dict[str, dict[str, Any]]:
    code, out, err = run_in(["scan", "--gitops", ".", "-o", "json", *extra], cwd=repo)
    assert code == 0, err
    return {r["name"]: r["state"] for r in json.loads(out)["results"]}


def _helmreleases(state: dict[str, Any]) -> set[str]:
    return {
        k.split(".")[1]
        for k in state["facts"]
        if k.startswith("helmrelease.") and k.endswith(".drift-detection")
    }


@pytest.mark.parametrize("layout", sorted(APPLIED))
def test_scan_at_the_root_reads_every_helmrelease_flux_applies(tmp_path: Path, layout: str) -> None:
    states = _scan(_repository(tmp_path, layout))
    assert set(states) == set(APPLIED[layout])
    for name, releases in APPLIED[layout].items():
        read = _helmreleases(states[name])
        assert releases <= read, (name, releases - read)
        # BOM components are the only other releases: what the meta chart renders
        assert read - releases <= {"agent-platform-connectivity", "kagent", "kagent-crds"}


def test_home_ops_reads_more_than_40_releases_and_not_the_unlisted_one(tmp_path: Path) -> None:
    state = _scan(_repository(tmp_path, "home-ops"))["cluster"]
    read = _helmreleases(state)
    assert len(read & HOME_APPS) >= 40
    assert "jellyseerr" not in read  # its ks.yaml is not listed in default/kustomization.yaml
    # ${APP} was substituted from the app's Kustomization, and targetNamespace applied
    assert state["facts"]["helmrelease.atuin.namespace"]["value"] == "default"
    assert state["facts"]["helmrelease.agent-platform.namespace"]["value"] == "flux-giantswarm"


@pytest.mark.parametrize("layout", sorted(PULL_REQUEST))
def test_the_pull_request_gate_at_the_root_blocks_the_bump(tmp_path: Path, layout: str) -> None:
    repo = _repository(tmp_path, layout)
    changed = _pull_request(repo, layout)
    installation = PULL_REQUEST[layout][0]
    code, out, err = run_in(["check", "--gitops", ".", "--base", "HEAD~1", "-o", "json"], cwd=repo)
    assert code == 3, err
    results = {r["name"]: r for r in json.loads(out)["results"]}
    assert set(results) == set(APPLIED[layout])
    mine = results[installation]
    assert mine["verdict"] == "blocked"
    assert mine["targets"] == [{"product": "agent-platform", "version": "4.8.0"}]
    findings = {f["hazard"]: f for f in mine["findings"]}
    second_owner = findings["connectivity-pin-behind-479-second-owner"]
    assert second_owner["status"] == "applies"
    assert second_owner["location"] == CONNECTIVITY_PIN[layout]
    # the pin the pull request changed is what the state now reads
    _, head_out, _ = run_in(["scan", "--gitops", ".", "-o", "json"], cwd=repo)
    head = {r["name"]: r["state"] for r in json.loads(head_out)["results"]}[installation]
    assert head["facts"]["pin.agent-platform"]["source"] == changed
    for other, result in results.items():
        if other != installation:
            assert result["targets"] == [], other  # the other clusters did not move


def test_the_overlay_patch_by_target_gives_stagings_version_at_its_line(tmp_path: Path) -> None:
    states = _scan(_repository(tmp_path, "kustomize-helm"))
    staging = states["staging"]["facts"]["pin.agent-platform"]
    assert staging == {"value": "4.7.19", "source": "apps/staging/agent-platform-version.yaml:7"}
    production = states["production"]["facts"]["pin.agent-platform"]
    assert production["value"] == "4.7.18"


def test_two_clusters_have_their_own_verdicts_in_text_json_and_sarif(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "kustomize-helm")
    _pull_request(repo, "kustomize-helm")
    gate = ["check", "--gitops", ".", "--base", "HEAD~1"]
    code, text, _ = run_in(gate, cwd=repo)
    assert code == 3
    assert "[production]: blocked" in text
    assert "[staging]: safe" in text
    _, out, _ = run_in([*gate, "-o", "json"], cwd=repo)
    verdicts = {r["name"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {"production": "blocked", "staging": "safe"}
    _, out, _ = run_in([*gate, "-o", "sarif"], cwd=repo)
    runs = json.loads(out)["runs"]
    ids = [r["automationDetails"]["id"] for r in runs]
    assert ids == ["upgradeplan/production/", "upgradeplan/staging/"]
    by_id = {r["automationDetails"]["id"]: r for r in runs}
    assert by_id["upgradeplan/production/"]["results"]
    assert by_id["upgradeplan/staging/"]["results"] == []


def test_cluster_selects_one_installation(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "monorepo")
    assert set(_scan(repo, "--cluster", "beta")) == {"beta"}
    code, _, err = run_in(["scan", "--gitops", ".", "--cluster", "delta"], cwd=repo)
    assert code == 2
    assert "installations found: alpha, beta, gamma" in err


def test_a_tenant_from_another_repository_is_named_as_unread(tmp_path: Path) -> None:
    state = _scan(_repository(tmp_path, "multi-tenant"))["production"]
    why = state["unreadable"]["source GitRepository dev-team"]
    assert why.startswith("tenants/base/dev-team/sync.yaml:")
    assert "another repository" in why
