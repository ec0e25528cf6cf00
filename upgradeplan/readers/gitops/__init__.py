"""``--gitops PATH``: facts from GitOps files, each located at ``file:line`` of its value.

What is read (see docs/gitops.md):

- Flux ``HelmRelease`` (v2, v2beta2, v2beta1): its namespace, drift-detection mode (unset:
  ``disabled``), CRD policy (unset: ``Create``), chart version (``spec.chart.spec.version`` or
  the ``OCIRepository`` its ``spec.chartRef`` names) as the pin of the product it recognises,
  and its inline ``spec.values`` (a BOM, or a product's values).
- ``OCIRepository`` (``source.toolkit.fluxcd.io`` v1, v1beta2): ``spec.ref`` digest > semver >
  tag, as the pin of the product whose name it carries.
- BOM values (``components.<name>``): ``versionRange`` → ``pin.<product>`` (product by
  ``recognise.bom_component``), ``driftDetection.mode`` → ``helmrelease.<name>.drift-detection``,
  ``gitops.namespace`` → ``helmrelease.<name>.namespace``.
- A product's values file (``recognise.values_keys`` or ``image.repository``): those keys as
  ``values.<product>.<key>``, ``image.tag`` as the exact pin, ``args`` as the workload's args.
- ``Deployment`` / ``StatefulSet`` / ``DaemonSet`` of a recognised product, ``Secret`` (type
  only, never data), ``Namespace`` (labels).

``installed.<product>`` is never set here: the planner derives it from an exact pin.
"""

from __future__ import annotations

import posixpath
from typing import Any

from msgspec import Struct

from upgradeplan import progress, provenance, versions
from upgradeplan.errors import BadInput, UpgradeplanError
from upgradeplan.model import NEXT, KnowledgeBase, State
from upgradeplan.readers.gitops.charts import ChartPin, chart_pins
from upgradeplan.readers.gitops.docs import View, iter_objects
from upgradeplan.readers.gitops.facts import DEFAULT, HIGH, LOW, NORMAL, NOT_VALUES
from upgradeplan.readers.gitops.flux import Applier, Installation, find_entries
from upgradeplan.readers.gitops.gate import gitops_targets, pin_changes
from upgradeplan.readers.gitops.objects import WORKLOAD_KINDS, ObjectFacts
from upgradeplan.readers.gitops.render import KUSTOMIZATION_NAMES, YAML_SUFFIXES, Renderer
from upgradeplan.readers.gitops.trees import Tree, norm, open_path, spelled
from upgradeplan.readers.gitops.values import merged_values
from upgradeplan.readers.gitops.yamldocs import Refused, embedded
from upgradeplan.readers.kube.shapes import check_views
from upgradeplan.readers.recognise import (
    ChartRef,
    chart_ref,
    helmrelease_facts,
    image_matches,
    release_pin,
    release_values,
    source_pin,
    values_keys,
    values_tree,
)
from upgradeplan.unreadable import PARSE_ERROR, Unreadable

__all__ = ["Read", "gitops_targets", "pin_changes", "read", "read_installations", "read_pins"]


class Read(Struct, frozen=True):
    """One installation read from GitOps files: its state and every chart pin its files write."""

    state: State
    pins: dict[str, ChartPin]
    notes: tuple[str, ...] = ()  # what the tree holds that no installation applies


def read(kb: KnowledgeBase, path: str, *, ref: str | None = None) -> State:
    """The facts the GitOps files under ``path`` state (at git ``ref`` when given): the first
    installation (:func:`read_installations` gives every one)."""
    return read_installations(kb, path, ref=ref)[0]


def read_installations(kb: KnowledgeBase, path: str, *, ref: str | None = None) -> list[State]:
    """One state per installation under ``path`` (see :func:`read_pins`)."""
    return [r.state for r in read_pins(kb, path, ref=ref, pins=False)]


