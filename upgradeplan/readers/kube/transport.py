"""GET JSON from a Kubernetes API server with the standard library (http.client and ssl).

One :class:`HttpTransport` per context: an ``ssl.SSLContext`` built once from the
:class:`~upgradeplan.readers.kube.kubeconfig.Connection` (certificate authority as a file or
as data, a client certificate and key, or no verification at all), keep-alive connections
(:class:`Wire`, an :class:`http.client.HTTPConnection`: one per request in flight; an idle
one serves the next request of any thread), a timeout per request. It only fetches; retries
and the meaning of statuses are the cluster reader's. Failures are two kinds:
:class:`Unreachable` (no connection or TLS handshake: the context cannot be read at all)
and :class:`NoAnswer` (a timeout, a reset, an answer cut off or too large: ``cause`` says
which).

Every fetch is bounded as a whole, not per socket read: a watchdog shuts the socket down
when the request's time is up, so a server that trickles its answer one byte at a time ends
as a timeout; an answer larger than ``MAX_BODY`` bytes (its ``Content-Length``, or what
arrived) is refused.

Key material given as data is written to private temporary files (mode 0600 in a 0700
folder) only for ``load_cert_chain`` and removed right after. Nothing here logs.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Protocol
from urllib.parse import SplitResult, urlsplit

from msgspec import Struct

from upgradeplan import __version__
from upgradeplan.errors import BadInput
from upgradeplan.readers.kube.kubeconfig import Connection
from upgradeplan.unreadable import CUT_OFF, TIMEOUT, TOO_LARGE

USER_AGENT = f"upgradeplan/{__version__}"
MAX_BODY = 256 * 1024 * 1024  # bytes of one answer (a page of 500 objects is far below)
_CHUNK = 256 * 1024


class Unreachable(Exception):
    """The API server could not be reached at all (no connection, a failed TLS handshake)."""


class NoAnswer(Exception):
    """No usable answer this time: a timeout, a dropped connection, a cut-off answer."""

    def __init__(self, message: str, cause: str = CUT_OFF) -> None:
        super().__init__(message)
        self.cause = cause  # TIMEOUT, CUT_OFF or TOO_LARGE


class Response(Struct, frozen=True):
    status: int
    reason: str
    data: bytes
    retry_after: float | None = None  # seconds, from a Retry-After header
    headers: tuple[tuple[str, str], ...] = ()  # as received (chart downloads read Location)


def retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header (delta-seconds only; a date is ignored)."""
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < 86400 else None


class Transport(Protocol):
    """What the cluster reader needs from a way of talking to one API server."""

    def fetch(self, path: str, timeout: float) -> Response:
        """GET ``path`` (with its query); raises Unreachable or NoAnswer."""
        ...

    def close(self) -> None: ...


class Wire(http.client.HTTPConnection):
    """One keep-alive HTTP/1.1 connection, its socket wrapped in TLS when given a context
    (checked against ``server_name``); through an ``http://`` proxy, a CONNECT tunnel for TLS
    (plain HTTP asks the proxy for the full URL)."""

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float,
        tls: ssl.SSLContext | None,
        server_name: str,
        proxy: str = "",
    ) -> None:
        via = urlsplit(proxy) if proxy else None
        if via is not None and via.hostname:
            super().__init__(via.hostname, via.port or 80, timeout=timeout)
            if tls is not None:
                self.set_tunnel(host, port, headers=_proxy_headers(via))
        else:
            super().__init__(host, port, timeout=timeout)
        self.tls = tls
        self.server_name = server_name

    def connect(self) -> None:
        super().connect()  # sets TCP_NODELAY, and opens the proxy's tunnel
        if self.tls is not None:
            self.sock = self.tls.wrap_socket(self.sock, server_hostname=self.server_name)

    def send_get(self, url: str, headers: dict[str, str]) -> None:
        """Write ``GET url`` with ``headers``; its answer: :meth:`getresponse`."""
        self.putrequest("GET", url)
        for name, value in headers.items():
            self.putheader(name, value)
        self.endheaders()


def _proxy_headers(via: SplitResult) -> dict[str, str]:
    """``Proxy-Authorization`` for a proxy URL with a user name (and password)."""
    if not via.username:
        return {}
    import base64
    from urllib.parse import unquote

    pair = f"{unquote(via.username)}:{unquote(via.password or '')}".encode()
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


