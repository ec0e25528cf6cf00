"""The knowledge files' common YAML read line by line from one regular-expression pass.

:func:`parse` is the knowledge loader's entry to :mod:`upgradeplan.kb.yamlsubset`. Its reader
splits the whole text with one compiled pattern (``findall``: for every line its indentation,
a block sequence's ``-``, a plain key and the rest) and builds the document from those tuples,
instead of re-reading each line's characters in Python. It reads the forms the knowledge
files are written in: block mappings with plain keys, block sequences (one ``-`` per line,
compact mappings after it), and as values plain scalars, and through the subset parser's own
readers quoted scalars, one-line flow collections and block scalars. Anything else (a quoted
key, ``- - x``, a lone ``-``, …) is handed to the subset parser, which reads the whole text
afresh (and hands what it does not read to libyaml): the answer, lines, duplicate keys and
refusals are always the subset parser's, so always libyaml's.
"""

from __future__ import annotations

import re
from typing import Any

from upgradeplan.kb.yamlio import LineDict, LineList
from upgradeplan.kb.yamlsubset import (
    _BOOLS,
    _NOT_SIMPLE,
    _NULLS,
    _PLAIN_CHECKED,
    _QUOTED_KEY_END,
    _RESOLVED_START,
    OutsideSubset,
    _end_of_line,
    _Parser,
    check_text,
    plain_rest,
)

# every line: its indentation, a block sequence's `-` (with the blanks after it), a plain key
# (the subset parser's `_KEY`, not starting with a digit; its `:` and the blanks after are
# dropped), then the rest of the line: a quoted scalar without escapes or doubled quotes (with
# blanks or a comment after it), or anything else (possessive repeats: nothing they take could
# be given back to a match)
_LINE = re.compile(
    r"^( *+)(- ++)?(?:([A-Za-z_$][A-Za-z0-9_.$/-]{0,999}+) *+:(?: +|$))?"
    r"(?:(\"[^\"\\\n]*+\"|'[^'\n]*+')(?: +(?:#.*)?)?|(.*))$",
    re.M,
)
# the words that are not strings (booleans, nulls): not keys here
_WORDS = frozenset(_BOOLS).union(_NULLS)
# a plain scalar's first character that plain() must look at (an indicator, `-`, or a
# character of a word or number that may resolve to something other than a string)
_PLAIN_LOOK = _PLAIN_CHECKED.union(_RESOLVED_START)


class _Unusual(Exception):
    """A form this reader leaves to the subset parser."""


def parse(text: str, strings: dict[str, str]) -> tuple[Any, list[tuple[Any, int]]]:
    """:func:`upgradeplan.kb.yamlsubset.parse`, the same answer (or OutsideSubset), faster on
    the knowledge files' usual forms."""
    check_text(text)
    try:
        return _Lines(text, strings).read()
    except (_Unusual, OutsideSubset):  # the subset parser has the last word, on the whole text
        return _Parser(text, strings).document()


Token = tuple[str, str, str, str, str]  # indent, dash, key, quoted, rest


