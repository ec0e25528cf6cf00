"""One context's requests: raw GETs over a transport, bounded in time, retried with backoff.

A :class:`Session` counts the requests of one context and bounds each by the request timeout
and by the whole read's deadline (:func:`run_budget`); 429, 5xx, timeouts and cut-off answers
are retried a few times, backing off and honouring ``Retry-After``. The kubernetes client,
when a context needs it, becomes a transport (:class:`ClientTransport`), bounded by a thread
(:func:`bounded_fetch`), since the client bounds only each socket read.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from msgspec import Struct, field

from upgradeplan.readers.kube.transport import (
    HttpTransport,
    NoAnswer,
    Response,
    Sent,
    Transport,
    Unreachable,
)
from upgradeplan.unreadable import PARSE_ERROR, TIMEOUT, TOO_LARGE, status_cause

T = TypeVar("T")


class Answer(Struct):
    status: int  # 0: no usable answer (timeout, cut off, 5xx/429) after the retries
    body: dict[str, Any] | None
    problem: str = ""
    cause: str = ""  # with status 0: TIMEOUT, CUT_OFF, TOO_LARGE, PARSE_ERROR, or a status
    last_status: int = 0  # with status 0: the last HTTP status seen (429, 5xx), if any


class ClientTransport:
    """The kubernetes client as a transport; auth (tokens, exec plugins) resolved per request."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def fetch(self, path: str, timeout: float) -> Response:
        import urllib3

        try:
            method, url, headers, _, _ = self.client.param_serialize(
                "GET",
                path,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            resp = self.client.call_api(
                method, url, header_params=headers, _request_timeout=timeout
            )
            data = resp.read()
        except (
            urllib3.exceptions.NewConnectionError,
            urllib3.exceptions.ConnectTimeoutError,
        ) as exc:
            raise Unreachable(reason_of(exc)) from None
        except urllib3.exceptions.MaxRetryError as exc:
            if isinstance(
                exc.reason,
                (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError),
            ):
                raise Unreachable(reason_of(exc.reason)) from None
            raise NoAnswer(f"no answer ({reason_of(exc.reason or exc)})") from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if "timed out" in str(exc).lower():
                raise NoAnswer(f"no answer within {timeout:g}s", TIMEOUT) from None
            raise NoAnswer(f"no answer ({reason_of(exc)})") from None
        except Exception as exc:  # the client's own: TLS failures, exec plugin errors
            raise Unreachable(f"{type(exc).__name__}: {reason_of(exc)}") from None
        return Response(int(resp.status), str(resp.reason or ""), data)

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close):
            close()


def as_transport(client: Any) -> Transport:
    """A transport as it is, anything else taken for a kubernetes ``ApiClient``."""
    if callable(getattr(client, "fetch", None)):
        transport: Transport = client
        return transport
    return ClientTransport(client)


class Session(Struct):
    """One context's transport: raw GETs with bounded retries, counting requests.

    Every request is bounded by ``timeout`` and by the context's ``deadline`` (monotonic
    seconds): retries (after 429 and 5xx, timeouts, cut-off answers) back off, honouring
    ``Retry-After``, and stop when the deadline is near.
    """

    transport: Transport
    timeout: float
    retries: int
    deadline: float = float("inf")
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    group_lock: threading.Lock = field(default_factory=threading.Lock)
    groups: dict[str, list[str] | None] = field(default_factory=dict)

    def group_versions(self, group: str) -> list[str] | None:
        """The versions ``/apis/<group>`` serves (asked once per group); None if not served."""
        with self.group_lock:
            if group not in self.groups:
                answer = self.get(f"/apis/{quote(group)}")
                versions = None
                if answer.status == 200 and answer.body is not None:
                    versions = [
                        str(v.get("version"))
                        for v in answer.body.get("versions") or []
                        if isinstance(v, dict)
                    ]
                self.groups[group] = versions
            return self.groups[group]

    def send(self, path: str, query: Mapping[str, str] | None = None) -> Sent | None:
        """The first attempt of ``get(path, query)`` written now, when the transport can
        (:meth:`HttpTransport.send`): ``get(…, sent=…)`` reads its answer (and retries as
        always). None when nothing was written (``get`` then asks as always)."""
        left = self.deadline - time.monotonic()
        if not isinstance(self.transport, HttpTransport) or left <= 0.01:
            return None
        sent = self.transport.send(_url_path(path, query), min(self.timeout, left))
        if sent is not None:
            with self.lock:
                self.requests += 1
        return sent

    def get(
        self,
        path: str,
        query: Mapping[str, str] | None = None,
        on_body: Callable[[bytes], None] | None = None,
        sent: Sent | None = None,
    ) -> Answer:
        """GET ``path``; ``on_body`` sees a 200 answer's raw body before it is parsed;
        ``sent``: the first attempt, written already by :meth:`send`."""
        url_path = _url_path(path, query)
        last, cause, last_status = "", TIMEOUT, 0
        wait: float | None = None
        attempts = 0
        for attempt in range(self.retries + 1):
            left = self.deadline - time.monotonic()
            first = sent if attempt == 0 else None  # written, and counted, already
            if first is not None:
                left = first.budget
            else:
                if attempt:
                    pause = min(0.1 * (3 ** (attempt - 1)), 1.0) if wait is None else wait
                    if pause >= left:
                        break
                    time.sleep(pause)
                    left -= pause
                if left <= 0.01:
                    if not last:
                        last = "the read's deadline passed before this request"
                    break
                with self.lock:
                    self.requests += 1
            attempts += 1
            wait = None
            try:
                resp = bounded_fetch(self.transport, url_path, min(self.timeout, left), first)
            except NoAnswer as exc:
                last, cause = str(exc), exc.cause
                if exc.cause == TIMEOUT:
                    last = (
                        f"no complete answer within {self.timeout:g}s"
                        if left >= self.timeout
                        else "no complete answer before the read's deadline "
                        f"({run_budget(self.timeout, self.retries):g}s)"
                    )
                if exc.cause == TOO_LARGE:
                    break
                continue
            status = int(resp.status)
            if on_body is not None and status == 200 and resp.data:
                on_body(resp.data)
            try:
                body = json.loads(resp.data) if resp.data else None
            except (ValueError, RecursionError):
                last = f"HTTP {status}: the answer is not valid JSON (cut off?)"
                cause, last_status = PARSE_ERROR, status
                continue
            if status >= 500 or status == 429:
                last = status_message(body) or resp.reason or status_cause(status)
                cause, last_status = status_cause(status), status
                wait = None if resp.retry_after is None else min(resp.retry_after, self.timeout)
                continue
            return Answer(status, body if isinstance(body, dict) else None, status_message(body))
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        return Answer(0, None, f"{last} ({tries})", cause=cause, last_status=last_status)


