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

Failures are bounded: a few retries with a short backoff on 5xx, timeouts, cut-off answers;
a 403 leaves the affected facts unknown and names them in ``State.unreadable``; a context
that cannot be reached at all becomes ``ContextResult(name, None, error)``.
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


_Unreachable = Unreachable  # the API server could not be reached at all


@dataclass
class _Answer:
    status: int  # 0: no usable answer (timeout, cut off) after the retries
    body: dict[str, Any] | None
    problem: str = ""


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
            raise NoAnswer(
                f"no answer within {timeout:g}s"
                if "timed out" in str(exc).lower()
                else f"no answer ({_reason(exc)})"
            ) from None
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
    """One context's transport: raw GETs with bounded retries, counting requests."""

    transport: Transport
    timeout: float
    retries: int
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
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(0.1 * (3 ** (attempt - 1)), 1.0))
            with self.lock:
                self.requests += 1
            try:
                resp = self.transport.fetch(url_path, self.timeout)
            except NoAnswer as exc:
                last = str(exc)
                continue
            data = resp.data
            status = int(resp.status)
            try:
                body = json.loads(data) if data else None
            except ValueError:
                last = f"HTTP {status}: the answer is not valid JSON (cut off?)"
                continue
            if status >= 500 or status == 429:
                last = f"{status} {_message(body) or resp.reason}"
                continue
            return _Answer(status, body if isinstance(body, dict) else None, _message(body))
        return _Answer(0, None, f"{last} (after {self.retries + 1} attempts)")


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
    objects: list[dict[str, Any]] = field(default_factory=list)
    listed: set[str] = field(default_factory=set)
    unreadable: dict[str, str] = field(default_factory=dict)
    state: State | None = None  # the final state, when no Secret had to be read after it


def _list_version(
    session: _Session, res: Resource, version: str
) -> tuple[_Answer, list[dict[str, Any]]]:
    """All pages of one version's list; the failing answer, or the last page's, with the items."""
    relists = 0
    items: list[dict[str, Any]] = []
    query: dict[str, str] = {"limit": str(PAGE_SIZE)}
    for _ in range(100_000):  # bounded: a page per round
        answer = session.get(res.path(version), query)
        if answer.status == 410 and "continue" in query and relists < 2:
            relists += 1  # expired continue token: list again from the start
            items, query = [], {"limit": str(PAGE_SIZE)}
            continue
        if answer.status != 200 or answer.body is None:
            if answer.status == 200:
                answer = _Answer(0, None, "HTTP 200 with an answer that is not an object")
            return answer, items
        for item in answer.body.get("items") or []:
            if isinstance(item, dict):
                item.setdefault("kind", res.kind)
                item.setdefault("apiVersion", f"{res.group}/{version}" if res.group else version)
                items.append(_strip_secret(item))
        token = str((answer.body.get("metadata") or {}).get("continue") or "")
        if not token:
            return answer, items
        query = {"limit": str(PAGE_SIZE), "continue": token}
    return _Answer(0, None, "too many pages"), items


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
                versions = [v for v in versions if v in served]
                if not versions:
                    out.unreadable[res.unreadable_key] = (
                        f"{res.title} is served only in versions this reader does not know: "
                        f"{', '.join(served) or 'none'}"
                    )
                    return
            continue  # this version is not served: try the next (older) one
        if answer.status != 200:
            out.unreadable[res.unreadable_key] = _problem(answer, f"listing {res.title}")
            return
        out.objects.extend(items)
        out.listed.add(res.kind)
        return
    # the API is not served at all, so there is no such object
    out.listed.add(res.kind)
    if res.group == "helm.toolkit.fluxcd.io":
        out.unreadable.setdefault(
            res.unreadable_key, f"{res.title} is not served by this cluster (Flux is not installed)"
        )


def _problem(answer: _Answer, what: str) -> str:
    if answer.status == 403:
        return f"403 Forbidden {what}: {answer.problem}".rstrip(": ")
    if answer.status == 0:
        return f"{answer.problem} {what}"
    return f"{answer.status} {what}: {answer.problem}".rstrip(": ")


def _get_one(session: _Session, path: str, kind: str, ref: str, key: str, out: _Read) -> None:
    answer = session.get(path)
    if answer.status == 200 and answer.body is not None:
        out.objects.append(_strip_secret(answer.body))
        out.listed.add(f"{kind} {ref}")
    elif answer.status == 404:
        out.listed.add(f"{kind} {ref}")
    else:
        out.unreadable[key] = _problem(answer, f"reading {kind} {ref}")


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
    out = _Read()
    prefix = f"cluster {name}"
    version = session.get("/version")
    if version.status == 0:  # it accepts connections but answers nothing: give up early
        raise _Unreachable(f"GET /version: {version.problem}")
    if version.status == 200 and version.body is not None:
        out.objects.append(server_version_object(version.body))
    else:
        out.unreadable["installed.kubernetes"] = _problem(version, "reading /version")
    # one list per resource type, and the CRDs the knowledge names, all at once
    calls: list[Callable[[_Read], None]] = [partial(_list, session, res) for res in RESOURCES]
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
) -> ContextResult:
    """Read one cluster through a transport or an ``ApiClient`` (tests may pass their own)."""
    session = _Session(_as_transport(client), timeout, retries)
    try:
        out = _read_all(kb, session, name)
    except _Unreachable as exc:
        error = f"cannot reach the API server of context {name!r}: {exc}"
        return ContextResult(name, None, error, session.requests)
    state = out.state or state_from_objects(
        kb,
        out.objects,
        source_prefix=f"cluster {name}",
        name=name,
        listed=out.listed,
        unreadable=out.unreadable,
    )
    return ContextResult(name, state, None, session.requests)


def _merge(out: _Read, part: _Read) -> None:
    out.objects.extend(part.objects)
    out.listed |= part.listed
    out.unreadable.update(part.unreadable)


def _read_parts(calls: Sequence[Callable[[_Read], None]], out: _Read) -> None:
    """Each call fills its own part, four at a time; the parts are merged in call order."""
    parts = [_Read() for _ in calls]
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
    config: Kubeconfig, kubeconfig: str | None, context: str
) -> tuple[Transport, str]:
    """The transport for one context, and which one it is (with why the client is used)."""
    how = connection(config, context)
    if isinstance(how, Connection):
        return HttpTransport(how), "http.client"
    return _ClientTransport(new_client(kubeconfig, context)), f"kubernetes client ({how.reason})"


def new_client(kubeconfig: str | None, context: str) -> Any:
    """An isolated ApiClient for one context (never touching the process-wide default)."""
    from kubernetes.client import configuration
    from kubernetes.config import kube_config

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
        try:
            if client_factory is not None:
                transport, via = _as_transport(client_factory(kubeconfig, ctx)), "injected"
            else:
                transport, via = open_transport(config, kubeconfig, ctx)
        except UpgradeplanError as exc:  # a broken context must not stop the others
            return ContextResult(ctx, None, f"context {ctx!r}: {exc}")
        except Exception as exc:
            return ContextResult(ctx, None, f"context {ctx!r}: {type(exc).__name__}: {exc}")
        try:
            res = read_context(kb, transport, ctx, timeout=per_request, retries=retries)
            return replace(res, via=via)
        except Exception as exc:  # one broken context must not stop the others
            return ContextResult(
                ctx, None, f"context {ctx!r}: {type(exc).__name__}: {exc}", via=via
            )
        finally:
            transport.close()

    if len(wanted) == 1:
        return [one(wanted[0])]
    return _in_parallel([partial(one, ctx) for ctx in wanted], 8)
