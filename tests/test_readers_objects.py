"""Kubernetes objects -> facts, one field at a time (bundled knowledge's recognise entries)."""

from __future__ import annotations

from typing import Any

import pytest

from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers.kube.objects import (
    flatten_documents,
    interests,
    server_version_object,
    state_from_objects,
)

NS = "flux-giantswarm"


def hr(name: str, *, version: str | None = None, api: str = "v2", **spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": f"helm.toolkit.fluxcd.io/{api}",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }
    if version is not None:
        obj["status"] = {
            "history": [{"chartName": name, "chartVersion": version, "status": "deployed"}]
        }
    return obj


def oci(name: str, ref: dict[str, str] | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"url": f"oci://example/{name}"}
    if ref is not None:
        spec["ref"] = ref
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "OCIRepository",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def read(kb: KnowledgeBase, *objects: dict[str, Any], **kw: Any) -> State:
    return state_from_objects(kb, objects, source_prefix="cluster t", **kw)


def test_installed_version_drops_the_digest_flux_appends_for_oci_charts(kb: KnowledgeBase) -> None:
    state = read(
        kb, hr("agent-platform", version="4.7.18+0a1b2c3d4e5f"), hr("kagent", version="0.11.0-gs.6")
    )
    assert state.value("installed.agent-platform") == "4.7.18"
    assert state.value("installed.kagent") == "0.11.0-gs.6"
    assert str(state.get("installed.agent-platform").source) == (  # type: ignore[union-attr]
        f"cluster t: HelmRelease {NS}/agent-platform status.history[0].chartVersion"
    )


def test_a_failed_upgrade_is_not_what_runs(kb: KnowledgeBase) -> None:
    release = hr("agent-platform")
    release["status"] = {
        "history": [
            {
                "chartName": "agent-platform",
                "chartVersion": "4.8.0+0a1b2c3d4e5f",
                "status": "failed",
            },
            {
                "chartName": "agent-platform",
                "chartVersion": "4.7.19+0a1b2c3d4e5f",
                "status": "deployed",
            },
        ]
    }
    fact = read(kb, release).get("installed.agent-platform")
    assert fact is not None and fact.value == "4.7.19"
    assert str(fact.source).endswith(
        "status.history[1].chartVersion (history[0] 4.8.0+0a1b2c3d4e5f is failed)"
    )


def test_v2beta1_release_reads_last_applied_revision(kb: KnowledgeBase) -> None:
    old = hr("agent-platform", api="v2beta1")
    old["status"] = {"lastAppliedRevision": "4.7.15"}
    assert read(kb, old).value("installed.agent-platform") == "4.7.15"


@pytest.mark.parametrize(
    ("ref", "pin", "unreadable"),
    [
        ({"semver": ">=4.7.0 <5.0.0"}, ">=4.7.0 <5.0.0", None),
        ({"tag": "4.7.18"}, "4.7.18", None),
        ({"tag": "4.7.18", "semver": "4.7.19"}, "4.7.19", None),  # semver wins over tag
        (
            {"digest": "sha256:" + "a" * 64, "semver": "4.7.19"},
            "absent",
            "spec.ref.digest pins sha256:",
        ),
        ({"tag": "latest-stable"}, "absent", "is not a version"),
        (None, None, None),  # no ref: the tag latest, i.e. unpinned
    ],
)
def test_oci_repository_ref_is_the_pin(
    kb: KnowledgeBase, ref: dict[str, str] | None, pin: str | None, unreadable: str | None
) -> None:
    state = read(kb, oci("agent-platform-connectivity", ref))
    key = "pin.agent-platform-connectivity"
    if pin == "absent":
        assert key not in state
        assert unreadable is not None and unreadable in state.unreadable[key]
    else:
        assert key in state and state.value(key) == pin


def test_chart_ref_follows_the_named_oci_repository(kb: KnowledgeBase) -> None:
    release = hr(
        "agent-platform-connectivity",
        version="4.7.18",
        chartRef={"kind": "OCIRepository", "name": "apc-source"},
    )
    state = read(kb, release, oci("apc-source", {"semver": "4.7.18"}))
    assert state.value("pin.agent-platform-connectivity") == "4.7.18"
    fact = state.get("pin.agent-platform-connectivity")
    assert fact is not None
    assert "OCIRepository flux-giantswarm/apc-source spec.ref.semver" in str(fact.source)


def test_helm_chart_version_and_values_keys(kb: KnowledgeBase) -> None:
    release = hr(
        "harness-delegate",
        version="0.29.0",
        chart={"spec": {"chart": "harness-delegate", "version": "0.29.x"}},
        values={"delegateVersion": "0.29.0", "image": {"tag": "v0.29.0"}},
    )
    state = read(kb, release)
    assert state.value("pin.harness-delegate") == "0.29.x"
    assert state.value("values.harness-delegate.delegateVersion") == "0.29.0"
    assert state.value("values.harness-delegate.image.tag") == "v0.29.0"
    unpinned = read(kb, hr("harness-delegate", chart={"spec": {"chart": "harness-delegate"}}))
    assert "pin.harness-delegate" in unpinned and unpinned.value("pin.harness-delegate") is None


@pytest.mark.parametrize(
    ("spec", "mode"), [({}, "disabled"), ({"driftDetection": {"mode": "warn"}}, "warn")]
)
def test_drift_detection_unset_is_disabled(
    kb: KnowledgeBase, spec: dict[str, Any], mode: str
) -> None:
    state = read(kb, hr("kagent", **spec))
    assert state.value("helmrelease.kagent.drift-detection") == mode
    assert state.value("helmrelease.kagent.namespace") == NS


def deployment(**pod: Any) -> dict[str, Any]:
    labels = pod.pop("labels", {"harness.io/name": "harness-delegate"})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "harness-delegate",
            "namespace": "harness-delegate-ng",
            "labels": labels,
        },
        "spec": {
            "template": {"metadata": {"annotations": pod.pop("annotations", {})}, "spec": pod}
        },
    }


