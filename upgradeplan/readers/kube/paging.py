"""The pages of one list, the next one asked for as soon as the one before it has arrived.

A list of thousands of objects comes in pages of 500, each naming the next by its
``metadata.continue`` token. Waiting for a page to be parsed before asking for the next
leaves the API server idle while the reader parses, and the reader idle while the server
builds the next page. :class:`Pager` reads the token from the raw answer (:func:`peek_continue`)
as soon as it has arrived and writes the request for the next page at once, in the thread that
received this one and before this one is parsed (a thread started first would wait for the
interpreter lock behind that parse); a thread then reads its answer while the page is parsed.
The reader takes that answer when it asks for the same page, so the requests are exactly
those of asking page after page: a token is asked for once, only the token the parsed page
names is ever used, and an answer the reader does not ask for (a token read wrongly, a list
ended by a fault) is dropped. Only answers of at least ``min_bytes`` are
looked into: a small page is parsed before the next could arrive anyway, and a page without
items — after a few of which in a row the reader stops, token or not — is always small.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Mapping

from upgradeplan.readers.kube.session import Answer, Session
from upgradeplan.readers.kube.transport import Sent

_METADATA = b'"metadata"'
_WINDOW = 64 * 1024  # bytes after the key read for the metadata (a token is far shorter)
_DECODER = json.JSONDecoder()
MIN_BYTES = 16 * 1024  # answers smaller than this are not looked into


def peek_continue(data: bytes) -> str | None:
    """The ``metadata.continue`` token of a list answer read from its raw text before the
    whole is parsed: ``""`` when the metadata has none, None when where the list's own
    metadata is cannot be told for sure.

    The API server writes a list's metadata first (typed lists: the built-in kinds) or last
    (custom resources, written from a map with its keys sorted); so only a ``"metadata"``
    key before any other object or array, or one whose object closes the whole answer, is
    read. The caller still compares the token with the parsed page's before using it.
    """
    first = data.find(_METADATA)
    if first < 0:
        return None
    head = data[:first]
    if head.lstrip()[:1] == b"{" and head.count(b"{") == 1 and b"[" not in head:
        return _token(data[first + len(_METADATA) : first + len(_METADATA) + _WINDOW], False)
    last = data.rfind(_METADATA)
    if len(data) - last > _WINDOW:
        return None
    return _token(data[last + len(_METADATA) :], True)


def _token(after: bytes, closes: bool) -> str | None:
    """The token of the metadata object right after its key (``: {…}``); with ``closes``,
    only when that object is followed by the answer's closing brace alone."""
    text = after.decode("utf-8", "replace")
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] != ":":
        return None
    start += 1
    start += len(text[start:]) - len(text[start:].lstrip())
    try:
        meta, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    rest = text[end:].strip()
    if not isinstance(meta, dict) or (rest != "}" if closes else rest[:1] not in (",", "}")):
        return None
    return str(meta.get("continue") or "")


class _Fetch:
    """One page asked for on a thread; its answer, or what it raised, for whoever takes it."""

    def __init__(self, run: Callable[[], Answer]) -> None:
        self._run = run
        self._box: list[Answer | BaseException] = []
        self.thread = threading.Thread(target=self._work, daemon=True)

    def _work(self) -> None:
        try:
            self._box.append(self._run())
        except BaseException as exc:  # handed to the taker
            self._box.append(exc)

    def result(self) -> Answer:
        self.thread.join()
        got = self._box[0]
        if isinstance(got, BaseException):
            raise got
        return got


class Pager:
    """The pages of one list at ``path``: :meth:`get` for each page, :meth:`close` at the end
    (waits for a page asked for ahead that nobody took, and drops it)."""

    def __init__(
        self,
        session: Session,
        path: str,
        query_for: Callable[[str], dict[str, str]],
        min_bytes: int | None = None,
    ) -> None:
        self.session = session
        self.path = path
        self.query_for = query_for  # the query of the page a continue token names
        self.min_bytes = MIN_BYTES if min_bytes is None else min_bytes
        self._lock = threading.Lock()
        self._ahead: dict[str, _Fetch] = {}  # token -> the page asked for ahead
        self._asked: set[str] = set()  # tokens asked for ahead since the list (re)started
        self._closed = False

    def get(self, query: Mapping[str, str]) -> Answer:
        """The answer to ``query``: the page asked for ahead with the same query, else now."""
        token = query.get("continue", "")
        with self._lock:
            ahead = self._ahead.pop(token, None) if token else None
        if ahead is not None and dict(query) == self.query_for(token):
            return ahead.result()
        if ahead is not None:
            _drop(ahead)
        return self._fetch(dict(query))

    def restart(self) -> None:
        """The list starts again from its first page (an expired token): nothing ahead kept."""
        self._drop_all()
        with self._lock:
            self._asked.clear()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._drop_all()

    def _fetch(self, query: dict[str, str], sent: Sent | None = None) -> Answer:
        return self.session.get(self.path, query, self._arrived, sent)

    def _arrived(self, data: bytes) -> None:
        """A page's raw answer: ask for the page its token names right away (the request
        written here, before this page is parsed; its answer read on a thread)."""
        if len(data) < self.min_bytes:
            return
        token = peek_continue(data)
        if not token:
            return
        with self._lock:
            if self._closed or token in self._asked:
                return
            self._asked.add(token)
            query = self.query_for(token)
            sent = self.session.send(self.path, query)
            ahead = _Fetch(lambda: self._fetch(query, sent))
            self._ahead[token] = ahead
            ahead.thread.start()

    def _drop_all(self) -> None:
        with self._lock:
            left = list(self._ahead.values())
            self._ahead.clear()
        for ahead in left:
            _drop(ahead)


def _drop(ahead: _Fetch) -> None:
    """Wait for a page nobody takes (bounded by the request's timeout) and forget it."""
    with contextlib.suppress(Exception):  # an answer nobody asked for: how it failed is moot
        ahead.result()
