"""Placeholders: the ``TODO:`` texts ``kb new`` writes, which lint and UPGRADE.md refuse."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MARKER = "TODO:"


def first_in(text: str) -> str | None:
    """The placeholder in ``text`` (from its marker to the end of its line), or None."""
    at = text.find(MARKER)
    if at < 0:
        return None
    return text[at:].split("\n", 1)[0].strip()


def in_data(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    """Each ``(key path, placeholder)`` in parsed YAML: strings in mappings and lists (comments
    are not data, so a ``# TODO`` comment is never one)."""
    if isinstance(data, str):
        found = first_in(data)
        if found is not None:
            yield path, found
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from in_data(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from in_data(value, (*path, i))


__all__ = ["MARKER", "first_in", "in_data"]
