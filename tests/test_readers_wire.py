"""readers/kube/wire against http.client: the same answers read the same way.

A loopback server sends canned answers (by Content-Length, chunked, until the connection
closes, cut off, 100 Continue first, HTTP/1.0); each is read once by ``Wire`` and once by
``http.client`` (the reference), in pieces as the transport reads them, and the status,
reason, headers read, body, whether the connection closes, or how the read failed must
agree. Every server a test starts is stopped by it.
"""

from __future__ import annotations

import http.client
import socket
import threading
from collections.abc import Iterator

import pytest

from upgradeplan.readers.kube.wire import Closed, CutOff, Wire, WireError

BODY = b'{"kind": "List", "items": [' + b", ".join(b'{"n": %d}' % i for i in range(300)) + b"]}"


def _chunked(body: bytes, size: int = 1000, extension: bytes = b"") -> bytes:
    out = b""
    for at in range(0, len(body), size):
        piece = body[at : at + size]
        out += b"%x%s\r\n%s\r\n" % (len(piece), extension, piece)
    return out + b"0\r\nX-Trailer: yes\r\n\r\n"


ANSWERS = {
    "length": b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY),
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + _chunked(BODY),
    "chunked, extensions, one big chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n"
    b"\r\n" + _chunked(BODY, 1 << 20, b";name=value"),
    "until closed": b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + BODY,
    "1.0, no length": b"HTTP/1.0 200 OK\r\n\r\n" + BODY,
    "1.0 keep-alive": b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}",
    "continue first": b"HTTP/1.1 100 Continue\r\n\r\n"
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    "status, retry-after": b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\n"
    b"Content-Length: 2\r\n\r\n{}",
    "no reason": b"HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n",
    "cut off by length": b"HTTP/1.1 200 OK\r\nContent-Length: 999999\r\n\r\n" + BODY,
    "chunked cut off": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + _chunked(BODY)[:2500],
    "chunk size not hex": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "not http": b"<html>502 Bad Gateway</html>\r\n",
    "nothing": b"",
    "204": b"HTTP/1.1 204 No Content\r\n\r\n",
}


class _Canned:
    """Answers every connection with ``answer`` and closes it."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.stopping = False
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    got = conn.recv(4096)
                    if not got:
                        break
                    data += got
                conn.sendall(self._answer(data))

    def _answer(self, request: bytes) -> bytes:
        """What is sent back for ``request`` (the head the client wrote)."""
        return self.answer

    def stop(self) -> None:
        self.stopping = True
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def canned() -> Iterator[list[_Canned]]:
    servers: list[_Canned] = []
    yield servers
    for server in servers:
        server.stop()


def _read(resp: object) -> tuple[bytes, str]:
    """The body in pieces of 4 KiB, as the transport reads it; and how the read ended."""
    chunks: list[bytes] = []
    try:
        while chunk := resp.read(4096):  # type: ignore[attr-defined]
            chunks.append(chunk)
    except (http.client.IncompleteRead, CutOff) as exc:
        return b"".join(chunks), f"cut off after {len(exc.partial)}"
    return b"".join(chunks), "end"


def _by_http_client(port: int) -> tuple[object, ...]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/x", headers={"Accept": "application/json"})
        resp = conn.getresponse()
    except http.client.RemoteDisconnected:
        return ("closed",)
    except http.client.HTTPException as exc:
        return ("not http", str(exc))
    body, ended = _read(resp)
    head = (resp.status, resp.reason, resp.getheader("Retry-After"), resp.will_close)
    conn.close()
    return (*head, body, ended)


def _by_wire(port: int) -> tuple[object, ...]:
    wire = Wire("127.0.0.1", port, 5)
    try:
        resp = wire.get("/x", {"Accept": "application/json"})
    except Closed:
        return ("closed",)
    except WireError as exc:
        return ("not http", str(exc))
    body, ended = _read(resp)
    head = (resp.status, resp.reason, resp.getheader("Retry-After"), resp.will_close)
    wire.close()
    return (*head, body, ended)


@pytest.mark.parametrize("name", list(ANSWERS))
def test_an_answer_reads_as_http_client_reads_it(canned: list[_Canned], name: str) -> None:
    server = _Canned(ANSWERS[name])
    canned.append(server)
    assert _by_wire(server.port) == _by_http_client(server.port)


def test_the_request_is_what_http_client_sends(canned: list[_Canned]) -> None:
    seen: list[bytes] = []

    class Recording(_Canned):
        def _answer(self, request: bytes) -> bytes:
            seen.append(request)
            return super()._answer(request)

    server = Recording(ANSWERS["length"])
    canned.append(server)
    headers = {"Accept": "application/json", "Authorization": "Bearer t", "User-Agent": "u/1"}
    wire = Wire("127.0.0.1", server.port, 5)
    wire.get("/api/v1/nodes?limit=500", headers).read(1 << 20)
    wire.close()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    conn.request("GET", "/api/v1/nodes?limit=500", headers=headers)
    conn.getresponse().read()
    conn.close()
    assert seen[0] == seen[1]


def test_a_header_value_with_a_line_break_is_refused_before_sending() -> None:
    wire = Wire("127.0.0.1", 9, 5)
    wire.sock = object()  # never written to: the value is refused first
    with pytest.raises(ValueError):
        wire.get("/x", {"Authorization": "Bearer a\r\nX-Injected: 1"})
    with pytest.raises(WireError, match="control characters"):
        wire.get("/x y", {})
