"""Edit YAML text in place: change scalars, set a value at a key path (adding missing keys).

ruamel.yaml's round-trip composer gives every node's span, quote style and column; the new
text is spliced into the original, so comments, order, indentation, blank lines and quoting
of the rest stay byte-identical (a round-trip *dump* re-indents and re-wraps). Missing keys
are written after the last entry of the deepest existing mapping, indented like its keys;
what cannot be edited so (a folded scalar, a flow mapping, a result that would not read back
as the old data plus the new value) is refused with :class:`~upgradeplan.errors.BadInput`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

from upgradeplan.errors import BadInput
from upgradeplan.patches.patchset import KeyEdit, PathStep, ScalarEdit
from upgradeplan.yamlload import YamlError, load_all, load_one

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _compose_all(text: str, where: str) -> list[Any]:
    """ruamel's nodes of every document, once the text passed the loader's limits."""
    try:
        load_all(text)
        return [n for n in YAML(typ="rt").compose_all(text) if n is not None]
    except YamlError as exc:
        at = f"{where}:{exc.line}" if where and exc.line else where
        raise BadInput(exc.message, location=at, hint=exc.hint) from None
    except YAMLError as exc:
        raise BadInput(f"cannot parse YAML: {exc}".splitlines()[0], location=where) from None


def _walk(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """``(path, key node or None, node)`` of every node under ``node``, in document order."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield (*path, key.value), key, value
                yield from _walk(value, (*path, key.value))
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            yield (*path, i), None, item
            yield from _walk(item, (*path, i))


def _scalars(text: str, where: str) -> list[Any]:
    docs = _compose_all(text, where)
    return [n for d in docs for _, _, n in _walk(d) if isinstance(n, ScalarNode)]


def _render(value: str, style: str | None) -> str:
    """``value`` as a YAML scalar in ``style`` (None = plain, "'" or '"')."""
    if style == "'":
        return "'" + value.replace("'", "''") + "'"
    try:
        plain = style != '"' and load_one(f"k: {value}\n") == {"k": value}
    except YamlError:
        plain = False
    return value if plain else '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def scalar_lines(text: str, value: str, *, where: str = "") -> list[int]:
    """The 1-based lines of every plain or quoted scalar whose value is ``value``."""
    return [
        s.start_mark.line + 1
        for s in _scalars(text, where)
        if s.value == value and s.style not in ("|", ">")
    ]


def set_scalars(text: str, edits: Sequence[ScalarEdit], *, where: str = "") -> str:
    """``text`` with each edit's scalar replaced, in its original quote style; BadInput
    (``where:line``) when a line holds no scalar with the expected value (the file changed
    since it was read, or the location is wrong)."""
    if not edits:
        return text
    scalars = _scalars(text, where)
    spans: set[tuple[int, int, str]] = set()
    for edit in edits:
        loc = f"{where}:{edit.line}" if where else f"line {edit.line}"
        hits = [
            s
            for s in scalars
            if s.start_mark.line + 1 == edit.line
            and s.style != "|"
            and edit.replaced(s.value) is not None
        ]
        if not hits:
            raise BadInput(
                f"no value {edit.before!r} to change on this line",
                location=loc,
                hint="the file changed since it was read; re-run the plan",
            )
        node = hits[-1]
        if node.style == ">":
            raise BadInput("cannot edit a folded scalar", location=loc if where else "")
        new = edit.replaced(node.value) or edit.after
        spans.add((node.start_mark.index, node.end_mark.index, _render(new, node.style)))
    for start, end, replacement in sorted(spans, reverse=True):
        text = text[:start] + replacement + text[end:]
    _compose_all(text, where)  # the result must still parse
    return text


def entry_paths_at(text: str, line: int, *, where: str = "") -> list[tuple[int, tuple[Any, ...]]]:
    """``(document, key path)`` of every mapping entry whose key is written on ``line``,
    shallow entries first (``kagent: {versionRange: …}`` gives ``components.kagent`` and then
    ``components.kagent.versionRange``)."""
    return [
        (i, path)
        for i, root in enumerate(_compose_all(text, where))
        for path, key, _ in _walk(root)
        if key is not None and key.start_mark.line + 1 == line
    ]


def _refuse(edit: KeyEdit, where: str, why: str) -> BadInput:
    dotted = ".".join(str(p) for p in edit.path)
    return BadInput(
        f"cannot set {dotted} in place: {why}",
        location=f"{where}:{edit.line}" if where and edit.line else where,
        hint=f"set {dotted}: {edit.after} in the file by hand (or write the mapping as a "
        "block mapping, one key per line) and run patch again",
    )


def _child(node: Any, step: PathStep) -> Any:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == step:
                return value
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
    docs = _compose_all(text, where)
    if not 0 <= edit.doc < len(docs) or not edit.path:
        raise _refuse(edit, where, "no such document")
    node, parent_col, depth = docs[edit.doc], None, 0
    while depth < len(edit.path) and (child := _child(node, edit.path[depth])) is not None:
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
            what = edit.path[depth - 1] if depth else "the document"
            raise _refuse(edit, where, f"{what} is not a mapping")
        if node.flow_style or not node.value:
            raise _refuse(edit, where, "it is a flow mapping ({…})")
        if not all(isinstance(k, str) and _PLAIN_KEY.match(k) for k in rest):
            raise _refuse(edit, where, "a key would need quoting")
        col = node.value[0][0].start_mark.column
        step = col - parent_col if parent_col is not None and col > parent_col else 2
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = [" " * (col + i * step) + f"{key}:" for i, key in enumerate(rest)]
        lines[-1] += " " + _render(edit.after, None)
        last = node  # where the text of the block's last entry ends
        while isinstance(last, MappingNode | SequenceNode) and not last.flow_style and last.value:
            last = last.value[-1][1] if isinstance(last, MappingNode) else last.value[-1]
        pos = last.end_mark.index
        if last.end_mark.column != 0:  # after the rest of that line (a trailing comment stays)
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