def test_volumes_of_the_wrong_type_are_refused_naming_the_field(kb: KnowledgeBase) -> None:
    from upgradeplan.errors import BadInput

    dep = deployment(containers=[{"name": "d", "image": "harness/delegate:0.29.0"}], volumes=5)
    said = r"spec\.template\.spec\.volumes is a number, expected a list"
    with pytest.raises(BadInput, match=said):
        read(kb, dep)  # was a TypeError (exit 1), then read as "no volumes"


def test_delegate_workload_facts(kb: KnowledgeBase) -> None:
    dep = deployment(
        containers=[
            {
                "name": "delegate",
                "image": "registry.example/harness/delegate:v0.30.1",
                "args": ["--metadata-endpoint=http://x"],
                "env": [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "tok", "key": "k"}}}],
                "envFrom": [{"secretRef": {"name": "more"}}, {"secretRef": {"name": "tok"}}],
            }
        ],
        tolerations=[
            {"key": "cloud-provider", "operator": "Exists", "effect": "NoSchedule"},
            {"operator": "Exists"},
        ],
        annotations={"sidecar.istio.io/inject": "false"},
        labels={},  # recognised by the image repository alone
    )
    state = read(kb, dep)
    assert state.value("workload.harness-delegate.env-secrets") == ["tok", "more"]
    assert state.value("workload.harness-delegate.tolerations") == [
        "cloud-provider:Exists:NoSchedule",
        ":Exists:",
    ]
    assert state.value("workload.harness-delegate.pod-annotations") == {
        "sidecar.istio.io/inject": "false"
    }
    assert state.value("installed.harness-delegate") == "0.30.1"  # from the image tag
    assert "secret.harness-delegate-ng.tok.type" not in state  # not read: unknown, not absent


def test_referenced_secret_types_only_never_data(kb: KnowledgeBase) -> None:
    dep = deployment(
        containers=[
            {
                "name": "d",
                "image": "harness/delegate:0.31.2",
                "envFrom": [{"secretRef": {"name": "tok"}}],
            }
        ]
    )
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "tok", "namespace": "harness-delegate-ng"},
        "type": "harness.io/token",
        "data": {"token": "c2VjcmV0"},
        "stringData": {"token": "secret"},
    }
    other = {**secret, "metadata": {"name": "other", "namespace": "harness-delegate-ng"}}
    state = read(kb, dep, secret, other)
    assert state.value("secret.harness-delegate-ng.tok.type") == "harness.io/token"
    assert not [k for k in state.facts if ".other." in k]
    assert "c2VjcmV0" not in repr(state) and "'secret'" not in repr(state)
    gone = read(kb, dep, listed={"Secret harness-delegate-ng/tok"})
    assert (
        "secret.harness-delegate-ng.tok.type" in gone
        and gone.value("secret.harness-delegate-ng.tok.type") is None
    )


def node(
    name: str,
    provider: str = "",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"providerID": provider, "taints": taints or []},
    }


@pytest.mark.parametrize(
    ("nodes", "provider", "autopilot"),
    [
        ([node("a", "azure:///subscriptions/x")], "aks", False),
        ([node("a", labels={"eks.amazonaws.com/nodegroup": "ng"})], "eks", False),
        ([node("gk3-pool", "gce://p/z/gk3-pool")], "gke", True),
        ([node("a", "aws:///x"), node("b", "gce://p")], "other", False),
    ],
)
def test_node_provider(
    kb: KnowledgeBase, nodes: list[dict[str, Any]], provider: str, autopilot: bool
) -> None:
    state = read(kb, *nodes)
    assert state.value("nodes.provider") == provider
    assert state.value("cluster.autopilot") is autopilot


