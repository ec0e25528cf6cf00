"""A HelmRelease's values as helm-controller merges them (readers/gitops/values.py).

``valuesFrom`` in order (``valuesKey``, ``targetPath``), then ``spec.values``; every value at
the line it is written; a Secret's values are unknown and named, never read.
"""

from __future__ import annotations

from pathlib import Path

from support.flux_yaml import git_repository, kustomization, stream

from upgradeplan.model import KnowledgeBase
from upgradeplan.readers import gitops
from upgradeplan.unreadable import Unreadable

SYNC = stream(
    git_repository("ssh://git@example.org/fleet"),
    kustomization("flux-system", "./clusters/prod"),
    kustomization("apps", "./apps"),
)

KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: flux-giantswarm
resources:
  - release.yaml
configMapGenerator:
  - name: platform-bom
    files:
      - bom.yaml
  - name: platform-settings
    files:
      - settings.yaml
    literals:
      - crd-install=false
      - flavor="cilium"
generatorOptions:
  disableNameSuffixHash: true
"""

BOM = """\
components:
  agent-platform-connectivity:
    versionRange: "4.7.18"
muster:
  autoscaling:
    enabled: false
networkPolicy:
  flavor: kubernetes
"""

SETTINGS = """\
muster:
  autoscaling:
    enabled: true
klausGateway:
  controller:
    enabled: true
"""

RELEASE = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: agent-platform
spec:
  url: oci://gsoci.azurecr.io/charts/giantswarm/agent-platform
  ref:
    semver: "4.7.18"
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: agent-platform
spec:
  chartRef:
    kind: OCIRepository
    name: agent-platform
  valuesFrom:
    - kind: ConfigMap
      name: platform-bom
      valuesKey: bom.yaml
    - kind: ConfigMap
      name: platform-settings
      valuesKey: settings.yaml
    - kind: ConfigMap
      name: platform-settings
      valuesKey: crd-install
      targetPath: klausGateway.crd.install
    - kind: ConfigMap
      name: platform-settings
      valuesKey: flavor
      targetPath: networkPolicy.flavor
    - kind: ConfigMap
      name: not-there
      optional: true
  values:
    klausGateway:
      controller:
        enabled: false
"""


def _tree(root: Path, release: str = RELEASE) -> Path:
    files = {
        "clusters/prod/flux-system/gotk-sync.yaml": SYNC,
        "apps/kustomization.yaml": KUSTOMIZATION,
        "apps/release.yaml": release,
        "apps/bom.yaml": BOM,
        "apps/settings.yaml": SETTINGS,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _line(root: Path, rel: str, text: str) -> str:
    lines = (root / rel).read_text().splitlines()
    return f"{root}/{rel}:{next(n for n, t in enumerate(lines, 1) if text in t)}"


def test_values_from_merge_in_order_then_spec_values_each_at_its_line(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    root = _tree(tmp_path)
    state = gitops.read(kb, str(root))
    facts = {f.key: (f.value, str(f.source)) for f in state}
    # settings.yaml (later) overwrites the BOM's muster.autoscaling.enabled
    assert facts["values.agent-platform.muster.autoscaling.enabled"] == (
        "true",
        _line(root, "apps/settings.yaml", "enabled: true"),
    )
    # spec.values wins over every valuesFrom entry
    assert facts["values.agent-platform.klausGateway.controller.enabled"] == (
        "false",
        _line(root, "apps/release.yaml", "enabled: false"),
    )
    # targetPath: the literal set at the path, typed as helm --set types it, at its line
    assert facts["values.agent-platform.klausGateway.crd.install"] == (
        "false",
        _line(root, "apps/kustomization.yaml", "crd-install=false"),
    )
    # a quoted value is a string
    assert facts["values.agent-platform.networkPolicy.flavor"][0] == "cilium"
    whole = state.value("values.agent-platform")
    assert isinstance(whole, dict)
    assert whole["klausGateway"] == {"controller": {"enabled": False}, "crd": {"install": False}}
    # the BOM read through valuesFrom gives the component's pin at the BOM's line
    assert facts["pin.agent-platform-connectivity"] == (
        "4.7.18",
        _line(root, "apps/bom.yaml", 'versionRange: "4.7.18"'),
    )
    assert not state.unread


def test_a_secret_in_values_from_leaves_the_values_unknown_and_named(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    release = RELEASE.replace(
        "    - kind: ConfigMap\n      name: not-there\n      optional: true\n",
        "    - kind: Secret\n      name: platform-secret-values\n",
    )
    root = _tree(tmp_path, release)
    state = gitops.read(kb, str(root))
    assert "values.agent-platform" not in state
    # what spec.values sets is known: it is merged last
    assert state.value("values.agent-platform.klausGateway.controller.enabled") == "false"
    assert "values.agent-platform.muster.autoscaling.enabled" not in state
    (rec,) = state.unread
    assert rec == Unreadable(
        "Secret flux-giantswarm/platform-secret-values",
        "secret data not read",
        kind="resource",
        location=_line(root, "apps/release.yaml", "name: platform-secret-values"),
        detail="a Secret's data is never read; the values it sets are unknown; "
        "only spec.values is known",
        keys=("values.agent-platform",),
    )
    assert "values.agent-platform" in state.unreadable


def test_a_configmap_the_installation_does_not_apply_is_unknown(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    release = RELEASE.replace("      optional: true\n", "")
    state = gitops.read(kb, str(_tree(tmp_path, release)))
    assert [(r.source, r.cause) for r in state.unread] == [
        ("ConfigMap flux-giantswarm/not-there key values.yaml", "not found")
    ]
    assert "values.agent-platform" not in state


def test_a_binary_file_in_a_generator_is_binary_data_not_an_unread_file(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    root = _tree(tmp_path)
    (root / "apps/model.tflite").write_bytes(b"\x00\xff\xfe TFL3 \x89")
    kust = root / "apps/kustomization.yaml"
    kust.write_text(
        kust.read_text().replace(
            "      - settings.yaml\n", "      - settings.yaml\n      - model.tflite\n"
        )
    )
    state = gitops.read(kb, str(root))
    assert not state.unread  # kustomize puts it in binaryData; it holds no values
    assert state.value("values.agent-platform.muster.autoscaling.enabled") == "true"
