"""Deployments and Nodes -> facts: each product's workload, and what the nodes say.

A recognised product's Deployment gives its image, args, the Secrets its env reads,
tolerations, surge, the storage classes of its volumes and the version its chart label or
image tag says; the Nodes give taints, the provider and GKE Autopilot.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
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


def deployment_facts(
    b: Builder, product: Product, dep: Mapping[str, Any], claims: list[Mapping[str, Any]]
) -> Iterator[tuple[str, str]]:
    pid, ns, ref = product.id, ns_of(dep), ref_of("Deployment", dep)
    containers = containers_of(dep)
    b.add(f"workload.{pid}.namespace", ns, ref + " metadata.namespace")
    b.add(f"workload.{pid}.name", name_of(dep), ref + " metadata.name")
    image = str(containers[0].get("image", "")) if containers else ""
    if image:
        b.add(f"workload.{pid}.image", image, ref + " spec.template.spec.containers[0].image")
    args: list[str] = []
    for c in containers:
        args.extend(str(a) for a in c.get("args") or [])
    b.add(f"workload.{pid}.args", args, ref + " spec.template.spec.containers[*].args")
    secrets: list[str] = []
    for c in containers_of(dep, init=True):
        for env in c.get("env") or []:
            name = get(env, "valueFrom", "secretKeyRef", "name")
            if name and str(name) not in secrets:
                secrets.append(str(name))
        for src in c.get("envFrom") or []:
            name = get(src, "secretRef", "name")
            if name and str(name) not in secrets:
                secrets.append(str(name))
    b.add(
        f"workload.{pid}.env-secrets",
        secrets,
        ref + " env valueFrom.secretKeyRef / envFrom.secretRef",
    )
    b.add(
        f"workload.{pid}.env-secret-refs",
        env_secret_refs(containers),
        ref + " env valueFrom.secretKeyRef",
    )
    annotations = str_map(get(dep, "spec", "template", "metadata", "annotations"))
    b.add(
        f"workload.{pid}.pod-annotations", annotations, ref + " spec.template.metadata.annotations"
    )
    tolerations = []
    for tol in get(dep, "spec", "template", "spec", "tolerations") or []:
        if isinstance(tol, Mapping):
            op = str(tol.get("operator") or "Equal")
            tolerations.append(f"{tol.get('key') or ''}:{op}:{tol.get('effect') or ''}")
    b.add(f"workload.{pid}.tolerations", tolerations, ref + " spec.template.spec.tolerations")
    surge = get(dep, "spec", "strategy", "rollingUpdate", "maxSurge")
    if surge is not None:
        b.add(
            f"workload.{pid}.max-surge", str(surge), ref + " spec.strategy.rollingUpdate.maxSurge"
        )
    classes = _storage_classes(dep, ns, claims)
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


def env_secret_refs(containers: Sequence[Any]) -> dict[str, str]:
    """Where each env entry that reads a Secret sits: JSON pointer -> ``ENV_NAME=secret``.

    ``containers`` is the pod template's container list (indexes are positions in it), so a
    JSON 6902 patch can rewrite exactly that entry. Shared by the cluster/snapshot reader and
    the GitOps reader.
    """
    refs: dict[str, str] = {}
    for ci, c in enumerate(containers):
        env_list = c.get("env") if isinstance(c, Mapping) else None
        for ei, env in enumerate(env_list if isinstance(env_list, list) else []):
            secret = get(env, "valueFrom", "secretKeyRef", "name")
            if secret and isinstance(env, Mapping) and env.get("name"):
                refs[f"/spec/template/spec/containers/{ci}/env/{ei}"] = f"{env['name']}={secret}"
    return refs


def _storage_classes(
    dep: Mapping[str, Any], ns: str, claims: list[Mapping[str, Any]]
) -> list[str] | None:
    """Storage classes the pod's volumes ask for; None when a claim could not be resolved."""
    out: set[str] = set()
    by_name = {(ns_of(c), name_of(c)): c for c in claims}
    for vol in get(dep, "spec", "template", "spec", "volumes") or []:
        if not isinstance(vol, Mapping):
            continue
        eph = get(vol, "ephemeral", "volumeClaimTemplate", "spec", "storageClassName")
        if eph:
            out.add(str(eph))
        claim = get(vol, "persistentVolumeClaim", "claimName")
        if claim:
            pvc = by_name.get((ns, str(claim)))
            if pvc is None:
                return None
            sc = get(pvc, "spec", "storageClassName")
            if sc:
                out.add(str(sc))
    return sorted(out)


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
