"""Kubernetes object dicts -> facts (docs/state-format.md).

The live-cluster reader and the snapshot reader (``kubectl get … -o yaml|json`` output) both
hand plain object dicts to :func:`state_from_objects`. Products are found through the
knowledge base's ``recognise`` entries (HelmRelease/OCIRepository names, chart names,
Deployment labels, image repositories), never through names written in code.

Absence is a fact only where the input says what was looked at: ``listed`` names the kinds
whose complete list was read (``"Harness"``) or single objects asked for by name
(``"Secret ns/name"``). Anything else that is missing stays unknown. Secret ``data`` and
``stringData`` are never read.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from upgradeplan import keypath
from upgradeplan.model import Condition, Fact, FactValue, KnowledgeBase, Product, State
from upgradeplan.provenance import ObjectRef, read_from
from upgradeplan.readers.kube.unknowns import widen
from upgradeplan.unreadable import Unreadable

# The pseudo-object the cluster reader makes of GET /version.
VERSION_API = "upgradeplan.dev/v1"
VERSION_KIND = "ServerVersion"

# Kinds whose objects always become object.<Kind>.<ns>.<name>.* facts.
OBJECT_KINDS = frozenset({"Harness", "AgentTemplate"})

_OCI_DIGEST_SUFFIX = re.compile(r"\+[0-9a-f]{12}$")
_VERSION_LIKE = re.compile(r"^v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.+-]*)?$")
_K8S_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def server_version_object(info: Mapping[str, Any]) -> dict[str, Any]:
    """The pseudo-object for a ``/version`` answer."""
    return {
        "apiVersion": VERSION_API,
        "kind": VERSION_KIND,
        "metadata": {"name": "version"},
        "gitVersion": str(info.get("gitVersion", "")),
    }


# --------------------------------------------------------------------------- interests


@dataclass(frozen=True)
class Interests:
    """What the knowledge base asks about, beyond the products it recognises."""

    objects: frozenset[tuple[str, str, str]] = frozenset()  # (kind, namespace, name)
    crds: frozenset[str] = frozenset()
    storage_classes: frozenset[str] = frozenset()
    fact_keys: frozenset[str] = frozenset()

    @property
    def object_kinds(self) -> frozenset[str]:
        return OBJECT_KINDS | {kind for kind, _, _ in self.objects}


def interests(kb: KnowledgeBase) -> Interests:
    """Objects, CRDs, storage classes and fact keys named by the hazards' conditions."""
    objects: set[tuple[str, str, str]] = set()
    crds: set[str] = set()
    classes: set[str] = set()
    keys: set[str] = set()

    def walk(cond: Condition) -> None:
        args = cond.args
        if cond.op != "pred":
            for child in cond.children:
                walk(child)
            return
        if cond.predicate in ("object_exists", "object_annotation", "object_label"):
            objects.add(
                (
                    str(args.get("kind", "")),
                    str(args.get("namespace", "")),
                    str(args.get("name", "")),
                )
            )
        elif cond.predicate == "crd_stored_version":
            crds.add(str(args.get("crd", "")))
        elif cond.predicate == "storage_class_exists":
            classes.add(str(args.get("name", "")))
        elif "fact" in args:
            keys.add(str(args["fact"]))

    for hazard in kb.hazards.values():
        if hazard.when is not None:
            walk(hazard.when)
    for migration in kb.migrations.values():
        for param in migration.params.values():
            if isinstance(param, Mapping) and "fact" in param:
                keys.add(str(param["fact"]))
    return Interests(
        frozenset(objects), frozenset(crds - {""}), frozenset(classes - {""}), frozenset(keys)
    )


# --------------------------------------------------------------------------- documents


