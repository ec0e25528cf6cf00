"""kustomize ``replacements``: copy one field of one object into fields of others.

A replacement names a ``source`` (a selector, and ``fieldPath``, ``metadata.name`` when left
out) and ``targets`` (each a ``select`` selector, ``reject`` selectors, ``fieldPaths`` and
``options``). kustomize runs them after its other transformers, in order. What this module
reads, as kustomize does:

* a field path is dotted (``spec.targetNamespace``); ``[key=value]`` picks the list item
  whose ``key`` is ``value``, ``[some.key]`` is a key that holds dots, and a number indexes a
  list;
* ``options.delimiter`` with ``options.index`` takes (source) or replaces (target) one part
  of a text split at the delimiter;
* a target field that does not exist is written only with ``options.create: true``.

A source that selects no object or more than one, and a missing target field without
``create``, fail kustomize's build; the reader then leaves the objects as they are. The
value written keeps the ``file:line`` of the source field, so a fact read from it points at
where it was written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from upgradeplan.readers.gitops.docs import Doc, PathKey
from upgradeplan.readers.gitops.patch import matches
from upgradeplan.readers.gitops.transform import clone, drop_provenance

_SEGMENT = re.compile(r"\[[^\]]*\]|[^.\[\]]+")


def field_path(text: str) -> list[str]:
    """The segments of a kustomize field path (``a.b[x=y].c`` or ``a.b.[x=y].c``)."""
    return _SEGMENT.findall(text)


def apply(objs: list[Doc], replacement: Mapping[Any, Any]) -> list[Doc]:
    """``objs`` after one replacement (unchanged when its source is not exactly one object)."""
    source = replacement.get("source")
    if not isinstance(source, dict):
        return objs
    picked = [o for o in objs if _selected(o, source)]
    if len(picked) != 1:
        return objs
    src = picked[0]
    where = _resolve(src.data, field_path(str(source.get("fieldPath") or "metadata.name")))
    if where is None:
        return objs
    src_path, value = where
    options = source["options"] if isinstance(source.get("options"), dict) else {}
    if options and isinstance(value, str) and options.get("delimiter"):
        parts = value.split(str(options["delimiter"]))
        index = options.get("index", 0)
        if not isinstance(index, int) or not 0 <= index < len(parts):
            return objs
        value = parts[index]
    file, line = src.loc(*src_path)
    out = list(objs)
    for target in replacement.get("targets") or []:
        if not isinstance(target, dict) or not isinstance(target.get("select"), dict):
            continue
        rejects = [r for r in target.get("reject") or [] if isinstance(r, dict)]
        t_opts = target["options"] if isinstance(target.get("options"), dict) else {}
        for i, obj in enumerate(out):
            if not _selected(obj, target["select"]) or any(_selected(obj, r) for r in rejects):
                continue
            for fp in target.get("fieldPaths") or []:
                if isinstance(fp, str):
                    out[i] = _write(out[i], field_path(fp), value, t_opts, file, line)
    return out


def _selected(obj: Doc, selector: Mapping[Any, Any]) -> bool:
    """Whether ``obj`` is what a replacement selector names (plain names, not patterns)."""
    plain = {
        k: re.escape(v) if k in ("kind", "name", "namespace") and isinstance(v, str) else v
        for k, v in selector.items()
    }
    return matches(obj, plain)


def _resolve(data: Any, segments: list[str]) -> tuple[PathKey, Any] | None:
    """The path (keys and indexes) and value at ``segments`` of ``data``, or None."""
    node, path = data, []
    for seg in segments:
        step = _step(node, seg)
        if step is None:
            return None
        path.append(step)
        node = node[step]
    return tuple(path), node


def _step(node: Any, seg: str) -> str | int | None:
    """The key or index ``seg`` names in ``node`` (None when it is not there)."""
    if seg.startswith("[") and seg.endswith("]"):
        inner = seg[1:-1]
        if "=" in inner and isinstance(node, list):
            key, want = inner.split("=", 1)
            for i, item in enumerate(node):
                if isinstance(item, dict) and str(item.get(key)) == want:
                    return i
            return None
        seg = inner
    if isinstance(node, dict):
        return seg if seg in node else None
    if isinstance(node, list) and seg.isdigit() and int(seg) < len(node):
        return int(seg)
    return None


def _write(
    obj: Doc, segments: list[str], value: Any, options: Mapping[Any, Any], file: str, line: int
) -> Doc:
    """``obj`` with ``value`` at ``segments`` (a copy; ``obj`` itself when nothing changes)."""
    out = clone(obj)
    node: Any = out.data
    path: list[str | int] = []
    for n, seg in enumerate(segments):
        last = n == len(segments) - 1
        step = _step(node, seg)
        if step is None:
            key = seg[1:-1] if seg.startswith("[") and "=" not in seg else seg
            if not options.get("create") or not isinstance(node, dict) or "=" in key:
                return obj
            node[key] = None if last else {}
            step = key
        path.append(step)
        if last:
            new = value
            old = node[step]
            if options.get("delimiter") and isinstance(old, str) and isinstance(value, str):
                parts = old.split(str(options["delimiter"]))
                index = options.get("index", 0)
                if isinstance(index, int) and 0 <= index < len(parts):
                    parts[index] = value
                    new = str(options["delimiter"]).join(parts)
            node[step] = new
            key_path = tuple(path)
            drop_provenance(out, key_path)
            out.lines[key_path], out.files[key_path] = line, file
            out.raw.pop(key_path, None)
        else:
            node = node[step]
    return out
