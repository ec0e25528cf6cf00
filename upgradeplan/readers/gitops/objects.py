"""Kubernetes objects in GitOps files: workloads of recognised products, Secrets, Namespaces.

A ``Deployment`` / ``StatefulSet`` / ``DaemonSet`` is recognised, and its workload facts
derived, by the code the cluster reader uses (readers/recognise): the product's labels or
image repository. A ``Secret`` gives its ``type``
only: ``data`` and ``stringData`` are never read. A ``Namespace`` gives its labels.
"""

from __future__ import annotations

from upgradeplan.readers.gitops.facts import LOW, NORMAL, FactSink, image_repo, image_tag
from upgradeplan.readers.gitops.yamldocs import View
from upgradeplan.readers.recognise import image_matches, storage_classes, text_of, workload_facts

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


class ObjectFacts(FactSink):
    """Facts of workloads, Secrets and Namespaces."""

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