def flatten_documents(documents: Iterable[Any]) -> tuple[list[dict[str, Any]], set[str]]:
    """Objects out of parsed documents (``List``/``<Kind>List`` objects are opened).

    Returns the objects and the kinds whose complete list the documents say was read: only a
    typed ``<Kind>List`` (as the API answers a cluster-wide list) says so, even when empty.
    What kubectl prints (a plain ``List``) may have been filtered by namespace or label, so
    an object missing from it stays unknown.
    """
    objects: list[dict[str, Any]] = []
    listed: set[str] = set()

    def visit(doc: Any) -> None:
        if not isinstance(doc, dict):
            return
        kind = str(doc.get("kind", ""))
        items = doc.get("items")
        if kind.endswith("List") and isinstance(items, list):
            if kind != "List":
                listed.add(kind[: -len("List")])
            for item in items:
                visit(item)
        elif kind:
            objects.append(doc)

    for doc in documents:
        visit(doc)
    return objects, listed


def is_kubernetes_document(doc: Any) -> bool:
    """True for a Kubernetes object or list (what kubectl -o yaml|json prints)."""
    return isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc


# --------------------------------------------------------------------------- helpers


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name", ""))


def _ns(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("namespace", "") or "")


def _get(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {
        str(k): "" if v is None else str(v)
        for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
    }


def _ref(kind: str, obj: Mapping[str, Any]) -> str:
    ns = _ns(obj)
    return f"{kind} {ns}/{_name(obj)}" if ns else f"{kind} {_name(obj)}"


def _group(obj: Mapping[str, Any]) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[0]


def _image_repository(image: str) -> str:
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    if ":" in last:
        repo = repo[: len(repo) - len(last)] + last.split(":", 1)[0]
    return repo


def _image_tag(image: str) -> str:
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


# The image-reference parsing every reader shares (the GitOps reader too): a digest-pinned
# ``repo:25.01.1@sha256:…`` keeps its tag.
image_repository = _image_repository
image_tag = _image_tag


def _strip_v(version: str) -> str:
    return version[1:] if version[:1] in ("v", "V") and version[1:2].isdigit() else version


@dataclass
class _Builder:
    prefix: str
    facts: dict[str, Fact] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    def add(
        self,
        key: str,
        value: FactValue,
        where: str,
        *,
        replace: bool = False,
        obj: ObjectRef | None = None,
        path: str = "",
    ) -> None:
        if key in self.facts and not replace:
            return
        self.facts[key] = Fact(key, value, read_from(where, self.prefix, obj=obj, path=path))


# --------------------------------------------------------------------------- products


class _Recogniser:
    def __init__(self, kb: KnowledgeBase) -> None:
        self.products: list[Product] = [kb.products[k] for k in sorted(kb.products)]

    def by_release_name(self, name: str) -> Product | None:
        return next((p for p in self.products if name in p.recognise.helmrelease), None)

    def by_chart(self, chart: str) -> Product | None:
        if not chart:
            return None
        return next((p for p in self.products if chart in p.recognise.chart), None)

    def helmrelease(self, hr: Mapping[str, Any]) -> Product | None:
        history = _get(hr, "status", "history")
        chart_names = [str(_get(hr, "spec", "chart", "spec", "chart") or "")]
        if isinstance(history, list) and history and isinstance(history[0], Mapping):
            chart_names.append(str(history[0].get("chartName", "") or ""))
        found = self.by_release_name(_name(hr))
        for chart in chart_names:
            found = found or self.by_chart(chart)
        return found

    def deployment(self, dep: Mapping[str, Any]) -> Product | None:
        labels = {
            **_str_map(_meta(dep).get("labels")),
            **_str_map(_get(dep, "spec", "template", "metadata", "labels")),
        }
        images = [_image_repository(str(c.get("image", ""))) for c in _containers(dep)]
        for product in self.products:
            rec = product.recognise
            if any(labels.get(k) == v for k, v in rec.deployment_labels):
                return product
            for image in images:
                if any(image == r or image.endswith("/" + r) for r in rec.image):
                    return product
        return None


def _containers(dep: Mapping[str, Any], *, init: bool = False) -> list[Mapping[str, Any]]:
    spec = _get(dep, "spec", "template", "spec") or {}
    keys = ("initContainers", "containers") if init else ("containers",)
    out: list[Mapping[str, Any]] = []
    for key in keys:
        items = spec.get(key) if isinstance(spec, Mapping) else None
        if isinstance(items, list):
            out.extend(c for c in items if isinstance(c, Mapping))
    return out


# --------------------------------------------------------------------------- the reader


def state_from_objects(
    kb: KnowledgeBase,
    objects: Iterable[Mapping[str, Any]],
    *,
    source_prefix: str,
    name: str = "",
    listed: Collection[str] = (),
    unreadable: Mapping[str, str] | None = None,
    unread: Sequence[Unreadable] = (),
) -> State:
    """Facts about the installation these Kubernetes objects describe.

    ``source_prefix`` starts every fact's source (``"cluster prod"``); ``listed`` names the
    kinds (or ``"Kind ns/name"`` objects) whose absence is known; ``unreadable`` (key
    prefix -> reason) is carried into the state, and no fact under such a prefix is made;
    ``unread`` (the records of what could not be read) goes into the state as it is.
    """
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        if isinstance(obj, Mapping) and obj.get("kind"):
            by_kind.setdefault(str(obj["kind"]), []).append(obj)
    for items in by_kind.values():
        items.sort(key=lambda o: (_ns(o), _name(o)))
    b = _Builder(source_prefix, unreadable=dict(unreadable or {}))
    rec = _Recogniser(kb)
    wants = interests(kb)
    listed_set = set(listed)

    def absent_known(kind: str, ns: str, nm: str) -> bool:
        ref = f"{kind} {ns}/{nm}" if ns else f"{kind} {nm}"
        return kind in listed_set or ref in listed_set

    _server_version(b, by_kind.get(VERSION_KIND, []))
    ocirepos = {
        (_ns(o), _name(o)): o
        for o in by_kind.get("OCIRepository", [])
        if _group(o).startswith("source.")
    }
    helmcharts = {
        (_ns(o), _name(o)): o
        for o in by_kind.get("HelmChart", [])
        if _group(o).startswith("source.")
    }
    pinned: set[str] = set()
    for hr in by_kind.get("HelmRelease", []):
        if _group(hr).startswith("helm.toolkit.fluxcd.io"):
            _helmrelease(b, rec, hr, ocirepos, helmcharts, pinned)
    for oci in by_kind.get("OCIRepository", []):
        product = rec.by_release_name(_name(oci))
        if product is not None and product.id not in pinned:
            _oci_pin(b, product.id, oci)
            pinned.add(product.id)
    for chart in by_kind.get("HelmChart", []):
        product = rec.by_chart(str(_get(chart, "spec", "chart") or ""))
        if product is not None and product.id not in pinned:
            _version_pin(
                b,
                product.id,
                _get(chart, "spec", "version"),
                _ref("HelmChart", chart) + " spec.version",
            )
            pinned.add(product.id)
    referenced_secrets: list[tuple[str, str]] = []
    for dep in by_kind.get("Deployment", []):
        product = rec.deployment(dep)
        if product is not None and f"workload.{product.id}.name" not in b.facts:
            referenced_secrets.extend(
                _deployment(b, product, dep, by_kind.get("PersistentVolumeClaim", []))
            )
    secrets = {(_ns(s), _name(s)): s for s in by_kind.get("Secret", [])}
    for ns, nm in referenced_secrets:
        key = f"secret.{ns}.{nm}.type"
        secret = secrets.get((ns, nm))
        if secret is not None:
            b.add(key, str(secret.get("type") or "Opaque"), _ref("Secret", secret) + " type")
        elif absent_known("Secret", ns, nm):
            b.add(key, None, f"Secret {ns}/{nm} not found")
    _objects(b, by_kind, wants, absent_known)
    _declared_objects(b, by_kind, kb, listed_set)
    for crd in by_kind.get("CustomResourceDefinition", []):
        stored = _get(crd, "status", "storedVersions")
        if isinstance(stored, list):
            b.add(
                f"crd.{_name(crd)}.stored-versions",
                [str(v) for v in stored],
                _ref("CustomResourceDefinition", crd) + " status.storedVersions",
            )
    for crd_name in sorted(wants.crds):
        if f"crd.{crd_name}.stored-versions" not in b.facts and absent_known(
            "CustomResourceDefinition", "", crd_name
        ):
            b.add(
                f"crd.{crd_name}.stored-versions",
                [],
                f"CustomResourceDefinition {crd_name} not found",
            )
    for ns_obj in by_kind.get("Namespace", []):
        b.add(
            f"namespace.{_name(ns_obj)}.labels",
            _str_map(_meta(ns_obj).get("labels")),
            _ref("Namespace", ns_obj) + " metadata.labels",
        )
    if "Node" in listed_set or by_kind.get("Node"):
        _nodes(b, by_kind.get("Node", []))
    for sc in by_kind.get("StorageClass", []):
        b.add(f"storageclass.{_name(sc)}.exists", True, _ref("StorageClass", sc))
    sc_wanted = set(wants.storage_classes)
    for key in list(b.facts):
        if key.startswith("workload.") and key.endswith(".storage-classes"):
            sc_wanted.update(str(v) for v in b.facts[key].value or [])  # type: ignore[union-attr]
    for sc_name in sorted(sc_wanted):
        if f"storageclass.{sc_name}.exists" not in b.facts and absent_known(
            "StorageClass", "", sc_name
        ):
            b.add(f"storageclass.{sc_name}.exists", False, f"StorageClass {sc_name} not found")
    records = widen(kb, unread, b.unreadable, b.facts)
    facts = {
        k: f
        for k, f in b.facts.items()
        if not any(k == p or k.startswith(p + ".") for p in b.unreadable)
    }
    return State(
        facts=facts, name=name, unreadable=dict(sorted(b.unreadable.items())), unread=records
    )


def _server_version(b: _Builder, items: list[Mapping[str, Any]]) -> None:
    for obj in items[:1]:
        git = str(obj.get("gitVersion", ""))
        match = _K8S_VERSION.match(git)
        if match is None:
            b.unreadable.setdefault(
                "installed.kubernetes", f"/version gitVersion {git!r} is not a version"
            )
            continue
        major, minor, patch = match.group(1), match.group(2), match.group(3) or "0"
        b.add("installed.kubernetes", f"{major}.{minor}.{patch}", f"/version gitVersion {git}")


def _helmrelease(
    b: _Builder,
    rec: _Recogniser,
    hr: Mapping[str, Any],
    ocirepos: Mapping[tuple[str, str], Mapping[str, Any]],
    helmcharts: Mapping[tuple[str, str], Mapping[str, Any]],
    pinned: set[str],
) -> None:
    name, ns = _name(hr), _ns(hr)
    ref = _ref("HelmRelease", hr)
    b.add(f"helmrelease.{name}.namespace", ns, ref + " metadata.namespace")
    mode = _get(hr, "spec", "driftDetection", "mode")
    if mode:
        b.add(f"helmrelease.{name}.drift-detection", str(mode), ref + " spec.driftDetection.mode")
    else:
        b.add(
            f"helmrelease.{name}.drift-detection", "disabled", ref + " spec.driftDetection (unset)"
        )
    product = rec.helmrelease(hr)
    if product is None:
        return
    snapshot = _running_snapshot(_get(hr, "status", "history"))
    if snapshot is not None:
        index, entry, note = snapshot
        version = _OCI_DIGEST_SUFFIX.sub("", str(entry["chartVersion"]))
        where = f"{ref} status.history[{index}].chartVersion{note}"
        b.add(f"installed.{product.id}", version, where)
    elif _get(hr, "status", "lastAppliedRevision"):
        version = _OCI_DIGEST_SUFFIX.sub("", str(_get(hr, "status", "lastAppliedRevision")))
        b.add(f"installed.{product.id}", version, ref + " status.lastAppliedRevision")
    values = _get(hr, "spec", "values")
    if _get(hr, "spec", "valuesFrom") is None:
        # the whole of what the installation sets (with valuesFrom, merged elsewhere: unknown)
        whole = _plain_tree(values) if isinstance(values, Mapping) else {}
        b.add(
            f"values.{product.id}",
            whole,
            f"{ref} spec.values",
            obj=ObjectRef("HelmRelease", ns, name),
            path="spec.values",
        )
    for key in product.recognise.values_keys:
        value = _get(values, *keypath.split(key))
        if value is not None:
            b.add(
                f"values.{product.id}.{key}",
                _plain_tree(value) if isinstance(value, (Mapping, list)) else str(value),
                f"{ref} spec.values.{key}",
                obj=ObjectRef("HelmRelease", ns, name),
                path=f"spec.values.{key}",
            )
    if product.id in pinned:
        return
    chart_ref = _get(hr, "spec", "chartRef")
    if isinstance(chart_ref, Mapping):
        target = (str(chart_ref.get("namespace") or ns), str(chart_ref.get("name", "")))
        kind = str(chart_ref.get("kind", "OCIRepository"))
        if kind == "OCIRepository" and target in ocirepos:
            _oci_pin(b, product.id, ocirepos[target])
            pinned.add(product.id)
        elif kind == "HelmChart" and target in helmcharts:
            chart = helmcharts[target]
            _version_pin(
                b,
                product.id,
                _get(chart, "spec", "version"),
                _ref("HelmChart", chart) + " spec.version",
            )
            pinned.add(product.id)
        return
    if isinstance(_get(hr, "spec", "chart"), Mapping):
        _version_pin(
            b,
            product.id,
            _get(hr, "spec", "chart", "spec", "version"),
            ref + " spec.chart.spec.version",
        )
        pinned.add(product.id)


def _running_snapshot(history: Any) -> tuple[int, Mapping[str, Any], str] | None:
    """The history entry that runs: the newest ``deployed`` one, else the newest at all.

    After a failed upgrade the newest entry is the failed one while the release before it
    still runs.
    """
    if not isinstance(history, list):
        return None
    entries = [
        (i, e) for i, e in enumerate(history) if isinstance(e, Mapping) and e.get("chartVersion")
    ]
    if not entries:
        return None
    newest = entries[0][1]
    for i, entry in entries:
        if entry.get("status") == "deployed":
            if i == 0:
                return i, entry, ""
            state = newest.get("status", "not deployed")
            return i, entry, f" (history[0] {newest.get('chartVersion')} is {state})"
    return entries[0][0], newest, f" (status {newest.get('status', 'unknown')})"


def _version_pin(b: _Builder, product: str, version: Any, where: str) -> None:
    text = "" if version is None else str(version).strip()
    if text in ("", "*"):
        b.add(
            f"pin.{product}", None, where + (" (unset: latest)" if not text else " (any version)")
        )
    else:
        b.add(f"pin.{product}", text, where)


def _oci_pin(b: _Builder, product: str, oci: Mapping[str, Any]) -> None:
    ref = _ref("OCIRepository", oci)
    spec_ref = _get(oci, "spec", "ref")
    spec_ref = spec_ref if isinstance(spec_ref, Mapping) else {}
    if spec_ref.get("digest"):
        b.unreadable.setdefault(
            f"pin.{product}",
            f"{ref} spec.ref.digest pins {spec_ref['digest']}: "
            "the version it selects is not written in the spec",
        )
    elif spec_ref.get("semver"):
        b.add(f"pin.{product}", str(spec_ref["semver"]), ref + " spec.ref.semver")
    elif spec_ref.get("tag"):
        tag = str(spec_ref["tag"])
        if _VERSION_LIKE.match(tag):
            b.add(f"pin.{product}", tag, ref + " spec.ref.tag")
        else:
            b.unreadable.setdefault(
                f"pin.{product}", f"{ref} spec.ref.tag {tag!r} is not a version"
            )
    else:
        b.add(f"pin.{product}", None, ref + " spec.ref (unset: tag latest)")


def _deployment(
    b: _Builder, product: Product, dep: Mapping[str, Any], claims: list[Mapping[str, Any]]
) -> Iterator[tuple[str, str]]:
    pid, ns, ref = product.id, _ns(dep), _ref("Deployment", dep)
    containers = _containers(dep)
    b.add(f"workload.{pid}.namespace", ns, ref + " metadata.namespace")
    b.add(f"workload.{pid}.name", _name(dep), ref + " metadata.name")
    image = str(containers[0].get("image", "")) if containers else ""
    if image:
        b.add(f"workload.{pid}.image", image, ref + " spec.template.spec.containers[0].image")
    args: list[str] = []
    for c in containers:
        args.extend(str(a) for a in c.get("args") or [])
    b.add(f"workload.{pid}.args", args, ref + " spec.template.spec.containers[*].args")
    secrets: list[str] = []
    for c in _containers(dep, init=True):
        for env in c.get("env") or []:
            name = _get(env, "valueFrom", "secretKeyRef", "name")
            if name and str(name) not in secrets:
                secrets.append(str(name))
        for src in c.get("envFrom") or []:
            name = _get(src, "secretRef", "name")
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
    annotations = _str_map(_get(dep, "spec", "template", "metadata", "annotations"))
    b.add(
        f"workload.{pid}.pod-annotations", annotations, ref + " spec.template.metadata.annotations"
    )
    tolerations = []
    for tol in _get(dep, "spec", "template", "spec", "tolerations") or []:
        if isinstance(tol, Mapping):
            op = str(tol.get("operator") or "Equal")
            tolerations.append(f"{tol.get('key') or ''}:{op}:{tol.get('effect') or ''}")
    b.add(f"workload.{pid}.tolerations", tolerations, ref + " spec.template.spec.tolerations")
    surge = _get(dep, "spec", "strategy", "rollingUpdate", "maxSurge")
    if surge is not None:
        b.add(
            f"workload.{pid}.max-surge", str(surge), ref + " spec.strategy.rollingUpdate.maxSurge"
        )
    classes = _storage_classes(dep, ns, claims)
    if classes is not None:
        b.add(f"workload.{pid}.storage-classes", classes, ref + " volumes")
    labels = _str_map(_meta(dep).get("labels"))
    chart_label = labels.get("helm.sh/chart", "")
    chart_version = ""
    for chart in product.recognise.chart:
        if chart_label.startswith(chart + "-"):
            chart_version = chart_label[len(chart) + 1 :]
    if chart_version:
        b.add(
            f"installed.{pid}",
            _strip_v(chart_version),
            f"{ref} metadata.labels helm.sh/chart={chart_label}",
        )
    elif image and _VERSION_LIKE.match(_image_tag(image)):
        b.add(f"installed.{pid}", _strip_v(_image_tag(image)), f"{ref} image tag {image}")
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
            secret = _get(env, "valueFrom", "secretKeyRef", "name")
            if secret and isinstance(env, Mapping) and env.get("name"):
                refs[f"/spec/template/spec/containers/{ci}/env/{ei}"] = f"{env['name']}={secret}"
    return refs


def _storage_classes(
    dep: Mapping[str, Any], ns: str, claims: list[Mapping[str, Any]]
) -> list[str] | None:
    """Storage classes the pod's volumes ask for; None when a claim could not be resolved."""
    out: set[str] = set()
    by_name = {(_ns(c), _name(c)): c for c in claims}
    for vol in _get(dep, "spec", "template", "spec", "volumes") or []:
        if not isinstance(vol, Mapping):
            continue
        eph = _get(vol, "ephemeral", "volumeClaimTemplate", "spec", "storageClassName")
        if eph:
            out.add(str(eph))
        claim = _get(vol, "persistentVolumeClaim", "claimName")
        if claim:
            pvc = by_name.get((ns, str(claim)))
            if pvc is None:
                return None
            sc = _get(pvc, "spec", "storageClassName")
            if sc:
                out.add(str(sc))
    return sorted(out)


def _objects(
    b: _Builder,
    by_kind: Mapping[str, list[Mapping[str, Any]]],
    wants: Interests,
    absent_known: Any,
) -> None:
    for kind in sorted(wants.object_kinds):
        for obj in by_kind.get(kind, []):
            base = f"object.{kind}.{_ns(obj) or '_'}.{_name(obj)}"
            ref = _ref(kind, obj)
            b.add(base + ".exists", True, ref)
            b.add(
                base + ".annotations",
                _str_map(_meta(obj).get("annotations")),
                ref + " metadata.annotations",
            )
            b.add(base + ".labels", _str_map(_meta(obj).get("labels")), ref + " metadata.labels")
            if kind == "AgentTemplate":
                harnesses = _get(obj, "status", "harnesses")
                names = []
                for h in harnesses if isinstance(harnesses, list) else []:
                    names.append(str(h.get("name", "")) if isinstance(h, Mapping) else str(h))
                b.add(base + ".harnesses", names, ref + " status.harnesses")
    for kind, ns, nm in sorted(wants.objects):
        key = f"object.{kind}.{ns or '_'}.{nm}.exists"
        if key not in b.facts and absent_known(kind, ns, nm):
            where = f"{kind} {ns}/{nm}" if ns else f"{kind} {nm}"
            b.add(key, False, f"{where} not found")


def _declared_objects(
    b: _Builder, by_kind: Mapping[str, list[Mapping[str, Any]]], kb: KnowledgeBase, listed: Any
) -> None:
    """The fields the products declare under ``objects:``, and each listed kind's members."""
    for kind, decl in sorted(kb.object_kinds().items()):
        items = by_kind.get(kind, [])
        for obj in items:
            base = f"object.{kind}.{_ns(obj) or '_'}.{_name(obj)}"
            ref = _ref(kind, obj)
            b.add(base + ".exists", True, ref)
            for path in decl.fields:
                value = keypath.get(obj, keypath.split(path))
                plain = None if value is keypath.ABSENT else _plain_tree(value)
                b.add(f"{base}.{path}", plain, f"{ref} {path}")
        if kind in listed:
            names = [f"{_ns(o)}/{_name(o)}" if _ns(o) else _name(o) for o in items]
            b.add(f"object.{kind}", names, f"{kind} list")


def _nodes(b: _Builder, nodes: list[Mapping[str, Any]]) -> None:
    taints: set[str] = set()
    providers: set[str] = set()
    autopilot = False
    for node in nodes:
        for taint in _get(node, "spec", "taints") or []:
            if isinstance(taint, Mapping) and taint.get("key"):
                value = taint.get("value")
                key = f"{taint['key']}={value}" if value else str(taint["key"])
                taints.add(f"{key}:{taint.get('effect', '')}")
        providers.add(_provider(node))
        labels = _str_map(_meta(node).get("labels"))
        if any(k.startswith("cloud.google.com/gke-autopilot") for k in labels) or _name(
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
    pid = str(_get(node, "spec", "providerID") or "")
    for prefix, name in (("azure://", "aks"), ("aws://", "eks"), ("gce://", "gke")):
        if pid.startswith(prefix):
            return name
    labels = _str_map(_meta(node).get("labels"))
    for label, name in (
        ("kubernetes.azure.com/cluster", "aks"),
        ("eks.amazonaws.com/nodegroup", "eks"),
        ("cloud.google.com/gke-nodepool", "gke"),
    ):
        if label in labels:
            return name
    return "other"


def _plain_tree(value: Any) -> Any:
    """Plain dicts, lists and scalars (a values tree as a structured fact)."""
    if isinstance(value, Mapping):
        return {str(k): _plain_tree(x) for k, x in value.items()}
    if isinstance(value, list):
        return [_plain_tree(x) for x in value]
    return value
