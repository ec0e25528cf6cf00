"""Kubernetes object dicts -> facts (docs/state-format.md).

The live-cluster reader and the snapshot reader (``kubectl get … -o yaml|json`` output) both
hand plain object dicts to :func:`state_from_objects`. Which product an object is and the facts
of one object come from the recogniser every reader shares (``readers/recognise``); here the
objects are put together: a HelmRelease's ``chartRef`` found among the listed sources, the
Secrets the workloads read, what is known absent, the objects the knowledge asks about.

Absence is a fact only where the input says what was looked at: ``listed`` names the kinds
whose complete list was read (``"Harness"``) or single objects asked for by name
(``"Secret ns/name"``). Anything else that is missing stays unknown. Secret ``data`` and
``stringData`` are never read.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from upgradeplan import keypath
from upgradeplan.model import Condition, Fact, KnowledgeBase, Product, State
from upgradeplan.provenance import ObjectRef, read_from
from upgradeplan.readers.kube.fields import (
    Builder,
    get,
    group_of,
    meta,
    name_of,
    ns_of,
    ref_of,
    str_map,
)
from upgradeplan.readers.kube.shapes import check_shapes
from upgradeplan.readers.kube.unknowns import widen
from upgradeplan.readers.kube.workloads import deployment_facts, node_facts
from upgradeplan.readers.recognise import (
    ChartRef,
    Pin,
    Recogniser,
    helmrelease_facts,
    namespace_facts,
    plain_tree,
    release_installed,
    release_pin,
    release_values,
    secret_facts,
    source_pin,
    values_keys,
)
from upgradeplan.unreadable import Unreadable, covers

# The pseudo-object the cluster reader makes of GET /version.
VERSION_API = "upgradeplan.dev/v1"
VERSION_KIND = "ServerVersion"

# Kinds whose objects always become object.<Kind>.<ns>.<name>.* facts.
OBJECT_KINDS = frozenset({"Harness", "AgentTemplate"})

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


class Interests(Struct, frozen=True):
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


class _Recogniser:
    """The products of objects, through the shared recogniser (readers/recognise)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.shared = Recogniser(kb)

    def _product(self, pid: str | None) -> Product | None:
        return self.kb.products[pid] if pid is not None else None

    def helmrelease(self, hr: Mapping[str, Any], ref: ChartRef | None) -> Product | None:
        return self._product(self.shared.helmrelease(hr, ref))

    def source(self, obj: Mapping[str, Any]) -> Product | None:
        return self._product(self.shared.source(obj))

    def deployment(self, dep: Mapping[str, Any]) -> Product | None:
        return self._product(self.shared.workload(dep))


