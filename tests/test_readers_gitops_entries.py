"""Where a cluster's Flux starts when there is no bootstrap ``gotk-sync.yaml``.

Two layouts seen in public home-ops repositories, written here in our own words: a
flux-operator ``FluxInstance`` whose ``sync.path`` is the entry point (set in the values of a
``flux-instance`` HelmRelease), and a repository whose own GitRepository is not named
``flux-system`` (its children get their ``sourceRef`` from a Flux-level patch of the parent).
Each is one installation, never one per application.
"""

from __future__ import annotations

from pathlib import Path

from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers import gitops


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _ks(name: str, path: str, source: str | None = "flux-system") -> str:
    ref = f"  sourceRef:\n    kind: GitRepository\n    name: {source}\n" if source else ""
    return (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"
        f"metadata:\n  name: {name}\n  namespace: flux-system\n"
        f"spec:\n  interval: 1h\n  path: {path}\n{ref}"
    )


def _release(name: str) -> str:
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        f"metadata:\n  name: {name}\n  namespace: default\n"
        "spec:\n  chart:\n    spec:\n      chart: app-template\n      version: 3.7.1\n"
        "      sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}\n"
    )


def _kustomization(*resources: str) -> str:
    lines = "".join(f"  - {r}\n" for r in resources)
    return f"apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{lines}"


APPS = ("atuin", "echo", "gatus")


def _releases(state: State) -> set[str]:
    return {
        f.key.split(".")[1]
        for f in state
        if f.key.startswith("helmrelease.") and f.key.endswith(".drift-detection")
    }


def test_a_flux_instance_sync_path_is_the_one_entry_point(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    files = {
        "apps/flux-system/kustomization.yaml": _kustomization("./flux-instance/ks.yaml"),
        "apps/flux-system/flux-instance/ks.yaml": _ks(
            "flux-instance", "./apps/flux-system/flux-instance/app"
        ),
        "apps/flux-system/flux-instance/app/helmrelease.yaml": _release("flux-instance")
        + "  values:\n    instance:\n      sync:\n        kind: GitRepository\n"
        "        url: https://example.org/home-ops.git\n        ref: refs/heads/main\n"
        "        path: apps/\n",
    }
    for app in APPS:
        files["apps/default/kustomization.yaml"] = _kustomization(*(f"./{a}/ks.yaml" for a in APPS))
        files[f"apps/default/{app}/ks.yaml"] = _ks(app, f"./apps/default/{app}/app")
        files[f"apps/default/{app}/app/helmrelease.yaml"] = _release(app)
    states = gitops.read_installations(kb, str(_write(tmp_path, files)))
    assert [s.name for s in states] == ["apps"]
    assert _releases(states[0]) == {*APPS, "flux-instance"}


def test_an_own_git_repository_with_another_name_is_this_repository(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    parent = _ks("cluster-apps", "./kubernetes/apps", "home-ops") + (
        "  patches:\n"
        "    - patch: |-\n"
        "        apiVersion: kustomize.toolkit.fluxcd.io/v1\n"
        "        kind: Kustomization\n"
        "        metadata:\n          name: _\n"
        "        spec:\n          sourceRef:\n            kind: GitRepository\n"
        "            name: home-ops\n"
        "      target:\n        group: kustomize.toolkit.fluxcd.io\n        kind: Kustomization\n"
    )
    files = {
        "kubernetes/flux/cluster/ks.yaml": parent,
        "kubernetes/apps/kustomization.yaml": _kustomization("./default"),
        "kubernetes/apps/default/kustomization.yaml": _kustomization(
            *(f"./{a}/ks.yaml" for a in APPS)
        ),
    }
    for app in APPS:
        files[f"kubernetes/apps/default/{app}/ks.yaml"] = _ks(
            app, f"./kubernetes/apps/default/{app}/app", None
        )
        files[f"kubernetes/apps/default/{app}/app/helmrelease.yaml"] = _release(app)
    states = gitops.read_installations(kb, str(_write(tmp_path, files)))
    assert [s.name for s in states] == ["cluster"]
    assert _releases(states[0]) == set(APPS)
    assert not states[0].unread
