"""kustomize's transformers and the copies they make, keeping every value's ``file:line``.

An object is a :class:`~upgradeplan.readers.gitops.docs.Doc`: its data and, per path, the
line (and file, once a patch or transformer wrote it) of each value. Objects are shared between
builds; a transformer copies what it changes (:func:`clone`, or :func:`shallow` when it
replaces whole values). ``namespace:`` / ``targetNamespace`` (:func:`set_namespace`),
``namePrefix`` / ``nameSuffix`` (:func:`rename`), ``images:`` (:func:`set_image`) and a
generator's ``behavior: merge|replace`` (:func:`merge_generated`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from upgradeplan.readers.gitops.docs import Doc, PathKey

# Kinds kustomize's namespace transformer leaves alone (cluster-scoped).
CLUSTER_SCOPED = frozenset(
    {
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "StorageClass",
        "PersistentVolume",
        "PriorityClass",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "APIService",
        "ClusterIssuer",
        "IngressClass",
        "RuntimeClass",
        "CSIDriver",
        "VolumeSnapshotClass",
        "GatewayClass",
        "ClusterPolicy",
        "ClusterSecretStore",
    }
)

# Lists merged by name in a strategic merge patch of a built-in kind.


def mapping_of(value: Any) -> dict[Any, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def clone(doc: Doc) -> Doc:
    return Doc(
        data=copy.deepcopy(doc.data),
        file=doc.file,
        index=doc.index,
        lines=dict(doc.lines),
        key_lines=dict(doc.key_lines),
        raw=dict(doc.raw),
        styles=dict(doc.styles),
        files=dict(doc.files),
        embeds=dict(doc.embeds),
    )


def shallow(doc: Doc) -> Doc:
    """A copy whose records can change; the data is shared (replace what you change)."""
    return Doc(
        data=doc.data,
        file=doc.file,
        index=doc.index,
        lines=dict(doc.lines),
        key_lines=doc.key_lines,
        raw=dict(doc.raw),
        styles=doc.styles,
        files=dict(doc.files),
        embeds=doc.embeds,
    )


def sub_doc(doc: Doc, prefix: PathKey) -> Doc:
    """The item at ``prefix`` of a document as a document of its own."""
    n = len(prefix)

    def cut(d: Mapping[PathKey, Any]) -> dict[PathKey, Any]:
        return {p[n:]: v for p, v in d.items() if p[:n] == prefix}

    return Doc(
        data=doc.get(*prefix),
        file=doc.file,
        index=doc.index,
        lines=cut(doc.lines),
        key_lines=cut(doc.key_lines),
        raw=cut(doc.raw),
        styles=cut(doc.styles),
        files=cut(doc.files),
        embeds=cut(doc.embeds),
    )


def identity(doc: Doc) -> tuple[str, str, str | None, str]:
    """(apiVersion group, kind, namespace, name) of an object."""
    data = doc.data if isinstance(doc.data, dict) else {}
    api = str(data.get("apiVersion") or "")
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    meta = mapping_of(data.get("metadata"))
    ns = meta.get("namespace")
    return (
        group,
        str(data.get("kind") or ""),
        ns if isinstance(ns, str) else None,
        str(meta.get("name") or ""),
    )


def copy_provenance(src: Doc, old: PathKey, dst: Doc, new: PathKey) -> None:
    """The lines (and raw text) of ``src`` under ``old`` become those of ``dst`` under ``new``."""
    n = len(old)
    file_of = src.files
    tables: tuple[tuple[dict[PathKey, Any], dict[PathKey, Any]], ...] = (
        (src.lines, dst.lines),
        (src.key_lines, dst.key_lines),
        (src.raw, dst.raw),
        (src.styles, dst.styles),
        (src.embeds, dst.embeds),
    )
    for table, out in tables:
        for path, value in table.items():
            if path[:n] == old:
                out[(*new, *path[n:])] = value
    for path in src.lines:
        if path[:n] == old:
            dst.files[(*new, *path[n:])] = file_of.get(path, src.file)


def drop_provenance(doc: Doc, path: PathKey) -> None:
    n = len(path)
    for table in (doc.lines, doc.key_lines, doc.raw, doc.styles, doc.files, doc.embeds):
        for key in [p for p in table if p[:n] == path and len(p) > n]:
            del table[key]


def set_namespace(obj: Doc, ns: str, file: str, line: int) -> Doc:
    """``obj`` in namespace ``ns`` (kustomize ``namespace:``, Flux ``targetNamespace``).

    A ``Namespace`` object is named ``ns`` instead, as kustomize's namespace transformer
    does (a component's placeholder ``Namespace`` named ``_`` becomes the app's namespace).
    """
    group, kind, _, _ = identity(obj)
    if not isinstance(obj.data, dict) or not isinstance(obj.data.get("metadata"), dict):
        return obj
    meta = obj.data["metadata"]
    if kind == "Namespace" and group == "":
        return obj if meta.get("name") == ns else _with_meta(obj, "name", ns, file, line)
    if kind in CLUSTER_SCOPED:
        return obj
    if meta.get("namespace") == ns and obj.files.get(("metadata", "namespace")) == file:
        return obj
    return _with_meta(obj, "namespace", ns, file, line)


def _with_meta(obj: Doc, field: str, value: str, file: str, line: int) -> Doc:
    """A shallow copy of ``obj`` whose ``metadata.<field>`` is ``value``, written at
    ``file:line`` (the transformer's own line), with that raw text."""
    out = shallow(obj)
    out.data = {**obj.data, "metadata": {**obj.data["metadata"], field: value}}
    path = ("metadata", field)
    out.lines[path], out.files[path], out.raw[path] = line, file, value
    return out


def rename(obj: Doc, prefix: str, suffix: str) -> Doc:
    _, kind, _, name = identity(obj)
    if not name or kind in ("Namespace", "CustomResourceDefinition"):
        return obj
    out = clone(obj)
    out.data["metadata"]["name"] = f"{prefix}{name}{suffix}"
    out.raw.pop(("metadata", "name"), None)
    return out


def set_image(obj: Doc, image: Mapping[Any, Any], file: str, line: int) -> Doc:
    """kustomize ``images:``: a container image named ``name`` gets newName/newTag/digest."""
    spec = obj.get("spec", "template", "spec")
    if not isinstance(spec, dict):
        return obj
    out: Doc | None = None
    for key in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(key) or []):
            ref = c.get("image") if isinstance(c, dict) else None
            if not isinstance(ref, str):
                continue
            repo = re.split(r"[@]", ref)[0]
            tail = repo.rsplit("/", 1)[-1]
            tag = ""
            if ":" in tail:
                repo, tag = repo.rsplit(":", 1)
            if repo != image["name"]:
                continue
            new = str(image.get("newName") or repo)
            if image.get("digest"):
                new += f"@{image['digest']}"
            elif image.get("newTag") is not None:
                new += f":{image['newTag']}"
            elif tag:
                new += f":{tag}"
            out = out or clone(obj)
            path = ("spec", "template", "spec", key, i, "image")
            out.data["spec"]["template"]["spec"][key][i]["image"] = new
            out.lines[path], out.files[path] = line, file
            out.raw.pop(path, None)
    return out or obj


def merge_generated(objs: list[Doc], doc: Doc, merge: bool) -> list[Doc]:
    """A generator with ``behavior: merge|replace`` changes the ConfigMap a base generated."""
    _, kind, ns, name = identity(doc)
    out: list[Doc] = []
    for o in objs:
        _, okind, ons, oname = identity(o)
        if okind == kind and oname == name and (ns is None or ns == ons):
            if merge:
                new = clone(o)
                data = new.data.setdefault("data", {})
                for key, value in (doc.data.get("data") or {}).items():
                    data[key] = value
                    copy_provenance(doc, ("data", key), new, ("data", key))
                    new.files.setdefault(("data", key), doc.file)
                out.append(new)
            else:
                out.append(doc)
            continue
        out.append(o)
    return out
