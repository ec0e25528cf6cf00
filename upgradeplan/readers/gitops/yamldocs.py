"""The GitOps reader's YAML documents: every value remembers its ``file:line``.

:mod:`upgradeplan.yamlload` reads the text (bounded; a key written twice is refused); a
:class:`Doc` holds, per path of keys and indexes, the line of the value, the line of its key,
the scalar as written (``4.10`` stays ``"4.10"``) and its style; a :class:`View` reads one
object of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from upgradeplan.errors import BadInput, UpgradeplanError
from upgradeplan.provenance import Source, in_file
from upgradeplan.yamlload import PathKey as PathKey
from upgradeplan.yamlload import YamlError, load_paths


@dataclass
class Doc:
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


def documents(content: bytes, display: str) -> list[Doc]:
    """Parse every document of a YAML file; errors become :class:`BadInput` at ``file:line``."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"not UTF-8 text (byte {exc.start})",
            location=display,
            hint="save the file as UTF-8 or remove it from the --gitops PATH",
        ) from None
    return parse(text, display)


class Refused(UpgradeplanError):
    """A file no reader should read on: a key written twice (kustomize refuses it), or past
    a limit of :mod:`upgradeplan.yamlload`. Not a :class:`BadInput`, which the reader keeps
    as an unreadable file: this one stops the read with exit 2."""


def parse(text: str, display: str, offset: int = 0) -> list[Doc]:
    """Parse YAML text whose first line is line ``offset + 1`` of ``display``
    (:func:`upgradeplan.yamlload.load_paths`: bounded, a key written twice refused)."""
    try:
        located = load_paths(text, offset)
    except YamlError as exc:
        line = exc.line + offset if exc.line else 0
        if exc.refused:  # kustomize refuses it too: the whole read stops (exit 2)
            raise Refused(
                f"{display}:{line}: {exc.message}" if line else f"{display}: {exc.message}",
                hint=exc.hint,
            ) from None
        raise BadInput(
            exc.message,
            location=f"{display}:{line}" if line else display,
            hint="fix the YAML (or remove the file from the --gitops PATH)",
        ) from None
    return [
        Doc(data, display, i, lines, key_lines, raw, styles)
        for i, (data, lines, key_lines, raw, styles) in enumerate(located)
    ]


@dataclass(frozen=True)
class View:
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

    def embedded(self, *path: Any) -> list[Doc]:
        """The YAML documents held in the string at ``path`` (a ConfigMap's ``values.yaml``).

        Lines stay true to the file for a literal block (``|``); otherwise every value is
        placed on the key's line.
        """
        text = self.get(*path)
        if not isinstance(text, str):
            return []
        full = (*self.prefix, *path)
        if full in self.doc.embeds:
            file, offset = self.doc.embeds[full]
            return parse(text, file, offset=offset)
        file, key_line = self.doc.loc(*full)
        key_line = self.doc.key_lines.get(full) or key_line
        if self.doc.styles.get(full) == "|":
            return parse(text, file, offset=key_line)
        docs = parse(text, file)
        for d in docs:
            d.lines = dict.fromkeys(d.lines, key_line)
            d.key_lines = dict.fromkeys(d.key_lines, key_line)
        return docs

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
