"""HTTP/1.1 GETs over one socket: the little of HTTP that reading an API server needs.

:mod:`http.client` would do the same, but importing it imports the ``email`` package (its
header parser) and ``ssl`` (even for a plain ``http://`` server): on a large cluster scan
that was about a tenth of the command's start. :class:`Wire` speaks what ``http.client``
speaks to an API server, alike on the wire and in how it fails: the request line, ``Host``
(``host:port``, the port left out only for 80), ``Accept-Encoding: identity`` and the
caller's headers (latin-1, a value with a bare line break refused as ``ValueError``); an
answer by ``Content-Length`` (a short one ends where it was cut off), chunked, or until the
connection closes; keep-alive as HTTP/1.1 and 1.0 say; ``CONNECT`` tunnels through a proxy
(``OSError("Tunnel connection failed: 407 …")`` when refused). A connection closed before
any answer raises :class:`Closed` (a ``ConnectionResetError``), an answer that is not HTTP
or a chunked one cut off :class:`WireError` (:class:`CutOff` with the bytes of that read).
TLS comes from the caller's ``ssl.SSLContext``; this module never imports ``ssl``.
"""

from __future__ import annotations

import re
import socket
from typing import Any

MAX_LINE = 65536  # bytes of a status, header or chunk-size line, as http.client allows
MAX_HEADERS = 100
_BAD_VALUE = re.compile(rb"\n(?![ \t])|\r(?![ \t\n])").search  # http.client's rule
_BAD_URL = re.compile("[\x00-\x20\x7f]").search


class WireError(Exception):
    """An answer that is not HTTP as expected (``http.client.HTTPException``'s cases)."""


class CutOff(WireError):
    """A chunked answer that ended early; ``partial``: the bytes of the read that failed."""

    def __init__(self, partial: bytes) -> None:
        super().__init__(f"IncompleteRead({len(partial)} bytes read)")
        self.partial = partial


class Closed(ConnectionResetError):
    """The server closed the connection without answering (a kept-alive one it dropped)."""

    def __init__(self) -> None:
        super().__init__("Remote end closed connection without response")


def _host_bytes(host: str) -> bytes:
    try:
        return host.encode("ascii")
    except UnicodeEncodeError:
        return host.encode("idna")


def _address(host: str) -> Any:
    """The host for ``getaddrinfo``: ASCII as bytes (a ``str`` would import the idna codec,
    which leaves ASCII names as they are anyway), anything else as given."""
    return host.encode("ascii") if host.isascii() else host


