"""The knowledge files' YAML read without PyYAML, where it keeps to a plain subset.

The knowledge files use a small part of YAML: block mappings and sequences indented with
spaces, single-line flow collections (``[a, b]``, ``{fact: x, value: y}``), plain and quoted
single-line scalars, and literal or folded block scalars. :func:`parse` reads exactly that
subset and gives what :func:`upgradeplan.kb.yamllines.load_text_with_duplicates` gives through
libyaml: the same data (YAML 1.1 resolution of plain scalars as PyYAML's safe loader does it,
dates kept as text), the same :class:`LineDict` / :class:`LineList` lines and the same keys
written twice. Anything else (anchors, aliases, tags, directives, several documents, tabs,
multi-line flow collections or quoted and plain scalars, keys that are not strings, floats,
octal or other non-decimal integers, a merge key, a character YAML does not print, or
anything malformed) raises :class:`OutsideSubset`, and the caller parses the text with
libyaml instead: never a different answer, and libyaml's error for text that is not YAML.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from upgradeplan.kb.yamlio import LineDict, LineList

if TYPE_CHECKING:
    from collections.abc import Callable


class OutsideSubset(Exception):
    """The text uses YAML this parser does not read; libyaml must parse it."""


# YAML 1.1 plain scalars that are not strings (PyYAML's safe resolver): booleans and nulls are
# exact words; a number is any of the integer or float forms below, of which only plain
# decimal integers are built here (the rest, say 0755, 1_000, 1:30 or .5, are left to libyaml).
_BOOLS = {
    word: value
    for value, words in ((True, ("yes", "true", "on")), (False, ("no", "false", "off")))
    for base in words
    for word in (base, base.capitalize(), base.upper())
}
_NULLS = frozenset(("~", "null", "Null", "NULL"))
_NUMBER_START = frozenset("-+0123456789.")
_NUMBER_CHARS = frozenset("0123456789_+-.:eExbabcdefABCDEFinINaN")  # of any number's text
_NUMBER = (  # compiled when first needed (few knowledge scalars start like a number)
    r"[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|0|[1-9][0-9_]*(?::[0-5]?[0-9])*"
    r"|[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"
    r"|\.(?:inf|Inf|INF))"
    r"|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|\.(?:nan|NaN|NAN)"
)
# a plain key: a name-like word (others, such as `a b` or `x#y`, go to libyaml)
_KEY = re.compile(r"([A-Za-z0-9_$][A-Za-z0-9_.$/-]*) *:(?: +|$)")  # and the blanks after
_QUOTED_KEY_END = re.compile(r" *:(?: +|$)")
_KEY_START = frozenset("yYnNtTfFoO~").union(_NUMBER_START)  # of a key resolve() must look at
_RESOLVED_START = _KEY_START.union("<=")  # of a plain scalar that may not be a string
# what starts a node other than a plain scalar (or a comment)
_NOT_SIMPLE = frozenset("#|>'\"[{")
_PLAIN_ASCII = bytes(range(0x20, 0x7F)) + b"\n"
# characters that may not start a plain scalar here (indicators, and `-`/`?`/`:` with a space)
_NOT_PLAIN_START = frozenset("?:,[]{}#&*!|>'\"%@`")
_PLAIN_CHECKED = _NOT_PLAIN_START.union("-")
# where a plain scalar in a flow collection ends here: at `,[]{}#`, or a `:` unless a letter,
# digit or `/` follows it (`oci://x`, `a:b`; never a blank or `,?[]{}`)
_FLOW_PLAIN_END = re.compile(r"[,\[\]{}#]|:(?![/A-Za-z0-9])")
_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")


def resolve(text: str) -> Any:
    """The value of a plain scalar, as PyYAML's safe loader resolves it (dates stay text);
    :class:`OutsideSubset` for the numbers this module leaves to libyaml and a merge key."""
    if text in _BOOLS:
        return _BOOLS[text]
    if text in _NULLS:
        return None
    if text[0] in _NUMBER_START:
        digits = text[1:] if text[0] in "-+" else text
        if digits.isascii() and digits.isdigit() and (digits[0] != "0" or digits == "0"):
            return int(text)
        if _NUMBER_CHARS.issuperset(text) and _number().fullmatch(text):
            raise OutsideSubset(text)
    elif text in ("<<", "="):  # a merge key, the value key
        raise OutsideSubset(text)
    return text


@functools.cache
def _number() -> re.Pattern[str]:
    return re.compile(_NUMBER)


def _printable(text: str) -> bool:
    """Only characters libyaml reads as printable, and no carriage return, tab or line
    separator (they would need YAML's line-break and white-space rules)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    # what is left once printable ASCII and line feeds are taken out (in C, fast)
    for ch in set(data.translate(None, _PLAIN_ASCII).decode("utf-8")):
        if ch >= "\U00010000":
            continue
        wide = "\xa0" <= ch <= "\ud7ff" or "\ue000" <= ch <= "\ufffd"
        if not wide or ch in "\u2028\u2029\ufeff":
            return False
    return True


def parse(text: str, strings: dict[str, str]) -> tuple[Any, list[tuple[Any, int]]]:
    """The document of ``text`` and the (key, line) pairs written twice in a mapping, as
    :func:`upgradeplan.kb.yamllines.load_text_with_duplicates` gives them; raises
    :class:`OutsideSubset` when ``text`` is outside the subset (or not YAML)."""
    check_text(text)
    return _Parser(text, strings).document()


def check_text(text: str) -> None:
    """:class:`OutsideSubset` for directives, document markers and unusual characters."""
    if (
        text.startswith(("---", "...", "%"))
        or "\n---" in text
        or "\n..." in text
        or "\n%" in text
        or not _printable(text)
    ):
        raise OutsideSubset("directives, document markers or unusual characters")


def plain_rest(text: str, same: Callable[[str, str], str]) -> Any:
    """The plain scalar ``text`` that runs to the end of its line (or a comment), its string
    taken through ``same``; also the line reader's (:mod:`upgradeplan.kb.yamllines`)."""
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut]
    text = text.rstrip(" ")
    first = text[0]
    if first in _PLAIN_CHECKED and (first != "-" or text[1:2] in ("", " ")):
        raise OutsideSubset("a plain scalar starting with an indicator")
    if ": " in text or text[-1] == ":":
        raise OutsideSubset("a colon in a plain scalar")
    if first in _RESOLVED_START:
        value = resolve(text)
        if value.__class__ is not str:
            return value
    return same(text, text)


