"""Pasted text read as messages: a bounded window, lines joined, JSON unescaped, names read.

What support is pasted is rarely one message per line. :func:`normalise` turns the paste into
*messages*, each with the numbers of the lines it came from:

- a controller's JSON log line (helm-controller, kustomize-controller, source-controller,
  kubelet's JSON format) is decoded, so ``Invalid value: \\"v1alpha2\\"`` reads as written;
- timestamps and prefixes (RFC 3339, klog's ``E1130 10:00:00.000000 1 file.go:12]``,
  ``kubectl logs --prefix``'s ``[pod/x/c]``) are stripped;
- a YAML scalar ``kubectl get -o yaml`` folded or quoted over several lines, and a literal block
  (``message: |-``), are joined; a block mapping (a ``matchLabels`` printed key by key) is also
  read in flow form (``matchLabels: {a: b, c: d}``);
- an event row (``kubectl describe``'s Events, ``kubectl get events``) or a sentence ending in
  ``:`` takes the lines that continue it (helm-controller's drift events print the objects on
  the lines after ``has drifted from the desired state:``).

:func:`read_paste` reads at most the last :data:`WINDOW_BYTES` of an input, whole lines, and
refuses binary input; :func:`read_names` reads the charts, releases and objects a message names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from msgspec import Struct

from upgradeplan import errors

WINDOW_BYTES = 8 * 1024 * 1024  # the part of a longer paste that is read: its last 8 MiB
MESSAGE_CHARS = 16 * 1024  # a line or joined message is cut here before matching
_JOIN_LINES = 40  # at most this many lines joined into one message
_CHUNK = 1 << 20


# -- reading the paste --------------------------------------------------------------------


class Paste(Struct, frozen=True):
    """The text diagnose reads: all of a paste, or its last :data:`WINDOW_BYTES`."""

    text: str
    first_line: int = 1  # the number, in the whole input, of the text's first line
    skipped_bytes: int = 0  # bytes before the window, not read

    @property
    def note(self) -> str:
        if not self.skipped_bytes:
            return ""
        return (
            f"the input is larger than {WINDOW_BYTES // (1024 * 1024)} MiB: read its last "
            f"{WINDOW_BYTES // (1024 * 1024)} MiB, from line {self.first_line} "
            f"({self.skipped_bytes} bytes before it not read)"
        )


def read_paste(stream: IO[bytes], name: str, window: int = WINDOW_BYTES) -> Paste:
    """Read ``stream`` keeping at most its last ``window`` bytes (whole lines) in memory.

    A NUL byte, or text that is mostly not UTF-8, is a :class:`errors.BadInput` (exit 2).
    """
    buf = bytearray()
    offset = 0  # bytes of the input before buf
    dropped_lines = 0
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        nul = chunk.find(b"\0")
        if nul >= 0:
            raise errors.BadInput(
                f"{name}: binary input (a NUL byte at byte {offset + len(buf) + nul})",
                hint="diagnose reads text: pass logs, events or `kubectl … -o yaml` output",
            )
        buf += chunk
        if len(buf) > 2 * window:
            offset, dropped_lines = _trim(buf, window, offset, dropped_lines)
        if len(chunk) < _CHUNK:  # a buffered read returns less only at the end (Ctrl-D)
            break
    if len(buf) > window:
        offset, dropped_lines = _trim(buf, window, offset, dropped_lines)
    text = buf.decode("utf-8", errors="replace")
    bad = text.count("\ufffd")
    if bad > 16 and bad * 20 > len(text):
        raise errors.BadInput(
            f"{name}: binary input ({bad} of {len(text)} characters are not UTF-8)",
            hint="diagnose reads text: pass logs, events or `kubectl … -o yaml` output",
        )
    return Paste(text, dropped_lines + 1, offset)


def _trim(buf: bytearray, window: int, offset: int, dropped: int) -> tuple[int, int]:
    cut = len(buf) - window
    nl = buf.find(b"\n", cut)
    end = nl + 1 if nl >= 0 else cut
    dropped += buf.count(b"\n", 0, end)
    del buf[:end]
    return offset + end, dropped


# -- normalising ----------------------------------------------------------------------------


class Message(Struct, frozen=True):
    """One message of the paste, joined and unescaped, with where it came from."""

    text: str
    lines: tuple[int, ...]  # numbers of its lines in the original paste
    where: str = "any"  # logs | events | status | any (not known)
    reason: str = ""  # the event or condition reason it was read with
    names: tuple[str, ...] = ()  # charts, releases and objects it names (lower case)


# RFC 3339 / ISO timestamps, optionally bracketed; klog's header; kubectl logs --prefix
_PREFIXES = (
    re.compile(
        r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]?[ \t]+"
    ),
    re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{1,9}[ \t]+\d+ [\w.-]{1,80}:\d{1,6}\] "),
    re.compile(r"^\[pod/[^\]\s]{1,300}\] "),
)
# a YAML key and what follows it: `  message: …`, `- reason: …`
_YAML_KEY = re.compile(
    r"^(?P<ind>[ \t]*)(?P<dash>- )?(?P<key>[\w.\-/\"']{1,200}):(?: (?P<val>.*)|)$"
)
_BLOCK = re.compile(r"^[|>][-+]?[1-9]?(?:[ \t]+#.*)?$")
# kubectl describe's Events rows: Type Reason Age From Message
_DESCRIBE_EVENT = re.compile(r"^[ \t]+(?P<type>Normal|Warning)[ \t]+(?P<reason>\w{1,80})[ \t]+")
# kubectl get events [-A]: [NAMESPACE] LAST-SEEN TYPE REASON OBJECT MESSAGE
_GET_EVENT = re.compile(
    r"^(?:(?P<ns>[a-z0-9][a-z0-9-]{0,62})[ \t]+)?(?P<age>\S{1,20})[ \t]+(?P<type>Normal|Warning)"
    r"[ \t]+(?P<reason>\w{1,80})[ \t]+(?P<object>[\w.-]{1,80}/[\w.-]{1,253})[ \t]+"
)
# a describe field: `  Message:  …`, `Name:  …`
_DESCRIBE_FIELD = re.compile(
    r"^(?P<ind>[ \t]*)(?P<key>[A-Z][A-Za-z ]{0,60}):(?:[ \t]+(?P<val>.*)|)$"
)
_TABLE_HEADER = re.compile(r"^[ \t]*(?:NAME|NAMESPACE|LAST SEEN|Type)[ \t]{2,}[A-Z]")


def _strip_prefixes(line: str) -> tuple[str, bool]:
    stripped = False
    for rx in _PREFIXES:
        m = rx.match(line)
        if m is not None:
            line = line[m.end() :]
            stripped = True
    return line, stripped


def _is_start(line: str) -> bool:
    """A line that begins something of its own (not the continuation of a message)."""
    if not line.strip():
        return True
    s = line.lstrip()
    if s.startswith(("{", "---", "Events:", "```")):
        return True
    if _DESCRIBE_EVENT.match(line) or _GET_EVENT.match(line) or _TABLE_HEADER.match(line):
        return True
    if any(rx.match(line) for rx in _PREFIXES):
        return True
    m = _YAML_KEY.match(line)
    if m is not None and " " not in m.group("key"):
        return True
    return _DESCRIBE_FIELD.match(line) is not None and line[:1] in (" ", "\t")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _json_strings(doc: dict[str, Any]) -> list[str]:
    """The string values of a JSON log line and of the objects in it (two levels)."""
    out: list[str] = []
    for v in doc.values():
        if type(v) is str:
            out.append(v)
        elif type(v) is dict:
            out.extend(x for x in v.values() if type(x) is str)
        elif type(v) is list:
            out.extend(x for x in v if type(x) is str)
    return out


def _json_message(body: str, number: int) -> Message | None:
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not isinstance(doc, dict):
        return None
    parts = _json_strings(doc)
    names: list[str] = []
    kind = doc.get("controllerKind")  # controller-runtime: "HelmRelease":{"name":…}
    if type(kind) is str:
        ref = doc.get(kind)
        if type(ref) is dict and type(ref.get("name")) is str:
            names.append(ref["name"].lower())
    reason = doc.get("reason") if isinstance(doc.get("reason"), str) else ""
    text = " ".join(parts).replace("\r", " ").replace("\n", " ").replace("\t", " ")
    return Message(text, (number,), "logs", str(reason), tuple(names))


def _unescape_double(text: str) -> str:
    return (
        text.replace("\\\\", "\0")
        .replace('\\"', '"')
        .replace("\\n", " ")
        .replace("\\t", " ")
        .replace("\0", "\\")
    )


def _quoted(lines: Sequence[str], i: int, val: str, limit: int) -> tuple[str, int]:
    """A single- or double-quoted YAML scalar from ``val`` on; (text, index of its last line)."""
    quote = val[0]
    pieces = [val[1:]]
    j = i
    # each line is searched for the closing quote once (a scalar spans at most `limit` lines)
    while j + 1 < limit and _closing(pieces[-1], quote) < 0:
        j += 1
        nxt = lines[j].strip()
        if pieces[-1].endswith("\\") and quote == '"':
            pieces[-1] = pieces[-1][:-1] + nxt
        else:
            pieces.append(nxt)
    end = _closing(pieces[-1], quote)
    if end >= 0:
        pieces[-1] = pieces[-1][:end]
    text = " ".join(p for p in pieces if p)
    text = text.replace("''", "'") if quote == "'" else _unescape_double(text)
    return text, j


def _closing(text: str, quote: str) -> int:
    """Where the closing ``quote`` of a YAML scalar is in ``text`` (-1: not on this line)."""
    k = text.find(quote)
    while k >= 0:
        if quote == "'":
            if not text.startswith("''", k):
                return k
            k = text.find(quote, k + 2)
            continue
        b = k
        while b > 0 and text[b - 1] == "\\":
            b -= 1
        if (k - b) % 2 == 0:
            return k
        k = text.find(quote, k + 1)
    return -1


def _closed(text: str, quote: str) -> bool:
    return _closing(text, quote) >= 0


def normalise(text: str, first_line: int = 1) -> list[Message]:
    """The paste as messages: lines joined where one message spans several, unescaped,
    prefixes stripped; each with its original line numbers (counted from ``first_line``)."""
    lines = [ln[:MESSAGE_CHARS] for ln in text.split("\n")]
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    out: list[Message] = []
    n = len(lines)
    i = 0
    while i < n:
        raw = lines[i]
        number = first_line + i
        if not raw.strip():
            i += 1
            continue
        body, prefixed = _strip_prefixes(raw)
        s = body.strip()
        if s.startswith("{") and s.endswith("}"):
            msg = _json_message(s, number)
            if msg is not None:
                out.append(msg)
                i += 1
                continue
        limit = min(n, i + _JOIN_LINES)
        m = _YAML_KEY.match(body)
        if m is not None and m.group("val") and " " not in m.group("key"):
            val = m.group("val")
            key_ind = _indent(body) + (2 if m.group("dash") else 0)
            if val[:1] in ("'", '"') and not _closed(val[1:], val[0]):
                joined, j = _quoted(lines, i, val, limit)
                out.append(_status(m.group("key"), joined, lines, i, j, first_line))
                i = j + 1
                continue
            if _BLOCK.match(val):
                j = i
                block: list[str] = []
                while j + 1 < limit and (
                    not lines[j + 1].strip() or _indent(lines[j + 1]) > key_ind
                ):
                    j += 1
                    block.append(lines[j].strip())
                joined = " ".join(b for b in block if b)
                out.append(_status(m.group("key"), joined, lines, i, j, first_line))
                i = j + 1
                continue
            if val[:1] not in ("{", "[", "&", "*", "!", "'", '"'):
                j = i
                more = [val]
                while (
                    j + 1 < limit
                    and lines[j + 1].strip()
                    and _indent(lines[j + 1]) > key_ind
                    and _YAML_KEY.match(lines[j + 1]) is None
                    and not lines[j + 1].lstrip().startswith("- ")
                ):
                    j += 1
                    more.append(lines[j].strip())
                if j > i:
                    joined = " ".join(more)
                    out.append(_status(m.group("key"), joined, lines, i, j, first_line))
                    i = j + 1
                    continue
        # an event row, a describe Message field, or a sentence ending in ':' takes the
        # lines that continue it
        where, reason = ("logs" if prefixed else "any"), ""
        names: tuple[str, ...] = ()
        ev = _DESCRIBE_EVENT.match(body) or _GET_EVENT.match(body)
        if ev is not None:
            where, reason = "events", ev.group("reason")
            obj = ev.groupdict().get("object")
            if obj:
                names = (obj.split("/", 1)[1].lower(),)
        field_m = _DESCRIBE_FIELD.match(body) if ev is None else None
        opens = (
            ev is not None
            or (field_m is not None and field_m.group("key") in ("Message", "Reason"))
            or (s.endswith(":") and " " in s)
        )
        j = i
        parts = [s]
        if opens:
            while j + 1 < limit:
                nxt = lines[j + 1]
                cont = nxt.strip()
                if not cont:
                    break
                after_colon = parts[-1].endswith(":")
                listed = after_colon or cont.startswith("- ") or cont.endswith(":")
                if _is_start(nxt) and not (listed and _indent(nxt) <= _indent(body) + 2):
                    break
                j += 1
                parts.append(cont)
        joined = " ".join(parts)
        # a JSON string inside text that is not one JSON line (nor a YAML "…" scalar): the
        # pretty-printed JSON of `kubectl get events -o json`, a log line quoting an error
        if '\\"' in joined or "\\n" in joined:
            joined = _unescape_double(joined)
        span = tuple(range(number, first_line + j + 1))
        out.append(Message(joined, span, where, reason, names))
        i = j + 1
    out.extend(_flow_maps(lines, first_line))
    return out


def _status(key: str, joined: str, lines: Sequence[str], i: int, j: int, first: int) -> Message:
    """A YAML value joined from lines i..j; its reason from a sibling ``reason:`` key."""
    key = key.strip("\"'")
    reason = ""
    if key == "message":
        ind = _indent(lines[i]) + (2 if lines[i].lstrip().startswith("- ") else 0)
        for k in range(max(0, i - 8), min(len(lines), j + 9)):
            if i <= k <= j:
                continue
            m = _YAML_KEY.match(lines[k])
            if m is not None and m.group("key") == "reason" and m.group("val"):
                k_ind = _indent(lines[k]) + (2 if m.group("dash") else 0)
                if k_ind == ind:
                    reason = m.group("val").strip("\"'")
                    break
    return Message(f"{key}: {joined}", tuple(range(first + i, first + j + 1)), "status", reason)


def _flow_maps(lines: Sequence[str], first: int) -> Iterator[Message]:
    """Block mappings of scalars (``matchLabels:`` then a key a line) read in flow form."""
    n = len(lines)
    for i, line in enumerate(lines):
        m = _YAML_KEY.match(line)
        if m is None or m.group("val") or i + 1 >= n:
            continue
        ind = _indent(line) + (2 if m.group("dash") else 0)
        text, j = _flow(lines, i + 1, ind, min(n, i + 1 + _JOIN_LINES), 0)
        if j > i + 1 and text:
            yield Message(f"{m.group('key')}: {text}", tuple(range(first + i, first + j)), "status")


def _flow(lines: Sequence[str], i: int, parent: int, limit: int, depth: int) -> tuple[str, int]:
    items: list[str] = []
    child = -1
    while i < limit:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        ind = _indent(line)
        if ind <= parent or (child >= 0 and ind != child):
            if child >= 0 and ind > child:
                return "", i  # not a plain block mapping
            break
        m = _YAML_KEY.match(line)
        if m is None or m.group("dash"):
            return "", i
        child = ind
        if m.group("val") is None or m.group("val") == "":
            if depth >= 3:
                return "", i
            inner, i = _flow(lines, i + 1, ind, limit, depth + 1)
            if not inner:
                return "", i
            items.append(f"{m.group('key')}: {inner}")
            continue
        items.append(f"{m.group('key')}: {m.group('val').strip()}")
        i += 1
    return ("{" + ", ".join(items) + "}" if items else ""), i


# -- names in the paste ------------------------------------------------------------------------

# where a name follows a marker (found with str.find, then one anchored match there):
# helm-controller's "Helm upgrade failed for release NS/NAME with chart CHART@VERSION", and
# HelmRelease/NS/NAME, HelmRelease NS/NAME, helmrelease/NAME.NS (flux logs, events)
_AFTER_MARKER = (
    (
        "release ",
        re.compile(
            r"release [a-z0-9-]{1,63}/([a-z0-9][a-z0-9.-]{0,252}?)(?:\.v\d+)?(?=[\s:,]|$)", re.I
        ),
    ),
    ("with chart ", re.compile(r"with chart ([a-z0-9][a-z0-9-]{0,62})@", re.I)),
    (
        "helmrelease",
        re.compile(r"HelmRelease[/ ](?:[a-z0-9-]{1,63}/)?([a-z0-9][a-z0-9-]{0,62})\b", re.I),
    ),
)
# Helm's schema refusal lists each chart as "NAME:" before its errors ("- at '…'", "- (root)")
_CHART = re.compile(r"[a-z0-9][a-z0-9-]{0,62}", re.I)


def read_names(text: str) -> set[str]:
    """The charts, releases and objects ``text`` names (lower case)."""
    out: set[str] = set()
    low = text.lower()
    for marker, rx in _AFTER_MARKER:
        k = low.find(marker)
        while k >= 0:
            m = rx.match(text, k)
            if m is not None:
                out.add(m.group(1).lower())
            k = low.find(marker, k + 1)
    k = text.find(": - ")
    while k >= 0:
        token = text[max(0, k - 64) : k].rsplit(None, 1)[-1] if k else ""
        if _CHART.fullmatch(token):
            out.add(token.lower())
        k = text.find(": - ", k + 1)
    return out


_NAME_MARKERS = ("release ", "with chart ", "chart(s)", ": - ", "HelmRelease", "helmrelease/")


def names_in(text: str) -> set[str]:
    """:func:`read_names` of a message, skipping the regular expressions where no marker
    they need is in it (most lines of a large log)."""
    if len(text) > 4096 or not any(m in text for m in _NAME_MARKERS):
        return set()
    return read_names(text)


def paste_names(messages: Iterable[Message]) -> set[str]:
    out: set[str] = set()
    for msg in messages:
        out.update(msg.names)
        out.update(names_in(msg.text))
    return out


__all__ = [
    "MESSAGE_CHARS",
    "WINDOW_BYTES",
    "Message",
    "Paste",
    "names_in",
    "normalise",
    "paste_names",
    "read_names",
    "read_paste",
]
