"""kustomize ``replacements`` as the GitOps reader applies them: what a Flux Kustomization's
``targetNamespace`` (and so each HelmRelease's namespace) becomes when an app folder's
kustomization copies its Namespace's name into it, checked against ``kubectl kustomize``."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from upgradeplan.readers.gitops.render import Renderer
from upgradeplan.readers.gitops.replacements import field_path
from upgradeplan.readers.gitops.trees import WorkTree

KUBECTL = shutil.which("kubectl")

OBJECTS = """\
apiVersion: v1
kind: Namespace
metadata:
  name: media
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: release-info
data:
  image: registry.example.org/player:2.4.1
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: player
spec:
  path: ./apps/player
  targetNamespace: will-be-replaced
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: library
spec:
  path: ./apps/library
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: player
spec:
  template:
    spec:
      containers:
        - name: main
          image: player:0.0.0
        - name: sidecar
          image: helper:1.0.0
"""

CASES = {
    # the name of the Namespace into every Flux Kustomization, created where missing
    "create": """\
- source: {kind: Namespace}
  targets:
    - select: {kind: Kustomization, group: kustomize.toolkit.fluxcd.io}
      fieldPaths: [spec.targetNamespace]
      options: {create: true}
""",
    # without create, into a field already written
    "existing": """\
- source: {kind: Namespace, fieldPath: metadata.name}
  targets:
    - select: {kind: Kustomization, name: player}
      fieldPaths: [spec.targetNamespace]
""",
    # reject leaves one out
    "reject": """\
- source: {kind: Namespace}
  targets:
    - select: {kind: Kustomization}
      reject: [{name: library}]
      fieldPaths: [spec.targetNamespace]
      options: {create: true}
""",
    # one part of a text, into a list item picked by name
    "delimiter": """\
- source:
    kind: ConfigMap
    name: release-info
    fieldPath: data.image
    options: {delimiter: ":", index: 1}
  targets:
    - select: {kind: Deployment}
      fieldPaths: ["spec.template.spec.containers.[name=main].image"]
      options: {delimiter: ":", index: 1}
""",
}


def _tree(root: Path, case: str) -> None:
    (root / "objects.yaml").write_text(OBJECTS)
    (root / "replacements.yaml").write_text(CASES[case])
    (root / "kustomization.yaml").write_text(
        textwrap.dedent("""\
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources: [objects.yaml]
        replacements:
          - path: replacements.yaml
        """)
    )


def _fields(objs: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    out = []
    for o in objs:
        spec = o.get("spec") or {}
        assert isinstance(spec, dict)
        tmpl = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
        out.append(
            (
                o.get("kind"),
                (o.get("metadata") or {}).get("name"),
                spec.get("targetNamespace"),
                tuple(c.get("image") for c in tmpl),
            )
        )
    return sorted(out, key=str)


def _ours(root: Path) -> list[tuple[object, ...]]:
    return _fields([d.data for d in Renderer(WorkTree(root), lambda rel: rel).build("")])


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not on PATH (.ci/run requires it)")
@pytest.mark.parametrize("case", sorted(CASES))
def test_replacements_give_what_kubectl_kustomize_gives(tmp_path: Path, case: str) -> None:
    assert KUBECTL is not None
    _tree(tmp_path, case)
    done = subprocess.run(
        [KUBECTL, "kustomize", str(tmp_path)], capture_output=True, text=True, check=True
    )
    theirs = _fields([d for d in yaml.safe_load_all(done.stdout) if isinstance(d, dict)])
    assert _ours(tmp_path) == theirs


def test_the_namespace_a_replacement_writes_points_at_where_its_source_was_written(
    tmp_path: Path,
) -> None:
    _tree(tmp_path, "create")
    built = Renderer(WorkTree(tmp_path), lambda rel: rel).build("")
    library = next(d for d in built if d.get("metadata", "name") == "library")
    assert library.get("spec", "targetNamespace") == "media"
    assert library.loc("spec", "targetNamespace") == ("objects.yaml", 4)


def test_a_source_that_selects_two_objects_changes_nothing(tmp_path: Path) -> None:
    _tree(tmp_path, "create")
    (tmp_path / "replacements.yaml").write_text(
        CASES["create"].replace("Namespace", "Kustomization")
    )
    built = Renderer(WorkTree(tmp_path), lambda rel: rel).build("")
    assert [
        d.get("spec", "targetNamespace") for d in built if d.get("kind") == "Kustomization"
    ] == [
        "will-be-replaced",
        None,
    ]


def test_field_paths_split_as_kustomize_reads_them() -> None:
    assert field_path("spec.template.spec.containers.[name=main].image") == [
        "spec",
        "template",
        "spec",
        "containers",
        "[name=main]",
        "image",
    ]
    assert field_path("metadata.annotations.[example.org/owner]") == [
        "metadata",
        "annotations",
        "[example.org/owner]",
    ]
