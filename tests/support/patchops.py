"""Apply patches to plain object dicts: JSON 6902 and (strategic) merge patches.

These are the same operations ``kubectl``/kustomize perform, in pure Python, so tests and
``patch`` can check what a generated patch does to an object without a cluster. Inputs are
never mutated; every function returns a new object.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from upgradeplan.errors import BadInput


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _split_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise BadInput(f"JSON pointer {pointer!r} must start with '/'")
    return [_unescape(t) for t in pointer[1:].split("/")]


def _index(container: list[Any], token: str, *, for_add: bool) -> int:
    if token == "-" and for_add:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
        raise BadInput(f"JSON pointer token {token!r} is not an array index")
    idx = int(token)
    limit = len(container) if for_add else len(container) - 1
    if idx > limit:
        raise BadInput(f"JSON pointer index {idx} is out of range (length {len(container)})")
    return idx


def _parent(doc: Any, tokens: list[str], pointer: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict):
            if token not in node:
                raise BadInput(f"JSON pointer {pointer!r}: {token!r} does not exist")
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, for_add=False)]
        else:
            raise BadInput(f"JSON pointer {pointer!r}: cannot descend into a scalar")
    return node


def _member(doc: Any, tokens: list[str], pointer: str, verb: str) -> tuple[Any, str | int]:
    """The container of the existing member ``pointer`` names, and its key or index."""
    parent = _parent(doc, tokens, pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise BadInput(f"JSON pointer {pointer!r} does not exist")
        return parent, last
    if isinstance(parent, list):
        return parent, _index(parent, last, for_add=False)
    raise BadInput(f"JSON pointer {pointer!r}: cannot {verb} a scalar")


def _get(doc: Any, pointer: str) -> Any:
    tokens = _split_pointer(pointer)
    if not tokens:
        return doc
    parent, key = _member(doc, tokens, pointer, "descend into")
    return parent[key]


def _add(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _split_pointer(pointer)
    if not tokens:
        return value
    parent = _parent(doc, tokens, pointer)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, for_add=True), value)
    else:
        raise BadInput(f"JSON pointer {pointer!r}: cannot add into a scalar")
    return doc


def _remove(doc: Any, pointer: str) -> Any:
    tokens = _split_pointer(pointer)
    if not tokens:
        raise BadInput("JSON 6902: cannot remove the whole document")
    parent, key = _member(doc, tokens, pointer, "remove from")
    del parent[key]
    return doc


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _split_pointer(pointer)
    if not tokens:
        return value
    parent, key = _member(doc, tokens, pointer, "descend into")  # must exist
    parent[key] = value
    return doc


def apply_json6902(obj: Mapping[str, Any], ops: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Apply RFC 6902 operations (add, remove, replace, move, copy, test) to a copy of ``obj``.

    Raises :class:`BadInput` naming the operation when a path does not exist or a ``test``
    fails, as ``kubectl patch --type json`` would refuse it.
    """
    doc: Any = copy.deepcopy(dict(obj))
    for n, op in enumerate(ops, 1):
        name = op.get("op")
        path = op.get("path")
        if not isinstance(path, str):
            raise BadInput(f"JSON 6902 operation {n}: 'path' is missing")
        if name == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif name == "remove":
            doc = _remove(doc, path)
        elif name == "replace":
            doc = _replace(doc, path, copy.deepcopy(op.get("value")))
        elif name in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise BadInput(f"JSON 6902 operation {n}: 'from' is missing")
            value = copy.deepcopy(_get(doc, source))
            if name == "move":
                doc = _remove(doc, source)
            doc = _add(doc, path, value)
        elif name == "test":
            if _get(doc, path) != op.get("value"):
                raise BadInput(f"JSON 6902 operation {n}: test of {path!r} failed")
        else:
            raise BadInput(f"JSON 6902 operation {n}: unknown op {name!r}")
    if not isinstance(doc, dict):
        raise BadInput("JSON 6902: the patched document is no longer an object")
    return doc


def _named_list(items: Any) -> bool:
    return isinstance(items, list) and all(isinstance(i, dict) and "name" in i for i in items)


def _merge(base: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            out[key] = _merge(out.get(key), value)
        elif _named_list(value) and _named_list(out.get(key)):
            out[key] = _merge_named(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _merge_named(base: list[dict[str, Any]], patch: list[dict[str, Any]]) -> list[Any]:
    out = [copy.deepcopy(i) for i in base]
    for item in patch:
        for pos, existing in enumerate(out):
            if existing.get("name") == item["name"]:
                out[pos] = _merge(existing, item)
                break
        else:
            out.append(copy.deepcopy(item))
    return out


def apply_merge_patch(obj: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``patch`` into a copy of ``obj`` the way a kustomize strategic-merge patch does.

    Maps merge recursively, ``null`` deletes a key, lists of named items (containers, env,
    volumes) merge by ``name``, and any other list or scalar replaces the old value.
    """
    merged = _merge(dict(obj), dict(patch))
    assert isinstance(merged, dict)
    return merged


def same_object(obj: Mapping[str, Any], target: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is the object a patch ``target`` (kind/name/namespace) selects."""
    meta = obj.get("metadata") or {}
    for key, have in (
        ("kind", obj.get("kind")),
        ("name", meta.get("name")),
        ("namespace", meta.get("namespace")),
    ):
        want = target.get(key)
        if want and have and want != have:
            return False
        if want and not have and key != "namespace":
            return False
    return True
