"""Kubernetes objects in GitOps files: workloads of recognised products, Secrets, Namespaces.

A ``Deployment`` / ``StatefulSet`` / ``DaemonSet`` is recognised by the product's labels or
image repository (a patch of it, by the name read before). A ``Secret`` gives its ``type``
only: ``data`` and ``stringData`` are never read. A ``Namespace`` gives its labels.
"""

from __future__ import annotations

from typing import Any

from upgradeplan.provenance import Source
from upgradeplan.readers.gitops.facts import (
    LOW,
    FactSink,
    image_matches,
    image_repo,
    image_tag,
    text_of,
)
from upgradeplan.readers.gitops.yamldocs import View
from upgradeplan.readers.kube.workloads import env_secret_refs

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


class ObjectFacts(FactSink):
    """Facts of workloads, Secrets and Namespaces."""

    def workload(self, v: View, default_ns: str | None, kind: str) -> None:
        labels: dict[str, Any] = {}
        for path in (
            ("metadata", "labels"),
            ("spec", "selector", "matchLabels"),
            ("spec", "template", "metadata", "labels"),
        ):
            labels.update(v.mapping(*path))
        containers = v.sequence("spec", "template", "spec", "containers")
        name = v.text("metadata", "name")
        pid = next((p for k, val, p in self.labels if str(labels.get(k)) == val), None)
        if pid is None:
            for c in containers:
                image = c.get("image") if isinstance(c, dict) else None
                pid = next(
                    (p for img, p in self.images if image_matches(image_repo(image), img)), None
                )
                if pid is not None:
                    break
        if pid is None:
            return
        ns = v.text("metadata", "namespace")
        w = f"workload.{pid}"
        cpath = ("spec", "template", "spec", "containers")
        if name:
            self.add(f"{w}.name", name, v.where("metadata", "name"))
        if ns:
            self.add(f"{w}.namespace", ns, v.where("metadata", "namespace"))
        elif default_ns:
            self.add(f"{w}.namespace", default_ns, v.where("metadata", "name"), LOW)
        if containers:
            self.add(f"{w}.image", str(containers[0].get("image", "")), v.where(*cpath, 0, "image"))
        args: list[str] = []
        secrets: list[str] = []
        args_at = secrets_at = v.where(*cpath)
        for i, c in enumerate(containers):
            if not isinstance(c, dict):
                continue
            if v.sequence(*cpath, i, "args") and not args:
                args_at = v.where(*cpath, i, "args")
            args += [str(a) for a in v.sequence(*cpath, i, "args")]
            found = _env_secrets(v.sub(*cpath, i))
            if found and not secrets:
                secrets_at = found[0][1]
            secrets += [name for name, _ in found]
            tag = image_tag(c.get("image"))
            own = self.kb.products[pid].recognise.image
            if tag and any(image_matches(image_repo(c.get("image")), img) for img in own):
                self.pin_from_tag(pid, tag, v.where(*cpath, i, "image"), LOW)
        # A values file says what the chart renders; a rendered manifest only repeats it.
        self.add(f"{w}.args", args, args_at, LOW)
        self.add(f"{w}.env-secrets", list(dict.fromkeys(secrets)), secrets_at)
        refs = env_secret_refs(v.sequence(*cpath))
        if refs:  # at the first env entry that reads a Secret
            _, ci, _, ei = next(iter(refs)).rsplit("/", 3)
            refs_at = v.where(*cpath, int(ci), "env", int(ei))
        else:
            refs_at = v.where(*cpath)
        self.add(f"{w}.env-secret-refs", refs, refs_at)
        pod_ann = v.mapping("spec", "template", "metadata", "annotations")
        self.add(
            f"{w}.pod-annotations",
            {str(k): text_of(val) for k, val in pod_ann.items()},
            v.where("spec", "template", "metadata"),
        )
        tolerations = [
            ":".join(text_of(t.get(k)) for k in ("key", "operator", "effect"))
            if t.get("operator")
            else f"{text_of(t.get('key'))}:Equal:{text_of(t.get('effect'))}"
            for t in v.sequence("spec", "template", "spec", "tolerations")
            if isinstance(t, dict)
        ]
        self.add(
            f"{w}.tolerations", tolerations, v.where("spec", "template", "spec", "tolerations")
        )
        surge = v.text("spec", "strategy", "rollingUpdate", "maxSurge")
        if surge is not None:
            self.add(
                f"{w}.max-surge", surge, v.where("spec", "strategy", "rollingUpdate", "maxSurge")
            )
        if kind == "StatefulSet":
            classes = [
                text_of(t.get("spec", {}).get("storageClassName"))
                for t in v.sequence("spec", "volumeClaimTemplates")
                if isinstance(t, dict)
                and isinstance(t.get("spec"), dict)
                and t["spec"].get("storageClassName")
            ]
            self.add(f"{w}.storage-classes", classes, v.where("spec", "volumeClaimTemplates"))

    def secret(self, v: View, default_ns: str | None) -> None:
        # Only metadata and type are looked at: data / stringData are never read.
        name = v.text("metadata", "name")
        ns = v.text("metadata", "namespace") or default_ns
        if not name or not ns:
            return
        kind = v.text("type")
        where = v.where("type") if kind is not None else v.where("metadata", "name")
        self.add(f"secret.{ns}.{name}.type", kind or "Opaque", where)

    def namespace_object(self, v: View) -> None:
        name = v.text("metadata", "name")
        if not name:
            return
        labels = v.mapping("metadata", "labels")
        where = v.where("metadata", "labels") if labels else v.where("metadata", "name")
        self.add(f"namespace.{name}.labels", {str(k): text_of(x) for k, x in labels.items()}, where)


def _env_secrets(c: View) -> list[tuple[str, Source]]:
    """Secrets a container's env reads, each with the file:line of its name."""
    out: list[tuple[str, Source]] = []
    for i, e in enumerate(c.sequence("env")):
        name = (
            c.text("env", i, "valueFrom", "secretKeyRef", "name") if isinstance(e, dict) else None
        )
        if name:
            out.append((name, c.where("env", i, "valueFrom", "secretKeyRef", "name")))
    for i, e in enumerate(c.sequence("envFrom")):
        name = c.text("envFrom", i, "secretRef", "name") if isinstance(e, dict) else None
        if name:
            out.append((name, c.where("envFrom", i, "secretRef", "name")))
    return out
