"""What one context's read asks for: the lists, the named CRDs, then the Secrets by name.

One list per resource type (all pages; an older API version only after a 404); then, from
what the lists say runs, the CustomResourceDefinitions whose ``status.storedVersions`` a
hazard of a product found reads (every one the knowledge names when which products run is
not known) and the Secrets the recognised workloads reference, by name (their data dropped
on arrival).

A list that cannot be read (a status, a timeout, an answer that is not a list of objects, a
continue token seen before, pages without items that never end) is an
:class:`~upgradeplan.unreadable.Unreadable` whose facts stay unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any
from urllib.parse import quote

from msgspec import Struct, field

from upgradeplan.model import Condition, KnowledgeBase, State
from upgradeplan.readers.kube.objects import Prepared, server_version_object, state_from_objects
from upgradeplan.readers.kube.paging import Pager
from upgradeplan.readers.kube.session import Answer, Session, in_parallel
from upgradeplan.readers.kube.transport import Unreachable
from upgradeplan.unreadable import (
    NOT_SERVED,
    PARSE_ERROR,
    TIMEOUT,
    Unreadable,
    note,
    status_cause,
)

PAGE_SIZE = 500


class Resource(Struct, frozen=True):
    plural: str
    kind: str
    group: str
    versions: tuple[str, ...]  # newest first; older ones are tried only after a 404
    unreadable_key: str  # the fact prefix left unknown when it cannot be read
    namespaced: bool = True

    def path(self, version: str, namespace: str | None = None) -> str:
        base = f"/apis/{self.group}/{version}" if self.group else f"/api/{version}"
        if namespace and self.namespaced:
            return f"{base}/namespaces/{quote(namespace)}/{self.plural}"
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
    Resource("namespaces", "Namespace", "", ("v1",), "namespace", namespaced=False),
    Resource("nodes", "Node", "", ("v1",), "nodes", namespaced=False),
    Resource("storageclasses", "StorageClass", "storage.k8s.io", ("v1",), "storageclass", False),
)
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def resources(kb: KnowledgeBase) -> tuple[Resource, ...]:
    """Every resource type one read lists: RESOURCES and the kinds the knowledge declares."""
    return RESOURCES + declared_resources(kb)


def declared_resources(kb: KnowledgeBase) -> tuple[Resource, ...]:
    """The custom-resource kinds the knowledge declares (``objects:``) and RESOURCES lacks."""
    known = {res.kind for res in RESOURCES}
    return tuple(
        Resource(d.plural, kind, d.group, (d.version,), f"object.{kind}")
        for kind, d in sorted(kb.object_kinds().items())
        if kind not in known
    )


def _strip_secret(obj: dict[str, Any]) -> dict[str, Any]:
    if obj.get("kind") == "Secret":
        obj.pop("data", None)
        obj.pop("stringData", None)
        annotations = (obj.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict):  # kubectl apply keeps the whole object here
            annotations.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    return obj


class Read(Struct):
    context: str = ""
    objects: list[dict[str, Any]] = field(default_factory=list)
    listed: set[str] = field(default_factory=set)
    unreadable: dict[str, str] = field(default_factory=dict)
    unread: list[Unreadable] = field(default_factory=list)
    state: State | None = None  # the final state, when no Secret had to be read after it
    prepared: Prepared | None = None  # what the objects said one by one, as they came

    def failed(self, source: str, answer: Answer, key: str, what: str) -> None:
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
    session: Session,
    res: Resource,
    version: str,
    namespace: str | None = None,
    prepare: Callable[[str, list[dict[str, Any]]], None] | None = None,
) -> tuple[Answer, list[dict[str, Any]]]:
    """All pages of one version's list; the failing answer, or the last page's, with the items.

    Each next page is asked for as soon as the one before has arrived (:mod:`paging`).
    ``prepare`` sees each page's items as they come (``kind``, ``apiVersion`` set). A
    continue token seen before, or more than a few pages in a row without items, ends the
    list as unreadable (a server looping would otherwise be followed for ever).
    """
    pager = Pager(session, res.path(version, namespace), _page_query)
    try:
        return _pages(pager, res, version, prepare)
    finally:
        pager.close()


def _page_query(token: str = "") -> dict[str, str]:
    return {"limit": str(PAGE_SIZE), "continue": token} if token else {"limit": str(PAGE_SIZE)}


def _pages(
    pager: Pager,
    res: Resource,
    version: str,
    prepare: Callable[[str, list[dict[str, Any]]], None] | None,
) -> tuple[Answer, list[dict[str, Any]]]:
    relists = 0
    items: list[dict[str, Any]] = []
    query = _page_query()
    seen: set[str] = set()
    empty = 0
    api_version = f"{res.group}/{version}" if res.group else version
    for _ in range(MAX_PAGES):
        answer = pager.get(query)
        if answer.status == 410 and "continue" in query and relists < 2:
            relists += 1  # expired continue token: list again from the start
            items, query, seen, empty = [], _page_query(), set(), 0
            pager.restart()
            continue
        if answer.status != 200 or answer.body is None:
            if answer.status == 200:
                answer = Answer(
                    0, None, "HTTP 200 with an answer that is not an object", PARSE_ERROR
                )
            return answer, items
        page = answer.body.get("items")
        if page is not None and not isinstance(page, list):
            return Answer(0, None, "the list's items are not a list", PARSE_ERROR), items
        page = page or []
        if not all(type(item) is dict for item in page):
            junk = sum(1 for item in page if not isinstance(item, dict))
            if junk:
                return Answer(
                    0, None, f"{junk} of the list's items are not objects", PARSE_ERROR
                ), items
        for item in page:
            item.setdefault("kind", res.kind)
            item.setdefault("apiVersion", api_version)
            items.append(_strip_secret(item) if item["kind"] == "Secret" else item)
        if prepare is not None:
            prepare(res.kind, page)
        got = len(page)
        meta = answer.body.get("metadata")
        token = str((meta if isinstance(meta, dict) else {}).get("continue") or "")
        if not token:
            return answer, items
        empty = 0 if got else empty + 1
        if token in seen:
            return Answer(0, None, "the server repeated a continue token", "continue loop"), items
        if empty >= 3:
            return Answer(
                0, None, "the server sent pages without items that never end", "continue loop"
            ), items
        seen.add(token)
        query = _page_query(token)
    return Answer(0, None, f"more than {MAX_PAGES} pages", "continue loop"), items


def _list(
    session: Session,
    res: Resource,
    out: Read,
    namespace: str | None = None,
    prepared: Prepared | None = None,
) -> None:
    """List one resource type across namespaces, following pages, older versions after 404.

    With ``namespace`` (``-n``) a namespaced type is listed in that namespace alone; its
    absence is then known there only (``listed`` gets ``"Kind ns/*"``), elsewhere unknown.

    After a 404 on the newest version, one ``GET /apis/<group>`` says which versions the
    group serves (or that it is not served at all); nothing else is discovered.
    """
    versions = list(res.versions)
    tried_group = False
    while versions:
        version = versions.pop(0)
        prepare = prepared.page if prepared is not None else None
        answer, items = _list_version(session, res, version, namespace, prepare)
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
        out.listed.add(f"{res.kind} {namespace}/*" if namespace and res.namespaced else res.kind)
        return
    # the API is not served at all, so there is no such object
    out.listed.add(res.kind)
    if res.group == "helm.toolkit.fluxcd.io":
        out.not_served(
            res.title, "not served by this cluster (Flux is not installed)", res.unreadable_key
        )


def _get_one(session: Session, path: str, kind: str, ref: str, key: str, out: Read) -> None:
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
    keys = [k for k in state.facts if k.startswith("workload.") and k.endswith(".env-secrets")]
    for key in sorted(keys):  # in key order, as the state iterates (without sorting them all)
        value = state.facts[key].value
        ns = state.value(key[: -len(".env-secrets")] + ".namespace")
        if isinstance(ns, str) and isinstance(value, list):
            refs.extend((ns, str(name)) for name in value)
    return refs


def _crds_named(cond: Condition | None) -> set[str]:
    if cond is None:
        return set()
    if cond.op != "pred":
        return {crd for child in cond.children for crd in _crds_named(child)}
    crd = cond.args.get("crd") if cond.predicate == "crd_stored_version" else None
    return {str(crd)} if crd else set()


def in_play(kb: KnowledgeBase, state: State) -> set[str] | None:
    """The products this read says may run here: installed or pinned (an exact pin derives
    the installed version later), and every component of their releases; None when an
    installed version could not be read (any product may run)."""
    if any(
        k.startswith("installed.") or k in ("helmrelease", "workload") for k in state.unreadable
    ):
        return None
    found = {key.split(".", 1)[1] for key in state.facts if key.startswith(("installed.", "pin."))}
    components = {
        component
        for pid in found
        for release in kb.releases.get(pid, ())
        for component in release.bom
    }
    return found | components


def crds_to_read(
    kb: KnowledgeBase, first: State, *, bounded: bool = False, beside: Sequence[State] = ()
) -> list[str]:
    """The CRDs whose ``status.storedVersions`` a hazard of a product in play reads, here or
    in the inputs ``beside`` this read (all the knowledge names when which products run is
    not known: a failed list, or ``-n``).

    A CRD left unread has no fact: a hazard reading it stays "may apply", never "safe"."""
    products = None if bounded else in_play(kb, first)
    for other in beside:
        more = in_play(kb, other) if products is not None else None
        products = None if more is None or products is None else products | more
    return sorted(
        {
            crd
            for hazard in kb.hazards.values()
            if products is None or hazard.product in products
            for crd in _crds_named(hazard.when)
        }
    )


def read_all(
    kb: KnowledgeBase,
    session: Session,
    name: str,
    namespace: str | None = None,
    beside: Sequence[State] = (),
) -> Read:
    """Every request of one context; raises Unreachable when the server cannot be reached."""
    prefix = f"cluster {name}"
    out = Read(context=name, prepared=Prepared(kb, prefix))
    version = session.get("/version")
    if version.status == 0 and version.cause != PARSE_ERROR:  # no answer at all: give up early
        raise Unreachable(f"GET /version: {version.problem}")
    if version.status == 200 and version.body is not None:
        out.objects.append(server_version_object(version.body))
    else:
        out.failed("/version", version, "installed.kubernetes", "reading /version")
    # one list per resource type, all at once
    calls: list[Callable[[Read], None]] = [
        partial(_list, session, res, namespace=namespace, prepared=out.prepared)
        for res in resources(kb)
    ]
    _read_parts(calls, out)
    # then the CRDs the hazards of the products found read, and the Secrets the recognised
    # workloads reference, by name, for their type only
    first = state_from_objects(
        kb,
        out.objects,
        source_prefix=prefix,
        name=name,
        listed=out.listed,
        unreadable=out.unreadable,
        unread=out.unread,
        prepared=out.prepared,
    )
    refs = _secret_refs(first)
    crds = crds_to_read(kb, first, bounded=namespace is not None, beside=beside)
    if not refs and not crds:
        out.state = first  # nothing more to read: this is the final state
    calls = []
    for crd in crds:
        path, key = f"{CRD_PATH}/{quote(crd)}", f"crd.{crd}"
        calls.append(partial(_get_one, session, path, "CustomResourceDefinition", crd, key))
    for ns, secret in refs:
        path = f"/api/v1/namespaces/{quote(ns)}/secrets/{quote(secret)}"
        ref, key = f"{ns}/{secret}", f"secret.{ns}.{secret}"
        calls.append(partial(_get_one, session, path, "Secret", ref, key))
    _read_parts(calls, out)
    return out


def _merge(out: Read, part: Read) -> None:
    out.objects.extend(part.objects)
    out.listed |= part.listed
    for rec in part.unread:
        note(out.unreadable, out.unread, rec)
    out.unreadable.update(part.unreadable)


def _read_parts(calls: Sequence[Callable[[Read], None]], out: Read) -> None:
    """Each call fills its own part, four at a time; the parts are merged in call order."""
    parts = [Read(context=out.context) for _ in calls]
    in_parallel([partial(call, part) for call, part in zip(calls, parts, strict=True)], 4)
    for part in parts:
        _merge(out, part)
