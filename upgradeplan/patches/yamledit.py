"""Edit YAML text in place: change scalars, set a value at a key path (adding missing keys).

ruamel.yaml's round-trip composer gives every node's exact span, quote style and column; the
new text is spliced into the original, so comments, key order, indentation, blank lines and
the quoting of everything else stay byte-identical (a round-trip *dump* re-indents and
re-wraps). Missing keys are written as block lines after the last entry of the deepest
existing mapping, indented like its keys. What cannot be edited that way (a folded scalar, a
flow mapping, a key that needs quoting, a result that would not read back as the old data
plus the new value) is refused with :class:`~upgradeplan.errors.BadInput`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from upgradeplan.errors import BadInput
from upgradeplan.yamlload import YamlError, load_all, load_one

PathStep = str | int


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
    try:
        loaded = load_one(f"k: {rendered}\n")
    except YamlError:
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


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class KeyEdit:
    """Set the string at ``path`` (keys and list indexes from the root of document ``doc``)."""

    doc: int
    path: tuple[PathStep, ...]
    after: str
    line: int = 0  # the line the edit is about (for messages), 1-based
    what: str = ""  # e.g. "components.kagent.driftDetection.mode"


def entry_paths_at(text: str, line: int, *, where: str = "") -> list[tuple[int, tuple[Any, ...]]]:
    """``(document, key path)`` of every mapping entry whose key is written on ``line``.

    Shallow entries come first (``kagent: {versionRange: …}`` gives ``components.kagent`` and
    then ``components.kagent.versionRange``).
    """
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    out: list[tuple[int, tuple[Any, ...]]] = []

    def walk(node: Any, path: tuple[Any, ...], doc: int, seen: set[int]) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                if not isinstance(key, ScalarNode):
                    continue
                if key.start_mark.line + 1 == line:
                    out.append((doc, (*path, key.value)))
                walk(value, (*path, key.value), doc, seen)
        elif isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*path, i), doc, seen)

    for i, root in enumerate(_compose_all(text, where)):
        walk(root, (), i, set())
    return out


def _refuse(edit: KeyEdit, where: str, why: str) -> BadInput:
    dotted = ".".join(str(p) for p in edit.path)
    loc = f"{where}:{edit.line}" if where and edit.line else where
    return BadInput(
        f"cannot set {dotted} in place: {why}",
        location=loc,
        hint=f"set {dotted}: {edit.after} in the file by hand (or write the mapping as a "
        "block mapping, one key per line) and run patch again",
    )


def _last_end(node: Any) -> Any:
    """Where the text of a block node's last entry ends (a scalar or flow collection's end)."""
    from ruamel.yaml.nodes import MappingNode, SequenceNode

    while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, MappingNode) else last
    return node.end_mark


def _child(node: Any, step: PathStep) -> Any:
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == step:
                return value
        return None
    if isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
        return node.value[step]
    return None


def _expected(text: str, edit: KeyEdit) -> list[Any]:
    """The documents as data, with the edit made to the data (what the result must read as)."""
    docs = load_all(text)
    node: Any = docs[edit.doc]
    for step in edit.path[:-1]:
        node = node.setdefault(step, {}) if isinstance(node, dict) else node[step]
    node[edit.path[-1]] = edit.after
    return docs


def set_key(text: str, edit: KeyEdit, *, where: str = "") -> str:
    """``text`` with the value at ``edit.path`` set to ``edit.after``; missing keys are added."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode

    docs = _compose_all(text, where)
    if not 0 <= edit.doc < len(docs) or not edit.path:
        raise _refuse(edit, where, "no such document")
    node, parent_col = docs[edit.doc], None
    depth = 0
    while depth < len(edit.path):
        child = _child(node, edit.path[depth])
        if child is None:
            break
        if isinstance(node, MappingNode) and node.value:
            parent_col = node.value[0][0].start_mark.column
        node, depth = child, depth + 1
    if depth == len(edit.path):  # the value is there: splice it in its style
        if not isinstance(node, ScalarNode) or node.style in ("|", ">") or node.value == "":
            raise _refuse(edit, where, "the value there is not a one-line string")
        start, end = node.start_mark.index, node.end_mark.index
        out = text[:start] + _render(edit.after, node.style) + text[end:]
    else:
        rest = edit.path[depth:]
        if not isinstance(node, MappingNode):
            raise _refuse(
                edit, where, f"{edit.path[depth - 1] if depth else 'the document'} is not a mapping"
            )
        if node.flow_style or not node.value:
            raise _refuse(edit, where, "it is a flow mapping ({…})")
        if not all(isinstance(k, str) and _PLAIN_KEY.match(k) for k in rest):
            raise _refuse(edit, where, "a key would need quoting")
        col = node.value[0][0].start_mark.column
        step = col - parent_col if parent_col is not None and col > parent_col else 2
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = [" " * (col + i * step) + f"{key}:" for i, key in enumerate(rest)]
        lines[-1] += " " + _render(edit.after, None)
        end = _last_end(node)
        pos = end.index
        if end.column != 0:  # after the rest of that line (a trailing comment stays there)
            nl = text.find("\n", pos)
            pos = len(text) if nl < 0 else nl + 1
        block = newline.join(lines) + newline
        if pos == len(text) and text and not text.endswith("\n"):
            block = newline + block
        out = text[:pos] + block + text[pos:]
    try:
        same = load_all(out) == _expected(text, edit)
    except (YamlError, KeyError, IndexError, TypeError):
        same = False
    if not same:
        raise _refuse(edit, where, "the edit would change more than that value")
    return out


def set_keys(text: str, edits: Sequence[KeyEdit], *, where: str = "") -> str:
    """Apply :func:`set_key` for each edit, in order."""
    for edit in edits:
        text = set_key(text, edit, where=where)
    return text
