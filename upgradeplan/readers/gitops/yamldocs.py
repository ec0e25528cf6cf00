"""YAML documents that remember the line of every value (for ``file:line`` sources).

PyYAML's C loader composes the node tree; the data is constructed from it with the safe
constructor, and a walk over the nodes records, per path of keys and indexes, the line of the
value, the line of its key, the scalar as written (``4.10`` stays ``"4.10"``) and its style.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# isort: split
import yaml

from upgradeplan.errors import BadInput
from upgradeplan.provenance import Source, in_file
from upgradeplan.readers.yamldata import FastLoader

PathKey = tuple[Any, ...]


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


_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"
_NATIVE = frozenset(
    {
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:timestamp",
        "tag:yaml.org,2002:binary",
    }
)
_BOOLS = yaml.constructor.SafeConstructor.bool_values


class _Builder:
    """Data from a composed node tree in one walk that records every value's line.

    Scalars are resolved as the safe loader resolves them; a tag the safe loader does not
    know (``!env_var`` in an application's config, ``=`` read as ``tag:yaml.org,2002:value``)
    is read as the plain value it tags, so valid YAML is never refused. Merge keys (``<<``)
    merge as YAML 1.1 says; an alias reads its anchor's value (and lines).
    """

    def __init__(self, loader: Any, doc: Doc) -> None:
        self.loader = loader
        self.doc = doc
        self.lines = doc.lines
        self.key_lines = doc.key_lines
        self.raw = doc.raw
        self.styles = doc.styles
        self.active: set[int] = set()

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode):
            value = node.value
            self.raw[path] = value
            if node.style:
                self.styles[path] = node.style
            tag = node.tag
            if tag == _STR:
                return value
            if tag == _NULL:
                return None
            if tag == _BOOL:
                return _BOOLS.get(value.lower(), value)
            if tag in _NATIVE:
                try:
                    return self.loader.construct_object(node, deep=True)
                except yaml.YAMLError:
                    return value
            return value  # an application's own tag: the value as written
        if id(node) in self.active:
            return None  # a recursive alias: nothing Flux could apply
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            if isinstance(node, yaml.SequenceNode):
                return [self.build(child, (*path, i)) for i, child in enumerate(node.value)]
            return None
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: PathKey) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        merged: list[yaml.Node] = []
        lines, key_lines, raw = self.lines, self.key_lines, self.raw
        scalar = yaml.ScalarNode
        for key_node, value_node in node.value:
            if key_node.__class__ is not scalar:
                continue  # a complex key: no manifest field is one
            tag = key_node.tag
            if tag == _STR:
                key: Any = key_node.value
            elif tag == _MERGE:
                if isinstance(value_node, yaml.SequenceNode):
                    merged += value_node.value
                else:
                    merged.append(value_node)
                continue
            else:
                key = _key_of(key_node)
            here = (*path, key)
            key_lines[here] = key_node.start_mark.line + 1
            if value_node.__class__ is scalar and value_node.tag == _STR:
                # the common case inline: a plain string value
                lines[here] = value_node.start_mark.line + 1
                raw[here] = out[key] = value_node.value
                if value_node.style:
                    self.styles[here] = value_node.style
            else:
                out[key] = self.build(value_node, here)
        for source in merged:  # explicit keys win over merged ones, earlier merges over later
            if not isinstance(source, yaml.MappingNode):
                continue
            for k, value in self._mapping(source, path).items():
                out.setdefault(k, value)
        return out


def _key_of(node: yaml.ScalarNode) -> Any:
    if node.tag == "tag:yaml.org,2002:int":  # 0755 (octal), 0x1f, 1_000 as YAML 1.1 reads them
        return yaml.constructor.SafeConstructor().construct_yaml_int(node)
    if node.tag == "tag:yaml.org,2002:bool":
        return node.value.lower() in ("true", "yes", "on")
    return node.value


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


class _ReanchoringLoader(yaml.SafeLoader):
    """The pure-Python loader, letting an anchor be defined again (YAML 1.2 allows it)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.AliasEvent):
            self.anchors.pop(anchor, None)
        return super().compose_node(parent, index)


def parse(text: str, display: str, offset: int = 0) -> list[Doc]:
    """Parse YAML text whose first line is line ``offset + 1`` of ``display``.

    One pass: the C parser composes the nodes, :class:`_Builder` makes the data and the line
    records together. A file that reuses an anchor is composed again by the Python parser.
    """
    try:
        return _parse(FastLoader, text, display, offset)
    except yaml.composer.ComposerError as exc:
        if "second occurrence" not in str(exc) and "duplicate anchor" not in str(exc):
            raise _bad(exc, display, offset) from None
    try:
        return _parse(_ReanchoringLoader, text, display, offset)
    except yaml.composer.ComposerError as exc:
        raise _bad(exc, display, offset) from None


def _parse(loader_class: Any, text: str, display: str, offset: int) -> list[Doc]:
    loader = loader_class(text)
    out: list[Doc] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            doc = Doc(data=None, file=display, index=len(out))
            doc.data = _Builder(loader, doc).build(node, ())
            if offset:
                doc.lines = {k: v + offset for k, v in doc.lines.items()}
                doc.key_lines = {k: v + offset for k, v in doc.key_lines.items()}
            out.append(doc)
    except yaml.composer.ComposerError:
        raise
    except yaml.MarkedYAMLError as exc:
        raise _bad(exc, display, offset) from None
    except yaml.YAMLError as exc:
        raise BadInput(f"YAML error: {exc}", location=display, hint="fix the YAML") from None
    finally:
        loader.dispose()
    return out


def _bad(exc: yaml.MarkedYAMLError, display: str, offset: int) -> BadInput:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 + offset if mark is not None else 0
    what = exc.problem or exc.context or "invalid YAML"
    return BadInput(
        f"YAML syntax error: {what}",
        location=f"{display}:{line}" if line else display,
        hint="fix the YAML (or remove the file from the --gitops PATH)",
    )


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
