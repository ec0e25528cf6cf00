"""kustomize patches: which objects a ``target`` selects, strategic merge and JSON 6902.

A patched value keeps the ``file:line`` of the patch that wrote it (the overlay patch's line);
values the patch leaves alone keep theirs.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from upgradeplan.readers.gitops.docs import Doc, PathKey
from upgradeplan.readers.gitops.transform import (
    clone,
    copy_provenance,
    drop_provenance,
    identity,
    mapping_of,
)

# Lists merged by name in a strategic merge patch of a built-in kind.
_MERGE_BY_NAME = frozenset(
    {"containers", "initContainers", "env", "volumes", "volumeMounts", "ports", "imagePullSecrets"}
)


def self_target(patch: Doc) -> dict[str, Any]:
    """A strategic-merge patch without a target selects by its own kind, name (namespace)."""
    _, kind, ns, name = identity(patch)
    out: dict[str, Any] = {"kind": kind, "name": re.escape(name)}
    if ns:
        out["namespace"] = re.escape(ns)
    return out


def _full_match(pattern: Any, value: str | None) -> bool:
    if not isinstance(pattern, str) or not pattern:
        return True
    try:
        return re.fullmatch(pattern, value or "") is not None
    except re.error:
        return pattern == value


_SET_TERM = re.compile(r"(!?)\s*([^\s!=<>(),]+)\s*(?:(==|=|!=|<|>|\bnotin\b|\bin\b)\s*(.*))?$")


def _terms(selector: str) -> list[str] | None:
    """The requirements of a selector, split at commas outside parentheses."""
    terms, depth, cur = [], 0, ""
    for c in selector:
        depth += c == "("
        depth -= c == ")"
        if depth < 0 or depth > 1:
            return None
        if c == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += c
    return [*terms, cur] if depth == 0 else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


def _labels_match(selector: Any, labels: Mapping[Any, Any]) -> bool:
    """Whether ``labels`` satisfy a Kubernetes label selector: ``key``, ``!key``, ``key=v``,
    ``key==v``, ``key!=v``, ``key in (a,b)``, ``key notin (a,b)``, ``key>n``, ``key<n``,
    comma-separated (all must hold). A selector that does not parse matches nothing."""
    if not isinstance(selector, str) or not selector.strip():
        return True
    terms = _terms(selector)
    if terms is None:
        return False
    for term in terms:
        m = _SET_TERM.match(term.strip())
        if m is None:
            return False
        bang, key, op, rest = m.group(1), m.group(2), m.group(3), (m.group(4) or "").strip()
        have = _text(labels.get(key)) if key in labels else None
        if op is None:
            if bool(bang) == (key in labels):
                return False
            continue
        if bang:
            return False
        if op in ("in", "notin"):
            if not (rest.startswith("(") and rest.endswith(")")):
                return False
            values = {v.strip() for v in rest[1:-1].split(",")}
            if (op == "in") != (have is not None and have in values):
                return False
        elif op in ("=", "=="):
            if have != rest:
                return False
        elif op == "!=":
            if have == rest:
                return False
        else:
            if not re.fullmatch(r"-?[0-9]+", rest) or have is None:
                return False
            if not re.fullmatch(r"-?[0-9]+", have):
                return False
            if (int(have) > int(rest)) != (op == ">") or int(have) == int(rest):
                return False
    return True


def matches(doc: Doc, target: Mapping[Any, Any]) -> bool:
    """Whether a patch ``target`` (kind, name, namespace regexes; group; version; labels)."""
    group, kind, ns, name = identity(doc)
    data = doc.data if isinstance(doc.data, dict) else {}
    api = str(data.get("apiVersion") or "")
    if target.get("group") and target["group"] != group:
        return False
    if target.get("version") and target["version"] != api.rsplit("/", 1)[-1]:
        return False
    if not _full_match(target.get("kind"), kind):
        return False
    if not _full_match(target.get("name"), name):
        return False
    if target.get("namespace") and not _full_match(target.get("namespace"), ns or "default"):
        return False
    meta = mapping_of(data.get("metadata"))
    labels = mapping_of(meta.get("labels"))
    annotations = mapping_of(meta.get("annotations"))
    return _labels_match(target.get("labelSelector"), labels) and _labels_match(
        target.get("annotationSelector"), annotations
    )


def strategic_merge(obj: Doc, patch: Doc) -> Doc:
    """``obj`` with a strategic-merge patch applied (maps merged; lists of built-in kinds'
    named items merged by name; other lists replaced; ``null`` deletes)."""
    out = clone(obj)
    builtin = "." not in identity(obj)[0]
    _merge(out, out.data, (), patch, patch.data, (), builtin)
    return out


def _merge(
    out: Doc,
    dst: dict[Any, Any],
    dpath: PathKey,
    patch: Doc,
    src: Any,
    spath: PathKey,
    builtin: bool,
) -> None:
    for key, value in src.items():
        if key in ("$patch", "$setElementOrder") or (not dpath and key in ("apiVersion", "kind")):
            continue
        if not dpath and key == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in ("name", "namespace")}
        here, there = (*dpath, key), (*spath, key)
        if value is None:
            dst.pop(key, None)
            continue
        current = dst.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            if value.get("$patch") == "replace":
                dst[key] = copy.deepcopy({k: v for k, v in value.items() if k != "$patch"})
                drop_provenance(out, here)
                copy_provenance(patch, there, out, here)
                continue
            if there in patch.lines:  # the mapping as a whole was last written by the patch
                out.lines[here] = patch.lines[there]
                out.files[here] = patch.files.get(there, patch.file)
            _merge(out, current, here, patch, value, there, builtin)
            continue
        if (
            isinstance(value, list)
            and isinstance(current, list)
            and builtin
            and key in _MERGE_BY_NAME
            and all(isinstance(i, dict) and "name" in i for i in value + current)
        ):
            index = {item["name"]: n for n, item in enumerate(current)}
            for j, item in enumerate(value):
                if item["name"] in index:
                    n = index[item["name"]]
                    _merge(out, current[n], (*here, n), patch, item, (*there, j), builtin)
                else:
                    current.append(copy.deepcopy(item))
                    copy_provenance(patch, (*there, j), out, (*here, len(current) - 1))
            continue
        dst[key] = copy.deepcopy(value)
        drop_provenance(out, here)
        copy_provenance(patch, there, out, here)


def _steps(pointer: str) -> list[Any]:
    return [
        int(p) if p.isdigit() else p.replace("~1", "/").replace("~0", "~")
        for p in pointer[1:].split("/")
    ]


def json6902(obj: Doc, ops: Doc) -> Doc:
    """``obj`` with a JSON 6902 patch applied; ``add``/``replace`` values keep their lines."""
    out = clone(obj)
    for i, op in enumerate(ops.data):
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            continue
        path = op["path"]
        if not path.startswith("/"):
            continue
        steps = _steps(path)
        kind = op.get("op")
        if kind in ("add", "replace") and "value" in op:
            placed = _put(out.data, steps, copy.deepcopy(op["value"]), kind == "add")
            if placed is not None:
                drop_provenance(out, placed)
                copy_provenance(ops, (i, "value"), out, placed)
        elif kind == "remove":
            _remove(out.data, steps)
    return out


def _put(data: Any, steps: list[Any], value: Any, insert: bool) -> PathKey | None:
    node = data
    for step in steps[:-1]:
        if (isinstance(node, dict) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        ):
            node = node[step]
        else:
            return None
    last = steps[-1]
    prefix = tuple(steps[:-1])
    if isinstance(node, dict):
        node[last] = value
        return (*prefix, last)
    if isinstance(node, list):
        if last == "-":
            node.append(value)
            return (*prefix, len(node) - 1)
        if isinstance(last, int) and 0 <= last <= len(node):
            if insert:
                node.insert(last, value)
            elif last < len(node):
                node[last] = value
            else:
                return None
            return (*prefix, last)
    return None


def _remove(data: Any, steps: list[Any]) -> None:
    node = data
    for step in steps[:-1]:
        if isinstance(node, dict | list):
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                return
    if isinstance(node, dict):
        node.pop(steps[-1], None)
    elif isinstance(node, list) and isinstance(steps[-1], int) and 0 <= steps[-1] < len(node):
        del node[steps[-1]]