def read_pins(
    kb: KnowledgeBase,
    path: str,
    *,
    ref: str | None = None,
    artifacts: dict[str, str] | None = None,
    pins: bool = True,
) -> list[Read]:
    """One state per installation under ``path``, the way Flux applies the files, with the
    chart pins its files write (known to the knowledge or not). ``artifacts``: OCIRepository
    or ExternalArtifact names that hold a directory of this repository (``--gitops-artifact``).
    ``pins=False``: no chart pins collected from entry points (a read with no --base).

    A directory holding Flux ``Kustomization`` objects is read from its entry points (one
    installation each, named like the entry directory). Without any, the directory is read
    as kustomize would build it (one state, named ``path``).
    """
    tree, start, display_root = open_path(path, ref)

    def display(rel: str) -> str:
        if not display_root:
            return norm(rel)
        return norm(posixpath.join(display_root, rel))

    renderer = Renderer(tree, display)
    if tree.is_dir(start):
        entries = find_entries(tree, start, renderer)
        if entries:
            applier = Applier(tree, renderer, display, artifacts or {})
            states: list[Read] = []
            what = f"reading {len(entries)} installation(s)"
            with progress.begin(what, len(entries)) as task:
                names = {name for name, _ in entries}
                for name, root in entries:
                    inst = applier.apply(name, root)
                    states.append(_installation_state(kb, inst, pins=pins))
                    for remote, spoke in sorted(inst.remotes.items()):
                        spoke.name = remote if remote not in names else f"{name}/{remote}"
                        states.append(_installation_state(kb, spoke, pins=pins))
                    task.advance(name)
            notes = tuple(
                f"not applied by any entry point: {display(r) or '.'} (its Flux "
                "Kustomizations are applied by no Kustomization Flux starts from)"
                for r in renderer.unapplied
            )
            return [Read(r.state, r.pins, notes) for r in states]
    apart = _siblings(kb, path, ref, tree, renderer, start)
    return apart or [_directory(kb, path, ref, renderer.sibling(loose=True), start)]


def _siblings(
    kb: KnowledgeBase, path: str, ref: str | None, tree: Tree, renderer: Renderer, start: str
) -> list[Read]:
    """Subdirectories pinning one product at two versions (no Flux Kustomization, no
    kustomization of ``start``'s own): one installation each, never merged; [] otherwise."""
    if not tree.is_dir(start) or any(
        tree.is_file(norm(posixpath.join(start, k))) for k in KUSTOMIZATION_NAMES
    ):
        return []
    subdirs = sorted(
        c
        for c in tree.list_dir(start)
        if not c.startswith(".") and tree.is_dir(norm(posixpath.join(start, c)))
    )
    if len(subdirs) < 2:
        return []
    shown = spelled(path)
    reads = [
        _directory(
            kb,
            posixpath.join(shown, sub) if shown != "." else sub,
            ref,
            renderer.sibling(loose=True),
            norm(posixpath.join(start, sub)),
        )
        for sub in subdirs
    ]
    pinned = [{f.key: f.value for f in r.state if f.key.startswith("pin.")} for r in reads]
    keys = set().union(*pinned)
    if not any(len({str(p[k]) for p in pinned if k in p}) > 1 for k in keys):
        return []  # no product pinned twice apart: one installation, as before
    return [r for r, pins in zip(reads, pinned, strict=True) if pins or r.pins]


def _installation_state(
    kb: KnowledgeBase, inst: Installation, *, whole: bool = True, pins: bool = True
) -> Read:
    reader = _Reader(kb, whole=whole)
    reader.unresolved = inst.unresolved
    reader.literal = inst.literal
    check_views(views := [view for obj in inst.objects for view in iter_objects(obj)])
    reader.chart_sources(views)
    for view in views:
        reader.object(view, None)
    reader.finish()
    facts = reader.facts()
    unread = reader.unread.without(facts)
    unread.update(inst.unread)
    state = State(
        facts=facts,
        name=inst.name,
        unreadable=unread.index,
        unread=tuple(unread.records[k] for k in sorted(unread.records)),
    )
    return Read(state, chart_pins(views, values=reader.values_by) if pins else {})


def _directory(
    kb: KnowledgeBase,
    path: str,
    ref: str | None,
    renderer: Renderer,
    start: str,
) -> Read:
    """A directory (or file) without Flux Kustomizations, built as kustomize-controller
    would build it (its kustomization, or the one Flux generates): one state."""
    shown = spelled(path)
    name = shown if ref is None else f"{shown}@{ref}"
    objects = renderer.build(start)
    inst = Installation(name, start, objects, renderer.unread)
    return _installation_state(kb, inst, whole=False)


