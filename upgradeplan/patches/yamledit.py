"""Change scalar values in YAML text without touching anything else.

ruamel.yaml's round-trip composer finds each scalar (its exact character span and its quote
style); the new value is spliced into the original text in the same style. Comments, key
order, indentation, blank lines and the quoting of every other value stay byte-identical — a
round-trip *dump* cannot promise that (it re-indents and re-wraps), so the dump is only used to
check the result.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from upgradeplan.errors import BadInput


@dataclass(frozen=True)
class ScalarEdit:
    """Set the scalar written on ``line`` (1-based) whose value is ``before`` to ``after``."""

    line: int
    before: str
    after: str
    what: str = ""  # e.g. "pin.agent-platform-connectivity", for messages


def _scalars(node: Any) -> Iterator[Any]:
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if isinstance(node, ScalarNode):
        yield node
    elif isinstance(node, MappingNode):
        for _key, value in node.value:
            yield from _scalars(value)
    elif isinstance(node, SequenceNode):
        for item in node.value:
            yield from _scalars(item)


def _compose_all(text: str, where: str) -> list[Any]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    yaml = YAML(typ="rt")
    try:
        return [n for n in yaml.compose_all(text) if n is not None]
    except YAMLError as exc:
        raise BadInput(f"cannot parse YAML: {exc}".splitlines()[0], location=where) from None


def _loads_as_string(rendered: str, value: str) -> bool:
    import yaml

    try:
        loaded = yaml.load(f"k: {rendered}\n", Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return False
    return isinstance(loaded, dict) and loaded.get("k") == value


def _render(value: str, style: str | None) -> str:
    """``value`` as a YAML scalar in ``style`` (None = plain, "'" or '"')."""
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    if style == '"' or not _loads_as_string(value, value):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    return value


# an image reference whose tag is the version: registry/repo:tag (no digest: it pins the bytes)
_IMAGE = re.compile(r"(?P<repo>[^\s@]*[^\s@:]):(?P<tag>[^\s:/@]+)")


def _replaced(value: str, before: str, after: str) -> str | None:
    """The new text of a scalar holding ``before`` (itself, ``v``-prefixed, or as the tag of
    an image reference such as ``harness/delegate:0.29.0``), or None when it does not."""

    def versioned(current: str) -> str | None:
        if current == before:
            return after
        if current.startswith("v") and current[1:] == before and current[1:2].isdigit():
            return after if after.startswith("v") else "v" + after  # keeps its v prefix
        return None

    whole = versioned(value)
    if whole is not None:
        return whole
    image = _IMAGE.fullmatch(value)
    if image is None:
        return None
    tag = versioned(image.group("tag"))
    return f"{image.group('repo')}:{tag}" if tag is not None else None


def scalar_lines(text: str, value: str, *, where: str = "") -> list[int]:
    """The 1-based lines of every plain or quoted scalar whose value is ``value``."""
    return [
        s.start_mark.line + 1
        for doc in _compose_all(text, where)
        for s in _scalars(doc)
        if s.value == value and s.style not in ("|", ">")
    ]


def set_scalars(text: str, edits: Sequence[ScalarEdit], *, where: str = "") -> str:
    """Return ``text`` with each edit's scalar replaced, in its original quote style.

    Raises :class:`BadInput` (naming ``where:line``) when a line holds no scalar with the
    expected value — the file changed since it was read, or the location is wrong.
    """
    if not edits:
        return text
    scalars = [s for doc in _compose_all(text, where) for s in _scalars(doc)]
    spans: list[tuple[int, int, str]] = []
    for edit in edits:
        hits = [
            s
            for s in scalars
            if s.start_mark.line + 1 == edit.line
            and _replaced(s.value, edit.before, edit.after) is not None
            and s.style != "|"
        ]
        if not hits:
            loc = f"{where}:{edit.line}" if where else f"line {edit.line}"
            raise BadInput(
                f"no value {edit.before!r} to change on this line",
                location=loc,
                hint="the file changed since it was read; re-run the plan",
            )
        node = hits[-1]
        if node.style in (">",):
            raise BadInput(
                "cannot edit a folded scalar", location=f"{where}:{edit.line}" if where else ""
            )
        new = _replaced(node.value, edit.before, edit.after) or edit.after
        spans.append((node.start_mark.index, node.end_mark.index, _render(new, node.style)))
    out = text
    for start, end, replacement in sorted(set(spans), reverse=True):
        out = out[:start] + replacement + out[end:]
    _compose_all(out, where)  # the result must still parse
    return out
