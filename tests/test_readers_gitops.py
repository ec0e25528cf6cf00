"""The GitOps reader: facts from HelmRelease / OCIRepository / BOM / values / manifests.

Reader tests use a small knowledge base built here (so they do not move when the bundled
knowledge grows); the scenario and --base tests further down run the real CLI with the
bundled knowledge.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from upgradeplan.errors import BadInput
from upgradeplan.model import (
    NEXT,
    KnowledgeBase,
    Product,
    Recognise,
    Release,
    State,
    Target,
)
from upgradeplan.readers import gitops
from upgradeplan.readers.gitops_gate import pin_changes

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gitops"


def _kb() -> KnowledgeBase:
    def product(pid: str, kind: str = "chart", **rec: object) -> Product:
        return Product(pid, pid, kind, "", Recognise(**rec))  # type: ignore[arg-type]

    meta = "agent-platform"
    conn = "agent-platform-connectivity"
    products = {
        meta: product(meta, helmrelease=(meta,), chart=(meta,)),
        conn: product(conn, helmrelease=(conn,), chart=(conn,), bom_component=conn),
        "kagent": product("kagent", helmrelease=("kagent",), chart=("kagent",), bom_component="kagent"),
        "harness-delegate": product(
            "harness-delegate",
            "agent",
            helmrelease=("harness-delegate",),
            chart=("harness-delegate",),
            deployment_labels=(("harness.io/name", "harness-delegate"),),
            image=("harness/delegate",),
            values_keys=("delegateVersion", "image.tag"),
        ),
    }
    metas = []
    for v in ("4.7.18", "4.7.19", "4.8.0", "4.8.1"):
        effects = {"helmrelease.kagent.drift-detection": "enabled"} if v == "4.8.1" else {}
        metas.append(Release(meta, v, v, bom={conn: v, "kagent": "0.11.0-gs.6"}, effects=effects))
    metas.append(Release(meta, NEXT, "next"))
    releases = {
        meta: tuple(metas),
        conn: tuple(Release(conn, v, v) for v in ("4.7.18", "4.7.19", "4.8.0", "4.8.1")),
        "kagent": (Release("kagent", "0.11.0-gs.6", "gs.6"),),
        "harness-delegate": tuple(
            Release("harness-delegate", v, v) for v in ("0.29.0", "0.30.0", "0.31.2")
        ),
    }
    return KnowledgeBase(products=products, releases=releases, hazards={}, migrations={})


KB = _kb()


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def _facts(state: State) -> dict[str, tuple[object, str]]:
    return {f.key: (f.value, f.source) for f in state}


# --------------------------------------------------------------------------- reader


def test_bom_overlay_and_meta_chart_give_pins_at_the_line_of_each_value() -> None:
    facts = _facts(gitops.read(KB, str(FIXTURES / "s1")))
    root = str(FIXTURES / "s1")
    assert facts["pin.agent-platform"] == ("4.7.18", f"{root}/agent-platform/ocirepository.yaml:13")
    assert facts["pin.agent-platform-connectivity"] == ("4.7.18", f"{root}/bom.yaml:9")
    assert facts["pin.kagent"] == ("0.11.0-gs.6", f"{root}/bom.yaml:11")
    assert facts["helmrelease.kagent.namespace"] == ("flux-giantswarm", f"{root}/bom.yaml:4")
    # installed.* is the planner's derivation from exact pins, not the reader's
    assert not any(key.startswith("installed.") for key in facts)


def test_sources_are_relative_when_the_path_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    facts = _facts(gitops.read(KB, "s1/"))
    assert facts["pin.agent-platform-connectivity"][1] == "s1/bom.yaml:9"
    single = _facts(gitops.read(KB, "s1/bom.yaml"))
    assert single["pin.agent-platform-connectivity"][1] == "s1/bom.yaml:9"


def test_kagent_drift_detection_defaults_from_the_meta_charts_release(tmp_path: Path) -> None:
    # 4.7.18 leaves the kagent HelmRelease without drift detection ...
    old = _facts(gitops.read(KB, str(FIXTURES / "s1")))
    value, source = old["helmrelease.kagent.drift-detection"]
    assert value == "disabled"
    assert source.startswith("derived: ") and "agent-platform 4.7.18" in source
    # ... 4.8.1 turns it on (its release effects), unless the BOM says otherwise.
    _write(
        tmp_path,
        {
            "oci.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata: {name: agent-platform, namespace: flux-giantswarm}
                spec:
                  ref: {semver: "4.8.1"}
            """,
            "bom.yaml": """
                components:
                  kagent: {versionRange: "0.11.0-gs.6"}
                  agent-platform-connectivity:
                    versionRange: "4.8.1"
                    driftDetection:
                      mode: warn
            """,
        },
    )
    new = _facts(gitops.read(KB, str(tmp_path)))
    assert new["helmrelease.kagent.drift-detection"][0] == "enabled"
    assert new["helmrelease.agent-platform-connectivity.drift-detection"] == (
        "warn",
        f"{tmp_path}/bom.yaml:6",
    )


