"""Kubernetes objects -> products and facts: the one recogniser every reader uses.

The live-cluster and snapshot reader (``readers/kube/objects``) and the GitOps reader
(``readers/gitops``) hand plain object mappings here. :class:`Recogniser` says which product
an object belongs to, through the knowledge base's ``recognise`` entries (HelmRelease names,
chart names, BOM component names, Deployment labels, image repositories), never through names
written in code. One function per kind of fact derives it from one object: a workload's
(:func:`workload_facts`, :func:`storage_classes`), a HelmRelease's (:func:`helmrelease_facts`,
:func:`release_pin`, :func:`release_installed`, :func:`release_values`, :func:`values_keys`),
a chart source's pin (:func:`source_pin`), a Secret's type (:func:`secret_facts`, never its
data), a Namespace's labels (:func:`namespace_facts`). What needs other objects (the source
a ``chartRef`` names, ``valuesFrom``) the readers resolve, each among what it read.

Each derived fact carries the path in the object it was read at and a short label of it:
the GitOps reader turns the path into the ``file:line`` of the value, the cluster reader
writes the label after the object's reference (``Deployment ns/name spec.strategy…``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from types import EllipsisType
from typing import Any

from msgspec import Struct

from upgradeplan import keypath
from upgradeplan.model import FactValue, KnowledgeBase

Path = tuple[Any, ...]
CONTAINERS: Path = ("spec", "template", "spec", "containers")


class Derived(Struct, frozen=True):
    """A fact read from an object: its key, value, and where in the object it is."""

    key: str
    value: FactValue
    path: Path  # keys and indexes into the object
    label: str  # the same place in words, for sources that are not files


def image_repository(image: str) -> str:
    """The repository of an image reference (``repo:tag@digest`` keeps its repository)."""
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    if ":" in last:
        repo = repo[: len(repo) - len(last)] + last.split(":", 1)[0]
    return repo


def image_tag(image: str) -> str:
    """The tag of an image reference, also before a digest ("" without a tag)."""
    repo = image.split("@", 1)[0]
    last = repo.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def image_matches(repo: str | None, wanted: str) -> bool:
    """Whether an image repository is ``wanted`` (or ends with ``/wanted``)."""
    if not repo:
        return False
    return repo == wanted or repo.endswith("/" + wanted)


def text_of(value: Any) -> str:
    """A scalar as the files write it (``true``, not ``True``; nothing as ``""``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Recogniser:
    """The knowledge base's ``recognise`` entries, indexed once."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.by_release: dict[str, str] = {}
        self.by_chart: dict[str, str] = {}
        self.by_bom: dict[str, str] = {}
        self.labels: list[tuple[str, str, str]] = []  # (label key, value, product)
        self.images: list[tuple[str, str]] = []  # (image repository, product)
        self.values_keys: dict[str, tuple[str, ...]] = {}
        for pid in sorted(kb.products):
            rec = kb.products[pid].recognise
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

    def release(self, name: str | None, charts: Sequence[str | None] = ()) -> str | None:
        """The product of a HelmRelease: by its name, else by a chart it installs."""
        found = self.by_release.get(name) if name else None
        for chart in charts:
            found = found or (self.by_chart.get(chart) if chart else None)
        return found

    def helmrelease(
        self, obj: Mapping[str, Any], ref: ChartRef | EllipsisType | None = ...
    ) -> str | None:
        """The product of a HelmRelease object: its name, else the chart it installs
        (``spec.chart.spec.chart``, the running ``status.history[0].chartName``), else the
        name of the OCIRepository its ``spec.chartRef`` names (a product's release or chart).

        ``ref``: ``chart_ref(obj)``, when the caller has it already."""
        name = text_of(_get(obj, "metadata", "name"))
        found = self.by_release.get(name) if name else None
        if found is None:
            chart = text_of(_get(obj, "spec", "chart", "spec", "chart"))
            found = self.by_chart.get(chart) if chart else None
        if found is None:
            history = _get(obj, "status", "history")
            first = history[0] if isinstance(history, list) and history else None
            if type(first) is dict or isinstance(first, Mapping):
                chart = text_of(first.get("chartName"))
                found = self.by_chart.get(chart) if chart else None
        if found is not None:
            return found
        if ref is ...:
            ref = chart_ref(obj)
        if ref is not None and ref.kind == "OCIRepository" and ref.name:
            return self.release(ref.name, [ref.name])
        return None

    def source(self, obj: Mapping[str, Any]) -> str | None:
        """The product of a chart source: an OCIRepository by its name (a product's release
        or chart name), a HelmChart by the chart it fetches (``spec.chart``)."""
        if obj.get("kind") == "HelmChart":
            return self.release(None, [text_of(_get(obj, "spec", "chart"))])
        name = text_of(_get(obj, "metadata", "name"))
        return self.release(name, [name])

    def sources_of(self, pid: str) -> dict[str, str]:
        """Every place product ``pid``'s chart is published (URL -> what is served there)."""
        product = self.kb.products[pid]
        out = {s.rstrip("/"): "" for s in product.recognise.chart_source}
        for c in product.charts:
            served = f"versions {c.versions}" if c.versions else ""
            out[c.url] = ", ".join(x for x in (c.era, served) if x)
        return out

    def foreign(self, pid: str, source: str | None) -> str:
        """Why a chart from ``source`` (an OCI URL, or ``<repository URL> chart <name>``) may
        not be product ``pid``'s, or "" when it is: the product names no chart sources, the
        source is not known, or it is one of them.

        A source none of them names is not taken for another chart: it carries the product's
        name, so the product's findings may apply (the readers leave its pin and version
        unknown, naming the object and the place)."""
        own = self.sources_of(pid)
        if not own or source is None:
            return ""
        if source.rstrip("/") in own or source.split(" chart ", 1)[0] in own:
            return ""
        listed = "; ".join(f"{url} ({what})" if what else url for url, what in own.items())
        return (
            f"its chart comes from {source}, a place the knowledge does not list for {pid} "
            f"(it lists {listed}): it may be {pid}, so {pid}'s findings may apply; state the "
            f"version with --installed {pid}=VERSION, or list the place under the product's "
            "charts"
        )

    def workload(self, obj: Mapping[str, Any]) -> str | None:
        """The product of a workload (Deployment, StatefulSet, DaemonSet): labels, then images."""
        labels = {
            **_str_map(_get(obj, "metadata", "labels")),
            **_str_map(_get(obj, "spec", "template", "metadata", "labels")),
        }
        for key, value, pid in self.labels:
            if labels.get(key) == value:
                return pid
        for c in _containers(obj):
            repo = image_repository(str(c.get("image", "")))
            for img, pid in self.images:
                if image_matches(repo, img):
                    return pid
        return None


def workload_facts(pid: str, obj: Mapping[str, Any]) -> Iterator[Derived]:
    """The facts of product ``pid``'s workload object (docs/state-format.md, ``workload.*``).

    Name and namespace (when the object says), the first container's image, every
    container's args, the Secrets env reads (init containers too) and where each env entry
    reads one, pod annotations, tolerations and the rolling update's maxSurge.
    """
    w = f"workload.{pid}"
    for field in ("name", "namespace"):
        value = _get(obj, "metadata", field)
        if value:
            yield Derived(f"{w}.{field}", str(value), ("metadata", field), f"metadata.{field}")
    containers = _containers(obj)
    image = str(containers[0].get("image", "")) if containers else ""
    if image:
        yield Derived(f"{w}.image", image, (*CONTAINERS, 0, "image"), _C0 + ".image")
    yield from _args_and_secrets(w, obj, containers)
    annotations = _get(obj, "spec", "template", "metadata", "annotations")
    yield Derived(
        f"{w}.pod-annotations",
        {str(k): text_of(v) for k, v in sorted(_mapping(annotations).items(), key=_by_key)},
        ("spec", "template", "metadata"),
        "spec.template.metadata.annotations",
    )
    tolerations = [
        ":".join(text_of(x) for x in (t.get("key"), t.get("operator") or "Equal", t.get("effect")))
        for t in _get(obj, "spec", "template", "spec", "tolerations") or []
        if isinstance(t, Mapping)
    ]
    yield Derived(
        f"{w}.tolerations",
        tolerations,
        ("spec", "template", "spec", "tolerations"),
        "spec.template.spec.tolerations",
    )
    surge = _get(obj, "spec", "strategy", "rollingUpdate", "maxSurge")
    if surge is not None:
        path = ("spec", "strategy", "rollingUpdate", "maxSurge")
        yield Derived(f"{w}.max-surge", text_of(surge), path, ".".join(path))


_C0 = "spec.template.spec.containers[0]"
_VERSION_LIKE = re.compile(r"^v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.+-]*)?$")


class Pin(Struct, frozen=True):
    """The version an OCIRepository's ``spec.ref`` pins (``value`` None: unpinned, the tag
    ``latest``; or not known, with ``problem`` saying why)."""

    value: str | None
    path: Path
    label: str
    problem: str = ""


def oci_pin(obj: Mapping[str, Any]) -> Pin:
    """``spec.ref`` as Flux resolves it: a digest (its version is not written), else semver,
    else a tag (one that is no version pins nothing known), else the tag ``latest``."""
    ref = _mapping(_get(obj, "spec", "ref"))
    if ref.get("digest"):
        path = ("spec", "ref", "digest")
        why = f"spec.ref.digest pins {ref['digest']}: the version it selects is not written"
        return Pin(None, path, "spec.ref.digest", why + " in the spec")
    for key in ("semver", "tag"):
        text = text_of(ref.get(key)).strip()
        if not text:
            continue
        path, label = ("spec", "ref", key), f"spec.ref.{key}"
        if key == "tag" and "${" not in text and not _VERSION_LIKE.match(text):
            return Pin(None, path, label, f"spec.ref.tag {text!r} is not a version")
        return Pin(text, path, label)
    return Pin(None, ("spec", "ref"), "spec.ref (unset: tag latest)")


# helm-controller's CRD policy when ``spec.install.crds`` / ``spec.upgrade.crds`` is unset:
# ``Create`` for both actions (internal/action/crds.go ``DefaultCRDPolicy``, read on install and,
# since v0.37.0, on upgrade; still so in v1.6.3). The v2 API text says upgrade's default is
# ``Skip``; the controller applies ``Create`` (docs/gitops.md, "CRD policy").
CRDS_DEFAULT = "Create"


def helmrelease_facts(name: str, obj: Mapping[str, Any]) -> Iterator[Derived]:
    """A HelmRelease's own facts: its namespace (when written), drift-detection mode
    (helm-controller's default, ``disabled``, when unset) and CRD policy on install and
    upgrade (:data:`CRDS_DEFAULT` when unset)."""
    h = f"helmrelease.{name}"
    ns = _get(obj, "metadata", "namespace")
    if ns:
        yield Derived(f"{h}.namespace", str(ns), ("metadata", "namespace"), "metadata.namespace")
    mode = text_of(_get(obj, "spec", "driftDetection", "mode"))
    if mode:
        at: Path = ("spec", "driftDetection", "mode")
        yield Derived(f"{h}.drift-detection", mode, at, "spec.driftDetection.mode")
    else:
        at = ("metadata", "name")
        yield Derived(f"{h}.drift-detection", "disabled", at, "spec.driftDetection (unset)")
    yield crds_policy(h, obj)


def crds_policy(h: str, obj: Mapping[str, Any]) -> Derived:
    """``<h>.crds``: the CRD policy on install and on upgrade, as written or helm-controller's
    default; located at the upgrade policy when written (what a chart bump runs), else at the
    install policy, else at the release's name."""
    policy: dict[str, str] = {}
    words: list[str] = []
    at: Path = ("metadata", "name")
    for action in ("install", "upgrade"):
        written = text_of(_get(obj, "spec", action, "crds")).strip()
        policy[action] = written or CRDS_DEFAULT
        if written:
            at = ("spec", action, "crds")
            words.append(f"spec.{action}.crds {written}")
        else:
            words.append(f"spec.{action}.crds (unset: {CRDS_DEFAULT})")
    return Derived(f"{h}.crds", policy, at, ", ".join(words))


class ChartRef(Struct, frozen=True):
    """The chart source a HelmRelease's ``spec.chartRef`` names (namespace: the release's
    when unset, "" when neither is written)."""

    kind: str
    namespace: str
    name: str


def chart_ref(obj: Mapping[str, Any]) -> ChartRef | None:
    """``spec.chartRef`` (kind OCIRepository when unset), or None without one."""
    ref = _get(obj, "spec", "chartRef")
    if type(ref) is not dict and not isinstance(ref, Mapping):
        return None
    ns = text_of(ref.get("namespace")) or text_of(_get(obj, "metadata", "namespace"))
    return ChartRef(text_of(ref.get("kind")) or "OCIRepository", ns, text_of(ref.get("name")))


CHART_VERSION: Path = ("spec", "chart", "spec", "version")


def chart_pin(obj: Mapping[str, Any], path: Path = CHART_VERSION) -> Pin:
    """The pin a chart version field writes (a HelmRelease's ``spec.chart.spec.version``, a
    HelmChart's ``spec.version``): as written, or none when unset or ``*`` (Flux reads both
    as the newest chart). Unset, the path is the chart's name next to it."""
    text = text_of(_get(obj, *path)).strip()
    label = ".".join(path)
    if text and text != "*":
        return Pin(text, path, label)
    at = path if _get(obj, *path) is not None else (*path[:-1], "chart")
    return Pin(None, at, label + (" (any version)" if text else " (unset: latest)"))


def release_pin(obj: Mapping[str, Any]) -> Pin | ChartRef | None:
    """What pins a HelmRelease's chart: the source its ``spec.chartRef`` names (resolved by
    the reader, which knows the other objects), else ``spec.chart.spec.version``, else
    nothing (no chart at all)."""
    ref = chart_ref(obj)
    if ref is not None:
        return ref
    return chart_pin(obj) if isinstance(_get(obj, "spec", "chart"), Mapping) else None


def source_pin(obj: Mapping[str, Any]) -> Pin:
    """The pin a chart source object writes: an OCIRepository's ``spec.ref``, a
    HelmChart's ``spec.version``."""
    if obj.get("kind") == "HelmChart":
        return chart_pin(obj, ("spec", "version"))
    return oci_pin(obj)


_OCI_DIGEST_SUFFIX = re.compile(r"\+[0-9a-f]{12}$")


def release_installed(pid: str, obj: Mapping[str, Any]) -> Derived | None:
    """``installed.<pid>``: the chart version a HelmRelease's status says runs (the newest
    ``deployed`` history entry, else the newest; else ``status.lastAppliedRevision``), an
    OCI digest suffix (``+0123456789ab``) dropped. None when the status says nothing."""
    snapshot = _running_snapshot(_get(obj, "status", "history"))
    if snapshot is not None:
        index, entry, note = snapshot
        version = _OCI_DIGEST_SUFFIX.sub("", str(entry["chartVersion"]))
        at: Path = ("status", "history", index, "chartVersion")
        return Derived(
            f"installed.{pid}", version, at, f"status.history[{index}].chartVersion{note}"
        )
    applied = _get(obj, "status", "lastAppliedRevision")
    if applied:
        version = _OCI_DIGEST_SUFFIX.sub("", str(applied))
        at = ("status", "lastAppliedRevision")
        return Derived(f"installed.{pid}", version, at, "status.lastAppliedRevision")
    return None


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


def release_values(pid: str, obj: Mapping[str, Any]) -> Derived | None:
    """``values.<pid>``, the whole of what a HelmRelease sets: its ``spec.values`` (``{}``
    when unset). None with ``spec.valuesFrom`` entries: merged from other objects, not known
    here (an empty ``valuesFrom`` merges nothing)."""
    if _get(obj, "spec", "valuesFrom"):
        return None
    return values_tree(pid, _get(obj, "spec", "values"), ("spec", "values"))


def values_tree(pid: str, values: Any, at: Path) -> Derived:
    """``values.<pid>``: a values tree as a structured fact (``{}`` when it is no mapping)."""
    whole = plain_tree(values) if isinstance(values, Mapping) else {}
    return Derived(f"values.{pid}", whole, at, ".".join(str(p) for p in at))


def values_keys(
    pid: str, keys: Sequence[str], values: Any, at: Path = ("spec", "values")
) -> Iterator[Derived]:
    """``values.<pid>.<key>`` for each of the product's ``recognise.values_keys`` the values
    tree sets: a scalar as its text (``true``, not ``True``), a map or list as it is."""
    prefix = ".".join(str(p) for p in at)
    for key in keys:
        parts = keypath.split(key)
        value = _get(values, *parts)
        if value is None:
            continue
        plain = plain_tree(value) if isinstance(value, (Mapping, list)) else text_of(value)
        label = f"{prefix}.{key}" if prefix else key
        yield Derived(f"values.{pid}.{key}", plain, (*at, *parts), label)


def secret_facts(obj: Mapping[str, Any]) -> Iterator[Derived]:
    """A Secret's type (``Opaque`` when unset). Only ``metadata`` and ``type`` are looked at:
    ``data`` and ``stringData`` are never read."""
    ns, name = _get(obj, "metadata", "namespace"), _get(obj, "metadata", "name")
    if not ns or not name:
        return
    kind = text_of(obj.get("type"))
    at: Path = ("type",) if kind else ("metadata", "name")
    yield Derived(f"secret.{ns}.{name}.type", kind or "Opaque", at, "type")


def namespace_facts(obj: Mapping[str, Any]) -> Iterator[Derived]:
    """A Namespace's labels (``{}`` when it has none)."""
    name = _get(obj, "metadata", "name")
    if not name:
        return
    labels = _mapping(_get(obj, "metadata", "labels"))
    at: Path = ("metadata", "labels") if labels else ("metadata", "name")
    yield Derived(f"namespace.{name}.labels", _str_map(labels), at, "metadata.labels")


def plain_tree(value: Any) -> Any:
    """Plain dicts, lists and scalars (a values tree as a structured fact)."""
    if isinstance(value, Mapping):
        return {str(k): plain_tree(x) for k, x in value.items()}
    if isinstance(value, list):
        return [plain_tree(x) for x in value]
    return value


def storage_classes(
    obj: Mapping[str, Any], claims: Sequence[Mapping[str, Any]]
) -> list[str] | None:
    """The storage classes a workload's pods ask for: ephemeral volumes' claim templates,
    the PersistentVolumeClaims its volumes name (None when one is not among ``claims``: not
    known), a StatefulSet's ``volumeClaimTemplates``."""
    out: set[str] = set()
    ns = str(_get(obj, "metadata", "namespace") or "")
    by_name = {
        (str(_get(c, "metadata", "namespace") or ""), str(_get(c, "metadata", "name") or "")): c
        for c in claims
    }
    volumes = _get(obj, "spec", "template", "spec", "volumes")
    if volumes is not None and not isinstance(volumes, list):
        return None  # not a list: which classes it asks for is unknown (was a TypeError)
    for vol in volumes or []:
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
    for template in _get(obj, "spec", "volumeClaimTemplates") or []:
        sc = _get(template, "spec", "storageClassName")
        if sc:
            out.add(str(sc))
    return sorted(out)


def _args_and_secrets(w: str, obj: Mapping[str, Any], containers: list[Any]) -> Iterator[Derived]:
    args: list[str] = []
    args_at: Path = CONTAINERS
    for i, c in enumerate(containers):
        found = c.get("args")
        if isinstance(found, list) and found and not args:
            args_at = (*CONTAINERS, i, "args")
        args += [str(a) for a in found or []] if isinstance(found, list) else []
    yield Derived(f"{w}.args", args, args_at, "spec.template.spec.containers[*].args")
    secrets: list[str] = []
    secrets_at: Path = CONTAINERS
    for key in ("initContainers", "containers"):
        for i, c in enumerate(_get(obj, "spec", "template", "spec", key) or []):
            if not isinstance(c, Mapping):
                continue
            for name, at in _secrets_of(c):
                if name not in secrets:
                    if not secrets:
                        secrets_at = ("spec", "template", "spec", key, i, *at)
                    secrets.append(name)
    yield Derived(
        f"{w}.env-secrets",
        secrets,
        secrets_at,
        "env valueFrom.secretKeyRef / envFrom.secretRef",
    )
    refs = env_secret_refs(containers)
    refs_at: Path = CONTAINERS
    if refs:  # at the first env entry that reads a Secret
        _, ci, _, ei = next(iter(refs)).rsplit("/", 3)
        refs_at = (*CONTAINERS, int(ci), "env", int(ei))
    yield Derived(f"{w}.env-secret-refs", refs, refs_at, "env valueFrom.secretKeyRef")


def _secrets_of(c: Mapping[str, Any]) -> Iterator[tuple[str, Path]]:
    for i, env in enumerate(c.get("env") or []):
        name = _get(env, "valueFrom", "secretKeyRef", "name")
        if name:
            yield str(name), ("env", i, "valueFrom", "secretKeyRef", "name")
    for i, src in enumerate(c.get("envFrom") or []):
        name = _get(src, "secretRef", "name")
        if name:
            yield str(name), ("envFrom", i, "secretRef", "name")


def env_secret_refs(containers: Sequence[Any]) -> dict[str, str]:
    """Where each env entry that reads a Secret sits: JSON pointer -> ``ENV_NAME=secret``.

    ``containers`` is the pod template's container list (indexes are positions in it), so a
    JSON 6902 patch can rewrite exactly that entry.
    """
    refs: dict[str, str] = {}
    for ci, c in enumerate(containers):
        env_list = c.get("env") if isinstance(c, Mapping) else None
        for ei, env in enumerate(env_list if isinstance(env_list, list) else []):
            secret = _get(env, "valueFrom", "secretKeyRef", "name")
            if secret and isinstance(env, Mapping) and env.get("name"):
                refs[f"/spec/template/spec/containers/{ci}/env/{ei}"] = f"{env['name']}={secret}"
    return refs


def _containers(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = _get(obj, *CONTAINERS)
    return [c for c in items if isinstance(c, Mapping)] if isinstance(items, list) else []


def _get(obj: Any, *path: Any) -> Any:
    for part in path:
        if type(obj) is dict:  # parsed JSON: dicts, and None where a field is unset, cheaply
            obj = obj.get(part)
        elif obj is None:
            return None
        elif isinstance(obj, Mapping):
            obj = obj.get(part)
        elif isinstance(obj, list) and isinstance(part, int) and 0 <= part < len(obj):
            obj = obj[part]
        else:
            return None
    return obj


def _mapping(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): text_of(v) for k, v in sorted(_mapping(value).items(), key=_by_key)}


def _by_key(item: tuple[Any, Any]) -> str:
    return str(item[0])
