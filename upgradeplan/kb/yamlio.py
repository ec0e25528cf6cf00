"""YAML with line numbers: every mapping remembers the line of each key.

PyYAML's C parser (``yaml.CSafeLoader``) does the parsing; a small constructor builds
:class:`LineDict` / :class:`LineList` (plain ``dict`` / ``list`` subclasses) that carry the
1-based line of the node and of each key or item. Dates stay strings (``2026-09-20`` is a
date in the format, not a ``datetime.date``), and a key written twice is recorded so lint can
report it instead of YAML silently keeping the last one.
"""

from __future__ import annotations

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


class _Loader(yaml.CSafeLoader):
    """CSafeLoader whose mappings and sequences keep their line numbers."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicate_keys: list[tuple[Any, int]] = []


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    lines = out.lines
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
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
            loader.duplicate_keys.append((key, line))
        out[key] = loader.construct_object(value_node, deep=True)
        lines[key] = line
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList([loader.construct_object(child, deep=True) for child in node.value])
    out.line = node.start_mark.line + 1
    out.lines = [child.start_mark.line + 1 for child in node.value]
    return out


def _construct_timestamp_as_text(loader: _Loader, node: yaml.ScalarNode) -> str:
    return str(node.value)


_Loader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_as_text)


class YamlSyntaxError(Exception):
    """The text is not YAML (or not one document); ``line`` is 1-based (0 when unknown)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def load_text(text: str) -> Any:
    """Parse one YAML document, keeping line numbers. Raises :class:`YamlSyntaxError`."""
    return load_text_with_duplicates(text)[0]


def load_text_with_duplicates(text: str) -> tuple[Any, list[tuple[Any, int]]]:
    """Like :func:`load_text`, plus every (key, line) written twice in one mapping."""
    loader = _Loader(text)
    try:
        return loader.get_single_data(), loader.duplicate_keys
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        what = exc.problem or exc.context or "invalid YAML"
        raise YamlSyntaxError(f"YAML syntax error: {what}", line) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(f"YAML syntax error: {exc}", 0) from None
    finally:
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
