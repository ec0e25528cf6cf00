"""Key paths: keys joined by ``.``, a ``.`` inside a key written ``\\.`` (as ``helm --set`` does).

``values.agent-platform.kagent.nodeSelector.kagent\\.dev/harness`` names the key
``kagent.dev/harness`` under ``kagent.nodeSelector``; ``inferred:`` paths of knowledge files use
the same rule (list items by their index).
"""

from __future__ import annotations

from typing import Any

ABSENT: Any = object()  # what :func:`get` returns when the path names nothing


def split(path: str) -> list[str]:
    """A path's keys: split at ``.``, except where the dot is written ``\\.``."""
    parts: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "\\" and path[i + 1 : i + 2] == ".":
            current.append(".")
            i += 2
            continue
        if ch == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    parts.append("".join(current))
    return parts


def join(parts: list[str]) -> str:
    """The path of ``parts`` (dots inside a key escaped)."""
    return ".".join(p.replace(".", "\\.") for p in parts)


def get(data: Any, parts: list[str]) -> Any:
    """The value at ``parts`` inside nested mappings and lists, or :data:`ABSENT`."""
    node = data
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return ABSENT
    return node