class _Parser:
    """A recursive-descent reader over the text's lines (``i`` is the current line)."""

    def __init__(self, text: str, strings: dict[str, str]) -> None:
        lines = text.split("\n")
        self.broken = text.endswith("\n")  # whether the last line ends with a line break
        if self.broken:
            lines.pop()
        self.lines = lines
        # each line's indentation, -1 for a blank or comment line
        self.indents = [
            len(line) - len(rest) if (rest := line.lstrip(" ")) and rest[0] != "#" else -1
            for line in lines
        ]
        self.i = 0
        self.same = strings.setdefault
        self.duplicates: list[tuple[Any, int]] = []

    def document(self) -> tuple[Any, list[tuple[Any, int]]]:
        indent = self.skip()
        if indent < 0:
            return None, []
        if indent != 0:
            raise OutsideSubset("an indented document")
        line = self.lines[self.i]
        if _is_entry(line, 0):
            data: Any = self.sequence(0, first=0)
        elif self.key_at(line, 0) is not None:
            data = self.mapping(0, first=0)
        else:
            raise OutsideSubset("a document that is not a collection")
        if self.skip() >= 0:
            raise OutsideSubset("text after the document")
        return data, self.duplicates

    def skip(self) -> int:
        """Move past blank and comment lines; the indent of the line reached, -1 at the end."""
        indents = self.indents
        i, n = self.i, len(indents)
        while i < n and indents[i] < 0:
            i += 1
        self.i = i
        return indents[i] if i < n else -1

    # -- block collections

    def mapping(self, col: int, first: int = -1) -> LineDict:
        """A block mapping whose keys are at column ``col`` (``first``: the column of its first
        key on the current line, when that line starts with something else, such as ``- ``)."""
        out = LineDict()
        out.line = self.i + 1
        lines_of = out.lines
        lines, indents, n = self.lines, self.indents, len(self.lines)
        match, same = _KEY.match, self.same
        i = self.i
        while True:
            if first < 0:
                while i < n and indents[i] < 0:
                    i += 1
                if i >= n or indents[i] != col:
                    if i < n and indents[i] > col:
                        raise OutsideSubset("a line indented more than its mapping")
                    self.i = i
                    return out
            first = -1
            line = lines[i]
            m = match(line, col)
            if m is not None and m.group(1)[0] not in _KEY_START and m.end() - col < 1000:
                key, at = same(m.group(1), m.group(1)), m.end()
            else:
                self.i = i
                found = self.key_at(line, col)
                if found is None:
                    if _is_entry(line, col):
                        return out  # a sequence at its parent mapping's key column ends
                    raise OutsideSubset("a line that is not a key")
                key, at = found
            if key in out:
                self.duplicates.append((key, i + 1))
            if at < len(line) and line[at] not in _NOT_SIMPLE:
                out[key] = self.plain(line, at)
                lines_of[key] = i + 1
                i += 1
                continue
            self.i = i
            out[key] = self.value(line, at, col)
            lines_of[key] = i + 1
            i = self.i

    def sequence(self, col: int, first: int = -1, indentless: bool = False) -> LineList:
        """A block sequence whose ``-`` are at column ``col``."""
        out = LineList()
        out.line = self.i + 1
        while True:
            if first < 0:
                indent = self.skip()
                if indent != col:
                    if indent > col:
                        raise OutsideSubset("a line indented more than its sequence")
                    return out
            first = -1
            line = self.lines[self.i]
            if not _is_entry(line, col):
                if indentless:
                    return out
                raise OutsideSubset("a line that is not an entry")
            at = col + 1
            while at < len(line) and line[at] == " ":
                at += 1
            if at >= len(line) or line[at] == "#":
                raise OutsideSubset("an entry whose node starts on a later line")
            here = self.i + 1
            out.append(self.item(line, at, col))
            out.lines.append(here)

    def item(self, line: str, at: int, col: int) -> Any:
        """A sequence entry's node, starting at column ``at`` of the current line."""
        if _is_entry(line, at):
            return self.sequence(at, first=at)
        if self.key_at(line, at) is not None:
            return self.mapping(at, first=at)
        return self.inline(line, at, col)

    def value(self, line: str, at: int, col: int) -> Any:
        """A mapping value at ``at`` of the current line (after its key's ``:`` and blanks;
        keys at ``col``)."""
        if at < len(line) and line[at] != "#":
            # `key: a: b` and `key: 'a': b` are refused by plain() and by _end_of_line()
            return self.inline(line, at, col)
        self.i += 1
        indent = self.skip()
        if indent < 0:
            return None
        below = self.lines[self.i]
        if indent > col:
            if _is_entry(below, indent):
                return self.sequence(indent)
            if self.key_at(below, indent) is not None:
                return self.mapping(indent)
            raise OutsideSubset("a scalar on the line below its key")
        if indent == col and _is_entry(below, col):
            return self.sequence(col, indentless=True)
        return None

    def key_at(self, line: str, at: int) -> tuple[str, int] | None:
        """The key starting at column ``at`` and the column after its ``:``, if one does."""
        m = _KEY.match(line, at)
        if m is not None:
            key = m.group(1)
            if (key[0] in _KEY_START and resolve(key).__class__ is not str) or len(key) > 1000:
                raise OutsideSubset("a key that is not a short string")
            return self.same(key, key), m.end()
        if at < len(line) and line[at] in "'\"":
            text, end = self.quoted(line, at)
            m = _QUOTED_KEY_END.match(line, end)
            if m is not None:
                if end - at > 1000:
                    raise OutsideSubset("a long key")
                return text, m.end()
        return None

    # -- scalars and flow collections on one line

    def inline(self, line: str, at: int, col: int) -> Any:
        """A node that starts at column ``at`` and (except a block scalar) ends on this line."""
        ch = line[at]
        if ch in "|>":
            return self.block_scalar(line, at, col)
        if ch in "'\"":
            out, end = self.quoted(line, at)
        elif ch in "[{":
            out, end = self.flow(line, at)
        else:
            self.i += 1
            return self.plain(line, at)  # (the mapping loop calls plain() itself)
        _end_of_line(line, end)
        self.i += 1
        return out

    def plain(self, line: str, at: int) -> Any:
        """A plain scalar from ``at`` to the end of the line (or a comment)."""
        return plain_rest(line[at:], self.same)

    def quoted(self, line: str, at: int) -> tuple[str, int]:
        """A quoted scalar on one line: its text and the column after its closing quote."""
        if line[at] == "'":
            pieces = []
            start = at + 1
            while True:
                end = line.find("'", start)
                if end < 0:
                    raise OutsideSubset("a quoted scalar over several lines")
                pieces.append(line[start:end])
                if line[end + 1 : end + 2] != "'":
                    break
                pieces.append("'")
                start = end + 2
            text = "".join(pieces)
            return self.same(text, text), end + 1
        return self.double_quoted(line, at)

    def double_quoted(self, line: str, at: int) -> tuple[str, int]:
        end = line.find('"', at + 1)
        if end > 0 and line.find("\\", at + 1, end) < 0:  # no escapes
            text = line[at + 1 : end]
            return self.same(text, text), end + 1
        pieces = []
        pos = at + 1
        n = len(line)
        while True:
            end = min(_find(line, '"', pos, n), _find(line, "\\", pos, n))
            if end >= n:
                raise OutsideSubset("a quoted scalar over several lines")
            pieces.append(line[pos:end])
            if line[end] == '"':
                break
            code = line[end + 1 : end + 2]
            if code in _ESCAPES:
                pieces.append(_ESCAPES[code])
                pos = end + 2
                continue
            width = _HEX_ESCAPES.get(code, 0)
            digits = line[end + 2 : end + 2 + width]
            if not width or len(digits) != width or not set(digits) <= _HEX:
                raise OutsideSubset("an escape this parser does not read")
            value = int(digits, 16)
            if 0xD800 <= value <= 0xDFFF or value > 0x10FFFF:
                raise OutsideSubset("an escaped surrogate or out-of-range character")
            pieces.append(chr(value))
            pos = end + 2 + width
        text = "".join(pieces)
        return self.same(text, text), end + 1

    def flow(self, line: str, at: int) -> tuple[Any, int]:
        """A flow sequence or mapping that closes on this line."""
        here = self.i + 1
        pos = _blanks(line, at + 1)
        if line[at] == "[":
            seq = LineList()
            seq.line = here
            while pos < len(line) and line[pos] != "]":
                item, pos = self.flow_node(line, pos)
                seq.append(item)
                seq.lines.append(here)
                pos = _flow_separator(line, pos, "]")
            _closing(line, pos)
            return seq, pos + 1
        out = LineDict()
        out.line = here
        while pos < len(line) and line[pos] != "}":
            found = self.key_at(line, pos)
            if found is None:
                raise OutsideSubset("a flow mapping entry that is not `key: value`")
            key, pos = found
            pos = _blanks(line, pos)
            if key in out:
                self.duplicates.append((key, here))
            out[key], pos = self.flow_node(line, pos)
            out.lines[key] = here
            pos = _flow_separator(line, pos, "}")
        _closing(line, pos)
        return out, pos + 1

    def flow_node(self, line: str, at: int) -> tuple[Any, int]:
        if at >= len(line):
            raise OutsideSubset("a flow collection over several lines")
        ch = line[at]
        if ch in "[{":
            return self.flow(line, at)
        if ch in "'\"":
            return self.quoted(line, at)
        m = _FLOW_PLAIN_END.search(line, at)
        end = len(line) if m is None else m.start()
        text = line[at:end].rstrip(" ")
        if not text or text[0] in _NOT_PLAIN_START or (text[0] == "-" and text[1:2] in ("", " ")):
            raise OutsideSubset("an empty or unusual flow entry")
        value = resolve(text)
        return (self.same(value, value) if value.__class__ is str else value), end

    # -- block scalars

    def block_scalar(self, line: str, at: int, col: int) -> str:
        """A literal (``|``) or folded (``>``) scalar; ``col`` is its parent's indentation."""
        literal = line[at] == "|"
        chomp, increment, end = _header(line, at + 1)
        _end_of_line(line, end)
        self.i += 1
        indent = col + increment if increment else self._detect(col)
        text, lines = self._block_text(indent, literal, chomp)
        if not lines:
            raise OutsideSubset("an empty block scalar")
        return self.same(text, text)

    def _detect(self, col: int) -> int:
        """The indentation of a block scalar without an indicator: its first non-blank line's
        (libyaml's rule; leading blank lines longer than that go to libyaml)."""
        longest = 0
        for line in self.lines[self.i :]:
            rest = line.lstrip(" ")
            spaces = len(line) - len(rest)
            if rest:
                if spaces < longest or spaces < col + 1:
                    raise OutsideSubset("an unusual block scalar indentation")
                return spaces
            longest = max(longest, spaces)
        raise OutsideSubset("a block scalar without content")

    def _block_text(self, indent: int, literal: bool, chomp: str) -> tuple[str, int]:
        """The lines at ``indent`` folded (unless ``literal``) and chomped as libyaml does it,
        and how many content lines there were; leaves ``i`` at the line after the scalar."""
        lines, n, pad = self.lines, len(self.lines), " " * indent
        start = i = self.i
        last = -1  # the last content line
        while i < n:
            line = lines[i]
            if len(line) > indent:
                if not line.startswith(pad):
                    break
                last = i
            elif line.strip(" "):
                break
            i += 1
        body = [line[indent:] for line in lines[start:i]]  # "" for a blank line
        last = last - start if last >= 0 else -1
        self.i = i
        content = body[: last + 1]
        end = i < n or self.broken  # whether the last line of body ends with a line break
        text = "\n".join(content) if literal else _folded(content)
        if chomp != "-" and (end or last < len(body) - 1):
            text += "\n"
        if chomp == "+":
            text += "\n" * (len(body) - last - 1 - (0 if end or last == len(body) - 1 else 1))
        return text, last + 1


