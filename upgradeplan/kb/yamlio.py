"""YAML with line numbers: every mapping remembers the line of each key.

:func:`upgradeplan.kb.yamllines.load_text_with_duplicates` builds :class:`LineDict` /
:class:`LineList` (plain ``dict`` / ``list`` subclasses) that carry the 1-based line of the
node and of each key or item. The knowledge files' plain YAML is read by
:mod:`upgradeplan.kb.yamlsubset` without PyYAML; any other text, and every syntax error, by
libyaml (:mod:`upgradeplan.kb.libyaml`): the same result either way. The data is the safe
loader's (YAML 1.1: ``0755`` is octal, ``yes`` is true), except that dates stay strings
(``2026-09-20`` is a date in the format, not a ``datetime.date``), and a key written twice is
recorded so lint can report it instead of YAML silently keeping the last one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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


class YamlSyntaxError(Exception):
    """The text is not YAML (or not one document); ``line`` is 1-based (0 when unknown)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


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