def tls_context(conn: Connection) -> ssl.SSLContext:
    """The client TLS settings of one context; BadInput naming the file that cannot be used."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.set_alpn_protocols(["http/1.1"])
    try:
        if conn.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif conn.ca_data is not None:
            pem = conn.ca_data.lstrip().startswith(b"-----")
            context.load_verify_locations(cadata=conn.ca_data.decode() if pem else conn.ca_data)
        elif conn.ca_file is not None:
            context.load_verify_locations(cafile=str(conn.ca_file))
        else:
            context.load_default_certs()
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise BadInput(f"the certificate authority cannot be used ({exc})") from None
    if conn.cert_data is not None or conn.cert_file is not None:
        _load_client_certificate(context, conn)
    return context


def _load_client_certificate(context: ssl.SSLContext, conn: Connection) -> None:
    import shutil
    import tempfile

    folder = ""
    if conn.cert_file is None or conn.key_file is None:
        folder = tempfile.mkdtemp(prefix="upgradeplan-tls-")  # mode 0700
    try:
        cert = conn.cert_file or _private_file(folder, "client.crt", conn.cert_data or b"")
        key = conn.key_file or _private_file(folder, "client.key", conn.key_data or b"")
        context.load_cert_chain(str(cert), str(key), password=_no_password)
    except (OSError, ValueError) as exc:
        raise BadInput(f"the client certificate or key cannot be used ({exc})") from None
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def _private_file(folder: str, name: str, data: bytes) -> Path:
    path = Path(folder) / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return path


def _no_password() -> bytes:
    raise ValueError("the key is encrypted (kubeconfig keys cannot have a passphrase)")


class Sent(Struct, frozen=True):
    """A request :meth:`HttpTransport.send` wrote: its path, connection and deadline."""

    path: str
    wire: Wire
    reused: bool  # the connection was kept alive from before
    deadline: float  # monotonic seconds
    budget: float  # the seconds it was given when written


class HttpTransport:
    """Keep-alive GETs to one API server; thread-safe (one connection per request in flight,
    idle ones reused by whichever thread asks next)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.tls = tls_context(conn) if conn.scheme == "https" else None
        self.server_name = conn.server_name or conn.host
        self.headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if conn.authorization:
            self.headers["Authorization"] = conn.authorization
        self.prefix = conn.base_path
        if conn.proxy and self.tls is None:  # plain HTTP through a proxy: the absolute URL
            self.prefix = f"http://{conn.host}:{conn.port}{conn.base_path}"
            self.headers.update(_proxy_headers(urlsplit(conn.proxy)))
        self.connections = 0  # opened so far (each a TCP connection, and a TLS handshake)
        self._lock = threading.Lock()
        self._idle: list[Wire] = []
        self._made: list[Wire] = []

    def _take(self, timeout: float) -> tuple[Wire, bool]:
        """An idle connection, else a new one; and whether it was kept alive from before."""
        with self._lock:
            http_conn = self._idle.pop() if self._idle else None
        if http_conn is not None and http_conn.sock is not None:
            http_conn.timeout = timeout
            http_conn.sock.settimeout(timeout)
            return http_conn, True
        http_conn = Wire(
            self.conn.host, self.conn.port, timeout, self.tls, self.server_name, self.conn.proxy
        )
        with self._lock:
            self._made.append(http_conn)
            self.connections += 1
        try:
            http_conn.connect()
        except OSError as exc:  # ssl.SSLError among them
            http_conn.close()
            raise Unreachable(self._unreachable(exc, timeout)) from None
        return http_conn, False

    def _unreachable(self, exc: OSError, timeout: float) -> str:
        if isinstance(exc, ssl.SSLError):
            return f"TLS handshake with {self.conn.server} failed: {exc}"
        if isinstance(exc, ConnectionRefusedError):
            return f"{self.conn.server}: connection refused"
        if isinstance(exc, TimeoutError):
            return f"{self.conn.server}: no connection within {timeout:g}s"
        return f"{self.conn.server}: {exc.strerror or exc}"

    def send(self, path: str, timeout: float) -> Sent | None:
        """Write ``GET path`` on a connection now; :meth:`fetch` with ``sent`` reads its
        answer later (bounded by ``timeout`` from now). None when it could not be written:
        nothing was sent, and a plain :meth:`fetch` meets whatever stopped it."""
        deadline = time.monotonic() + timeout
        try:
            http_conn, reused = self._take(timeout)
        except Unreachable:
            return None
        try:
            http_conn.send_get(self.prefix + path, self.headers)
        except Exception:  # OSError, HTTPException, ValueError: the plain fetch says which
            http_conn.close()
            return None
        return Sent(path, http_conn, reused, deadline, timeout)

    def fetch(self, path: str, timeout: float, sent: Sent | None = None) -> Response:
        """The answer to ``GET path``; with ``sent`` (:meth:`send` of the same path), the
        answer to the request written then (a kept-alive connection found closed: once more
        afresh, as without)."""
        if sent is not None and sent.path != path:  # not this request's: not read
            sent.wire.close()
            sent = None
        deadline = time.monotonic() + timeout if sent is None else sent.deadline
        for _ in range(2):  # kept-alive connections the server has closed: once more, afresh
            left = deadline - time.monotonic()
            if left <= 0:
                if sent is not None:
                    sent.wire.close()
                break
            if sent is not None:
                http_conn, reused, written, sent = sent.wire, sent.reused, True, None
            else:
                http_conn, reused = self._take(left)
                written = False
            watchdog = _Watchdog(http_conn, left)
            try:
                if not written:
                    http_conn.send_get(self.prefix + path, self.headers)
                resp = http_conn.getresponse()
                data = _read_body(resp, deadline)
            except NoAnswer:
                http_conn.close()
                raise
            except TimeoutError:
                http_conn.close()
                raise NoAnswer(f"no complete answer within {timeout:g}s", TIMEOUT) from None
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                http_conn.close()
                if watchdog.fired:
                    raise NoAnswer(f"no complete answer within {timeout:g}s", TIMEOUT) from None
                if reused:  # the server closed it while idle, and likely the others too
                    with self._lock:
                        stale, self._idle = self._idle, []
                    for idle in stale:
                        idle.close()
                    continue
                raise NoAnswer(f"no answer ({_describe(exc)})") from None
            except (http.client.HTTPException, OSError, ValueError) as exc:
                http_conn.close()
                if watchdog.fired:
                    raise NoAnswer(f"no complete answer within {timeout:g}s", TIMEOUT) from None
                raise NoAnswer(f"no answer ({_describe(exc)})") from None
            finally:
                watchdog.cancel()
            if watchdog.fired:
                http_conn.close()
                raise NoAnswer(f"no complete answer within {timeout:g}s", TIMEOUT)
            if resp.will_close:
                http_conn.close()
            else:
                with self._lock:
                    self._idle.append(http_conn)
            return Response(
                resp.status,
                resp.reason or "",
                data,
                retry_after(resp.getheader("Retry-After")),
                tuple(resp.getheaders()),
            )
        raise NoAnswer(f"no complete answer within {timeout:g}s", TIMEOUT)

    def close(self) -> None:
        with self._lock:
            for http_conn in self._made:
                http_conn.close()
            self._made.clear()
            self._idle.clear()


class _Watchdog:
    """Shuts a connection's socket down when its request's time is up (one timer thread)."""

    def __init__(self, http_conn: Wire, seconds: float) -> None:
        self.http_conn = http_conn
        self.fired = False
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        sock = self.http_conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()


def _read_body(resp: http.client.HTTPResponse, deadline: float) -> bytes:
    """The whole body, refused when larger than MAX_BODY or later than ``deadline``."""
    length = resp.getheader("Content-Length")
    if length and length.isdigit() and int(length) > MAX_BODY:
        raise NoAnswer(
            f"the answer is larger than the cap of {MAX_BODY} bytes ({length} bytes)", TOO_LARGE
        )
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError
        chunk = resp.read(_CHUNK)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_BODY:
            raise NoAnswer(f"the answer is larger than the cap of {MAX_BODY} bytes", TOO_LARGE)
        chunks.append(chunk)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ValueError):  # the words would quote the header (a token)
        return "the request could not be sent: a header value is not valid"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the answer was cut off after {len(exc.partial)} bytes"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