# --------------------------------------------------------------------------- opening


# --------------------------------------------------------------------------- recognition


class _Pending(Struct):
    """A HelmRelease whose chart comes from an OCIRepository or a HelmChart (``spec.chartRef``)."""

    product: str
    ref: ChartRef  # its namespace "" when neither the reference nor the release names one


class _SourcePin(Struct, frozen=True):
    """What a chart source object (OCIRepository, HelmChart) pins, as its file writes it."""

    value: str | None
    where: provenance.Source
    problem: str = ""  # why it pins no version that can be read (a digest, a tag "latest")


class _Component(Struct):
    name: str
    product: str | None
    where: provenance.Source  # the file line of components.<name>
    has_mode: bool
    has_namespace: bool


class _Reader(ObjectFacts):
    """Every fact of the files: Flux objects, BOM and values files, then the objects."""

    def __init__(self, kb: KnowledgeBase, *, whole: bool = True) -> None:
        super().__init__(kb)
        self.whole = whole  # reading all an installation applies (not a directory alone)
        self._sources: dict[tuple[str, str | None, str], _SourcePin] = {}  # (kind, ns, name)
        self._oci_urls: dict[tuple[str | None, str], str] = {}
        self._helm_urls: dict[tuple[str | None, str], str] = {}
        self._pending: list[_Pending] = []
        self._configmaps: dict[tuple[str | None, str], View] = {}
        self.values_by: dict[tuple[str, str], tuple[dict[str, Any] | None, str]] = {}  # any
        self._consumed: set[tuple[str | None, Any]] = set()  # ConfigMaps read by a valuesFrom
        self._components: list[_Component] = []
        self._release_ns: dict[str, tuple[str, provenance.Source]] = {}  # product -> ns, where

    # ---------------------------------------------------------------- dispatch

    def object(self, v: View, namespace: str | None) -> None:
        """Read one object (or, without kind and apiVersion, a values file)."""
        kind, api = v.get("kind"), v.get("apiVersion")
        if not isinstance(kind, str) or not isinstance(api, str):
            self.values_file(v)
            return
        group = api.split("/", 1)[0] if "/" in api else ""
        self.declared_object(v, namespace, kind, api)  # a kind the knowledge declares
        if kind == "HelmRelease" and group == "helm.toolkit.fluxcd.io":
            self.helmrelease(v, namespace)
        elif kind in ("OCIRepository", "HelmChart") and group == "source.toolkit.fluxcd.io":
            self.chart_source(v, namespace)
        elif kind in WORKLOAD_KINDS and group == "apps":
            self.workload(v, namespace, kind)
        elif kind == "Secret" and api == "v1":
            self.secret(v, namespace)
        elif kind == "Namespace" and api == "v1":
            self.namespace_object(v)
        elif kind == "ConfigMap" and api == "v1":
            self.configmap(v)

    def configmap(self, v: View) -> None:
        """Values files kept in a ConfigMap no HelmRelease's ``valuesFrom`` reads (those are
        read as that release's values)."""
        if (v.text("metadata", "namespace"), v.text("metadata", "name")) in self._consumed:
            return
        for key in v.mapping("data"):
            if not isinstance(key, str) or not (key.endswith(YAML_SUFFIXES) or key == "values"):
                continue
            try:
                docs = embedded(v, "data", key)
            except (Refused, BadInput) as exc:  # Refused: past a YAML limit, no chart's values
                where = getattr(exc, "location", "") or v.doc.file
                full = (*v.prefix, "data", key)
                origin = v.doc.embeds[full][0] if full in v.doc.embeds else None
                rec = Unreadable(
                    origin or f"{v.doc.file} data.{key}",
                    NOT_VALUES if isinstance(exc, Refused) else PARSE_ERROR,
                    kind="file",
                    location=where,
                    detail=exc.message.removeprefix(f"{where}: "),
                    keys=(f"file {v.doc.file} data.{key}",),
                )
                self.unread.add(f"file {v.doc.file} data.{key}", exc.one_line(), rec)
                continue
            for doc in docs:
                if isinstance(doc.data, dict):
                    self.values_file(View(doc))

    # ---------------------------------------------------------------- Flux

    def helmrelease(self, v: View, default_ns: str | None) -> None:
        name = v.text("metadata", "name")
        if not name:
            return
        ns = v.text("metadata", "namespace") or default_ns
        known = self.by_release.get(name)
        if known is not None and self._foreign(known, self._source_of(v, ns), v):
            name = f"{name}@{self._source_of(v, ns)}"  # not the product's release: kept apart
        obj = v.get()
        for fact in helmrelease_facts(name, obj):  # what every reader derives alike
            self.add(fact.key, fact.value, v.where(*fact.path))
        if ns and not v.text("metadata", "namespace"):  # the kustomization's, or Flux's
            self.add(f"helmrelease.{name}.namespace", ns, v.where("metadata", "name"), LOW)
        product = self.recogniser.helmrelease(obj)  # as every reader recognises it
        if product is not None and self._foreign(product, self._source_of(v, ns), v):
            product = None
        if product is not None:
            release_ns = v.text("spec", "targetNamespace") or ns
            if release_ns:
                where = (
                    v.where("spec", "targetNamespace")
                    if v.text("spec", "targetNamespace")
                    else (v.where("metadata", "namespace"))
                )
                self._release_ns[product] = (release_ns, where)
            pin = release_pin(obj)  # a chartRef is resolved once every file is read
            if isinstance(pin, ChartRef):
                if pin.name:
                    self._pending.append(_Pending(product, pin))
            elif pin is not None:
                value = None if pin.value is None else (v.text(*pin.path) or "").strip()
                prio = HIGH if value is not None else NORMAL  # the release's own version
                self.add(f"pin.{product}", value, v.where(*pin.path), prio)
        self.release_values(v, ns, product)

    def release_values(self, v: View, ns: str | None, product: str | None) -> None:
        """The values helm-controller passes to the chart: ``valuesFrom``, then ``spec.values``.

        What a Secret sets is unknown, and so is what a ConfigMap sets that is not in what the
        installation applies (read alone, a directory's ConfigMaps may be made elsewhere: its
        ``spec.values`` alone is read then, as before ``valuesFrom`` was followed).
        """
        merged = merged_values(v, ns, self._configmaps)
        unknown = merged.missing + (merged.absent if self.whole else [])
        self.values_by[(ns or "default", v.text("metadata", "name") or "")] = merged.known()
        if isinstance(merged.view.get("components"), dict):
            self.bom(merged.view)
        if product is None:
            return
        certain = not unknown and not merged.absent
        values = merged.view if certain else v.sub("spec", "values")
        if values.mapping():
            self.product_values(product, values)
        for m in unknown:
            detail = f"{m.why}; only spec.values is known"
            rec = Unreadable(
                m.source,
                m.cause,
                kind="file" if m.cause == PARSE_ERROR else "resource",
                location=m.where,
                detail=detail,
                keys=(f"values.{product}",),
            )
            self.unread.add(f"values.{product}", f"{m.where}: {m.source}: {detail}", rec)
        if not certain:
            return
        whole = release_values(product, v.get())  # with valuesFrom: the tree merged here
        if whole is None:
            whole = values_tree(product, merged.view.get(), ("spec", "valuesFrom"))
        self.add(whole.key, whole.value, v.where(*whole.path))

    # ---------------------------------------------------------------- chart sources

    def chart_sources(self, views: list[View]) -> None:
        """The URLs of the OCIRepository and HelmRepository objects, before the releases."""
        for v in views:
            kind = v.get("kind")
            api = v.get("apiVersion")
            name = v.text("metadata", "name")
            url = v.text("spec", "url")
            if not name:
                continue
            ns = v.text("metadata", "namespace")
            if kind == "HelmRelease":
                self._consumed.update(
                    (ns, ref.get("name"))
                    for ref in v.sequence("spec", "valuesFrom")
                    if isinstance(ref, dict) and ref.get("kind") == "ConfigMap"
                )
            if kind == "ConfigMap" and api == "v1":
                self._configmaps[(ns, name)] = v
                self._configmaps.setdefault((None, name), v)
            if not url or not str(api).startswith("source.toolkit.fluxcd.io/"):
                continue
            if kind == "OCIRepository":
                self._oci_urls[(ns, name)] = url
                self._oci_urls.setdefault((None, name), url)
            elif kind == "HelmRepository":
                self._helm_urls[(ns, name)] = url
                self._helm_urls.setdefault((None, name), url)

    def _source_of(self, v: View, ns: str | None) -> str | None:
        """Where a HelmRelease's chart comes from (a URL), when the files say."""
        ref = chart_ref(v.get())
        if ref is not None and ref.kind == "OCIRepository":
            ref_ns = ref.namespace or ns
            return self._oci_urls.get((ref_ns, ref.name)) or self._oci_urls.get((None, ref.name))
        src = v.sub("spec", "chart", "spec", "sourceRef")
        if src.text("kind") == "HelmRepository" and src.text("name"):
            repo_ns = src.text("namespace") or ns
            name = src.text("name") or ""
            url = self._helm_urls.get((repo_ns, name)) or self._helm_urls.get((None, name))
            chart = v.text("spec", "chart", "spec", "chart") or ""
            if url is None:
                return None
            if url.startswith("oci://"):
                return f"{url.rstrip('/')}/{chart}"
            return f"{url.rstrip('/')} chart {chart}"
        return None

    def _foreign(self, product: str, source: str | None, v: View) -> bool:
        """Whether the chart comes from somewhere else than ``product``'s own sources."""
        why = self.recogniser.foreign(product, source)  # as every reader decides it
        if why:
            name = v.text("metadata", "name") or ""
            where = v.where("metadata", "name")
            keys = (f"pin.{product}", f"installed.{product}")
            rec = Unreadable(
                f"{v.get().get('kind')} {name}",
                "unknown chart location",
                kind="resource",
                location=str(where),
                detail=why,
                keys=keys,
            )
            for key in keys:  # may be the product: its version is unknown, not absent
                self.unread.add(key, f"{where}: {why}", rec, first=True)
        return bool(why)

    def chart_source(self, v: View, default_ns: str | None) -> None:
        """An OCIRepository (``spec.ref``) or HelmChart (``spec.version``): the pin of the
        product it names, and what a HelmRelease's ``spec.chartRef`` to it resolves to."""
        name = v.text("metadata", "name")
        if not name:
            return
        kind = str(v.get("kind"))
        ns = v.text("metadata", "namespace") or default_ns
        url = v.text("spec", "url") if kind == "OCIRepository" else None
        product = self.recogniser.source(v.get())  # as every reader recognises it
        if product is not None and url and self._foreign(product, url.rstrip("/"), v):
            return
        pin = source_pin(v.get())  # as every reader resolves it
        where = v.where(*pin.path)
        if pin.problem:
            self._sources[(kind, ns, name)] = _SourcePin(None, where, pin.problem)
            if product is not None:
                how = f"; state the version with --installed {product}=VERSION"
                self.not_a_version(product, where, pin.problem + how, first=False)
            return
        value = v.text(*pin.path) if pin.value is not None else None  # as written ("4.10")
        self._sources[(kind, ns, name)] = _SourcePin(value, where)
        if product is not None:
            self.add(f"pin.{product}", value, where)

    # ---------------------------------------------------------------- values

    def values_file(self, v: View) -> None:
        if isinstance(v.get("components"), dict):
            self.bom(v)
        for pid in self.values_keys:
            if self._is_values_of(pid, v):
                self.product_values(pid, v)
        for img, pid in self.images:
            if pid not in self.values_keys and image_matches(v.text("image", "repository"), img):
                self.product_values(pid, v)

    def _is_values_of(self, pid: str, v: View) -> bool:
        """Whether a free-standing values file belongs to ``pid``.

        The image repository decides when there is one. Without it, a key of the product's
        own (``delegateVersion``) must be there: ``image.tag`` alone is in most charts' values.
        """
        repo = v.text("image", "repository")
        if repo is not None:
            images = self.kb.products[pid].recognise.image
            if images:
                return any(image_matches(repo, img) for img in images)
        own = [k for k in self.values_keys[pid] if not k.startswith("image.")]
        return any(v.get(*key.split(".")) is not None for key in own)

    def product_values(self, pid: str, v: View) -> None:
        for fact in values_keys(pid, self.values_keys.get(pid, ()), v.get(), ()):
            self.add(fact.key, fact.value, v.where(*fact.path))
        tag = v.text("image", "tag")
        if tag is not None and tag.strip():
            self.pin_from_tag(pid, tag, v.where("image", "tag"), NORMAL)
        args = v.get("args")
        if isinstance(args, list):
            self.add(f"workload.{pid}.args", [str(a) for a in args], v.where("args"))

    def bom(self, v: View) -> None:
        gitops_ns = v.text("gitops", "namespace")
        for cname, entry in v.mapping("components").items():
            if not isinstance(cname, str) or not isinstance(entry, dict):
                continue
            c = v.sub("components", cname)
            if c.get("enabled") is False:
                continue
            pid = self.by_bom.get(cname) or self.by_release.get(cname)
            version_range = c.text("versionRange")
            if pid is not None and version_range is not None:
                self.add(f"pin.{pid}", version_range, c.where("versionRange"))
            mode = c.text("driftDetection", "mode")
            if mode:
                self.add(
                    f"helmrelease.{cname}.drift-detection", mode, c.where("driftDetection", "mode")
                )
            if gitops_ns:
                self.add(
                    f"helmrelease.{cname}.namespace", gitops_ns, v.where("gitops", "namespace"), LOW
                )
            self._components.append(
                _Component(
                    cname, pid, v.key_where("components", cname), bool(mode), bool(gitops_ns)
                )
            )

    # ---------------------------------------------------------------- after every file

    def finish(self) -> None:
        for p in self._pending:
            kind, name = p.ref.kind, p.ref.name
            found = self._sources.get((kind, p.ref.namespace or None, name))
            found = found or self._sources.get((kind, None, name))
            if found is not None and found.problem:
                how = f"; state the version with --installed {p.product}=VERSION"
                self.not_a_version(p.product, found.where, found.problem + how, first=False)
            elif found is not None:
                self.add(f"pin.{p.product}", found.value, found.where)
        for comp in self._components:
            if not comp.has_namespace:
                ns = self._meta_namespace(comp)
                if ns is not None:
                    self.add(f"helmrelease.{comp.name}.namespace", ns[0], ns[1], DEFAULT)
            if not comp.has_mode:
                default = self._drift_default(comp)
                if default is not None:
                    self.add(
                        f"helmrelease.{comp.name}.drift-detection", default[0], default[1], DEFAULT
                    )

    def _metas_of(self, comp: _Component) -> list[str]:
        """Products whose releases publish this component (the meta chart)."""
        names = {comp.name, comp.product}
        return [
            pid
            for pid in sorted(self.kb.releases)
            if any(names & set(rel.bom) for rel in self.kb.releases[pid])
        ]

    def _meta_namespace(self, comp: _Component) -> tuple[str, provenance.Source] | None:
        for meta in self._metas_of(comp):
            if meta in self._release_ns:
                return self._release_ns[meta]
        return None

    def _drift_default(self, comp: _Component) -> tuple[str, provenance.Source] | None:
        """The mode the meta chart's own defaults give a component the BOM does not configure."""
        key = f"helmrelease.{comp.name}.drift-detection"
        for meta in self._metas_of(comp):
            pin = self._facts.get(f"pin.{meta}")
            if pin is None or not isinstance(pin[1].value, str):
                continue
            exact = _exact(pin[1].value)
            if exact is None:
                continue
            mode = "disabled"
            for rel in self.kb.releases[meta]:
                if rel.version == NEXT or rel.withdrawn is not None:
                    continue
                if versions.compare(versions.parse_version(rel.version), exact) > 0:
                    break
                if key in rel.effects:
                    mode = str(rel.effects[key])
            why = f"{meta} {pin[1].value} ({pin[1].source}) defaults it to {mode}"
            return mode, provenance.default_of(comp.where.file, comp.where.line, comp.name, why)
        return None


# --------------------------------------------------------------------------- helpers


def _exact(pin: str) -> versions.Version | None:
    try:
        constraint = versions.parse_constraint(pin)
    except UpgradeplanError:
        return None
    return constraint.exact_version if constraint.is_exact else None