def state_from_objects(
    kb: KnowledgeBase,
    objects: Iterable[Mapping[str, Any]],
    *,
    source_prefix: str,
    name: str = "",
    listed: Collection[str] = (),
    unreadable: Mapping[str, str] | None = None,
    unread: Sequence[Unreadable] = (),
    prepared: Prepared | None = None,
) -> State:
    """Facts about the installation these Kubernetes objects describe.

    ``source_prefix`` starts every fact's source (``"cluster prod"``); ``listed`` names the
    kinds (or ``"Kind ns/name"`` objects) whose absence is known; ``unreadable`` (key
    prefix -> reason) is carried into the state, and no fact under such a prefix is made;
    ``unread`` (the records of what could not be read) goes into the state as it is;
    ``prepared``: what was derived from the objects one by one as they were read.
    """
    objects = list(objects)
    check_shapes(objects, source_prefix)
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        if (type(obj) is dict or isinstance(obj, Mapping)) and obj.get("kind"):
            by_kind.setdefault(str(obj["kind"]), []).append(obj)
    if prepared is None or prepared.kb is not kb or prepared.prefix != source_prefix:
        prepared = Prepared(kb, source_prefix)
    for kind, items in by_kind.items():
        if not prepared.in_order(kind, items):  # a list read in order (as the API server
            items.sort(key=_order)  # sends it) stays as it is: a stable sort would keep it
    b = Builder(source_prefix, unreadable=dict(unreadable or {}))
    rec = prepared.rec
    wants = interests(kb)
    listed_set = set(listed)

    def absent_known(kind: str, ns: str, nm: str) -> bool:
        ref = f"{kind} {ns}/{nm}" if ns else f"{kind} {nm}"
        return kind in listed_set or ref in listed_set or f"{kind} {ns}/*" in listed_set

    _server_version(b, by_kind.get(VERSION_KIND, []))
    sources = {
        (str(o.get("kind")), ns_of(o), name_of(o)): o
        for kind in ("OCIRepository", "HelmChart")
        for o in by_kind.get(kind, [])
        if group_of(o).startswith("source.")
    }
    pinned: set[str] = set()
    facts = b.facts
    for hr in by_kind.get("HelmRelease", []):
        release = prepared.flux_release(hr)
        if release is None:
            continue
        if release.known is None and release.product is None:  # its own facts only
            for own in release.facts:
                if own.key not in facts:
                    facts[own.key] = own
        else:
            _helmrelease(b, rec, release, sources, pinned)
    for source in sources.values():  # the OCIRepositories first, then the HelmCharts
        product = rec.source(source)
        if product is not None and _foreign(
            b,
            rec,
            product.id,
            _oci_url(source),
            ref_of(str(source.get("kind")), source),
            name_of(source),
        ):
            continue
        if product is not None and product.id not in pinned:
            _source_pin(b, product.id, source)
            pinned.add(product.id)
    referenced_secrets: list[tuple[str, str]] = []
    for dep in by_kind.get("Deployment", []):
        product = rec.deployment(dep)
        if product is not None and f"workload.{product.id}.name" not in b.facts:
            referenced_secrets.extend(
                deployment_facts(b, product, dep, by_kind.get("PersistentVolumeClaim", []))
            )
    secrets = {(ns_of(s), name_of(s)): s for s in by_kind.get("Secret", [])}
    for ns, nm in referenced_secrets:
        secret = secrets.get((ns, nm))
        if secret is not None:
            for fact in secret_facts(secret):  # its type only: data is never read
                b.add(fact.key, fact.value, f"{ref_of('Secret', secret)} {fact.label}")
        elif absent_known("Secret", ns, nm):
            b.add(f"secret.{ns}.{nm}.type", None, f"Secret {ns}/{nm} not found")
    _objects(b, by_kind, wants, absent_known)
    _declared_objects(b, by_kind, kb, listed_set)
    for crd in by_kind.get("CustomResourceDefinition", []):
        stored = get(crd, "status", "storedVersions")
        if isinstance(stored, list):
            b.add(
                f"crd.{name_of(crd)}.stored-versions",
                [str(v) for v in stored],
                ref_of("CustomResourceDefinition", crd) + " status.storedVersions",
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
        for fact in namespace_facts(ns_obj):
            b.add(fact.key, fact.value, f"{ref_of('Namespace', ns_obj)} {fact.label}")
    if "Node" in listed_set or by_kind.get("Node"):
        node_facts(b, by_kind.get("Node", []))
    for sc in by_kind.get("StorageClass", []):
        b.add(f"storageclass.{name_of(sc)}.exists", True, ref_of("StorageClass", sc))
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
    facts = b.facts
    if b.unreadable:
        facts = {k: f for k, f in b.facts.items() if not any(covers(p, k) for p in b.unreadable)}
    return State(
        facts=facts, name=name, unreadable=dict(sorted(b.unreadable.items())), unread=records
    )


def _order(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(ns_of(obj), name_of(obj))`` in one call: the order of a kind's objects."""
    found = obj.get("metadata")
    m = found if type(found) is dict or isinstance(found, Mapping) else {}
    return str(m.get("namespace", "") or ""), str(m.get("name", ""))


def _server_version(b: Builder, items: list[Mapping[str, Any]]) -> None:
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


class _Release(Struct, frozen=True):
    """What one HelmRelease says by itself (before the other objects are known)."""

    hr: Mapping[str, Any]
    name: str
    ref: str  # "HelmRelease ns/name"
    pin: Pin | ChartRef | None
    known: str | None  # the product its name is a release of
    product: Product | None  # the product it is recognised as
    facts: list[Fact]  # helmrelease_facts under its own name


class Prepared:
    """Derivations of single objects, done while the other lists are still being read (the
    cluster reader hands each page here: :meth:`page`); :func:`state_from_objects` takes
    them from here, or derives them itself for an object not seen."""

    def __init__(self, kb: KnowledgeBase, prefix: str) -> None:
        self.kb = kb
        self.prefix = prefix
        self.rec = _Recogniser(kb)
        self._releases: dict[int, _Release] = {}
        self._seen: dict[str, list[Mapping[str, Any]]] = {}  # kind -> its pages' items
        self._last: dict[str, tuple[str, str] | None] = {}  # the last key; None: not in order

    def page(self, kind: str, items: Sequence[Mapping[str, Any]]) -> None:
        """One page of a list: its HelmReleases' own facts and products, derived now; and
        whether the list's items so far come in :func:`_order`."""
        last = self._last.get(kind, ("", ""))
        if last is not None:
            for obj in items:
                key = _order(obj)
                if key < last:
                    last = None
                    break
                last = key
        self._last[kind] = last
        self._seen.setdefault(kind, []).extend(items)
        if kind == "HelmRelease":
            for hr in items:
                if group_of(hr).startswith("helm.toolkit.fluxcd.io"):
                    self._releases[id(hr)] = self._release(hr)

    def in_order(self, kind: str, items: Sequence[Mapping[str, Any]]) -> bool:
        """Whether ``items`` are exactly the objects the pages of ``kind`` brought, in the
        same order, and that order is :func:`_order`'s (a stable sort would not move one)."""
        seen = self._seen.get(kind)
        return (
            seen is not None
            and self._last.get(kind) is not None
            and len(seen) == len(items)
            and all(map(operator.is_, seen, items))
        )

    def flux_release(self, hr: Mapping[str, Any]) -> _Release | None:
        """What a Flux HelmRelease (by its apiVersion's group) says by itself, else None."""
        found = self._releases.get(id(hr))
        if found is not None and found.hr is hr:
            return found  # a page's Flux HelmRelease (checked there)
        return self._release(hr) if group_of(hr).startswith("helm.toolkit.fluxcd.io") else None

    def _release(self, hr: Mapping[str, Any]) -> _Release:
        ns, name = _order(hr)  # ns_of and name_of at once
        ref = f"HelmRelease {ns}/{name}" if ns else f"HelmRelease {name}"  # ref_of
        pin = release_pin(hr)
        chart = pin if isinstance(pin, ChartRef) else None  # chart_ref(hr), read once
        return _Release(
            hr,
            name,
            ref,
            pin,
            self.rec.shared.release(name),
            self.rec.helmrelease(hr, chart),
            _release_facts(name, hr, ref, self.prefix),
        )


def _release_facts(name: str, hr: Mapping[str, Any], ref: str, prefix: str) -> list[Fact]:
    """The facts every reader derives alike from a HelmRelease, under ``name``."""
    return [
        Fact(fact.key, fact.value, read_from(f"{ref} {fact.label}", prefix))
        for fact in helmrelease_facts(name, hr)
    ]


def _helmrelease(
    b: Builder,
    rec: _Recogniser,
    release: _Release,
    sources: Mapping[tuple[str, str, str], Mapping[str, Any]],
    pinned: set[str],
) -> None:
    """A HelmRelease's facts, derived by the recogniser every reader shares; here only the
    ``spec.chartRef`` is resolved among the listed chart sources, and the first pin kept."""
    hr, name, ref, pin = release.hr, release.name, release.ref, release.pin
    chart = pin if isinstance(pin, ChartRef) else None
    source = sources.get((chart.kind, chart.namespace, chart.name)) if chart else None
    url = _oci_url(source)
    facts = release.facts
    if release.known is not None and _foreign(b, rec, release.known, url, ref, name):
        name = f"{name}@{url}"  # not the product's release: its facts kept apart
        facts = _release_facts(name, hr, ref, b.prefix)
    for own in facts:
        b.put(own)
    product = release.product
    if product is None or _foreign(b, rec, product.id, url, ref, name_of(hr)):
        return
    installed = release_installed(product.id, hr)
    if installed is not None:
        b.add(installed.key, installed.value, f"{ref} {installed.label}")
    whole = release_values(product.id, hr)  # with valuesFrom, merged elsewhere: unknown
    at = ObjectRef("HelmRelease", ns_of(hr), name)
    for fact in [whole] if whole is not None else []:
        b.add(fact.key, fact.value, f"{ref} {fact.label}", obj=at, path=fact.label)
    for fact in values_keys(product.id, product.recognise.values_keys, get(hr, "spec", "values")):
        b.add(fact.key, fact.value, f"{ref} {fact.label}", obj=at, path=fact.label)
    if product.id in pinned:
        return
    if isinstance(pin, ChartRef):
        if source is not None:
            _source_pin(b, product.id, source)
            pinned.add(product.id)
    elif pin is not None:
        b.add(f"pin.{product.id}", pin.value, f"{ref} {pin.label}")
        pinned.add(product.id)


def _oci_url(source: Mapping[str, Any] | None) -> str | None:
    """An OCIRepository's ``spec.url`` (where its chart comes from), else None."""
    if source is None or source.get("kind") != "OCIRepository":
        return None
    url = get(source, "spec", "url")
    return str(url).rstrip("/") if url else None


def _foreign(b: Builder, rec: _Recogniser, pid: str, url: str | None, ref: str, name: str) -> bool:
    """Whether the chart comes from elsewhere than ``pid``'s own chart sources (noted)."""
    why = rec.shared.foreign(pid, url)  # as every reader decides it
    if why:  # may be the product: its version is unknown, not absent
        b.unreadable.setdefault(f"pin.{pid}", f"{ref}: {why}")
        b.unreadable.setdefault(f"installed.{pid}", f"{ref}: {why}")
    return bool(why)


def _source_pin(b: Builder, product: str, source: Mapping[str, Any]) -> None:
    """The pin an OCIRepository's ``spec.ref`` or a HelmChart's ``spec.version`` writes."""
    ref = ref_of(str(source.get("kind")), source)
    pin = source_pin(source)  # as every reader resolves it
    if pin.problem:
        b.unreadable.setdefault(f"pin.{product}", f"{ref} {pin.problem}")
    else:
        b.add(f"pin.{product}", pin.value, f"{ref} {pin.label}")


def _objects(
    b: Builder,
    by_kind: Mapping[str, list[Mapping[str, Any]]],
    wants: Interests,
    absent_known: Any,
) -> None:
    for kind in sorted(wants.object_kinds):
        for obj in by_kind.get(kind, []):
            base = f"object.{kind}.{ns_of(obj) or '_'}.{name_of(obj)}"
            ref = ref_of(kind, obj)
            b.add(base + ".exists", True, ref)
            b.add(
                base + ".annotations",
                str_map(meta(obj).get("annotations")),
                ref + " metadata.annotations",
            )
            b.add(base + ".labels", str_map(meta(obj).get("labels")), ref + " metadata.labels")
            if kind == "AgentTemplate":
                harnesses = get(obj, "status", "harnesses")
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
    b: Builder, by_kind: Mapping[str, list[Mapping[str, Any]]], kb: KnowledgeBase, listed: Any
) -> None:
    """The fields the products declare under ``objects:``, and each listed kind's members."""
    for kind, decl in sorted(kb.object_kinds().items()):
        items = by_kind.get(kind, [])
        for obj in items:
            base = f"object.{kind}.{ns_of(obj) or '_'}.{name_of(obj)}"
            ref = ref_of(kind, obj)
            b.add(base + ".exists", True, ref)
            for path in decl.fields:
                value = keypath.get(obj, keypath.split(path))
                plain = None if value is keypath.ABSENT else plain_tree(value)
                b.add(f"{base}.{path}", plain, f"{ref} {path}")
        if kind in listed:
            names = [f"{ns_of(o)}/{name_of(o)}" if ns_of(o) else name_of(o) for o in items]
            b.add(f"object.{kind}", names, f"{kind} list")
