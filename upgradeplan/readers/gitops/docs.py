"""A GitOps document as the reader keeps it: the data, and where every value was written.

A :class:`Doc` holds, per path of keys and indexes, the line of the value, the line of its
key, the scalar as written (``4.10`` stays ``"4.10"``) and its style; a :class:`View` reads
one object of it. :mod:`upgradeplan.readers.gitops.yamldocs` makes them from YAML text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from msgspec import Struct, field

from upgradeplan.provenance import Source, in_file
from upgradeplan.yamlload import PathKey as PathKey


class Doc(Struct):
    """One YAML document: the data, and per path (tuple of keys/indexes) its value's line."""

    data: Any
    file: str
    index: int  # 0-based document index in the file
    lines: dict[PathKey, int] = field(default_factory=dict)
    key_lines: dict[PathKey, int] = field(default_factory=dict)  # line of a mapping key
    raw: dict[PathKey, str] = field(default_factory=dict)  # scalar text as written
    styles: dict[PathKey, str] = field(default_factory=dict)  # scalar style ("|", ">", '"'…)
    # after kustomize patches: the file of a value written by another file than ``file``
    files: dict[PathKey, str] = field(default_factory=dict)
    # text values read from a file of their own (a configMapGenerator's files): file, offset
    embeds: dict[PathKey, tuple[str, int]] = field(default_factory=dict)

    def loc(self, *path: Any) -> tuple[str, int]:
        """``(file, line)`` of the value at ``path``, or of its deepest recorded ancestor."""
        key: PathKey = tuple(path)
        while key:
            if key in self.lines:
                return self.files.get(key, self.file), self.lines[key]
            key = key[:-1]
        return self.files.get((), self.file), self.lines.get((), 1)

    def line(self, *path: Any) -> int:
        """The line of the value at ``path``, or of its deepest existing ancestor (≥ 1)."""
        key: PathKey = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), 1)

    def get(self, *path: Any) -> Any:
        node = self.data
        for step in path:
            if isinstance(node, dict):
                if step not in node:
                    return None
                node = node[step]
            elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
                node = node[step]
            else:
                return None
        return node

    def text(self, *path: Any) -> str | None:
        """The scalar at ``path`` as written in the file (``4.10`` stays ``"4.10"``)."""
        value = self.get(*path)
        if value is None or isinstance(value, dict | list):
            return None
        raw = self.raw.get(tuple(path))
        return raw if raw is not None else str(value)


class View(Struct, frozen=True):
    """A mapping inside a document (the document itself, a List item, ``spec.values``…)."""

    doc: Doc
    prefix: PathKey = ()

    def get(self, *path: Any) -> Any:
        return self.doc.get(*self.prefix, *path)

    def line(self, *path: Any) -> int:
        return self.doc.line(*self.prefix, *path)

    def text(self, *path: Any) -> str | None:
        return self.doc.text(*self.prefix, *path)

    def where(self, *path: Any) -> Source:
        """The file line of the value at ``path``."""
        file, line = self.doc.loc(*self.prefix, *path)
        return in_file(file, line)

    def key_where(self, *path: Any) -> Source:
        """The file line of the key of ``path`` (where a mapping entry starts)."""
        full = (*self.prefix, *path)
        file, line = self.doc.loc(*full)
        if full in self.doc.key_lines:
            line = self.doc.key_lines[full]
        return in_file(file, line)

    def sub(self, *path: Any) -> View:
        return View(self.doc, (*self.prefix, *path))

    def mapping(self, *path: Any) -> dict[Any, Any]:
        value = self.get(*path)
        return value if isinstance(value, dict) else {}

    def sequence(self, *path: Any) -> list[Any]:
        value = self.get(*path)
        return value if isinstance(value, list) else []


def iter_objects(doc: Doc) -> Iterator[View]:
    """The mappings a document holds: itself, or the items of a ``kind: List``."""
    data = doc.data
    if not isinstance(data, dict):
        return
    items = data.get("items")
    if data.get("kind") == "List" and isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict):
                yield View(doc, ("items", i))
        return
    yield View(doc)
