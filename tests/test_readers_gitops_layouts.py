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
from pathlib import Path
from typing import Any

import pytest
from support.cli import git as _git
from support.cli import run_in
from support.sarif_schema import valid_sarif

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


def _scan(repo: Path, *extra: str, code: int = 0) -> dict[str, dict[str, Any]]:
    """``scan`` at the root: exit 0, or 4 (``code``) when a source could not be read."""
    got, out, err = run_in(["scan", "--gitops", ".", "-o", "json", *extra], cwd=repo)
    assert got == code, err
    return {r["name"]: r["state"] for r in json.loads(out)["results"]}


# the layouts whose trees name a source they cannot read (a tenant's own repository)
SCAN_CODE = {"multi-tenant": 4}


def _helmreleases(state: dict[str, Any]) -> set[str]:
    return {
        k.split(".")[1]
        for k in state["facts"]
        if k.startswith("helmrelease.") and k.endswith(".drift-detection")
    }


@pytest.mark.parametrize("layout", sorted(APPLIED))
def test_scan_at_the_root_reads_every_helmrelease_flux_applies(tmp_path: Path, layout: str) -> None:
    states = _scan(_repository(tmp_path, layout), code=SCAN_CODE.get(layout, 0))
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
    # the finding is at the line the pull request changed; the pin left behind that makes it
    # apply keeps its own line in the evidence
    assert second_owner["location"] == changed
    observed = [o for e in second_owner["evidence"] for o in e["observed"]]
    assert {"key": "pin.agent-platform-connectivity", "value": "4.7.18"}.items() <= observed[
        0
    ].items()
    assert observed[0]["source"] == CONNECTIVITY_PIN[layout]
    blocking = [f for f in mine["findings"] if f["status"] in ("applies", "may-apply")]
    assert {f["location"] for f in blocking} == {changed}
    # the pin the pull request changed is what the state now reads
    _, head_out, _ = run_in(["scan", "--gitops", ".", "-o", "json"], cwd=repo)
    head = {r["name"]: r["state"] for r in json.loads(head_out)["results"]}[installation]
    assert head["facts"]["pin.agent-platform"]["source"] == changed
    for other, result in results.items():
        if other != installation:
            assert result["targets"] == [], other  # the other clusters did not move


@pytest.mark.parametrize("layout", sorted(APPLIED))
def test_a_fixture_tree_inside_this_repository_is_read_from_any_directory(
    tmp_path: Path, layout: str
) -> None:
    """spec.path is resolved against the tree given (its GitRepository root), not against the
    git work tree that happens to hold it."""
    root = LAYOUTS / layout
    for cwd in (LAYOUTS.parent.parent, tmp_path):
        code, out, err = run_in(["scan", "--gitops", str(root), "-o", "json"], cwd=cwd)
        assert code == SCAN_CODE.get(layout, 0), err
        states = {r["name"]: r["state"] for r in json.loads(out)["results"]}
        assert set(states) == set(APPLIED[layout])
        for name, releases in APPLIED[layout].items():
            assert releases <= _helmreleases(states[name]), (cwd, name)
            assert not [k for k in states[name].get("unreadable", {}) if k.startswith("file ")], (
                name
            )


def test_a_directory_inside_a_repository_is_read_against_the_repository_root(
    tmp_path: Path,
) -> None:
    repo = _repository(tmp_path, "monorepo")
    states = _scan(repo / "clusters", "--cluster", "alpha")
    assert APPLIED["monorepo"]["alpha"] <= _helmreleases(states["alpha"])


def test_the_overlay_patch_by_target_gives_stagings_version_at_its_line(tmp_path: Path) -> None:
    states = _scan(_repository(tmp_path, "kustomize-helm"))
    staging = states["staging"]["facts"]["pin.agent-platform"]
    assert staging == {
        "value": "4.7.19",
        "source": "apps/staging/agent-platform-version.yaml:7",
        "from": {"kind": "file", "file": "apps/staging/agent-platform-version.yaml", "line": 7},
    }
    production = states["production"]["facts"]["pin.agent-platform"]
    assert production["value"] == "4.7.18"