class Reply:
    """One answer's status line and headers; :meth:`read` gives its body piece by piece."""

    def __init__(self, reader: Any) -> None:
        self._fp = reader
        while True:
            version, self.status, self.reason = _status_line(reader)
            if self.status != 100:
                break
            _headers(reader)  # 100 Continue: its headers skipped
        self.headers = _headers(reader)
        if version == "HTTP/1.0":
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise WireError(version)
        self.chunked = self.headers.get("transfer-encoding", "").lower() == "chunked"
        self._chunk_left: int | None = None
        self.will_close = self._closes()
        self.length: int | None = None
        if not self.chunked:
            try:
                length = int(self.headers.get("content-length") or "")
            except ValueError:
                length = -1
            self.length = length if length >= 0 else None
        if self.status in (204, 304) or 100 <= self.status < 200:
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True
        self.done = False

    def _closes(self) -> bool:
        conn = self.headers.get("connection", "").lower()
        if self.version == 11:
            return "close" in conn
        keep = self.headers.get("keep-alive") or "keep-alive" in conn
        return not (keep or "keep-alive" in self.headers.get("proxy-connection", "").lower())

    def getheader(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def read(self, amt: int) -> bytes:
        """Up to ``amt`` bytes of the body; ``b""`` at its end (or where it was cut off)."""
        if self.done:
            return b""
        if self.chunked:
            return self._read_chunked(amt)
        if self.length is not None and amt > self.length:
            amt = self.length
        data: bytes = self._fp.read(amt) if amt else b""
        if not data:
            self.done = True
        elif self.length is not None:
            self.length -= len(data)
            self.done = not self.length
        return data

    def _read_chunked(self, amt: int) -> bytes:
        value: list[bytes] = []
        try:
            while (left := self._next_chunk()) is not None:
                if amt <= left:
                    value.append(self._exactly(amt))
                    self._chunk_left = left - amt
                    break
                value.append(self._exactly(left))
                amt -= left
                self._chunk_left = 0
            return b"".join(value)
        except CutOff:
            raise CutOff(b"".join(value)) from None

    def _next_chunk(self) -> int | None:
        left = self._chunk_left
        if left:
            return left
        if left is not None:
            self._exactly(2)  # the CRLF after a chunk
        line = self._fp.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise WireError(f"got more than {MAX_LINE} bytes when reading chunk size")
        try:
            size = int(line.split(b";", 1)[0], 16)
        except ValueError:
            raise CutOff(b"") from None
        if size == 0:
            while (trailer := self._fp.readline(MAX_LINE + 1)) not in (b"\r\n", b"\n", b""):
                if len(trailer) > MAX_LINE:
                    raise WireError(f"got more than {MAX_LINE} bytes when reading trailer line")
            self.done = True
            self._chunk_left = None
            return None
        self._chunk_left = size
        return size

    def _exactly(self, amt: int) -> bytes:
        data: bytes = self._fp.read(amt)
        if len(data) < amt:
            raise CutOff(data)
        return data


def _status_line(reader: Any) -> tuple[str, int, str]:
    raw = reader.readline(MAX_LINE + 1)
    if len(raw) > MAX_LINE:
        raise WireError(f"got more than {MAX_LINE} bytes when reading status line")
    if not raw:
        raise Closed()
    line = str(raw, "iso-8859-1")
    parts = line.split(None, 2)
    if len(parts) == 2:
        parts.append("")
    if len(parts) != 3 or not parts[0].startswith("HTTP/"):
        raise WireError(line or repr(line))
    try:
        status = int(parts[1])
    except ValueError:
        raise WireError(line) from None
    if not 100 <= status <= 999:
        raise WireError(line)
    return parts[0], status, parts[2].strip()


def _headers(reader: Any) -> dict[str, str]:
    """The header fields (names in lower case; of a repeated one, the first)."""
    out: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        raw = reader.readline(MAX_LINE + 1)
        if len(raw) > MAX_LINE:
            raise WireError(f"got more than {MAX_LINE} bytes when reading header line")
        if raw in (b"\r\n", b"\n", b""):
            return out
        text = raw.decode("iso-8859-1")
        if text[:1] in (" ", "\t"):  # a folded line: none of the fields read here
            continue
        key, _, value = text.partition(":")
        out.setdefault(key.strip().lower(), value.strip())
    raise WireError(f"got more than {MAX_HEADERS} headers")


class Wire:
    """One keep-alive connection to ``host``:``port`` (or through an ``http://`` proxy:
    ``proxy`` is ``(host, port, headers)``, a CONNECT tunnel when ``tls`` is given)."""

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float,
        tls: Any = None,
        server_name: str = "",
        proxy: tuple[str, int, dict[str, str]] | None = None,
    ) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.tls, self.server_name, self.proxy = tls, server_name, proxy
        self.sock: Any = None
        self._reader: Any = None

    def connect(self) -> None:
        host, port = (self.proxy[0], self.proxy[1]) if self.proxy else (self.host, self.port)
        sock = socket.create_connection((_address(host), port), self.timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.proxy and self.tls is not None:
                _tunnel(sock, self.host, self.port, self.proxy[2])
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_hostname=self.server_name)
        except BaseException:
            sock.close()
            raise
        self.sock = sock
        self._reader = sock.makefile("rb")

    def get(self, url: str, headers: dict[str, str]) -> Reply:
        """Send ``GET url`` with ``headers``; the answer's status and headers."""
        self.send(url, headers)
        return self.reply()

    def reply(self) -> Reply:
        """The status and headers of the answer to the request :meth:`send` wrote."""
        return Reply(self._reader)

    def send(self, url: str, headers: dict[str, str]) -> None:
        """Write ``GET url`` with ``headers`` (its answer: :meth:`reply`)."""
        if self.sock is None:
            self.connect()
        found = _BAD_URL(url)
        if found:
            raise WireError(
                f"URL can't contain control characters. {url!r} (found at least {found.group()!r})"
            )
        lines = [f"GET {url} HTTP/1.1".encode("ascii"), b"Host: " + self._host_field(url)]
        if not any(k.lower() == "accept-encoding" for k in headers):
            lines.append(b"Accept-Encoding: identity")
        for name, value in headers.items():
            data = value.encode("latin-1")
            if _BAD_VALUE(data):
                raise ValueError(f"Invalid header value {data!r}")
            lines.append(name.encode("ascii") + b": " + data)
        self.sock.sendall(b"\r\n".join(lines) + b"\r\n\r\n")

    def _host_field(self, url: str) -> bytes:
        if url.startswith("http"):  # plain HTTP through a proxy: the URL's own authority
            authority = url.split("//", 1)[1].split("/", 1)[0]
            return _host_bytes(authority)
        host = _host_bytes(self.host)
        if b":" in host:
            host = b"[" + host + b"]"
        return host if self.port == 80 else host + b":%d" % self.port

    def close(self) -> None:
        sock, reader = self.sock, self._reader
        self.sock = self._reader = None
        if reader is not None:
            reader.close()
        if sock is not None:
            sock.close()


def _tunnel(sock: Any, host: str, port: int, headers: dict[str, str]) -> None:
    """A CONNECT tunnel to ``host``:``port`` through the proxy ``sock`` is connected to."""
    lines = [b"CONNECT %s:%d HTTP/1.0\r\n" % (host.encode("ascii"), port)]
    lines += [f"{name}: {value}\r\n".encode("latin-1") for name, value in headers.items()]
    sock.sendall(b"".join(lines) + b"\r\n")
    reader = sock.makefile("rb")
    try:
        _, code, reason = _status_line(reader)
        if code != 200:
            raise OSError(f"Tunnel connection failed: {code} {reason.strip()}")
        while (line := reader.readline(MAX_LINE + 1)) not in (b"\r\n", b"\n", b""):
            if len(line) > MAX_LINE:
                raise WireError(f"got more than {MAX_LINE} bytes when reading header line")
    finally:
        reader.close()
