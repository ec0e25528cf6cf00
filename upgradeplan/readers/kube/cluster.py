"""Read live clusters: raw GETs of JSON, parsed into plain dicts, turned into facts.

Per context one transport: the standard-library one (:mod:`upgradeplan.readers.kube.transport`)
when the context needs only what :func:`upgradeplan.readers.kube.kubeconfig.connection`
understands (tokens, token files, client certificates, basic auth; CA, skip-verify, TLS
server name), else an isolated ``ApiClient`` of the kubernetes client
(``new_client_from_config``, imported lazily: exec plugins, auth providers, proxies, and
anything else the kubeconfig asks for). The JSON is parsed into plain dicts (no typed
model classes), then :mod:`upgradeplan.readers.kube.objects` turns the objects into facts.

Requests per context: ``/version``, one list per resource type (plus its pages,
``limit``/``continue``; an older API version only after a 404; no discovery), then the
CustomResourceDefinitions a hazard of a product found reads (every one the knowledge names
when a list that says which products run could not be read, or with ``-n``), and the
Secrets the product workloads reference, by name. Secret ``data``/``stringData`` are
dropped as soon as the answer is parsed and never reach a fact.

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

import os
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from upgradeplan import progress, redact
from upgradeplan.errors import BadInput, MissingExtra, UnknownName, UpgradeplanError
from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers.kube.kubeconfig import Connection, Kubeconfig, connection
from upgradeplan.readers.kube.kubeconfig import load as load_kubeconfig
from upgradeplan.readers.kube.listing import read_all
from upgradeplan.readers.kube.objects import state_from_objects
from upgradeplan.readers.kube.session import (
    ClientTransport,
    Session,
    as_transport,
    in_parallel,
    quick_switches,
    run_budget,
)
from upgradeplan.readers.kube.transport import HttpTransport, Transport, Unreachable

DEFAULT_TIMEOUT = 10.0  # seconds per request (connect and read)
DEFAULT_RETRIES = 2  # after the first attempt, on 5xx / timeouts / cut-off answers
TIMEOUT_ENV = "UPGRADEPLAN_KUBE_TIMEOUT"


class ContextResult(Struct, frozen=True):
    """What one kubeconfig context gave: a state, or why it could not be read at all."""

    name: str
    state: State | None
    error: str | None = None
    requests: int = 0
    via: str = ""  # "standard library", or "kubernetes client (<why>)"


def read_context(
    kb: KnowledgeBase,
    client: Any,
    name: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    deadline: float | None = None,
    namespace: str | None = None,
    beside: Sequence[State] = (),
) -> ContextResult:
    """Read one cluster through a transport or an ``ApiClient`` (tests may pass their own).

    ``namespace`` (``-n``) bounds the namespaced lists to it (cluster-scoped kinds, the CRDs
    and ``/version`` are read as always). ``beside``: the states of the other inputs merged
    with this one (GitOps, snapshots, stated facts); a product they hold counts as found
    when choosing the CRDs to read.

    Every request of the read ends by ``deadline`` (monotonic seconds; default: ``timeout``
    × (``retries`` + 1) from now). A context of which nothing at all could be read (no
    answer, or every request refused) has no state: its error names the first cause.
    """
    if deadline is None:
        deadline = time.monotonic() + run_budget(timeout, retries)
    session = Session(as_transport(client), timeout, retries, deadline)
    try:
        out = read_all(kb, session, name, namespace, beside)
    except Unreachable as exc:
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
        prepared=out.prepared,
    )
    return ContextResult(name, state, None, session.requests)


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
        return HttpTransport(how), "standard library"
    client = new_client(kubeconfig, context, why=how.reason)
    return ClientTransport(client), f"kubernetes client ({how.reason})"


def new_client(kubeconfig: str | None, context: str, *, why: str = "") -> Any:
    """An isolated ApiClient for one context (never touching the process-wide default)."""
    import logging

    try:
        from kubernetes.client import configuration
        from kubernetes.config import kube_config
    except ImportError:  # the optional extra upgradeplan[kubernetes]
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
    namespace: str | None = None,
    beside: Sequence[State] = (),
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
                transport, via = as_transport(client_factory(kubeconfig, ctx)), "injected"
            else:
                transport, via = open_transport(config, kubeconfig, ctx, timeout=per_request)
        except UpgradeplanError as exc:  # a broken context must not stop the others
            return ContextResult(ctx, None, f"context {ctx!r}: {exc}")
        except Exception as exc:
            return ContextResult(ctx, None, f"context {ctx!r}: {type(exc).__name__}")
        try:
            res = read_context(
                kb,
                transport,
                ctx,
                timeout=per_request,
                retries=retries,
                deadline=deadline,
                namespace=namespace,
                beside=beside,
            )
            return replace(res, via=via)
        except Exception as exc:  # one broken context must not stop the others
            return ContextResult(ctx, None, f"context {ctx!r}: {type(exc).__name__}", via=via)
        finally:
            transport.close()

    task = progress.begin(f"reading {len(wanted)} context(s)", len(wanted))

    def bounded(ctx: str) -> ContextResult:
        res = _redacted(one(ctx))
        task.advance(f"{ctx}: {res.requests} requests" if res.state else f"{ctx}: unreadable")
        return res

    with task, quick_switches():
        if len(wanted) == 1:
            return [bounded(wanted[0])]
        return in_parallel([partial(bounded, ctx) for ctx in wanted], 8)


def _redacted(res: ContextResult) -> ContextResult:
    """The context boundary: every message a context's read produced, through redact.clean."""

    error = None if res.error is None else redact.clean(res.error)
    state = res.state
    if state is not None and (state.unread or state.unreadable):
        state = replace(
            state,
            unreadable={k: redact.clean(v) for k, v in state.unreadable.items()},
            unread=tuple(replace(r, detail=redact.clean(r.detail)) for r in state.unread),
        )
    return replace(res, error=error, state=state)