def test_node_taints_are_distinct_and_sorted(kb: KnowledgeBase) -> None:
    taint = {"key": "cloud-provider", "value": "aws", "effect": "NoSchedule"}
    state = read(
        kb,
        node("a", taints=[taint]),
        node("b", taints=[taint, {"key": "gpu", "effect": "NoExecute"}]),
    )
    assert state.value("nodes.taints") == ["cloud-provider=aws:NoSchedule", "gpu:NoExecute"]


def test_absence_is_known_only_for_listed_kinds(kb: KnowledgeBase) -> None:
    assert "object.Harness.kagent.kagent.exists" not in read(kb)
    listed = read(kb, listed={"Harness", "StorageClass", "CustomResourceDefinition"})
    assert listed.value("object.Harness.kagent.kagent.exists") is False
    assert listed.value("storageclass.standard.exists") is False
    assert listed.value("crd.modelconfigs.kagent.dev.stored-versions") == []


def test_interests_come_from_the_knowledge(kb: KnowledgeBase) -> None:
    wants = interests(kb)
    assert ("Harness", "kagent", "kagent") in wants.objects
    assert "modelconfigs.kagent.dev" in wants.crds
    assert "standard" in wants.storage_classes


def test_flatten_documents_tells_what_was_listed() -> None:
    harness = {
        "apiVersion": "kagent.dev/v1alpha3",
        "kind": "Harness",
        "metadata": {"name": "x", "namespace": "kagent"},
    }
    objects, listed = flatten_documents(
        [
            {"apiVersion": "kagent.dev/v1alpha3", "kind": "AgentTemplateList", "items": []},
            {"apiVersion": "v1", "kind": "List", "items": [harness]},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kagent"}},
        ]
    )
    assert [o["kind"] for o in objects] == ["Harness", "Namespace"]
    assert listed == {"AgentTemplate"}  # kubectl's plain List may have been filtered


def test_unreadable_prefixes_carry_no_facts(kb: KnowledgeBase) -> None:
    state = read(kb, hr("kagent"), unreadable={"helmrelease": "403 Forbidden listing helmreleases"})
    assert not [k for k in state.facts if k.startswith("helmrelease.")]
    assert state.unreadable == {"helmrelease": "403 Forbidden listing helmreleases"}


@pytest.mark.parametrize(
    ("git", "version"),
    [("v1.27.3-eks-4f4795d", "1.27.3"), ("v1.28.0+k3s1", "1.28.0"), ("v1.31", "1.31.0")],
)
def test_server_version(kb: KnowledgeBase, git: str, version: str) -> None:
    state = read(kb, server_version_object({"gitVersion": git}))
    assert state.value("installed.kubernetes") == version
    assert str(state.get("installed.kubernetes").source) == f"cluster t: /version gitVersion {git}"  # type: ignore[union-attr]


def test_unparseable_server_version_is_unknown(kb: KnowledgeBase) -> None:
    state = read(kb, server_version_object({"gitVersion": "devel"}))
    assert (
        "installed.kubernetes" not in state and "devel" in state.unreadable["installed.kubernetes"]
    )


@pytest.mark.parametrize("order", ["sorted", "reversed", "one-out-of-place", "not-all-paged"])
def test_objects_prepared_page_by_page_give_the_state_of_sorted_objects(
    kb: KnowledgeBase, order: str
) -> None:
    """The objects of each kind are taken in (namespace, name) order, the first of a key
    winning; a list whose pages came in that order is not sorted again, any other is."""
    from upgradeplan.readers.kube.objects import Prepared
    from upgradeplan.readers.snapshot import to_document

    objects: list[dict[str, Any]] = []
    for ns in ("a", "b", "c"):
        for name in ("agent-platform", "kagent", "other"):
            release = hr(name, version=f"4.7.{len(objects)}")
            release["metadata"]["namespace"] = ns
            objects.append(release)
    if order == "reversed":
        objects.reverse()
    elif order == "one-out-of-place":
        objects.insert(0, objects.pop(4))
    plain = to_document(read(kb, *[dict(o) for o in objects]))
    prepared = Prepared(kb, "cluster t")
    for start in range(0, len(objects), 4):  # pages of four
        prepared.page("HelmRelease", objects[start : start + 4])
    listed = [*objects, hr("zz-extra")] if order == "not-all-paged" else objects
    if order == "not-all-paged":
        plain = to_document(read(kb, *listed))
    assert to_document(read(kb, *listed, prepared=prepared)) == plain
    assert plain["facts"]["helmrelease.agent-platform.namespace"]["value"] == "a"