def _folded(content: list[str]) -> str:
    """Folded lines: a line break between two lines becomes a space, unless a line is blank
    or starts with a blank (more indented)."""
    pieces: list[str] = []
    prev = ""
    blanks = 0
    for text in content:
        if not text:
            blanks += 1
            continue
        if not prev:
            pieces.append("\n" * blanks)
        elif prev[0] != " " and text[0] != " ":
            pieces.append("\n" * blanks if blanks else " ")
        else:
            pieces.append("\n" * (blanks + 1))
        pieces.append(text)
        prev = text
        blanks = 0
    return "".join(pieces)


def _find(line: str, what: str, start: int, missing: int) -> int:
    at = line.find(what, start)
    return missing if at < 0 else at


def _is_entry(line: str, at: int) -> bool:
    """Whether a block sequence entry (``-`` then a space or the end) starts at ``at``."""
    return line[at : at + 1] == "-" and line[at + 1 : at + 2] in ("", " ")


def _blanks(line: str, at: int) -> int:
    while at < len(line) and line[at] == " ":
        at += 1
    return at


def _flow_separator(line: str, at: int, close: str) -> int:
    """After a flow entry: past its ``,`` (not a trailing one) or at the closing bracket."""
    at = _blanks(line, at)
    if line[at : at + 1] == ",":
        at = _blanks(line, at + 1)
        if line[at : at + 1] in ("", close, ","):
            raise OutsideSubset("an empty flow entry")
        return at
    if line[at : at + 1] != close:
        raise OutsideSubset("a flow entry not followed by `,` or its bracket")
    return at


def _closing(line: str, at: int) -> None:
    if at >= len(line):
        raise OutsideSubset("a flow collection over several lines")


def _end_of_line(line: str, at: int) -> None:
    """After a complete node: only blanks and a comment (after a blank) may follow."""
    rest = line[at:]
    if rest and (rest[0] != " " or rest.lstrip(" ")[:1] not in ("", "#")):
        raise OutsideSubset("text after a node")


def _header(line: str, at: int) -> tuple[str, int, int]:
    """A block scalar header's chomping (``-``, ``+`` or empty), indentation increment (0:
    detect) and the column after it."""
    chomp, increment = "", 0
    for _ in range(2):
        ch = line[at : at + 1]
        if ch in ("-", "+") and not chomp and ch:
            chomp = ch
        elif ch in tuple("123456789") and not increment:
            increment = int(ch)
        else:
            break
        at += 1
    return chomp, increment, at