def bounded_fetch(
    transport: Transport, path: str, timeout: float, sent: Sent | None = None
) -> Response:
    """``transport.fetch``, ending as a timeout when it overruns (the kubernetes client bounds
    only each socket read): HttpTransport bounds itself; others run on a thread left behind.
    ``sent``: the request, written already (:meth:`HttpTransport.send`)."""
    if isinstance(transport, HttpTransport):
        return transport.fetch(path, timeout, sent)
    box: list[Response | BaseException] = []

    def run() -> None:
        try:
            box.append(transport.fetch(path, timeout))
        except BaseException as exc:  # handed to the caller below
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    if not box:
        raise NoAnswer(f"no complete answer within {timeout:g}s", TIMEOUT)
    got = box[0]
    if isinstance(got, BaseException):
        raise got
    return got


def _url_path(path: str, query: Mapping[str, str] | None) -> str:
    return path + ("?" + urlencode(dict(query)) if query else "")


def reason_of(exc: BaseException) -> str:
    text = str(exc)
    if "Connection refused" in text:
        return "connection refused"
    return text.split(": ", 1)[-1] if len(text) > 200 else text


def status_message(body: Any) -> str:
    if isinstance(body, dict) and body.get("kind") == "Status":
        return str(body.get("message", ""))
    return ""


def run_budget(timeout: float, retries: int) -> float:
    """Seconds one context's whole read may take: every request's attempts end by then."""
    return timeout * (retries + 1)


SWITCH_INTERVAL = 0.0005  # seconds: how soon a waiting thread gets the interpreter lock


class _Switching:
    lock = threading.Lock()
    reads = 0  # reads running
    before: float | None = None  # the interval they replaced, if longer


@contextlib.contextmanager
def quick_switches() -> Iterator[None]:
    """The interpreter lock handed to a waiting thread every SWITCH_INTERVAL while reads run.

    A read's threads mostly wait on sockets, and each socket call gives the lock up; taking
    it back waits until the thread holding it lets go, at most once per switch interval
    (CPython's default: 5 ms). While one thread parses and prepares a page, the thread
    reading the next page's answer (a few socket calls per answer) would wait that long
    for every call. The interval of before (if longer) is restored when the last read ends."""
    with _Switching.lock:
        if not _Switching.reads and sys.getswitchinterval() > SWITCH_INTERVAL:
            _Switching.before = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL)
        _Switching.reads += 1
    try:
        yield
    finally:
        with _Switching.lock:
            _Switching.reads -= 1
            if not _Switching.reads and _Switching.before is not None:
                sys.setswitchinterval(_Switching.before)
                _Switching.before = None


def in_parallel(calls: Sequence[Callable[[], T]], workers: int) -> list[T]:
    """The calls' results in order, run on up to ``workers`` threads; the first error re-raised.

    (A few plain threads: ``concurrent.futures`` would also load ``logging``.)
    """
    if len(calls) <= 1 or workers <= 1:
        return [call() for call in calls]
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)
    todo = iter(range(len(calls)))
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                index = next(todo, None)
            if index is None:
                return
            try:
                results[index] = calls[index]()
            except BaseException as exc:  # handed to the caller below
                errors[index] = exc

    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(workers, len(calls)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results


# --------------------------------------------------------------------------- kubeconfig
