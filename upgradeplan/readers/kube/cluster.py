"""Read live clusters: raw GETs of JSON, parsed into plain dicts, turned into facts.

Per context one transport: the standard-library one (:mod:`upgradeplan.readers.kube.transport`)
when the context needs only what :func:`upgradeplan.readers.kube.kubeconfig.connection`
understands (tokens, token files, client certificates, basic auth; CA, skip-verify, TLS
server name), else an isolated ``ApiClient`` of the kubernetes client
(``new_client_from_config``, imported lazily: exec plugins, auth providers, proxies, and
anything else the kubeconfig asks for). The JSON is parsed into plain dicts (no typed
model classes), then :mod:`upgradeplan.readers.kube.objects` turns the objects into facts.

Requests per context: ``/version``, one list per resource type (plus its pages,
``limit``/``continue``; an older API version only after a 404; no discovery), the
CustomResourceDefinitions the knowledge names, and the Secrets the product workloads
reference, by name. Secret ``data``/``stringData`` are dropped as soon as the
answer is parsed and never reach a fact.

Failures are bounded: every request ends within its timeout (the whole answer, not one socket
read), and a context's whole read within ``run_budget`` (timeout × (retries + 1)); a few
retries back off on 429, 5xx, timeouts and cut-off answers, honouring ``Retry-After``; a
repeated ``continue`` token or pages without items that never end stop a list. Whatever
could not be read (a 403, a timeout, an answer that is not JSON) is an
:class:`~upgradeplan.unreadable.Unreadable` in ``State.unread`` and leaves its facts unknown
(``State.unreadable``); a context that cannot be reached, or of which nothing at all could
be read, becomes ``ContextResult(name, None, error)``. Every message leaves through
:func:`upgradeplan.redact.clean`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

from upgradeplan.errors import BadInput, UnknownName, UpgradeplanError
from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers.kube.kubeconfig import Connection, Kubeconfig, connection
from upgradeplan.readers.kube.kubeconfig import load as load_kubeconfig
from upgradeplan.readers.kube.objects import interests, server_version_object, state_from_objects
from upgradeplan.readers.kube.transport import (
    HttpTransport,
    NoAnswer,
    Response,
    Transport,
    Unreachable,
)
from upgradeplan.unreadable import (
    NOT_SERVED,
    PARSE_ERROR,
    TIMEOUT,
    TOO_LARGE,
    Unreadable,
    note,
    status_cause,
)

T = TypeVar("T")

PAGE_SIZE = 500
DEFAULT_TIMEOUT = 10.0  # seconds per request (connect and read)
DEFAULT_RETRIES = 2  # after the first attempt, on 5xx / timeouts / cut-off answers
TIMEOUT_ENV = "UPGRADEPLAN_KUBE_TIMEOUT"


@dataclass(frozen=True)
class ContextResult:
    """What one kubeconfig context gave: a state, or why it could not be read at all."""

    name: str
    state: State | None
    error: str | None = None
    requests: int = 0
    via: str = ""  # "http.client", or "kubernetes client (<why>)"


@dataclass(frozen=True)
class Resource:
    plural: str
    kind: str
    group: str
    versions: tuple[str, ...]  # newest first; older ones are tried only after a 404
    unreadable_key: str  # the fact prefix left unknown when it cannot be read

    def path(self, version: str) -> str:
        base = f"/apis/{self.group}/{version}" if self.group else f"/api/{version}"
        return f"{base}/{self.plural}"

    @property
    def title(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


# Everything is listed across all namespaces (one list per type).
RESOURCES: tuple[Resource, ...] = (
    Resource(
        "helmreleases",
        "HelmRelease",
        "helm.toolkit.fluxcd.io",
        ("v2", "v2beta2", "v2beta1"),
        "helmrelease",
    ),
    Resource(
        "ocirepositories", "OCIRepository", "source.toolkit.fluxcd.io", ("v1", "v1beta2"), "pin"
    ),
    Resource("helmcharts", "HelmChart", "source.toolkit.fluxcd.io", ("v1", "v1beta2"), "pin"),
    Resource(
        "harnesses", "Harness", "kagent.dev", ("v1alpha3", "v1alpha2", "v1alpha1"), "object.Harness"
    ),
    Resource(
        "agenttemplates",
        "AgentTemplate",
        "kagent.dev",
        ("v1alpha3", "v1alpha2", "v1alpha1"),
        "object.AgentTemplate",
    ),
    Resource("deployments", "Deployment", "apps", ("v1",), "workload"),
    Resource("namespaces", "Namespace", "", ("v1",), "namespace"),
    Resource("nodes", "Node", "", ("v1",), "nodes"),
    Resource("storageclasses", "StorageClass", "storage.k8s.io", ("v1",), "storageclass"),
)
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def declared_resources(kb: KnowledgeBase) -> tuple[Resource, ...]:
    """The custom-resource kinds the knowledge declares (``objects:``) and RESOURCES lacks."""
    known = {res.kind for res in RESOURCES}
    return tuple(
        Resource(d.plural, kind, d.group, (d.version,), f"object.{kind}")
        for kind, d in sorted(kb.object_kinds().items())
        if kind not in known
    )


_Unreachable = Unreachable  # the API server could not be reached at all


@dataclass
class _Answer:
    status: int  # 0: no usable answer (timeout, cut off, 5xx/429) after the retries
    body: dict[str, Any] | None
    problem: str = ""
    cause: str = ""  # with status 0: TIMEOUT, CUT_OFF, TOO_LARGE, PARSE_ERROR, or a status
    last_status: int = 0  # with status 0: the last HTTP status seen (429, 5xx), if any


class _ClientTransport:
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
            raise Unreachable(_reason(exc)) from None
        except urllib3.exceptions.MaxRetryError as exc:
            if isinstance(
                exc.reason,
                (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError),
            ):
                raise Unreachable(_reason(exc.reason)) from None
            raise NoAnswer(f"no answer ({_reason(exc.reason or exc)})") from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if "timed out" in str(exc).lower():
                raise NoAnswer(f"no answer within {timeout:g}s", TIMEOUT) from None
            raise NoAnswer(f"no answer ({_reason(exc)})") from None
        except Exception as exc:  # the client's own: TLS failures, exec plugin errors
            raise Unreachable(f"{type(exc).__name__}: {_reason(exc)}") from None
        return Response(int(resp.status), str(resp.reason or ""), data)

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close):
            close()


def _as_transport(client: Any) -> Transport:
    """A transport as it is, anything else taken for a kubernetes ``ApiClient``."""
    if callable(getattr(client, "fetch", None)):
        transport: Transport = client
        return transport
    return _ClientTransport(client)


@dataclass
class _Session:
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

    def get(self, path: str, query: Mapping[str, str] | None = None) -> _Answer:
        url_path = path + ("?" + urlencode(dict(query)) if query else "")
        last, cause, last_status = "", TIMEOUT, 0
        wait: float | None = None
        attempts = 0
        for attempt in range(self.retries + 1):
            left = self.deadline - time.monotonic()
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
                resp = _bounded_fetch(self.transport, url_path, min(self.timeout, left))
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
            try:
                body = json.loads(resp.data) if resp.data else None
            except (ValueError, RecursionError):
                last = f"HTTP {status}: the answer is not valid JSON (cut off?)"
                cause, last_status = PARSE_ERROR, status
                continue
            if status >= 500 or status == 429:
                last = _message(body) or resp.reason or status_cause(status)
                cause, last_status = status_cause(status), status
                wait = None if resp.retry_after is None else min(resp.retry_after, self.timeout)
                continue
            return _Answer(status, body if isinstance(body, dict) else None, _message(body))
        tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
        return _Answer(0, None, f"{last} ({tries})", cause=cause, last_status=last_status)


def _bounded_fetch(transport: Transport, path: str, timeout: float) -> Response:
    """``transport.fetch``, ending as a timeout when it overruns (the kubernetes client bounds
    only each socket read): HttpTransport bounds itself; others run on a thread left behind."""
    if isinstance(transport, HttpTransport):
        return transport.fetch(path, timeout)
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


def _reason(exc: BaseException) -> str:
    text = str(exc)
    if "Connection refused" in text:
        return "connection refused"
    return text.split(": ", 1)[-1] if len(text) > 200 else text


def _message(body: Any) -> str:
    if isinstance(body, dict) and body.get("kind") == "Status":
        return str(body.get("message", ""))
    return ""


def _strip_secret(obj: dict[str, Any]) -> dict[str, Any]:
    if obj.get("kind") == "Secret":
        obj.pop("data", None)
        obj.pop("stringData", None)
        annotations = (obj.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict):  # kubectl apply keeps the whole object here
            annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    return obj


@dataclass
class _Read:
    context: str = ""
    objects: list[dict[str, Any]] = field(default_factory=list)
    listed: set[str] = field(default_factory=set)
    unreadable: dict[str, str] = field(default_factory=dict)
    unread: list[Unreadable] = field(default_factory=list)
    state: State | None = None  # the final state, when no Secret had to be read after it

    def failed(self, source: str, answer: _Answer, key: str, what: str) -> None:
        """Record that ``source`` could not be read (``what``: "listing X", "reading Y")."""
        if answer.status:
            cause, status = status_cause(answer.status), answer.status
        else:
            cause, status = answer.cause or TIMEOUT, answer.last_status
        rec = Unreadable(
            source,
            cause,
            kind="resource",
            status=status,
            context=self.context,
            detail=(answer.problem or "").strip() or what,
            keys=(key,),
        )
        note(self.unreadable, self.unread, rec)

    def not_served(self, source: str, detail: str, key: str) -> None:
        rec = Unreadable(
            source, NOT_SERVED, kind="resource", context=self.context, detail=detail, keys=(key,)
        )
        note(self.unreadable, self.unread, rec)


MAX_PAGES = 10_000  # pages of one list (5,000,000 objects at 500 a page)


def _list_version(
    session: _Session, res: Resource, version: str
) -> tuple[_Answer, list[dict[str, Any]]]:
    """All pages of one version's list; the failing answer, or the last page's, with the items.

    A continue token seen before, or more than a few pages in a row without items, ends the
    list as unreadable (a server looping would otherwise be followed for ever).
    """
    relists = 0
    items: list[dict[str, Any]] = []
    query: dict[str, str] = {"limit": str(PAGE_SIZE)}
    seen: set[str] = set()
    empty = 0
    for _ in range(MAX_PAGES):
        answer = session.get(res.path(version), query)
        if answer.status == 410 and "continue" in query and relists < 2:
            relists += 1  # expired continue token: list again from the start
            items, query, seen, empty = [], {"limit": str(PAGE_SIZE)}, set(), 0
            continue
        if answer.status != 200 or answer.body is None:
            if answer.status == 200:
                answer = _Answer(
                    0, None, "HTTP 200 with an answer that is not an object", PARSE_ERROR
                )
            return answer, items
        page = answer.body.get("items")
        if page is not None and not isinstance(page, list):
            return _Answer(0, None, "the list's items are not a list", PARSE_ERROR), items
        junk = sum(1 for item in page or [] if not isinstance(item, dict))
        if junk:
            return _Answer(
                0, None, f"{junk} of the list's items are not objects", PARSE_ERROR
            ), items
        got = 0
        for item in page or []:
            if isinstance(item, dict):
                item.setdefault("kind", res.kind)
                item.setdefault("apiVersion", f"{res.group}/{version}" if res.group else version)
                items.append(_strip_secret(item))
                got += 1
        meta = answer.body.get("metadata")
        token = str((meta if isinstance(meta, dict) else {}).get("continue") or "")
        if not token:
            return answer, items
        empty = 0 if got else empty + 1
        if token in seen:
            return _Answer(0, None, "the server repeated a continue token", "continue loop"), items
        if empty >= 3:
            return _Answer(
                0, None, "the server sent pages without items that never end", "continue loop"
            ), items
        seen.add(token)
        query = {"limit": str(PAGE_SIZE), "continue": token}
    return _Answer(0, None, f"more than {MAX_PAGES} pages", "continue loop"), items


def _list(session: _Session, res: Resource, out: _Read) -> None:
    """List one resource type across namespaces, following pages, older versions after 404.

    After a 404 on the newest version, one ``GET /apis/<group>`` says which versions the
    group serves (or that it is not served at all); nothing else is discovered.
    """
    versions = list(res.versions)
    tried_group = False
    while versions:
        version = versions.pop(0)
        answer, items = _list_version(session, res, version)
        if answer.status == 404 and not items:
            if res.group and not tried_group:
                tried_group = True
                served = session.group_versions(res.group)
                if served is None:
                    break
                if version in served:  # served, and still 404: the list itself failed
                    out.failed(res.title, answer, res.unreadable_key, f"listing {res.title}")
                    return
                versions = [v for v in versions if v in served]
                if not versions:
                    out.not_served(
                        res.title,
                        f"served only in versions this reader does not know: "
                        f"{', '.join(served) or 'none'}",
                        res.unreadable_key,
                    )
                    return
            continue  # this version is not served: try the next (older) one
        if answer.status != 200:
            out.failed(res.title, answer, res.unreadable_key, f"listing {res.title}")
            return
        out.objects.extend(items)
        out.listed.add(res.kind)
        return
    # the API is not served at all, so there is no such object
    out.listed.add(res.kind)
    if res.group == "helm.toolkit.fluxcd.io":
        out.not_served(
            res.title, "not served by this cluster (Flux is not installed)", res.unreadable_key
        )


def _get_one(session: _Session, path: str, kind: str, ref: str, key: str, out: _Read) -> None:
    answer = session.get(path)
    if answer.status == 200 and answer.body is not None:
        out.objects.append(_strip_secret(answer.body))
        out.listed.add(f"{kind} {ref}")
    elif answer.status == 404:
        out.listed.add(f"{kind} {ref}")
    else:
        out.failed(f"{kind} {ref}", answer, key, f"reading {kind} {ref}")


def _secret_refs(state: State) -> list[tuple[str, str]]:
    """(namespace, name) of every Secret a recognised workload references."""
    refs: list[tuple[str, str]] = []
    for fact in state:
        if fact.key.startswith("workload.") and fact.key.endswith(".env-secrets"):
            ns = state.value(fact.key[: -len(".env-secrets")] + ".namespace")
            if isinstance(ns, str) and isinstance(fact.value, list):
                refs.extend((ns, str(name)) for name in fact.value)
    return refs


def _read_all(kb: KnowledgeBase, session: _Session, name: str) -> _Read:
    """Every request of one context; raises _Unreachable when the server cannot be reached."""
    out = _Read(context=name)
    prefix = f"cluster {name}"
    version = session.get("/version")
    if version.status == 0 and version.cause != PARSE_ERROR:  # no answer at all: give up early
        raise _Unreachable(f"GET /version: {version.problem}")
    if version.status == 200 and version.body is not None:
        out.objects.append(server_version_object(version.body))
    else:
        out.failed("/version", version, "installed.kubernetes", "reading /version")
    # one list per resource type, and the CRDs the knowledge names, all at once
    resources = RESOURCES + declared_resources(kb)
    calls: list[Callable[[_Read], None]] = [partial(_list, session, res) for res in resources]
    for crd in sorted(interests(kb).crds):
        path, key = f"{CRD_PATH}/{quote(crd)}", f"crd.{crd}"
        calls.append(partial(_get_one, session, path, "CustomResourceDefinition", crd, key))
    _read_parts(calls, out)
    # then the Secrets the recognised workloads reference, by name, for their type only
    first = state_from_objects(
        kb,
        out.objects,
        source_prefix=prefix,
        name=name,
        listed=out.listed,
        unreadable=out.unreadable,
        unread=out.unread,
    )
    refs = _secret_refs(first)
    if not refs:
        out.state = first  # nothing more to read: this is the final state
    calls = []
    for ns, secret in refs:
        path = f"/api/v1/namespaces/{quote(ns)}/secrets/{quote(secret)}"
        ref, key = f"{ns}/{secret}", f"secret.{ns}.{secret}"
        calls.append(partial(_get_one, session, path, "Secret", ref, key))
    _read_parts(calls, out)
    return out


def read_context(
    kb: KnowledgeBase,
    client: Any,
    name: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    deadline: float | None = None,
) -> ContextResult:
    """Read one cluster through a transport or an ``ApiClient`` (tests may pass their own).

    Every request of the read ends by ``deadline`` (monotonic seconds; default: ``timeout``
    × (``retries`` + 1) from now). A context of which nothing at all could be read (no
    answer, or every request refused) has no state: its error names the first cause.
    """
    if deadline is None:
        deadline = time.monotonic() + run_budget(timeout, retries)
    session = _Session(_as_transport(client), timeout, retries, deadline)
    try:
        out = _read_all(kb, session, name)
    except _Unreachable as exc:
        error = f"cannot reach the API server of context {name!r}: {exc}"
        return ContextResult(name, None, error, session.requests)
    if not out.objects and not out.listed and out.unread:
        first = out.unread[0]
        error = f"nothing could be read from context {name!r}: {first.source}: {first.cause}"
        detail = f" ({first.detail})" if first.detail else ""
        return ContextResult(name, None, error + detail, session.requests)
    state = out.state or state_from_objects(
        kb,
        out.objects,
        source_prefix=f"cluster {name}",
        name=name,
        listed=out.listed,
        unreadable=out.unreadable,
        unread=out.unread,
    )
    return ContextResult(name, state, None, session.requests)


def run_budget(timeout: float, retries: int) -> float:
    """Seconds one context's whole read may take: every request's attempts end by then."""
    return timeout * (retries + 1)


def _merge(out: _Read, part: _Read) -> None:
    out.objects.extend(part.objects)
    out.listed |= part.listed
    for rec in part.unread:
        note(out.unreadable, out.unread, rec)
    out.unreadable.update(part.unreadable)


def _read_parts(calls: Sequence[Callable[[_Read], None]], out: _Read) -> None:
    """Each call fills its own part, four at a time; the parts are merged in call order."""
    parts = [_Read(context=out.context) for _ in calls]
    _in_parallel([partial(call, part) for call, part in zip(calls, parts, strict=True)], 4)
    for part in parts:
        _merge(out, part)


def _in_parallel(calls: Sequence[Callable[[], T]], workers: int) -> list[T]:
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


def kubeconfig_path(kubeconfig: str | None) -> str:
    """The kubeconfig: the flag, else $KUBECONFIG (a ':'-list, as kubectl), else ~/.kube/config."""
    if kubeconfig:
        return kubeconfig
    return os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")


def list_contexts(kubeconfig: str | None) -> tuple[list[str], str]:
    """Context names (in merge order) and the current context."""
    config = load_kubeconfig(kubeconfig_path(kubeconfig))
    return config.names, config.current


def open_transport(
    config: Kubeconfig, kubeconfig: str | None, context: str, *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[Transport, str]:
    """The transport for one context, and which one it is (with why the client is used).

    ``timeout`` bounds an exec credential plugin."""
    how = connection(config, context, exec_timeout=timeout)
    if isinstance(how, Connection):
        return HttpTransport(how), "http.client"
    client = new_client(kubeconfig, context, why=how.reason)
    return _ClientTransport(client), f"kubernetes client ({how.reason})"


def new_client(kubeconfig: str | None, context: str, *, why: str = "") -> Any:
    """An isolated ApiClient for one context (never touching the process-wide default)."""
    import logging

    try:
        from kubernetes.client import configuration
        from kubernetes.config import kube_config
    except ImportError:  # the optional extra upgradeplan[kubernetes]
        from upgradeplan.errors import MissingExtra

        raise MissingExtra(
            f"context {context!r} needs the kubernetes client" + (f" ({why})" if why else ""),
            extra="kubernetes",
        ) from None

    root = logging.getLogger()
    if not root.handlers:  # the client logs plugin and provider errors (secrets) to the root
        root.addHandler(logging.NullHandler())

    cfg = type.__call__(configuration.Configuration)
    cfg.retries = False  # our own bounded retries; urllib3 would retry connects silently
    return kube_config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=kubeconfig_path(kubeconfig),
        context=context,
        persist_config=False,
        client_configuration=cfg,
    )


def _timeout_from_env() -> float:
    text = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(text) if text else DEFAULT_TIMEOUT
    except ValueError:
        raise BadInput(f"{TIMEOUT_ENV}={text!r} is not a number of seconds") from None
    return value if value > 0 else DEFAULT_TIMEOUT


def read_contexts(
    kb: KnowledgeBase,
    kubeconfig: str | None,
    contexts: Sequence[str],
    all_contexts: bool,
    *,
    timeout: float | None = None,
    retries: int = DEFAULT_RETRIES,
    client_factory: Callable[[str | None, str], Any] | None = None,
) -> list[ContextResult]:
    """Read each context (the current one when none is named), in parallel, in the given order."""
    config = load_kubeconfig(kubeconfig_path(kubeconfig))
    names, current = config.names, config.current
    if all_contexts:
        wanted = list(names)
    elif contexts:
        wanted = list(dict.fromkeys(contexts))
        for ctx in wanted:
            if ctx not in names:
                raise UnknownName("kubeconfig context", ctx, names)
    else:
        if not current:
            raise BadInput(
                f"kubeconfig {kubeconfig_path(kubeconfig)} has no current context",
                hint="pass --context NAME",
            )
        if current not in names:
            raise BadInput(
                f"kubeconfig {kubeconfig_path(kubeconfig)}: the current context {current!r} "
                "is not defined",
                hint="pass --context NAME",
            )
        wanted = [current]
    if not wanted:
        raise BadInput(f"kubeconfig {kubeconfig_path(kubeconfig)} has no contexts")
    per_request = timeout if timeout is not None else _timeout_from_env()

    def one(ctx: str) -> ContextResult:
        deadline = time.monotonic() + run_budget(per_request, retries)
        try:
            if client_factory is not None:
                transport, via = _as_transport(client_factory(kubeconfig, ctx)), "injected"
            else:
                transport, via = open_transport(config, kubeconfig, ctx, timeout=per_request)
        except UpgradeplanError as exc:  # a broken context must not stop the others
            return ContextResult(ctx, None, f"context {ctx!r}: {exc}")
        except Exception as exc:
            return ContextResult(ctx, None, f"context {ctx!r}: {type(exc).__name__}")
        try:
            res = read_context(
                kb, transport, ctx, timeout=per_request, retries=retries, deadline=deadline
            )
            return replace(res, via=via)
        except Exception as exc:  # one broken context must not stop the others
            return ContextResult(ctx, None, f"context {ctx!r}: {type(exc).__name__}", via=via)
        finally:
            transport.close()

    def bounded(ctx: str) -> ContextResult:
        return _redacted(one(ctx))

    if len(wanted) == 1:
        return [bounded(wanted[0])]
    return _in_parallel([partial(bounded, ctx) for ctx in wanted], 8)


def _redacted(res: ContextResult) -> ContextResult:
    """The context boundary: every message a context's read produced, through redact.clean."""
    from upgradeplan import redact

    error = None if res.error is None else redact.clean(res.error)
    state = res.state
    if state is not None and (state.unread or state.unreadable):
        state = replace(
            state,
            unreadable={k: redact.clean(v) for k, v in state.unreadable.items()},
            unread=tuple(replace(r, detail=redact.clean(r.detail)) for r in state.unread),
        )
    return replace(res, error=error, state=state)