def test_two_clusters_have_their_own_verdicts_in_text_json_and_sarif(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "kustomize-helm")
    _pull_request(repo, "kustomize-helm")
    gate = ["check", "--gitops", ".", "--base", "HEAD~1", "--fact", "kubernetes=1.35.0"]
    code, text, _ = run_in(gate, cwd=repo)
    assert code == 3
    assert "[production]: blocked" in text
    assert "[staging]: safe" in text
    _, out, _ = run_in([*gate, "-o", "json"], cwd=repo)
    verdicts = {r["name"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {"production": "blocked", "staging": "safe"}
    _, out, _ = run_in([*gate, "-o", "sarif"], cwd=repo)
    runs = valid_sarif(out)["runs"]
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
    state = _scan(_repository(tmp_path, "multi-tenant"), code=4)["production"]
    why = state["unreadable"]["source GitRepository dev-team"]
    assert why.startswith("tenants/base/dev-team/sync.yaml:")
    assert "another repository" in why


# --------------------------------------------------------------------------- real-tree files

HOSTILE = {
    "clusters/prod/flux-system/gotk-sync.yaml": (
        LAYOUTS / "monorepo/clusters/alpha/flux-system/gotk-sync.yaml"
    )
    .read_text()
    .replace("./clusters/alpha", "./clusters/prod"),
    "clusters/prod/apps.yaml": """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 1h
  path: ./apps/prod
  sourceRef:
    kind: GitRepository
    name: flux-system
""",
    "apps/prod/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: flux-giantswarm
resources:
  - agent-platform.yaml
  - anchors.yaml
  - broken.yaml
  - recyclarr
configMapGenerator:
  - name: agent-platform-bom
    files:
      - values.yaml=bom.yaml
  - name: scripts
    files:
      - backup.sh
      - config.toml
generatorOptions:
  disableNameSuffixHash: true
""",
    "apps/prod/agent-platform.yaml": (
        LAYOUTS / "multi-tenant/teams/platform/production/agent-platform.yaml"
    ).read_text(),
    "apps/prod/bom.yaml": (
        LAYOUTS / "kustomize-helm/apps/base/agent-platform/bom.yaml"
    ).read_text(),
    "apps/prod/backup.sh": "#!/bin/sh\nset -eu\nrestic backup /data: --tag {{ .Values.x }}\n",
    "apps/prod/config.toml": '[server]\nport = 8080\nname = "a: b: c"\n',
    "apps/prod/anchors.yaml": """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: &app cloudflare-dns
spec:
  chart:
    spec:
      chart: external-dns
      version: 1.15.0
      sourceRef: {kind: HelmRepository, name: external-dns, namespace: flux-system}
  values:
    env:
      - name: &name CF_API_TOKEN
        valueFrom: {secretKeyRef: {name: *app, key: *name}}
      - name: &name CF_ZONE_ID
        valueFrom: {secretKeyRef: {name: *app, key: *name}}
""",
    "apps/prod/broken.yaml": """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: half-written
spec:
  values: [1, 2
""",
    "apps/prod/recyclarr/kustomization.yaml": """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - helmrelease.yaml
configMapGenerator:
  - name: recyclarr
    files:
      - recyclarr.yml
generatorOptions:
  disableNameSuffixHash: true
""",
    "apps/prod/recyclarr/helmrelease.yaml": """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: recyclarr
spec:
  chart:
    spec:
      chart: app-template
      version: 3.7.1
      sourceRef: {kind: HelmRepository, name: bjw-s, namespace: flux-system}
  valuesFrom:
    - kind: ConfigMap
      name: recyclarr
      valuesKey: recyclarr.yml
""",
    "apps/prod/recyclarr/recyclarr.yml": """\
sonarr:
  main:
    base_url: http://sonarr.default.svc
    api_key: !env_var SONARR_API_KEY
""",
    # never applied by Flux: other tools' files, not valid YAML as they stand
    "ansible/playbook.yml": "- hosts: all\n  tasks:\n    - shell: {{ cmd }}: x\n",
    "docs/mkdocs.yml": "site_name: x\nmarkdown_extensions:\n  - !!python/name:material.x\n  a: [\n",
    "templates/deployment.yaml": "apiVersion: apps/v1\nkind: {{ .Kind }}\nmetadata: [\n",
}


def _hostile(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "hostile"
    for rel, text in HOSTILE.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def test_a_tree_of_real_world_files_is_read_without_exit_2(tmp_path: Path) -> None:
    repo = _hostile(tmp_path)
    state = _scan(repo, code=4)["prod"]
    read = _helmreleases(state)
    assert {"agent-platform", "cloudflare-dns", "recyclarr"} <= read
    assert state["facts"]["pin.agent-platform"]["value"] == "4.7.18"
    unreadable = state["unreadable"]
    # the reached file that does not parse is named at its line; nothing else is
    assert list(unreadable) == ["file apps/prod/broken.yaml:7"], unreadable
    assert "YAML syntax error" in unreadable["file apps/prod/broken.yaml:7"]
    code, _, err = run_in(["check", "--gitops", ".", "--to", "agent-platform=4.7.19"], cwd=repo)
    assert code in (0, 3, 4), err


def test_a_hazard_whose_pin_sat_in_an_unreadable_file_may_apply(tmp_path: Path) -> None:
    repo = _hostile(tmp_path)
    bom = repo / "apps/prod/bom.yaml"
    bom.write_text(bom.read_text().replace('versionRange: "4.7.18"', 'versionRange: ["4.7.18"'))
    state = _scan(repo, code=4)["prod"]
    assert "pin.agent-platform-connectivity" not in state["facts"]
    assert any("apps/prod/bom.yaml:" in why for why in state["unreadable"].values())
    code, out, _ = run_in(
        ["check", "--gitops", ".", "--to", "agent-platform=4.8.0", "-o", "json"], cwd=repo
    )
    assert code == 4
    findings = {f["hazard"]: f for f in json.loads(out)["results"][0]["findings"]}
    assert findings["connectivity-pin-behind-479-second-owner"]["status"] == "may-apply"


# --------------------------------------------------------------------------- products by source

UPSTREAM_KAGENT = {
    "apps/kagent.yaml": """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: kagent
  namespace: kagent
spec:
  interval: 1h
  url: oci://ghcr.io/kagent-dev/kagent/helm/kagent
  ref:
    tag: 0.9.4
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: kagent
  namespace: kagent
spec:
  interval: 1h
  chartRef:
    kind: OCIRepository
    name: kagent
""",
}


def test_a_kagent_release_from_an_unlisted_chart_source_may_be_the_kagent_product(
    tmp_path: Path,
) -> None:
    """Upstream's kagent chart (ghcr.io/kagent-dev) is at a place the kagent product does not
    list: its version is unknown, named, and a move of kagent is undetermined (exit 4), never
    "another chart" (nor a usage error saying kagent is not installed)."""
    root = tmp_path / "upstream"
    for rel, text in UPSTREAM_KAGENT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    code, out, err = run_in(["scan", "--gitops", "apps", "-o", "json"], cwd=root)
    assert code == 4, err
    state = json.loads(out)["results"][0]["state"]
    assert "pin.kagent" not in state["facts"]
    assert "installed.kagent" not in state["facts"]
    why = state["unreadable"]["pin.kagent"]
    assert "ghcr.io/kagent-dev" in why and "may be kagent" in why
    code, out, err = run_in(["check", "--gitops", "apps", "--to", "kagent=0.11.0-gs.16"], cwd=root)
    assert code == 4
    assert "installed version of kagent could not be read" in err and "ghcr.io/kagent-dev" in err


def test_an_unknown_version_of_a_known_product_is_named_and_undetermined(tmp_path: Path) -> None:
    root = tmp_path / "gs"
    text = UPSTREAM_KAGENT["apps/kagent.yaml"].replace(
        "ghcr.io/kagent-dev/kagent/helm/kagent", "gsoci.azurecr.io/charts/giantswarm/kagent"
    )
    (root / "apps").mkdir(parents=True)
    (root / "apps/kagent.yaml").write_text(text)
    code, out, _ = run_in(["check", "--gitops", "apps", "-o", "json"], cwd=root)
    result = json.loads(out)["results"][0]
    assert "kagent 0.9.4 is not in the knowledge base" in result["notes"]
    assert (code, result["verdict"]) == (4, "undetermined")


def test_without_a_bootstrap_sync_the_cluster_directories_are_the_entry_points(
    tmp_path: Path,
) -> None:
    # as in public examples whose flux-system/gotk-sync.yaml is a placeholder comment
    repo = _repository(tmp_path, "kustomize-helm")
    for cluster in ("staging", "production"):
        sync = repo / "clusters" / cluster / "flux-system" / "gotk-sync.yaml"
        sync.write_text("# This file is written by flux bootstrap.\n")
    states = _scan(repo)
    assert set(states) == {"staging", "production"}
    assert _helmreleases(states["staging"]) >= APPLIED["kustomize-helm"]["staging"]


def test_a_flux_level_patch_turning_on_drift_detection_counts(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "home-ops")
    ks = repo / "kubernetes/flux/cluster/ks.yaml"
    ks.write_text(
        ks.read_text().replace(
            "                  install:\n",
            "                  driftDetection:\n"
            "                    mode: enabled\n"
            "                  install:\n",
        )
    )
    _git(repo, "commit", "-q", "-am", "drift detection on every HelmRelease")
    state = _scan(repo)["cluster"]
    fact = state["facts"]["helmrelease.atuin.drift-detection"]
    assert fact == {
        "value": "enabled",
        "source": "kubernetes/flux/cluster/ks.yaml:31",
        "from": {"kind": "file", "file": "kubernetes/flux/cluster/ks.yaml", "line": 31},
    }
