"""The GitOps reader's kustomize build against the real one (``kubectl kustomize``).

Every directory with a ``kustomization.yaml`` in our GitOps test trees (the four layouts, the
scenario fixtures and the walk trees) is built twice: by ``kubectl kustomize`` and by the
reader's renderer. The objects that matter (HelmRelease, OCIRepository, HelmRepository,
ConfigMap, Deployment, Flux Kustomization) must agree on kind, namespace, name and the fields
the reader uses.

Then whole installations: for each tree under ``fixtures/gitops-walk`` (the shapes in which
real repositories differed: kustomize ``replacements`` that give Flux Kustomizations their
``targetNamespace``, ``spec.components``, post-build substitution from a ConfigMap with
``spec.patches`` handing it to every child, ExternalArtifacts of an ArtifactGenerator, a hub
whose Kustomizations apply to spokes through ``spec.kubeConfig``, files source-controller
leaves out of the artifact by default, by ``.sourceignore`` or by ``spec.ignore``), the
HelmReleases the reader finds per installation must be the ones a model of
kustomize-controller finds with the real kustomize (tests/support/kustomize_walk.py, which
bench/kustomize_walk.py runs on real repositories), and the builds that fail must be those
that fail for Flux.

kubectl is part of this project's CI (``.ci/run`` stops when it is missing); a machine
without it skips this module, and says so.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.kustomize_walk import compare

from upgradeplan.readers.gitops.render import KUSTOMIZATION_NAMES, Renderer
from upgradeplan.readers.gitops.trees import WorkTree

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TREES = [FIXTURES / "gitops-layouts", FIXTURES / "gitops", FIXTURES / "gitops-walk"]
WALK_TREES = sorted(p for p in (FIXTURES / "gitops-walk").iterdir() if p.is_dir())
# what each walk tree applies per installation (namespace/name), so that agreement on
# nothing cannot pass
APPLIED = {
    "app-components": {
        "main": {
            "dev/code-forge",
            "dev/code-forge-gatekeeper",
            "dev/wiki",
            "dev/wiki-backup",
            "dev/wiki-gatekeeper",
        }
    },
    "artifact-split": {
        "production": {
            "certificates/cert-issuer",
            "gateway-system/edge-gateway",
            "shop/search",
            "shop/shop",
        },
        "staging": {"certificates/cert-issuer", "gateway-system/edge-gateway", "shop/shop"},
    },
    # source-controller's default exclusions: wiki's generator reads a *.png the artifact
    # leaves out, so its build fails and Flux applies none of it
    "artifact-defaults": {"lab": {"media/gallery"}},
    # a .sourceignore replaces the defaults (the *.png stays); its own patterns, a nested
    # one's and spec.ignore leave out a file notebook lists and guestbook's whole spec.path;
    # recipes' generated kustomization never sees the *.local.yaml file
    "artifact-sourceignore": {"home": {"home/recipes", "home/status-board"}},
    "cluster-settings": {
        "edge": {
            "ci/fleet-runners-edge",
            "network/ingress-internal",
            "network/docs-${CLUSTER:=none}",  # labelled substitute: disabled
        }
    },
    "hub-spokes": {  # spec.kubeConfig: each spoke is an installation of its own
        "hub": set(),
        "production": {"data/cache", "frontend/web"},
        "staging": {"frontend/web"},
    },
    "namespaced-apps": {"home": {"media/jellyfin", "observability/grafana"}},
}
# the Kustomizations whose build fails, as Flux's would (the rest must build)
FAILS = {
    "artifact-defaults": {"Kustomization flux-system/wiki"},
    "artifact-sourceignore": {
        "Kustomization flux-system/guestbook",
        "Kustomization flux-system/notebook",
    },
}
KINDS = {
    "HelmRelease",
    "OCIRepository",
    "HelmRepository",
    "ConfigMap",
    "Deployment",
    "Kustomization",
    "Namespace",
    "Secret",
}
KUBECTL = shutil.which("kubectl")


def _kustomization_dirs() -> list[Path]:
    out: list[Path] = []
    for tree in TREES:
        for name in KUSTOMIZATION_NAMES:
            for kust in tree.rglob(name):
                data = yaml.safe_load(kust.read_text())
                if isinstance(data, dict) and data.get("kind") == "Component":
                    continue  # a Component is built by the kustomization that lists it
                out.append(kust.parent)
    return sorted(out)


DIRS = _kustomization_dirs()


def _essentials(obj: dict[str, Any]) -> tuple[Any, ...]:
    """What the reader uses of an object."""
    kind = obj.get("kind")
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    name = str(meta.get("name"))
    if kind == "ConfigMap" and (meta.get("annotations") or {}).get(
        "upgradeplan.generated/name-hash"
    ):
        name += "-<hash>"
    elif kind == "ConfigMap":
        name = re.sub(r"-[a-z0-9]{10}$", "-<hash>", name) if _hashed(obj) else name
    base: tuple[Any, ...] = (kind, meta.get("namespace"), name)
    if kind == "HelmRelease":
        chart = (spec.get("chart") or {}).get("spec") or {}
        return (
            *base,
            chart.get("chart"),
            chart.get("version"),
            (spec.get("chartRef") or {}).get("name"),
            (spec.get("driftDetection") or {}).get("mode"),
            _canon(spec.get("values")),
            _canon(spec.get("valuesFrom")),
            spec.get("targetNamespace"),
        )
    if kind == "OCIRepository":
        return (*base, spec.get("url"), _canon(spec.get("ref")))
    if kind == "HelmRepository":
        return (*base, spec.get("url"))
    if kind == "ConfigMap":
        return (*base, _canon(obj.get("data")))
    if kind == "Namespace":
        return (*base, _canon(meta.get("labels")))
    if kind == "Secret":
        return (*base, obj.get("type"))
    if kind == "Deployment":
        containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
        return (*base, _canon([(c.get("image"), c.get("args")) for c in containers]))
    return (
        *base,
        spec.get("path"),
        _canon(spec.get("sourceRef")),
        spec.get("targetNamespace"),
        _canon(spec.get("postBuild")),
        _canon(spec.get("patches")),
    )


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _hashed(obj: dict[str, Any]) -> bool:
    return bool(re.search(r"-[a-z0-9]{10}$", str((obj.get("metadata") or {}).get("name"))))


def _kubectl(directory: Path) -> list[tuple[Any, ...]]:
    assert KUBECTL is not None
    proc = subprocess.run(
        [KUBECTL, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(directory)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    objs = [d for d in yaml.safe_load_all(proc.stdout) if isinstance(d, dict)]
    return sorted(_essentials(o) for o in objs if o.get("kind") in KINDS)


def _reader(directory: Path) -> list[tuple[Any, ...]]:
    root = next(t for t in TREES if t in directory.parents)
    tree = WorkTree(root)
    renderer = Renderer(tree, lambda rel: rel)
    rel = directory.relative_to(root).as_posix()
    objs = renderer.build(rel)
    assert not renderer.unread, renderer.unread.index
    out = []
    for doc in objs:
        data = doc.data
        if data.get("kind") not in KINDS:
            continue
        if data.get("kind") == "ConfigMap" and (
            (data.get("metadata") or {}).get("annotations") or {}
        ).get("upgradeplan.generated/name-hash"):
            data = {**data, "metadata": {**data["metadata"], "annotations": None}}
            data["metadata"] = {k: v for k, v in data["metadata"].items() if k != "annotations"} | {
                "annotations": {"upgradeplan.generated/name-hash": "true"}
            }
        out.append(_essentials(data))
    return sorted(out)


def test_every_kustomization_of_the_test_trees_is_covered() -> None:
    assert len(DIRS) >= 60
    print(f"kustomize differential: {len(DIRS)} kustomization directories")


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH (.ci/run requires it)")
@pytest.mark.parametrize("directory", DIRS, ids=[str(d.relative_to(FIXTURES)) for d in DIRS])
def test_the_reader_builds_what_kubectl_kustomize_builds(directory: Path) -> None:
    assert _reader(directory) == _kubectl(directory)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH (.ci/run requires it)")
@pytest.mark.parametrize("tree", WALK_TREES, ids=[t.name for t in WALK_TREES])
def test_each_installation_applies_the_helmreleases_kustomize_controller_applies(
    tree: Path,
) -> None:
    rows = compare(tree)
    assert {r.installation for r in rows} == set(APPLIED[tree.name])
    for row in rows:
        failed = {f.split(":")[0] for f in row.walk.failed}
        assert failed == FAILS.get(tree.name, set()), row.walk.failed
        assert not row.walk.other, row.walk.other
        assert row.walk.releases == APPLIED[tree.name][row.installation]
        assert row.reader == row.walk.releases, row.installation