def test_a_range_pin_on_the_meta_chart_derives_no_default(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "oci.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1beta2
                kind: OCIRepository
                metadata: {name: agent-platform}
                spec: {ref: {semver: ">=4.7.0 <5.0.0", tag: "4.7.18"}}
            """,
            "bom.yaml": "components: {kagent: {versionRange: 0.11.0-gs.6}}\n",
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["pin.agent-platform"][0] == ">=4.7.0 <5.0.0"  # semver wins over tag
    assert "helmrelease.kagent.drift-detection" not in facts


def test_helmrelease_fields_and_flux_api_versions(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "releases.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2beta1
                kind: HelmRelease
                metadata:
                  name: kagent
                  namespace: flux-giantswarm
                spec:
                  chart:
                    spec:
                      chart: kagent
                      version: 0.11.0-gs.6
                ---
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata:
                  name: connectivity-release
                  namespace: platform
                spec:
                  driftDetection:
                    mode: enabled
                  chartRef:
                    kind: OCIRepository
                    name: conn-source
                ---
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata:
                  name: conn-source
                  namespace: platform
                spec:
                  ref:
                    tag: "4.7.19"
            """,
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    src = f"{tmp_path}/releases.yaml"
    assert facts["helmrelease.kagent.namespace"] == ("flux-giantswarm", f"{src}:5")
    assert facts["helmrelease.kagent.drift-detection"] == ("disabled", f"{src}:4")
    assert facts["pin.kagent"] == ("0.11.0-gs.6", f"{src}:10")
    assert facts["helmrelease.connectivity-release.drift-detection"] == ("enabled", f"{src}:19")
    # the chartRef leads to the OCIRepository, whose name is not a product name
    assert "pin.agent-platform-connectivity" not in facts


def test_chart_ref_resolves_the_pin_of_a_recognised_release(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "a.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: agent-platform, namespace: gs}
                spec:
                  chartRef: {kind: OCIRepository, name: meta-chart}
            """,
            "b.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata: {name: meta-chart, namespace: gs}
                spec:
                  ref:
                    semver: 4.7.19
            """,
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["pin.agent-platform"] == ("4.7.19", f"{tmp_path}/b.yaml:6")


def test_digest_pins_and_unpinned_charts(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "oci.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata: {name: agent-platform}
                spec: {ref: {digest: "sha256:abc", semver: "4.7.18"}}
            """,
            "hr.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: kagent}
                spec: {chart: {spec: {chart: kagent}}}
            """,
        },
    )
    state = gitops.read(KB, str(tmp_path))
    assert "pin.agent-platform" not in state
    assert "digest" in state.unreadable["pin.agent-platform"]
    assert state.value("pin.kagent", "unknown") is None  # known to be unpinned


def test_versions_keep_their_spelling(tmp_path: Path) -> None:
    _write(tmp_path, {"bom.yaml": "components:\n  agent-platform-connectivity:\n    versionRange: 4.10\n"})
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["pin.agent-platform-connectivity"][0] == "4.10"


def test_disabled_and_unknown_components(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "bom.yaml": """
                components:
                  kagent: {enabled: false, versionRange: "0.11.0-gs.6"}
                  muster:
                    versionRange: "1.2.3"
                    driftDetection: {mode: enabled}
            """
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert "pin.kagent" not in facts
    assert facts["helmrelease.muster.drift-detection"][0] == "enabled"
    assert not any(k.startswith("pin.") for k in facts)


def test_delegate_values_deployment_secret_and_namespace() -> None:
    root = str(FIXTURES / "s6")
    facts = _facts(gitops.read(KB, root))
    assert facts["pin.harness-delegate"] == ("0.29.0", f"{root}/harness-delegate/helmrelease.yaml:12")
    assert facts["values.harness-delegate.delegateVersion"] == (
        "0.29.0",
        f"{root}/harness-delegate/values.yaml:5",
    )
    assert facts["workload.harness-delegate.args"] == (
        ["--instance-metadata-url=https://169.254.169.254"],
        f"{root}/harness-delegate/values.yaml:7",
    )
    assert facts["workload.harness-delegate.namespace"][0] == "harness-delegate-ng"
    assert facts["workload.harness-delegate.name"][0] == "harness-delegate"
    assert facts["workload.harness-delegate.env-secrets"] == (
        ["harness-api-key"],
        f"{root}/rendered/deployment.yaml:28",
    )
    assert facts["secret.harness-delegate-ng.harness-api-key.type"] == (
        "Opaque",
        f"{root}/rendered/secret.yaml:7",
    )
    assert facts["namespace.harness-delegate-ng.labels"][0] == {
        "kubernetes.io/metadata.name": "harness-delegate-ng"
    }


def test_immutable_delegate_pins_by_image_tag_and_reads_tolerations(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "deploy.yaml": """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: delegate, namespace: hd}
                spec:
                  strategy: {rollingUpdate: {maxSurge: 0}}
                  template:
                    metadata:
                      annotations: {sidecar.istio.io/inject: false}
                    spec:
                      tolerations:
                        - {key: cloud-provider, operator: Exists, effect: NoSchedule}
                        - {operator: Exists}
                      containers:
                        - name: sidecar
                          image: busybox:1.36
                        - name: delegate
                          image: registry.example.com/harness/delegate:v0.31.2
                          envFrom:
                            - secretRef: {name: delegate-env}
            """,
            "secret.yaml": """
                apiVersion: v1
                kind: Secret
                metadata: {name: delegate-env, namespace: hd}
                data: {token: c2VjcmV0}
                stringData: {other: plain-secret-text}
            """,
        },
    )
    state = gitops.read(KB, str(tmp_path))
    facts = _facts(state)
    assert facts["pin.harness-delegate"] == ("0.31.2", f"{tmp_path}/deploy.yaml:17")
    assert facts["workload.harness-delegate.image"][0] == "busybox:1.36"
    assert facts["workload.harness-delegate.tolerations"][0] == [
        "cloud-provider:Exists:NoSchedule",
        ":Exists:",
    ]
    assert facts["workload.harness-delegate.pod-annotations"][0] == {
        "sidecar.istio.io/inject": "false"
    }
    assert facts["workload.harness-delegate.max-surge"][0] == "0"
    assert facts["workload.harness-delegate.env-secrets"][0] == ["delegate-env"]
    assert facts["secret.hd.delegate-env.type"][0] == "Opaque"  # the Kubernetes default
    everything = repr([(f.value, f.source) for f in state])
    assert "c2VjcmV0" not in everything and "plain-secret-text" not in everything


def test_kustomization_resources_generators_and_namespace(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "kustomization.yaml": """
                namespace: flux-giantswarm
                resources:
                  - apps
                  - ../outside
                  - https://github.com/example/repo//base
                configMapGenerator:
                  - name: values
                    files: [values.yaml=bom.yaml]
            """,
            "apps/kustomization.yaml": "resources: [release.yaml]\n",
            "apps/release.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: kagent}
                spec: {chart: {spec: {chart: kagent, version: "0.11.0-gs.6"}}}
            """,
            "apps/not-listed.yaml": "components: {agent-platform-connectivity: {versionRange: '9.9.9'}}\n",
            "bom.yaml": "components: {agent-platform-connectivity: {versionRange: '4.7.18'}}\n",
        },
    )
    state = gitops.read(KB, str(tmp_path))
    facts = _facts(state)
    assert facts["helmrelease.kagent.namespace"][0] == "flux-giantswarm"
    assert facts["pin.agent-platform-connectivity"][0] == "4.7.18"  # not-listed.yaml unread
    assert "outside the --gitops PATH" in state.unreadable["file ../outside"]
    assert "remote" in state.unreadable["file https://github.com/example/repo//base"]


def test_bad_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    _write(tmp_path, {"ok.yaml": "a: 1\n", "broken.yaml": "a: 1\nb: [1, 2\nc: 3\n"})
    with pytest.raises(BadInput) as err:
        gitops.read(KB, str(tmp_path))
    assert f"{tmp_path}/broken.yaml:" in str(err.value)
    assert err.value.location.startswith(f"{tmp_path}/broken.yaml:")


def test_missing_path_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file or directory"):
        gitops.read(KB, str(tmp_path / "nope"))


# --------------------------------------------------------------------------- pin changes


def _state(**pins: tuple[str, str]) -> State:
    from upgradeplan.model import Fact

    facts = {}
    for name, (value, source) in pins.items():
        key = "pin." + name.replace("_", "-")
        facts[key] = Fact(key, value, source)
    return State(facts=facts)


def test_pin_changes_follow_the_meta_chart_and_hold_what_stays() -> None:
    base = _state(
        agent_platform=("4.7.18", "oci.yaml:9"),
        agent_platform_connectivity=("4.7.18", "bom.yaml:5"),
        kagent=("0.11.0-gs.6", "bom.yaml:7"),
    )
    head = _state(
        agent_platform=("4.8.0", "oci.yaml:10"),
        agent_platform_connectivity=("4.8.0", "bom.yaml:5"),
        kagent=("0.11.0-gs.6", "bom.yaml:7"),
    )
    change = pin_changes(KB, base, head)
    # connectivity moves with the meta chart's 4.8.0 release: no target of its own
    assert change.targets == (Target("agent-platform", "4.8.0"),)
    assert change.holds == ("kagent",)
    assert change.location_of("agent-platform") == "oci.yaml:10"
    assert gitops.gitops_targets(KB, base, head) == [Target("agent-platform", "4.8.0")]


def test_a_pin_left_behind_is_held_and_a_range_resolves_like_flux() -> None:
    base = _state(
        agent_platform=("4.7.18", "a:1"),
        agent_platform_connectivity=("4.7.18", "b:2"),
    )
    head = _state(
        agent_platform=(">=4.8.0 <4.9.0", "a:1"),
        agent_platform_connectivity=("4.7.18", "b:2"),
    )
    change = pin_changes(KB, base, head)
    assert change.targets == (Target("agent-platform", "4.8.1"),)
    assert change.holds == ("agent-platform-connectivity",)


def test_unchanged_selection_and_unknown_selection() -> None:
    same = pin_changes(
        KB,
        _state(harness_delegate=(">=0.31.0", "v:1")),
        _state(harness_delegate=("0.31.2", "v:1")),
    )
    assert same.targets == ()
    with pytest.raises(BadInput) as err:
        pin_changes(
            KB,
            _state(harness_delegate=("0.29.0", "v:1")),
            _state(harness_delegate=(">=1.0.0", "values.yaml:4")),
        )
    assert err.value.location == "values.yaml:4"
