"""A HelmRelease's values as helm-controller merges them, every value at its ``file:line``.

``spec.valuesFrom`` entries are merged in the order given (a later one overwrites an earlier
one), then ``spec.values`` over them. An entry reads the key ``valuesKey`` (default
``values.yaml``) of a ConfigMap in the release's namespace: without ``targetPath`` that text
is a YAML values document merged at the root; with it, the text is one value set at that
dot-notation path as ``helm --set`` parses it (``true`` a boolean, ``3`` a number, a quoted
value a string). Maps merge key by key; anything else is replaced.

A Secret's data is never read: its values are unknown. So are those of a ConfigMap that is
not in the files the installation applies (unless the entry is ``optional``) and of a key
that does not parse. Each is named, with the ``file:line`` of the entry that asks for it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct, field

from upgradeplan import keypath
from upgradeplan.errors import BadInput
from upgradeplan.readers.gitops.docs import Doc, PathKey, View
from upgradeplan.readers.gitops.facts import NOT_FOUND, SECRET
from upgradeplan.readers.gitops.transform import copy_provenance, drop_provenance
from upgradeplan.readers.gitops.yamldocs import embedded
from upgradeplan.unreadable import PARSE_ERROR

DEFAULT_KEY = "values.yaml"
_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")


class Missing(Struct, frozen=True):
    """A values source that could not be read: what it is, why, where it is asked for."""

    source: str  # "Secret media/plex-values", "ConfigMap media/x key values.yaml"
    cause: str  # facts.SECRET, facts.NOT_FOUND, unreadable.PARSE_ERROR
    why: str
    where: str  # file:line of the valuesFrom entry


class Merged(Struct):
    """The values helm-controller would pass to the chart, and the sources not read."""

    view: View
    missing: list[Missing] = field(default_factory=list)
    absent: list[Missing] = field(default_factory=list)  # ConfigMaps not in the files

    def known(self) -> tuple[dict[str, Any] | None, str]:
        """The values as plain data when every source was read, else None and why not."""
        gaps = [*self.missing, *self.absent]
        if gaps:
            return None, "; ".join(f"{m.where}: {m.source}: {m.why}" for m in gaps)
        data = self.view.get()
        return (data if isinstance(data, dict) else {}), ""


ConfigMaps = Mapping[tuple[str | None, str], View]  # (namespace, name) -> the ConfigMap


def merged_values(release: View, namespace: str | None, configmaps: ConfigMaps) -> Merged:
    """The release's values: ``valuesFrom`` in order, then ``spec.values`` (see module doc)."""
    refs = release.sequence("spec", "valuesFrom")
    if not refs:
        return Merged(release.sub("spec", "values"))
    out = Doc(data={}, file=release.doc.file, index=release.doc.index)
    out.lines[()] = release.line("spec", "valuesFrom")
    merged = Merged(View(out))
    for i, ref in enumerate(refs):
        if isinstance(ref, dict):
            _merge_ref(out, merged, release.sub("spec", "valuesFrom", i), namespace, configmaps)
    own = release.get("spec", "values")
    if isinstance(own, dict):
        _merge(out, out.data, (), release.doc, own, (*release.prefix, "spec", "values"))
    return merged


def _merge_ref(
    out: Doc, merged: Merged, ref: View, namespace: str | None, configmaps: ConfigMaps
) -> None:
    kind, name = ref.text("kind") or "", ref.text("name") or ""
    key = ref.text("valuesKey") or DEFAULT_KEY
    target = ref.text("targetPath")
    where = str(ref.where("name"))
    shown = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
    if kind != "ConfigMap":
        why = "a Secret's data is never read" if kind == "Secret" else f"{kind!r} is not a kind"
        cause = SECRET if kind == "Secret" else NOT_FOUND
        merged.missing.append(
            Missing(shown, cause, f"{why}; the values it sets are unknown", where)
        )
        return
    cm = configmaps.get((namespace, name)) or configmaps.get((None, name))
    text = cm.get("data", key) if cm is not None else None
    if not isinstance(text, str):
        if ref.get("optional") is True:
            return  # helm-controller skips an optional source that is not there
        what = "not in the files this installation applies" if cm is None else f"has no {key}"
        merged.absent.append(Missing(f"{shown} key {key}", NOT_FOUND, what, where))
        return
    assert cm is not None
    if target:
        _set_path(out, target, text, cm, key)
        return
    try:
        docs = embedded(cm, "data", key)
    except BadInput as exc:
        full = (*cm.prefix, "data", key)
        origin = cm.doc.embeds[full][0] if full in cm.doc.embeds else f"{shown} key {key}"
        detail = exc.message.removeprefix(f"{exc.location}: ") if exc.location else exc.message
        merged.missing.append(Missing(origin, PARSE_ERROR, detail, exc.location or where))
        return
    for doc in docs[:1]:
        if isinstance(doc.data, dict):
            _merge(out, out.data, (), doc, doc.data, ())


def _merge(
    out: Doc, dst: dict[Any, Any], dpath: PathKey, src: Doc, value: Any, spath: PathKey
) -> None:
    """Maps merged key by key (helm-controller's MergeMaps); other values replace."""
    for key, item in value.items():
        here, there = (*dpath, key), (*spath, key)
        current = dst.get(key)
        if isinstance(item, dict) and isinstance(current, dict):
            _merge(out, current, here, src, item, there)
            continue
        dst[key] = copy.deepcopy(item)
        drop_provenance(out, here)
        copy_provenance(src, there, out, here)


def _set_path(out: Doc, target: str, text: str, cm: View, key: str) -> None:
    """``targetPath``: one value at a dot-notation path, as ``helm --set`` types it."""
    parts = keypath.split(target)
    node = out.data
    for depth, part in enumerate(parts[:-1]):
        nxt = node.get(part)
        if not isinstance(nxt, dict):
            nxt = node[part] = {}
            drop_provenance(out, tuple(parts[: depth + 1]))
        node = nxt
    path = tuple(parts)
    node[parts[-1]] = _typed(text)
    drop_provenance(out, path)
    file, line = cm.doc.loc(*cm.prefix, "data", key)
    for depth in range(1, len(parts) + 1):
        out.lines.setdefault(path[:depth], line)
        out.files.setdefault(path[:depth], file)
    out.lines[path], out.files[path] = line, file
    out.raw[path] = text.strip().strip("'\"")


def _typed(text: str) -> Any:
    value = text.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]  # quoted: a string (helm-controller's ParseIntoString)
    if value in ("true", "false"):
        return value == "true"
    if value == "null":
        return None
    if _INT.match(value):
        return int(value)
    return value
