"""Installations the way Flux applies a repository, on small trees in the shape of real
layouts: archived ``ks.yaml`` files beside Flux's entry point, hub-and-spoke clusters
(``spec.kubeConfig``), sibling directories without any entry point, an overlay listing Flux
Kustomizations from ``../base``, and ``--gitops SUBDIR`` below a cluster root."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_readers_gitops_relevance import _helmrelease, home_ops

from upgradeplan import api
from upgradeplan.cli import cli
from upgradeplan.readers import gitops

KB = api.load_kb(())
S1 = Path(__file__).resolve().parent / "fixtures" / "gitops" / "s1"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _check(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, ["check", *args, "-o", "json"])
    finally:
        os.chdir(old)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.stdout)


FLUX_INSTANCE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: flux-instance
spec:
  interval: 1h
  chart:
    spec:
      chart: flux-instance
      version: 0.30.0
      sourceRef:
        kind: HelmRepository
        name: controlplaneio
  values:
    instance:
      sync:
        kind: GitRepository
        url: https://github.com/example/home-ops
        ref: refs/heads/main
        path: kubernetes/flux/cluster
"""

KS = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: {ns}
spec:
  interval: 1h
  path: {path}
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
{extra}"""


def test_archived_ks_files_are_no_installation_and_are_reported(tmp_path: Path) -> None:
    root = home_ops(tmp_path, crd_url=False, flux_oci=False)
    _write(
        root,
        {
            "kubernetes/apps/flux/ks.yaml": "",
            "kubernetes/apps/flux/app/helmrelease.yaml": FLUX_INSTANCE,
            "kubernetes/archive/old-app/ks.yaml": KS.format(
                name="old-app", ns="flux-system", path="./kubernetes/archive/old-app/app", extra=""
            ),
            "kubernetes/archive/old-app/app/helmrelease.yaml": _helmrelease("old-app", "1.0.0"),
        },
    )
    index = root / "kubernetes/apps/kustomization.yaml"
    index.write_text(index.read_text().replace("./flux/ks.yaml", "./flux/app/helmrelease.yaml"))
    reads = gitops.read_pins(KB, str(root))
    assert [r.state.name for r in reads] == ["cluster"]
    assert not any("old-app" in key for key in reads[0].pins)
    [note] = reads[0].notes
    assert note.startswith("not applied by any entry point: ")
    assert note.endswith(
        "kubernetes/archive/old-app (its Flux Kustomizations are applied by no "
        "Kustomization Flux starts from)"
    )
    code, doc = _check(root, "--gitops", ".")
    [result] = doc["results"]
    assert code == 0 and any("not applied by any entry point" in n for n in result["notes"])


def hub_and_spoke(root: Path) -> Path:
    """A hub whose Kustomizations apply each spoke's directory to that spoke through
    ``spec.kubeConfig`` (as fluxcd/flux2-hub-spoke-example does), the spokes pinning
    agent-platform at different versions."""
    files = {"hub/flux-system/gotk-sync.yaml": KS.format(
        name="flux-system", ns="flux-system", path="./hub", extra=""
    )}  # fmt: skip
    for spoke, version in (("staging", "4.7.19"), ("production", "4.7.18")):
        files[f"hub/{spoke}.yaml"] = KS.format(
            name="platform",
            ns=spoke,
            path=f"./clusters/{spoke}",
            extra="  kubeConfig:\n    secretRef:\n      name: cluster-kubeconfig\n",
        )
        for item in S1.rglob("*"):
            if item.is_file():
                text = item.read_text()
                rel = item.relative_to(S1).as_posix()
                files[f"clusters/{spoke}/{rel}"] = text.replace('"4.7.18"', f'"{version}"')
    return _write(root, files)


def test_each_kubeconfig_target_is_an_installation_of_its_own(tmp_path: Path) -> None:
    root = hub_and_spoke(tmp_path)
    states = {s.name: s for s in gitops.read_installations(KB, str(root))}
    assert sorted(states) == ["hub", "production", "staging"]
    assert states["production"].value("pin.agent-platform") == "4.7.18"
    assert states["staging"].value("pin.agent-platform") == "4.7.19"  # not overwritten
    assert "pin.agent-platform" not in states["hub"]


def test_sibling_directories_without_entry_point_are_never_merged(tmp_path: Path) -> None:
    for name, version in (("site-a", "4.7.18"), ("site-b", "4.8.0")):
        shutil.copytree(S1, tmp_path / name)
        oci = tmp_path / name / "agent-platform/ocirepository.yaml"
        oci.write_text(oci.read_text().replace('"4.7.18"', f'"{version}"'))
    states = gitops.read_installations(KB, str(tmp_path))
    pins = {s.name.rsplit("/", 1)[-1]: s.value("pin.agent-platform") for s in states}
    assert pins == {"site-a": "4.7.18", "site-b": "4.8.0"}
    # one directory alone stays one installation, as before
    assert len(gitops.read_installations(KB, str(tmp_path / "site-a"))) == 1


def test_an_overlay_listing_flux_kustomizations_from_base_reads_them(tmp_path: Path) -> None:
    files = {
        "clusters/prod/flux-system/gotk-sync.yaml": KS.format(
            name="flux-system", ns="flux-system", path="./clusters/prod", extra=""
        ),
        "clusters/prod/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            "  - flux-system/gotk-sync.yaml\n  - ../../apps/overlays/prod\n"
        ),
        "apps/overlays/prod/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            "  - ../../base/cert-manager.yaml\n"
        ),
        "apps/base/cert-manager.yaml": KS.format(
            name="cert-manager", ns="flux-system", path="./apps/base/cert-manager", extra=""
        ),
        "apps/base/cert-manager/helmrelease.yaml": _helmrelease("cert-manager", "v1.16.0"),
    }
    root = _write(tmp_path, files)
    [read] = gitops.read_pins(KB, str(root))
    assert [p.version for p in read.pins.values()] == ["v1.16.0"]
    # a read that compares no two trees collects no pins, and reads the same state
    [unpinned] = gitops.read_pins(KB, str(root), pins=False)
    assert unpinned.pins == {} and unpinned.state == read.state
    # --gitops SUBDIR below the cluster root keeps the cluster whole
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    from support.cli import git

    git(root, "init", "-q")
    reads = gitops.read_pins(KB, str(root / "clusters/prod"))
    assert [[p.version for p in r.pins.values()] for r in reads] == [["v1.16.0"]]
    # --gitops at the overlay itself: the Flux Kustomizations it lists from ../base are followed
    reads = gitops.read_pins(KB, str(root / "apps/overlays/prod"))
    assert [[p.version for p in r.pins.values()] for r in reads] == [["v1.16.0"]]
