"""YAML with line numbers: every mapping remembers the line of each key.

PyYAML's C parser (``yaml.CSafeLoader``) does the parsing; a small constructor builds
:class:`LineDict` / :class:`LineList` (plain ``dict`` / ``list`` subclasses) that carry the
1-based line of the node and of each key or item. Dates stay strings (``2026-09-20`` is a
date in the format, not a ``datetime.date``), and a key written twice is recorded so lint can
report it instead of YAML silently keeping the last one.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

import yaml


class LineDict(dict[Any, Any]):
    """A mapping read from YAML: ``line`` of the mapping, ``lines[key]`` of each key."""

    __slots__ = ("line", "lines")

    def __init__(self) -> None:
        super().__init__()
        self.line = 0
        self.lines: dict[Any, int] = {}


class LineList(list[Any]):
    """A sequence read from YAML: ``line`` of the sequence, ``lines[i]`` of each item."""

    __slots__ = ("line", "lines")

    def __init__(self, items: Sequence[Any] = ()) -> None:
        super().__init__(items)
        self.line = 0
        self.lines: list[int] = []


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_MERGE = "tag:yaml.org,2002:merge"
_PLAIN_TAGS: dict[str, str] = {}  # plain scalar text -> its implicit tag


class _Loader(yaml.CSafeLoader):
    """CSafeLoader whose timestamps stay text (the format's dates are strings).

    The C parser calls back into Python for every node to resolve its tag; these callbacks are
    the hot path of loading thousands of files, so they are short-circuited: a quoted scalar
    is a string, mappings and sequences have their default tags (no path resolvers are used),
    and the implicit tag of a plain scalar is remembered per text.
    """

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR
            tag = _PLAIN_TAGS.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
                if len(_PLAIN_TAGS) < 100_000:
                    _PLAIN_TAGS[value] = tag
            return tag
        return _MAP if kind is yaml.MappingNode else _SEQ


_Loader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: str(node.value))


class _Builder:
    """Builds LineDict/LineList/scalars from the C parser's nodes.

    Walking the nodes directly is several times faster than PyYAML's generic constructor;
    scalars other than plain strings (int, bool, null, float, dates) go through the loader's
    safe constructors.
    """

    def __init__(self, loader: _Loader) -> None:
        self.loader = loader
        self.duplicate_keys: list[tuple[Any, int]] = []

    def build(self, node: yaml.Node) -> Any:
        cls = node.__class__
        if cls is yaml.ScalarNode:
            tag = node.tag
            if tag == _STR:
                return node.value
            value = node.value
            # decimal digits only: "0755" is octal to YAML 1.1 and "٣" no YAML int at all
            if tag == _INT and value.isascii() and value.isdigit() and value[:1] != "0":
                return int(value)
            return self.loader.construct_object(node, deep=True)
        if cls is yaml.MappingNode:
            return self.mapping(node)  # type: ignore[arg-type]
        if cls is yaml.SequenceNode:
            out = LineList([self.build(child) for child in node.value])
            out.line = node.start_mark.line + 1
            out.lines = [child.start_mark.line + 1 for child in node.value]
            return out
        return self.loader.construct_object(node, deep=True)

    def mapping(self, node: yaml.MappingNode) -> LineDict:
        out = LineDict()
        out.line = node.start_mark.line + 1
        lines = out.lines
        for key_node, value_node in node.value:
            if key_node.__class__ is yaml.ScalarNode and key_node.tag == _STR:
                key = key_node.value
            elif key_node.tag == _MERGE:
                # `<<: *anchor` merge keys: let PyYAML flatten them, then build again
                self.loader.flatten_mapping(node)
                return self.mapping(node)
            else:
                key = self.build(key_node)
                try:
                    hash(key)
                except TypeError:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        "found an unhashable key",
                        key_node.start_mark,
                    ) from None
            line = key_node.start_mark.line + 1
            if key in out:
                self.duplicate_keys.append((key, line))
            out[key] = self.build(value_node)
            lines[key] = line
        return out


class YamlSyntaxError(Exception):
    """The text is not YAML (or not one document); ``line`` is 1-based (0 when unknown)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def load_text_with_duplicates(text: str) -> tuple[Any, list[tuple[Any, int]]]:
    """Parse one YAML document, keeping line numbers, and every (key, line) written twice in
    one mapping. Raises :class:`YamlSyntaxError`."""
    loader = _Loader(text)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # thousands of small acyclic objects: the cyclic collector only costs time
    try:
        node = loader.get_single_node()
        if node is None:
            return None, []
        builder = _Builder(loader)
        return builder.build(node), builder.duplicate_keys
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        what = ": ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        start = exc.context_mark
        if start is not None and mark is not None and start.line != mark.line:
            what += f" (it started on line {start.line + 1})"
        raise YamlSyntaxError(f"YAML syntax error: {what}", line) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"YAML syntax error: {exc}", 0) from None
    finally:
        if gc_was_enabled:
            gc.enable()
        loader.dispose()


def line_of(doc: Any, path: Sequence[Any]) -> int:
    """The line of ``path`` inside ``doc``: the line of its last key (or item).

    Walks as far as the path exists; returns the deepest line found (1 for the root).
    """
    line = getattr(doc, "line", 1) or 1
    node = doc
    for step in path:
        if isinstance(node, LineDict) and step in node:
            line = node.lines.get(step, line)
            node = node[step]
        elif isinstance(node, LineList) and isinstance(step, int) and 0 <= step < len(node):
            line = node.lines[step] if step < len(node.lines) else line
            node = node[step]
        else:
            break
    return line
