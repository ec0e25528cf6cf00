"""Kubernetes objects in GitOps files: workloads of recognised products, Secrets, Namespaces,
and the objects of the kinds the knowledge declares.

A ``Deployment`` / ``StatefulSet`` / ``DaemonSet`` is recognised, and its workload facts
derived, by the code the cluster reader uses (readers/recognise): the product's labels or
image repository. A ``Secret`` gives its ``type`` only (``data`` and ``stringData`` are
never read), a ``Namespace`` its labels, both derived there too. An object of a kind a product
declares under ``objects:`` (a custom resource, or a core kind such as ``Ingress`` or
``Service``) gives ``object.<Kind>.<namespace>.<name>.exists`` and each declared field, at its
file:line — never ``object.<Kind>``, the complete list: what the files hold is not all a
cluster may run.
"""

from __future__ import annotations

from typing import Any

from upgradeplan import keypath
from upgradeplan.model import ObjectKind
from upgradeplan.readers.gitops.docs import View
from upgradeplan.readers.gitops.facts import LOW, NORMAL, FactSink, image_repo, image_tag
from upgradeplan.readers.recognise import (
    image_matches,
    namespace_facts,
    plain_tree,
    secret_facts,
    storage_classes,
    workload_facts,
)

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


class ObjectFacts(FactSink):
    """Facts of workloads, Secrets and Namespaces, and of the kinds the knowledge declares."""

    _declared: dict[str, ObjectKind] | None = None  # kind -> declaration, read on first use

    def workload(self, v: View, default_ns: str | None, kind: str) -> None:
        """A workload of a recognised product: the facts every reader derives from the object
        (readers/recognise), each at its file:line, and the pin an image tag of its own gives."""
        obj = v.get()
        pid = self.recogniser.workload(obj) if isinstance(obj, dict) else None
        if pid is None:
            return
        w = f"workload.{pid}"
        for fact in workload_facts(pid, obj):
            # a values file says what the chart renders; a rendered manifest only repeats it
            prio = LOW if fact.key == f"{w}.args" else NORMAL
            self.add(fact.key, fact.value, v.where(*fact.path), prio)
        if not v.text("metadata", "namespace") and default_ns:
            self.add(f"{w}.namespace", default_ns, v.where("metadata", "name"), LOW)
        cpath = ("spec", "template", "spec", "containers")
        own = self.kb.products[pid].recognise.image
        for i, c in enumerate(v.sequence(*cpath)):
            tag = image_tag(c.get("image")) if isinstance(c, dict) else None
            if tag and any(image_matches(image_repo(c.get("image")), img) for img in own):
                self.pin_from_tag(pid, tag, v.where(*cpath, i, "image"), LOW)
        classes = storage_classes(obj, ())  # a claim the files name: its class is not known
        if classes is not None:
            at = ("spec", "volumeClaimTemplates") if kind == "StatefulSet" else ("spec", "template")
            self.add(f"{w}.storage-classes", classes, v.where(*at))

    def declared_object(self, v: View, default_ns: str | None, kind: str, api: str) -> None:
        """An object of a kind the knowledge declares (``objects:``): that it exists and the
        declared fields (``null`` where it has none), located where they are written."""
        if self._declared is None:
            self._declared = self.kb.object_kinds()
        decl = self._declared.get(kind)
        if decl is None or decl.api_version != api:
            return

        name = v.text("metadata", "name")
        ns = v.text("metadata", "namespace") or default_ns
        if not name or not ns:  # a namespace Flux would choose is not known here
            return
        base = f"object.{kind}.{ns}.{name}"
        self.add(f"{base}.exists", True, v.where("metadata", "name"))
        obj = v.get()
        for field in decl.fields:
            parts = keypath.split(field)
            value = keypath.get(obj, parts) if isinstance(obj, dict) else keypath.ABSENT
            if value is keypath.ABSENT:
                self.add(f"{base}.{field}", None, v.where("metadata", "name"))
                continue
            at = tuple(int(p) if p.isdigit() else p for p in parts)
            self.add(f"{base}.{field}", plain_tree(value), v.where(*at))

    def secret(self, v: View, default_ns: str | None) -> None:
        """A Secret's type, derived as every reader derives it (data is never read)."""
        for fact in secret_facts(_in_namespace(v, default_ns)):
            self.add(fact.key, fact.value, v.where(*fact.path))

    def namespace_object(self, v: View) -> None:
        """A Namespace's labels, derived as every reader derives them."""
        obj = v.get()
        for fact in namespace_facts(obj if isinstance(obj, dict) else {}):
            self.add(fact.key, fact.value, v.where(*fact.path))


def _in_namespace(v: View, default_ns: str | None) -> dict[str, Any]:
    """The object, in ``default_ns`` when it names no namespace of its own."""
    obj = v.get()
    if not isinstance(obj, dict):
        return {}
    meta = obj.get("metadata")
    if default_ns and isinstance(meta, dict) and not meta.get("namespace"):
        return {**obj, "metadata": {**meta, "namespace": default_ns}}
    return obj
