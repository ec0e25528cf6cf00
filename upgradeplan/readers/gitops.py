"""``--gitops PATH``: facts from GitOps files, each located at ``file:line`` of its value.

What is read (see docs/gitops.md):

- Flux ``HelmRelease`` (``helm.toolkit.fluxcd.io`` v2, v2beta2, v2beta1): its namespace, its
  drift-detection mode (unset means ``disabled``), the chart version (``spec.chart.spec.version``
  or the ``OCIRepository`` its ``spec.chartRef`` names) as the pin of the product it
  recognises, and its inline ``spec.values`` (a BOM, or a product's values).
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

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from upgradeplan import versions
from upgradeplan.errors import BadInput, UpgradeplanError
from upgradeplan.model import NEXT, Fact, FactValue, KnowledgeBase, State
from upgradeplan.readers.gitops_gate import gitops_targets, pin_changes
from upgradeplan.readers.gitops_trees import GitTree, Tree, git_tree, work_tree
from upgradeplan.readers.gitops_walk import YAML_SUFFIXES, Source, walk
from upgradeplan.readers.gitops_yaml import Doc, View, documents, iter_objects, json6902_object

__all__ = ["gitops_targets", "pin_changes", "read"]

# Priorities when two files state the same fact: the higher wins, later wins on a tie.
DEFAULT = 0  # a value taken from a chart default or the release namespace
LOW = 1  # an indirect statement (gitops.namespace for every component, a Deployment's image)
NORMAL = 2  # the value itself
HIGH = 3  # a HelmRelease's own chart version

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


def read(kb: KnowledgeBase, path: str, *, ref: str | None = None) -> State:
    """The facts the GitOps files under ``path`` state (at git ``ref`` when given)."""
    tree, start, display_root = _open(path, ref)

    def display(rel: str) -> str:
        return posixpath.normpath(posixpath.join(display_root, rel)) if display_root else rel

    plan = walk(tree, start, display)
    if isinstance(tree, GitTree):
        tree.prefetch([src.rel for src in plan.sources])
    reader = _Reader(kb)
    for src in plan.sources:
        for doc in _documents(tree, src, display(src.rel)):
            for view in iter_objects(doc):
                reader.object(view, src.namespace, patch=src.patch)
    reader.finish()
    facts = reader.facts()
    unreadable = {k: why for k, why in reader.unreadable.items() if k not in facts}
    for entry, why in plan.skipped.items():
        unreadable[f"file {entry}"] = why
    name = path if ref is None else f"{path}@{ref}"
    return State(facts=facts, name=name, unreadable=unreadable)


def _documents(tree: Tree, src: Source, shown: str) -> list[Doc]:
    """The documents of a source; a JSON 6902 patch becomes the partial object it writes."""
    docs = documents(tree.read(src.rel), shown)
    if src.inline is not None:
        docs = [d for doc in docs for d in View(doc).embedded(*src.inline)]
    if src.target is None:
        return docs
    out: list[Doc] = []
    for doc in docs:
        if isinstance(doc.data, list):
            obj = json6902_object(doc, dict(src.target))
            if obj is not None:
                out.append(obj)
        else:
            out.append(doc)
    return out


# --------------------------------------------------------------------------- opening


def _open(path: str, ref: str | None) -> tuple[Tree, str, str]:
    """The tree to read, where to start in it, and the prefix shown in sources."""
    given = path.rstrip("/") or path
    if ref is None:
        p = Path(given)
        if p.is_dir():
            return work_tree(p), "", _clean(given)
        if p.is_file():
            return work_tree(p.parent), p.name, _clean(posixpath.dirname(given))
        raise BadInput(
            f"--gitops {path}: no such file or directory",
            hint="pass the directory of your cluster's GitOps files (e.g. clusters/prod)",
        )
    tree, start = git_tree(Path(given), ref)
    shown = _clean(given if start == "" else posixpath.dirname(given))
    return tree, start, shown


def _clean(prefix: str) -> str:
    prefix = prefix.replace(os.sep, "/")
    norm = posixpath.normpath(prefix) if prefix else ""
    return "" if norm == "." else norm


# --------------------------------------------------------------------------- recognition


@dataclass
class _Pending:
    """A HelmRelease whose chart comes from an OCIRepository (``spec.chartRef``)."""

    product: str
    namespace: str | None
    source_name: str


@dataclass
class _Component:
    name: str
    product: str | None
    where: str  # file:line of components.<name>
    has_mode: bool
    has_namespace: bool


@dataclass
class _Reader:
    kb: KnowledgeBase
    _facts: dict[str, tuple[int, Fact]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    _oci: dict[tuple[str | None, str], tuple[str, str]] = field(default_factory=dict)
    _pending: list[_Pending] = field(default_factory=list)
    _components: list[_Component] = field(default_factory=list)
    _release_ns: dict[str, tuple[str, str]] = field(default_factory=dict)  # product -> ns, where

    def __post_init__(self) -> None:
        self.patching = False
        self.workloads: dict[tuple[str, str], str] = {}  # (kind, name) -> product
        self.by_release: dict[str, str] = {}
        self.by_chart: dict[str, str] = {}
        self.by_bom: dict[str, str] = {}
        self.labels: list[tuple[str, str, str]] = []
        self.images: list[tuple[str, str]] = []
        self.values_keys: dict[str, tuple[str, ...]] = {}
        for pid in sorted(self.kb.products):
            rec = self.kb.products[pid].recognise
            for n in rec.helmrelease:
                self.by_release.setdefault(n, pid)
            for n in rec.chart:
                self.by_chart.setdefault(n, pid)
            if rec.bom_component:
                self.by_bom.setdefault(rec.bom_component, pid)
            self.labels += [(k, v, pid) for k, v in rec.deployment_labels]
            self.images += [(img, pid) for img in rec.image]
            if rec.values_keys:
                self.values_keys[pid] = rec.values_keys

    # ---------------------------------------------------------------- facts

    def add(self, key: str, value: FactValue, source: str, prio: int = NORMAL) -> None:
        current = self._facts.get(key)
        if current is not None and prio < current[0]:
            return
        if isinstance(value, str) and "${" in value:
            # Flux post-build substitution fills it in at apply time: not in the files.
            self.unreadable[key] = (
                f"{source}: {value!r} is filled in by Flux post-build substitution; "
                f"state the value with --fact {key}=VALUE"
            )
            return
        if key.startswith("pin.") and isinstance(value, str):
            _check_constraint(value, source, key[len("pin.") :])
        self._facts[key] = (prio, Fact(key, value, source))

    def facts(self) -> dict[str, Fact]:
        return {k: self._facts[k][1] for k in sorted(self._facts)}

    # ---------------------------------------------------------------- dispatch

    def object(self, v: View, namespace: str | None, *, patch: bool = False) -> None:
        """Read one object. A ``patch`` states only what it writes: nothing is defaulted."""
        self.patching = patch
        kind = v.get("kind")
        api = v.get("apiVersion")
        if not isinstance(kind, str) or not isinstance(api, str):
            if not patch:
                self.values_file(v)
            return
        group = api.split("/", 1)[0] if "/" in api else ""
        if kind == "HelmRelease" and group == "helm.toolkit.fluxcd.io":
            self.helmrelease(v, namespace)
        elif kind == "OCIRepository" and group == "source.toolkit.fluxcd.io":
            self.ocirepository(v, namespace)
        elif kind in WORKLOAD_KINDS and group == "apps":
            self.workload(v, namespace, kind)
        elif kind == "Secret" and api == "v1":
            self.secret(v, namespace)
        elif kind == "Namespace" and api == "v1":
            self.namespace_object(v)
        elif kind == "ConfigMap" and api == "v1":
            self.configmap(v)

    def configmap(self, v: View) -> None:
        """Values files kept in a ConfigMap (the target of a HelmRelease's ``valuesFrom``)."""
        for key in v.mapping("data"):
            if not isinstance(key, str) or not (key.endswith(YAML_SUFFIXES) or key == "values"):
                continue
            try:
                docs = v.embedded("data", key)
            except BadInput as exc:
                self.unreadable[f"file {v.doc.file} data.{key}"] = exc.one_line()
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
        if self.patching:
            pass  # a patch's metadata selects the object; it does not move it
        elif v.text("metadata", "namespace"):
            self.add(f"helmrelease.{name}.namespace", ns, v.where("metadata", "namespace"))
        elif ns:
            self.add(f"helmrelease.{name}.namespace", ns, v.where("metadata", "name"), LOW)
        mode = v.text("spec", "driftDetection", "mode")
        if mode:
            self.add(
                f"helmrelease.{name}.drift-detection",
                mode,
                v.where("spec", "driftDetection", "mode"),
            )
        elif not self.patching:
            self.add(f"helmrelease.{name}.drift-detection", "disabled", v.where("metadata", "name"))
        chart = v.text("spec", "chart", "spec", "chart")
        product = self.by_release.get(name) or (self.by_chart.get(chart) if chart else None)
        ref_kind = v.text("spec", "chartRef", "kind")
        ref_name = v.text("spec", "chartRef", "name")
        if product is None and ref_kind == "OCIRepository" and ref_name:
            product = self.by_release.get(ref_name) or self.by_chart.get(ref_name)
        if product is not None:
            release_ns = v.text("spec", "targetNamespace") or ns
            if release_ns and not self.patching:
                where = (
                    v.where("spec", "targetNamespace")
                    if v.text("spec", "targetNamespace")
                    else (v.where("metadata", "namespace"))
                )
                self._release_ns[product] = (release_ns, where)
            version = v.text("spec", "chart", "spec", "version")
            if version is not None and version.strip():
                self.add(
                    f"pin.{product}", version, v.where("spec", "chart", "spec", "version"), HIGH
                )
            elif ref_kind == "OCIRepository" and ref_name:
                ref_ns = v.text("spec", "chartRef", "namespace") or ns
                self._pending.append(_Pending(product, ref_ns, ref_name))
            elif chart and not self.patching:
                # Flux reads an empty chart version as "*": the newest chart, no pin.
                self.add(f"pin.{product}", None, v.where("spec", "chart", "spec", "chart"))
        values = v.sub("spec", "values")
        if values.mapping():
            if isinstance(values.get("components"), dict):
                self.bom(values)
            if product is not None:
                self.product_values(product, values)

    def ocirepository(self, v: View, default_ns: str | None) -> None:
        name = v.text("metadata", "name")
        if not name:
            return
        ns = v.text("metadata", "namespace") or default_ns
        pin: str | None = None
        where = v.where("spec", "ref")
        if v.text("spec", "ref", "digest"):
            product = self.by_release.get(name) or self.by_chart.get(name)
            if product is not None:
                self.unreadable[f"pin.{product}"] = (
                    f"{v.where('spec', 'ref', 'digest')}: pinned by digest; the version is not in "
                    f"the files (state it with --installed {product}=VERSION)"
                )
            return
        for key in ("semver", "tag"):
            text = v.text("spec", "ref", key)
            if text is not None and text.strip():
                pin, where = text, v.where("spec", "ref", key)
                break
        if pin is None:
            return
        if key == "tag" and "${" not in pin and not _is_version(pin):
            product = self.by_release.get(name) or self.by_chart.get(name)
            if product is not None:
                self.unreadable[f"pin.{product}"] = f"{where}: the tag {pin!r} is not a version"
            return
        self._oci[(ns, name)] = (pin, where)
        product = self.by_release.get(name) or self.by_chart.get(name)
        if product is not None:
            self.add(f"pin.{product}", pin, where)

    # ---------------------------------------------------------------- values

    def values_file(self, v: View) -> None:
        if isinstance(v.get("components"), dict):
            self.bom(v)
        for pid in self.values_keys:
            if self._is_values_of(pid, v):
                self.product_values(pid, v)
        for img, pid in self.images:
            if pid not in self.values_keys and _image_matches(v.text("image", "repository"), img):
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
                return any(_image_matches(repo, img) for img in images)
        own = [k for k in self.values_keys[pid] if not k.startswith("image.")]
        return any(v.get(*key.split(".")) is not None for key in own)

    def product_values(self, pid: str, v: View) -> None:
        for key in self.values_keys.get(pid, ()):
            path = key.split(".")
            text = v.text(*path)
            if text is not None:
                self.add(f"values.{pid}.{key}", text, v.where(*path))
        tag = v.text("image", "tag")
        if tag is not None and tag.strip():
            self._pin_from_tag(pid, tag, v.where("image", "tag"), NORMAL)
        args = v.get("args")
        if isinstance(args, list):
            self.add(f"workload.{pid}.args", [str(a) for a in args], v.where("args"))

    def _pin_from_tag(self, pid: str, tag: str, where: str, prio: int) -> None:
        version = tag[1:] if tag[:1] in ("v", "V") and tag[1:2].isdigit() else tag
        try:
            versions.parse_version(version)
        except UpgradeplanError:
            self.unreadable.setdefault(f"pin.{pid}", f"{where}: image tag {tag!r} is not a version")
            return
        self.add(f"pin.{pid}", version, where, prio)

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

    # ---------------------------------------------------------------- Kubernetes objects

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
                pid = next((p for img, p in self.images if _image_matches(_repo(image), img)), None)
                if pid is not None:
                    break
        if pid is None and name:
            pid = self.workloads.get((kind, name))  # a patch of a workload read before
        if pid is None:
            return
        if name:
            self.workloads[(kind, name)] = pid
        ns = v.text("metadata", "namespace")
        w = f"workload.{pid}"
        cpath = ("spec", "template", "spec", "containers")
        if self.patching:
            self._workload_patch(pid, v, containers)
            return
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
            tag = _tag(c.get("image"))
            own = self.kb.products[pid].recognise.image
            if tag and any(_image_matches(_repo(c.get("image")), img) for img in own):
                self._pin_from_tag(pid, tag, v.where(*cpath, i, "image"), LOW)
        # A values file says what the chart renders; a rendered manifest only repeats it.
        self.add(f"{w}.args", args, args_at, LOW)
        self.add(f"{w}.env-secrets", list(dict.fromkeys(secrets)), secrets_at)
        pod_ann = v.mapping("spec", "template", "metadata", "annotations")
        self.add(
            f"{w}.pod-annotations",
            {str(k): _str(val) for k, val in pod_ann.items()},
            v.where("spec", "template", "metadata"),
        )
        tolerations = [
            f"{_str(t.get('key'))}:{_str(t.get('operator') or 'Equal')}:{_str(t.get('effect'))}"
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
                _str(t.get("spec", {}).get("storageClassName"))
                for t in v.sequence("spec", "volumeClaimTemplates")
                if isinstance(t, dict)
                and isinstance(t.get("spec"), dict)
                and t["spec"].get("storageClassName")
            ]
            self.add(f"{w}.storage-classes", classes, v.where("spec", "volumeClaimTemplates"))

    def _workload_patch(self, pid: str, v: View, containers: list[Any]) -> None:
        """What a patch of a workload writes: args, the image, annotations, tolerations."""
        w = f"workload.{pid}"
        cpath = ("spec", "template", "spec", "containers")
        for i, c in enumerate(containers):
            if not isinstance(c, dict):
                continue
            if isinstance(c.get("args"), list):
                args = [str(a) for a in c["args"]]
                self.add(f"{w}.args", args, v.where(*cpath, i, "args"), LOW)
            tag = _tag(c.get("image"))
            own = self.kb.products[pid].recognise.image
            if tag and any(_image_matches(_repo(c.get("image")), img) for img in own):
                self._pin_from_tag(pid, tag, v.where(*cpath, i, "image"), LOW)
        ann = v.get("spec", "template", "metadata", "annotations")
        if isinstance(ann, dict):
            current = self._facts.get(f"{w}.pod-annotations")
            merged = (
                dict(current[1].value) if current and isinstance(current[1].value, dict) else {}
            )
            merged.update({str(k): _str(x) for k, x in ann.items()})
            self.add(f"{w}.pod-annotations", merged, v.where("spec", "template", "metadata"))

    def secret(self, v: View, default_ns: str | None) -> None:
        # Only metadata and type are looked at: data / stringData are never read.
        name = v.text("metadata", "name")
        ns = v.text("metadata", "namespace") or default_ns
        if not name or not ns or (self.patching and v.text("type") is None):
            return
        kind = v.text("type")
        where = v.where("type") if kind is not None else v.where("metadata", "name")
        self.add(f"secret.{ns}.{name}.type", kind or "Opaque", where)

    def namespace_object(self, v: View) -> None:
        name = v.text("metadata", "name")
        if not name:
            return
        labels = v.mapping("metadata", "labels")
        if self.patching:
            current = self._facts.get(f"namespace.{name}.labels")
            if not labels:
                return
            if current is not None and isinstance(current[1].value, dict):
                labels = {**current[1].value, **labels}
        where = v.where("metadata", "labels") if labels else v.where("metadata", "name")
        self.add(f"namespace.{name}.labels", {str(k): _str(x) for k, x in labels.items()}, where)

    # ---------------------------------------------------------------- after every file

    def finish(self) -> None:
        for p in self._pending:
            found = self._oci.get((p.namespace, p.source_name)) or self._oci.get(
                (None, p.source_name)
            )
            if found is not None:
                self.add(f"pin.{p.product}", found[0], found[1])
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

    def _meta_namespace(self, comp: _Component) -> tuple[str, str] | None:
        for meta in self._metas_of(comp):
            if meta in self._release_ns:
                return self._release_ns[meta]
        return None

    def _drift_default(self, comp: _Component) -> tuple[str, str] | None:
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
            return mode, (
                f"derived: {comp.where} sets no driftDetection for {comp.name}; "
                f"{meta} {pin[1].value} ({pin[1].source}) defaults it to {mode}"
            )
        return None


# --------------------------------------------------------------------------- helpers


def _is_version(text: str) -> bool:
    try:
        versions.parse_version(text)
    except UpgradeplanError:
        return False
    return True


def _check_constraint(text: str, where: str, product: str) -> None:
    """A pin Flux would refuse is bad input at its line."""
    try:
        versions.parse_constraint(text)
    except UpgradeplanError as exc:
        reason = getattr(exc, "reason", str(exc))
        raise BadInput(
            f"the pin {text!r} of {product} is not a version constraint: {reason}",
            location=where,
            hint='write an exact version ("4.7.18") or a range (">=4.7.0 <5.0.0")',
        ) from None


def _exact(pin: str) -> versions.Version | None:
    try:
        constraint = versions.parse_constraint(pin)
    except UpgradeplanError:
        return None
    return constraint.exact_version if constraint.is_exact else None


def _str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _repo(image: Any) -> str | None:
    if not isinstance(image, str):
        return None
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)
    if ":" in last[-1]:
        repo = repo[: len(repo) - len(last[-1])] + last[-1].split(":", 1)[0]
    return repo


def _tag(image: Any) -> str | None:
    """The tag of an image reference (None with a digest or without a tag)."""
    if not isinstance(image, str) or "@" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def _image_matches(repo: str | None, wanted: str) -> bool:
    if not repo:
        return False
    return repo == wanted or repo.endswith("/" + wanted)


def _env_secrets(c: View) -> list[tuple[str, str]]:
    """Secrets a container's env reads, each with the file:line of its name."""
    out: list[tuple[str, str]] = []
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
