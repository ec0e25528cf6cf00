"""Deployments and Nodes -> facts: each product's workload, and what the nodes say.

A recognised product's Deployment gives its image, args, the Secrets its env reads,
tolerations, surge, the storage classes of its volumes and the version its chart label or
image tag says; the Nodes give taints, the provider and GKE Autopilot.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from upgradeplan.model import Product
from upgradeplan.readers.kube.fields import (
    VERSION_LIKE,
    Builder,
    containers_of,
    get,
    image_tag,
    meta,
    name_of,
    ns_of,
    ref_of,
    str_map,
    strip_v,
)
from upgradeplan.readers.recognise import storage_classes, workload_facts


def deployment_facts(
    b: Builder, product: Product, dep: Mapping[str, Any], claims: list[Mapping[str, Any]]
) -> Iterator[tuple[str, str]]:
    pid, ns, ref = product.id, ns_of(dep), ref_of("Deployment", dep)
    secrets: list[str] = []
    for fact in workload_facts(pid, dep):  # the facts every reader derives alike
        b.add(fact.key, fact.value, f"{ref} {fact.label}")
        if fact.key.endswith(".env-secrets") and isinstance(fact.value, list):
            secrets = [str(n) for n in fact.value]
    containers = containers_of(dep)
    image = str(containers[0].get("image", "")) if containers else ""
    classes = storage_classes(dep, claims)
    if classes is not None:
        b.add(f"workload.{pid}.storage-classes", classes, ref + " volumes")
    labels = str_map(meta(dep).get("labels"))
    chart_label = labels.get("helm.sh/chart", "")
    chart_version = ""
    for chart in product.recognise.chart:
        if chart_label.startswith(chart + "-"):
            chart_version = chart_label[len(chart) + 1 :]
    if chart_version:
        b.add(
            f"installed.{pid}",
            strip_v(chart_version),
            f"{ref} metadata.labels helm.sh/chart={chart_label}",
        )
    elif image and VERSION_LIKE.match(image_tag(image)):
        b.add(f"installed.{pid}", strip_v(image_tag(image)), f"{ref} image tag {image}")
    for name in secrets:
        yield ns, name


def node_facts(b: Builder, nodes: list[Mapping[str, Any]]) -> None:
    taints: set[str] = set()
    providers: set[str] = set()
    autopilot = False
    for node in nodes:
        for taint in get(node, "spec", "taints") or []:
            if isinstance(taint, Mapping) and taint.get("key"):
                value = taint.get("value")
                key = f"{taint['key']}={value}" if value else str(taint["key"])
                taints.add(f"{key}:{taint.get('effect', '')}")
        providers.add(_provider(node))
        labels = str_map(meta(node).get("labels"))
        if any(k.startswith("cloud.google.com/gke-autopilot") for k in labels) or name_of(
            node
        ).startswith("gk3-"):
            autopilot = True
    where = f"{len(nodes)} Node(s) spec.taints"
    b.add("nodes.taints", sorted(taints), where)
    if providers:
        known = providers - {"other"}
        provider = known.pop() if len(known) == 1 else "other"
        b.add("nodes.provider", provider, f"{len(nodes)} Node(s) spec.providerID / metadata.labels")
        b.add("cluster.autopilot", autopilot, f"{len(nodes)} Node(s) metadata.labels / names")


def _provider(node: Mapping[str, Any]) -> str:
    pid = str(get(node, "spec", "providerID") or "")
    for prefix, name in (("azure://", "aks"), ("aws://", "eks"), ("gce://", "gke")):
        if pid.startswith(prefix):
            return name
    labels = str_map(meta(node).get("labels"))
    for label, name in (
        ("kubernetes.azure.com/cluster", "aks"),
        ("eks.amazonaws.com/nodegroup", "eks"),
        ("cloud.google.com/gke-nodepool", "gke"),
    ):
        if label in labels:
            return name
    return "other"