class _Lines(_Parser):
    """The subset parser's readers of scalars and flow collections over the lines, the block
    structure read from the tuples of :data:`_LINE` (``i``: the current line, as there)."""

    def __init__(self, text: str, strings: dict[str, str]) -> None:
        lines = text.split("\n")
        tokens = _LINE.findall(text)
        self.broken = text.endswith("\n")
        if self.broken:
            lines.pop()
            tokens.pop()
        if len(tokens) != len(lines):  # pragma: no cover - one match per line, always
            raise _Unusual("lines")
        self.lines = lines
        self.tokens: list[Token] = tokens
        self.n = len(lines)
        self.i = 0
        self.same = strings.setdefault
        self.duplicates: list[tuple[Any, int]] = []

    def next_content(self, i: int) -> int:
        """The first line from ``i`` on that is not blank or a comment (``n`` at the end)."""
        tokens, n = self.tokens, self.n
        while i < n:
            _, dash, key, quoted, rest = tokens[i]
            if dash or key or quoted or rest[:1] not in ("", "#"):
                return i
            i += 1
        return n

    def read(self) -> tuple[Any, list[tuple[Any, int]]]:
        i = self.next_content(0)
        if i >= self.n:
            return None, []
        indent, dash, key, _, _ = self.tokens[i]
        if indent:
            raise _Unusual("an indented document")
        data: Any
        if dash:
            data, i = self.block_sequence(0, i, False)
        elif key:
            data, i = self.block_mapping(0, i, False)
        else:
            raise _Unusual("a document that does not start with a key or `- `")
        if self.next_content(i) < self.n:
            raise _Unusual("text after the document")
        return data, self.duplicates

    def block_mapping(self, col: int, i: int, compact: bool) -> tuple[LineDict, int]:
        """The mapping whose keys are at ``col`` from line ``i`` (``compact``: its first key
        follows a ``- `` on that line); the mapping and the line after it."""
        out = LineDict()
        out.line = i + 1
        lines_of = out.lines
        tokens, n, same, pad = self.tokens, self.n, self.same, " " * col
        while i < n:
            indent, dash, key, quoted, rest = tokens[i]
            if compact:
                compact = False
            elif indent != pad or dash or not key:
                if not (dash or key or quoted) and rest[:1] in ("", "#"):
                    i += 1  # a blank or comment line
                    continue
                if len(indent) > col:
                    raise _Unusual("a line indented more than its mapping")
                if indent != pad or dash:
                    break  # a line of the parent, or a sequence at its parent's key column
                raise _Unusual("a line that is not a plain key")
            if key in _WORDS:
                raise _Unusual("a key that is not a string")
            key = same(key, key)
            if key in out:
                self.duplicates.append((key, i + 1))
            lines_of[key] = i + 1
            if quoted:
                text = quoted[1:-1]
                out[key] = same(text, text)
                i += 1
            elif rest[:1] in ("", "#"):
                out[key], i = self.below(i, col)
            elif rest[0] in _NOT_SIMPLE:
                out[key], i = self.node(rest, i, col)
            elif rest[0] in _PLAIN_LOOK or rest[-1] in " :" or " #" in rest or ": " in rest:
                out[key] = plain_rest(rest, same)
                i += 1
            else:  # a plain scalar that is a string as it stands
                out[key] = same(rest, rest)
                i += 1
        return out, i

    def below(self, i: int, col: int) -> tuple[Any, int]:
        """The value of a key at ``col`` on line ``i`` that has nothing after its ``:``."""
        j = self.next_content(i + 1)
        if j >= self.n:
            return None, j
        indent, dash, key, _, _ = self.tokens[j]
        deeper = len(indent)
        if deeper > col:
            if dash:
                return self.block_sequence(deeper, j, False)
            if key:
                return self.block_mapping(deeper, j, False)
            raise _Unusual("no key or entry below a key")
        if deeper == col and dash:
            return self.block_sequence(col, j, True)
        return None, j

    def block_sequence(self, col: int, i: int, indentless: bool) -> tuple[LineList, int]:
        """The sequence whose ``-`` are at ``col`` from line ``i``."""
        out = LineList()
        out.line = i + 1
        lines_of = out.lines
        tokens, n, same, pad = self.tokens, self.n, self.same, " " * col
        while i < n:
            indent, dash, key, quoted, rest = tokens[i]
            if indent != pad or not dash:
                if not (dash or key or quoted) and rest[:1] in ("", "#"):
                    i += 1  # a blank or comment line
                    continue
                if len(indent) > col:
                    raise _Unusual("a line indented more than its sequence")
                if indent != pad or indentless:
                    break
                raise _Unusual("a line that is not an entry")
            lines_of.append(i + 1)
            item: Any
            if key:
                item, i = self.block_mapping(col + len(dash), i, True)
            elif quoted:
                text = quoted[1:-1]
                item = same(text, text)
                i += 1
            elif rest[:1] in ("", "#", "-"):
                raise _Unusual("an empty entry, or a sequence in one")
            elif rest[0] in _NOT_SIMPLE:
                item, i = self.node(rest, i, col)
            elif rest[0] in _PLAIN_LOOK or rest[-1] in " :" or " #" in rest or ": " in rest:
                item = plain_rest(rest, same)
                i += 1
            else:
                item = same(rest, rest)
                i += 1
            out.append(item)
        return out, i

    def node(self, rest: str, i: int, col: int) -> tuple[Any, int]:
        """A block scalar, quoted scalar or flow collection ``rest`` at the end of line ``i``
        (its parent at ``col``), read by the subset parser's readers."""
        line = self.lines[i]
        at = len(line) - len(rest)
        self.i = i
        ch = rest[0]
        if ch in "|>":
            value = self.block_scalar(line, at, col)
            return value, self.i
        if ch in "'\"":
            value, end = self.quoted(line, at)
            if _QUOTED_KEY_END.match(line, end) is not None:
                raise _Unusual("a quoted key")
        else:  # [ {
            value, end = self.flow(line, at)
        _end_of_line(line, end)
        return value, i + 1


def load_text_with_duplicates(
    text: str, strings: dict[str, str] | None = None
) -> tuple[Any, list[tuple[Any, int]]]:
    """Parse one YAML document, keeping line numbers, and every (key, line) written twice in
    one mapping. Raises :class:`YamlSyntaxError`.

    ``strings``: equal string values share one object through it (pass the same dict for
    every file of a load: the knowledge base holds each text once).
    The knowledge files' plain YAML is read by :mod:`upgradeplan.kb.yamlsubset` (no PyYAML);
    any other text by libyaml (:mod:`upgradeplan.kb.libyaml`), with the same result."""
    shared = {} if strings is None else strings
    try:
        return parse(text, shared)
    except OutsideSubset:
        pass
    from upgradeplan.kb import libyaml  # imports PyYAML: only for text outside the subset

    return libyaml.load(text, shared)
