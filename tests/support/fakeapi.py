"""A fake Kubernetes API server for tests (standard library only, 127.0.0.1 only).

It serves objects from fixture files (YAML or JSON: single objects, ``List`` objects,
multi-document YAML) well enough for both ``kubectl`` and the Python client:

- ``/version``, ``/api``, ``/apis`` with and without a trailing slash; legacy discovery
  (APIVersions, APIGroupList, APIGroup, one APIResourceList per group/version);
- lists with ``kind: <Kind>List``, ``apiVersion`` and ``metadata.resourceVersion``, honouring
  ``limit``/``continue``, the field selectors ``metadata.name``, ``metadata.namespace`` and
  ``type`` (Secrets), and equality label selectors; single objects by name;
- a ``Status`` 404 for anything unknown (a custom resource group is served only when the
  fixture holds its CustomResourceDefinition or objects of it: no Flux objects and no Flux
  CRDs means "Flux is not installed");
- HTTP/1.1 with ``Content-Length``, ``TCP_NODELAY`` on every connection; custom resources
  (and their lists) written with their keys sorted, as the API server writes them from a
  map (so a list's ``metadata``, its ``continue`` token with it, comes after its ``items``);
- a request log (method, path, query, Accept, whether an Authorization header came, status);
- switchable faults (:class:`Faults`): 403 on one resource, 500s, slow answers, truncated
  JSON, 410 on a ``continue``, a request that is never answered (bounded: it ends when the
  server stops); and the fault suite's modes: any status per path (with ``Retry-After``), a
  body trickled a byte at a time, a connection dropped mid-body, a body that is not JSON,
  list items that are not objects, a repeated ``continue`` token, empty pages that never
  end, huge bodies, 410 on every ``continue``.

``gitVersion`` defaults to ``v1.31.0`` and may be set per fixture (``server.yaml`` next to
the objects, ``{gitVersion: v1.27.3}``) or per server.
"""

from __future__ import annotations

import base64
import copy
import json
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

DEFAULT_GIT_VERSION = "v1.31.0"


@dataclass(frozen=True)
class ResourceType:
    group: str
    versions: tuple[str, ...]
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    builtin: bool = False


# Built-in types are always served; custom ones only when the fixture has their CRD or objects.
KNOWN_TYPES: tuple[ResourceType, ...] = (
    ResourceType("", ("v1",), "namespaces", "Namespace", False, "namespace", ("ns",), True),
    ResourceType("", ("v1",), "nodes", "Node", False, "node", ("no",), True),
    ResourceType("", ("v1",), "secrets", "Secret", True, "secret", (), True),
    ResourceType("", ("v1",), "configmaps", "ConfigMap", True, "configmap", ("cm",), True),
    ResourceType("", ("v1",), "pods", "Pod", True, "pod", ("po",), True),
    ResourceType("", ("v1",), "services", "Service", True, "service", ("svc",), True),
    ResourceType(
        "apps", ("v1",), "deployments", "Deployment", True, "deployment", ("deploy",), True
    ),
    ResourceType(
        "storage.k8s.io",
        ("v1",),
        "storageclasses",
        "StorageClass",
        False,
        "storageclass",
        ("sc",),
        True,
    ),
    ResourceType(
        "apiextensions.k8s.io",
        ("v1",),
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        "customresourcedefinition",
        ("crd", "crds"),
        True,
    ),
    ResourceType(
        "helm.toolkit.fluxcd.io",
        ("v2", "v2beta2", "v2beta1"),
        "helmreleases",
        "HelmRelease",
        True,
        "helmrelease",
        ("hr",),
    ),
    ResourceType(
        "source.toolkit.fluxcd.io",
        ("v1", "v1beta2"),
        "ocirepositories",
        "OCIRepository",
        True,
        "ocirepository",
        ("ocirepo",),
    ),
    ResourceType(
        "source.toolkit.fluxcd.io",
        ("v1", "v1beta2"),
        "helmcharts",
        "HelmChart",
        True,
        "helmchart",
        ("hc",),
    ),
    ResourceType(
        "source.toolkit.fluxcd.io",
        ("v1", "v1beta2"),
        "helmrepositories",
        "HelmRepository",
        True,
        "helmrepository",
        ("helmrepo",),
    ),
    ResourceType(
        "kagent.dev", ("v1alpha3", "v1alpha2"), "harnesses", "Harness", True, "harness", ()
    ),
    ResourceType(
        "kagent.dev",
        ("v1alpha3", "v1alpha2"),
        "agenttemplates",
        "AgentTemplate",
        True,
        "agenttemplate",
        (),
    ),
)


# --------------------------------------------------------------------------- fixtures


def load_documents(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Objects from YAML/JSON files: single objects, ``List`` objects, multi-document YAML."""
    out: list[dict[str, Any]] = []
    for path in paths:
        text = Path(path).read_text(encoding="utf-8")
        for doc in yaml.load_all(text, Loader=yaml.CSafeLoader):
            out.extend(_flatten(doc))
    return out


def _flatten(doc: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(doc, dict):
        return
    if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            yield from _flatten(item)
    elif doc.get("kind"):
        yield doc


@dataclass
class Faults:
    """Switchable faults. Resource names are plurals (``secrets``, ``helmreleases``)."""

    forbidden: set[str] = field(default_factory=set)  # 403 on these resources
    errors_500: dict[str, int] = field(default_factory=dict)  # plural -> how many 500s (-1: always)
    slow: dict[str, float] = field(default_factory=dict)  # plural -> seconds before answering
    truncated: set[str] = field(default_factory=set)  # answer with cut-off JSON
    gone_on_continue: int = 0  # answer 410 Expired to this many continue requests
    no_answer: set[str] = field(default_factory=set)  # never answer (until the server stops)
    # plurals above, or exact paths such as "/version"
    # The fault suite's modes; each keyed by plural or exact path ("/version"):
    status: dict[str, int] = field(default_factory=dict)  # always answer this HTTP status
    retry_after: str = ""  # a Retry-After header on 429 and 503 answers
    trickle: dict[str, float] = field(default_factory=dict)  # one body byte every N seconds
    drop: set[str] = field(default_factory=set)  # close the connection halfway through the body
    garbage: set[str] = field(default_factory=set)  # 200 with a body that is not JSON
    garbage_items: set[str] = field(default_factory=set)  # a list whose items are not objects
    repeat_continue: set[str] = field(default_factory=set)  # every page: the same continue
    empty_pages: set[str] = field(default_factory=set)  # pages without items, never ending
    huge: dict[str, int] = field(default_factory=dict)  # pad the answer to this many bytes
    always_gone: set[str] = field(default_factory=set)  # 410 Expired on every continue

    def hit(self, mode: str, path: str) -> Any:
        """The setting of ``mode`` for a request path (by exact path, then plural), or None."""
        table = getattr(self, mode)
        clean = "/" + "/".join(p for p in path.split("/") if p)
        keys = [clean]
        found = _path_plural(clean)
        if found is not None:
            keys.append(found[0])
        for key in keys:
            if key in table:
                return table[key] if isinstance(table, dict) else True
        return None


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    accept: str
    auth: bool
    status: int = 0
    authorization: str = ""  # the header's value (tests of exec plugins check the token)
    client_cert: str = ""  # the common name of the client certificate (HTTPS with client_ca)


class FakeAPIServer:
    """One fake API server. Use as a context manager or call :meth:`start`/:meth:`stop`."""

    def __init__(
        self,
        objects: Sequence[dict[str, Any]] = (),
        *,
        git_version: str = DEFAULT_GIT_VERSION,
        faults: Faults | None = None,
        tls: tuple[str, str] | None = None,
        client_ca: str | None = None,
    ) -> None:
        self.git_version = git_version
        self.tls = tls  # (certificate file, key file): serve HTTPS
        self.client_ca = client_ca  # HTTPS only: require a client certificate signed by it
        self.faults = faults or Faults()
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._types: dict[tuple[str, str], ResourceType] = {}
        self._objects: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._rv = 1000
        self.set_objects(objects)

    @classmethod
    def from_dir(cls, path: str | Path, *, faults: Faults | None = None) -> FakeAPIServer:
        """A server for a fixture directory: every ``*.yaml``/``*.json`` but ``server.yaml``."""
        root = Path(path)
        files = sorted(
            p for p in root.iterdir() if p.suffix in (".yaml", ".json") and p.stem != "server"
        )
        git_version = DEFAULT_GIT_VERSION
        config = root / "server.yaml"
        if config.exists():
            data = yaml.load(config.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) or {}
            git_version = str(data.get("gitVersion", git_version))
        return cls(load_documents(files), git_version=git_version, faults=faults)

    # ----------------------------------------------------------------- data

    def set_objects(self, objects: Sequence[dict[str, Any]]) -> None:
        types = {(t.group, t.plural): t for t in KNOWN_TYPES if t.builtin}
        known_by_kind = {(t.group, t.kind): t for t in KNOWN_TYPES}
        by_type: dict[tuple[str, str], list[dict[str, Any]]] = {}
        # CRDs in the fixture declare their served versions and names.
        for obj in objects:
            if obj.get("kind") == "CustomResourceDefinition":
                spec = obj.get("spec", {})
                names = spec.get("names", {})
                versions = tuple(
                    v["name"] for v in spec.get("versions", []) if v.get("served", True)
                )
                rt = ResourceType(
                    spec.get("group", ""),
                    versions,
                    names.get("plural", ""),
                    names.get("kind", ""),
                    spec.get("scope", "Namespaced") == "Namespaced",
                    names.get("singular", ""),
                    tuple(names.get("shortNames", ())),
                )
                types[(rt.group, rt.plural)] = rt
        for obj in objects:
            group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
            kind = str(obj.get("kind", ""))
            rt_opt = next((t for t in types.values() if t.group == group and t.kind == kind), None)
            if rt_opt is None:
                known = known_by_kind.get((group, kind))
                if known is None:
                    known = ResourceType(
                        group, (version,), kind.lower() + "s", kind, True, kind.lower()
                    )
                if version not in known.versions:
                    known = ResourceType(
                        known.group,
                        (*known.versions, version),
                        known.plural,
                        known.kind,
                        known.namespaced,
                        known.singular,
                        known.short_names,
                    )
                rt_opt = known
                types[(group, rt_opt.plural)] = rt_opt
            stored = copy.deepcopy(obj)
            meta = stored.setdefault("metadata", {})
            if "resourceVersion" not in meta:
                self._rv += 1
                meta["resourceVersion"] = str(self._rv)
            by_type.setdefault((group, rt_opt.plural), []).append(stored)
        for items in by_type.values():
            items.sort(
                key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"].get("name", ""))
            )
        with self._lock:
            self._types = types
            self._objects = by_type

    # ----------------------------------------------------------------- life cycle

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"{'https' if self.tls else 'http'}://{host!s}:{port}"

    def start(self) -> FakeAPIServer:
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        if self.tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            if self.client_ca:
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(self.client_ca)
            self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----------------------------------------------------------------- log helpers

    def list_requests(self, plural: str) -> list[Request]:
        """Requests that listed (not fetched by name) resources of this plural."""
        return [r for r in self.requests if _path_plural(r.path) == (plural, False)]

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]


def _path_plural(path: str) -> tuple[str, bool] | None:
    """(plural, by_name) for a resource path, None for discovery/version paths."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"]:
        rest = parts[3:]
    else:
        return None
    if not rest:
        return None
    if rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    return rest[0], len(rest) > 1


def _status(code: int, reason: str, message: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": extra.pop("metadata", {}),
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
        **extra,
    }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAPIServer
    protocol_version = "HTTP/1.1"
    timeout = 10  # idle keep-alive connections end after this

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        split = urlsplit(self.path)
        query = parse_qs(split.query, keep_blank_values=True)
        entry = Request(
            "GET",
            split.path,
            query,
            self.headers.get("Accept", ""),
            bool(self.headers.get("Authorization")),
            authorization=self.headers.get("Authorization", ""),
            client_cert=_peer_name(self.connection),
        )
        with self.fake._lock:
            self.fake.requests.append(entry)
        faults = self.fake.faults
        status = faults.hit("status", split.path)
        if status is not None:
            code, body, truncate = int(status), _status(int(status), "Fault", "injected"), False
        else:
            code, body, truncate = self._answer(split.path, query)
        entry.status = code
        if code < 0:  # never answer: wait until the server stops (bounded)
            self.fake._stopping.wait(timeout=60)
            self.close_connection = True
            return
        if code == 200 and faults.hit("garbage_items", split.path) and "items" in body:
            body["items"] = ["x", 1, [[[]]], None, {"no": "kind"}] * 200
        # a custom resource is written from a map, as the API server's unstructured
        # encoding does: keys sorted (a list's metadata after its items)
        data = json.dumps(body, sort_keys=_custom(self.fake, split.path)).encode()
        if code == 200 and faults.hit("garbage", split.path):
            data = b"<html><body>502 Bad Gateway</body></html>"
        pad = faults.hit("huge", split.path)
        if pad:
            data = data[:-1] + b', "padding": "' + b"x" * int(pad) + b'"}'
        if truncate:
            data = data[: max(1, len(data) // 2)]
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if code in (429, 503) and faults.retry_after:
            self.send_header("Retry-After", faults.retry_after)
        self.end_headers()
        self._write_body(data, split.path)

    def _write_body(self, data: bytes, path: str) -> None:
        faults = self.fake.faults
        try:
            if faults.hit("drop", path):
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            interval = faults.hit("trickle", path)
            if interval:
                for i in range(len(data)):  # bounded: ends when the server stops or the
                    if self.fake._stopping.wait(timeout=float(interval)):  # client leaves
                        break
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(data)
        except OSError:  # the client gave up (a timeout): nothing to do
            self.close_connection = True

    def _answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, bool]:
        fake = self.fake
        clean = "/" + "/".join(p for p in path.split("/") if p)
        if clean in fake.faults.no_answer:
            return -1, None, False
        if clean == "/version":
            return 200, _version_info(fake.git_version), False
        if clean == "/api":
            return (
                200,
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}
                    ],
                },
                False,
            )
        if clean == "/apis":
            return 200, self._group_list(), False
        parts = clean.split("/")[1:]
        if parts[0] == "api" and len(parts) >= 2:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 2:
            group = parts[1]
            if len(parts) == 2:
                g = self._group(group)
                return (
                    (200, g, False)
                    if g
                    else (
                        404,
                        _status(
                            404, "NotFound", "the server could not find the requested resource"
                        ),
                        False,
                    )
                )
            version, rest = parts[2], parts[3:]
        else:
            return (
                404,
                _status(404, "NotFound", "the server could not find the requested resource"),
                False,
            )
        types = [t for t in fake._types.values() if t.group == group and version in t.versions]
        if not types:
            return (
                404,
                _status(404, "NotFound", "the server could not find the requested resource"),
                False,
            )
        if not rest:
            return 200, self._resource_list(group, version, types), False
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else "")
        rt = next((t for t in types if t.plural == plural), None)
        if rt is None or len(rest) > 2:
            return (
                404,
                _status(404, "NotFound", "the server could not find the requested resource"),
                False,
            )
        return self._serve(rt, group, version, namespace, name, query)

    def _serve(
        self,
        rt: ResourceType,
        group: str,
        version: str,
        namespace: str,
        name: str,
        query: dict[str, list[str]],
    ) -> tuple[int, Any, bool]:
        fake = self.fake
        faults = fake.faults
        gv = f"{group}/{version}" if group else version
        resource = f"{rt.plural}.{group}" if group else rt.plural
        if rt.plural in faults.no_answer:
            return -1, None, False
        if rt.plural in faults.slow:
            fake._stopping.wait(timeout=faults.slow[rt.plural])
        if rt.plural in faults.forbidden:
            where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
            msg = (
                f'{resource} is forbidden: User "system:serviceaccount:test:reader" '
                f'cannot list resource "{rt.plural}" in API group "{group}"{where}'
            )
            return (
                403,
                _status(403, "Forbidden", msg, details={"group": group, "kind": rt.plural}),
                False,
            )
        with fake._lock:
            left = faults.errors_500.get(rt.plural, 0)
            if left:
                faults.errors_500[rt.plural] = left - 1 if left > 0 else left
        if left:
            return (
                500,
                _status(
                    500,
                    "InternalError",
                    'an error on the server ("boom") has prevented the request from succeeding',
                ),
                False,
            )
        truncate = rt.plural in faults.truncated
        items = [
            o
            for o in fake._objects.get((group, rt.plural), [])
            if not namespace or o["metadata"].get("namespace") == namespace
        ]
        if name:
            for obj in items:
                if obj["metadata"].get("name") == name:
                    return 200, _as_version(obj, gv), truncate
            return (
                404,
                _status(
                    404,
                    "NotFound",
                    f'{resource} "{name}" not found',
                    details={"name": name, "kind": rt.plural},
                ),
                False,
            )
        try:
            items = _select(items, query)
        except ValueError as exc:
            return 400, _status(400, "BadRequest", str(exc)), False
        list_rv = str(max([int(o["metadata"]["resourceVersion"]) for o in items] + [fake._rv]))
        start = 0
        token = (query.get("continue") or [""])[0]
        if rt.plural in faults.empty_pages:
            n = int(token.rpartition("-")[2]) + 1 if token.startswith("empty-") else 0
            meta_e = {"resourceVersion": list_rv, "continue": f"empty-{n}"}
            return (
                200,
                {"kind": f"{rt.kind}List", "apiVersion": gv, "metadata": meta_e, "items": []},
                truncate,
            )
        if token == "loop":
            token = ""
        if token:
            with fake._lock:
                gone = faults.gone_on_continue > 0 or rt.plural in faults.always_gone
                if gone and faults.gone_on_continue > 0:
                    faults.gone_on_continue -= 1
            if gone:
                msg = (
                    "The provided continue parameter is too old to display a consistent "
                    "list result. You can start a new list without the continue parameter."
                )
                return 410, _status(410, "Expired", msg), False
            try:
                start = int(json.loads(base64.urlsafe_b64decode(token.encode()))["start"])
            except (ValueError, KeyError, TypeError):
                return 400, _status(400, "BadRequest", "continue key is not valid"), False
        limit_text = (query.get("limit") or ["0"])[0]
        limit = int(limit_text) if limit_text.isdigit() else 0
        end = start + limit if limit > 0 else len(items)
        page = items[start:end]
        meta: dict[str, Any] = {"resourceVersion": list_rv}
        if end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps({"start": end, "rv": list_rv}).encode()
            ).decode()
            meta["remainingItemCount"] = len(items) - end
        if rt.plural in faults.repeat_continue:
            meta["continue"] = "loop"  # the same token on every page
        body = {
            "kind": f"{rt.kind}List",
            "apiVersion": gv,
            "metadata": meta,
            "items": [_list_item(o, gv, rt.builtin) for o in page],
        }
        return 200, body, truncate

    def _group_list(self) -> dict[str, Any]:
        groups = sorted({t.group for t in self.fake._types.values() if t.group})
        return {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [self._group(g) for g in groups],
        }

    def _group(self, group: str) -> dict[str, Any] | None:
        versions: list[str] = []
        for t in self.fake._types.values():
            if t.group == group:
                versions.extend(v for v in t.versions if v not in versions)
        if not versions:
            return None
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": group,
            "versions": entries,
            "preferredVersion": entries[0],
        }

    def _resource_list(self, group: str, version: str, types: list[ResourceType]) -> dict[str, Any]:
        resources = []
        for t in sorted(types, key=lambda t: t.plural):
            entry: dict[str, Any] = {
                "name": t.plural,
                "singularName": t.singular or t.kind.lower(),
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": ["get", "list", "watch"],
            }
            if t.short_names:
                entry["shortNames"] = list(t.short_names)
            resources.append(entry)
        gv = f"{group}/{version}" if group else version
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": gv,
            "resources": resources,
        }


def _peer_name(conn: Any) -> str:
    """The common name of the client certificate a TLS connection presented ("" for none)."""
    peer = conn.getpeercert() if isinstance(conn, ssl.SSLSocket) else None
    for rdn in (peer or {}).get("subject", ()):
        for pair in rdn:
            if pair[0] == "commonName":
                return str(pair[1])
    return ""


def _version_info(git_version: str) -> dict[str, str]:
    core = git_version.lstrip("v").split("-")[0].split("+")[0].split(".")
    return {
        "major": core[0],
        "minor": core[1] if len(core) > 1 else "0",
        "gitVersion": git_version,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.22.0",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


def _custom(fake: FakeAPIServer, path: str) -> bool:
    """Whether ``path`` reads custom resources (a type no built-in of the fake)."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] != ["apis"] or len(parts) < 4:
        return False
    found = _path_plural(path)
    return found is not None and any(
        t.group == parts[1] and t.plural == found[0] and not t.builtin for t in fake._types.values()
    )


def _as_version(obj: dict[str, Any], gv: str) -> dict[str, Any]:
    out = dict(obj)
    out["apiVersion"] = gv
    return out


def _list_item(obj: dict[str, Any], gv: str, builtin: bool) -> dict[str, Any]:
    """As the API server lists: built-in types' items carry no kind/apiVersion, CRs' do."""
    if not builtin:
        return _as_version(obj, gv)
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def _select(items: list[dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
    for selector in query.get("fieldSelector", []):
        for term in filter(None, selector.split(",")):
            key, op, value = _split_term(term)
            if key not in ("metadata.name", "metadata.namespace", "type"):
                raise ValueError(
                    f'"{key}" is not a known field selector: '
                    'only "metadata.name", "metadata.namespace"'
                )
            items = [o for o in items if (_field(o, key) == value) == (op != "!=")]
    for selector in query.get("labelSelector", []):
        for term in filter(None, selector.split(",")):
            if term.startswith("!"):
                items = [o for o in items if term[1:] not in (o["metadata"].get("labels") or {})]
                continue
            if "=" not in term:
                items = [o for o in items if term in (o["metadata"].get("labels") or {})]
                continue
            key, op, value = _split_term(term)
            items = [
                o
                for o in items
                if ((o["metadata"].get("labels") or {}).get(key) == value) == (op != "!=")
            ]
    return items


def _split_term(term: str) -> tuple[str, str, str]:
    for op in ("!=", "==", "="):
        if op in term:
            key, _, value = term.partition(op)
            return key.strip(), op, value.strip()
    raise ValueError(f"invalid selector term {term!r}")


def _field(obj: dict[str, Any], key: str) -> str:
    if key == "type":
        return str(obj.get("type", ""))
    return str(obj["metadata"].get(key.split(".", 1)[1], ""))


# --------------------------------------------------------------------------- kubeconfig


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def make_certificate(directory: Path) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 (openssl CLI): (certificate file, key file)."""
    cert, key = directory / "server.crt", directory / "server.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return str(cert), str(key)


def write_kubeconfig(
    path: str | Path,
    contexts: dict[str, str],
    *,
    current: str | None = None,
    users: dict[str, dict[str, Any]] | None = None,
    ca_files: dict[str, str] | None = None,
) -> Path:
    """A kubeconfig with one cluster, user and context per ``name -> url``.

    Users default to a bearer token ``token-of-<name>``; ``users`` replaces one (e.g. an
    ``exec`` plugin); ``ca_files`` gives a cluster its certificate authority (inline data).
    """
    names = list(contexts)
    clusters = []
    for n in names:
        entry: dict[str, Any] = {"server": contexts[n]}
        if ca_files and n in ca_files:
            entry["certificate-authority-data"] = base64.b64encode(
                Path(ca_files[n]).read_bytes()
            ).decode()
        clusters.append({"name": n, "cluster": entry})
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": clusters,
        "users": [
            {"name": f"{n}-reader", "user": (users or {}).get(n, {"token": f"token-of-{n}"})}
            for n in names
        ],
        "contexts": [{"name": n, "context": {"cluster": n, "user": f"{n}-reader"}} for n in names],
        "current-context": current or (names[0] if names else ""),
        "preferences": {},
    }
    out = Path(path)
    out.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return out


# --------------------------------------------------------------------------- pytest


def exec_plugin_user(directory: Path) -> dict[str, Any]:
    """A kubeconfig user whose exec credential plugin (a script written to ``directory``)
    gives the token ``from-the-plugin``."""
    plugin = directory / "credential.py"
    plugin.write_text(
        "import json\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1',"
        " 'kind': 'ExecCredential', 'status': {'token': 'from-the-plugin'}}))\n",
        encoding="utf-8",
    )
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }


class FakeAPIFactory:
    """Starts fake servers for one test and stops every one of them afterwards."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.servers: list[FakeAPIServer] = []

    def start(
        self,
        source: str | Path | Sequence[dict[str, Any]] = (),
        *,
        faults: Faults | None = None,
        git_version: str | None = None,
        tls: bool = False,
    ) -> FakeAPIServer:
        if isinstance(source, (str, Path)):
            server = FakeAPIServer.from_dir(source, faults=faults)
        else:
            server = FakeAPIServer(source, faults=faults)
        if git_version:
            server.git_version = git_version
        if tls:
            server.tls = make_certificate(Path(tempfile.mkdtemp(dir=self.tmp_path)))
        self.servers.append(server.start())
        return server

    def kubeconfig(
        self,
        contexts: dict[str, FakeAPIServer | None],
        *,
        name: str = "kubeconfig",
        users: dict[str, dict[str, Any]] | None = None,
        ca_files: dict[str, str] | None = None,
    ) -> str:
        """A kubeconfig for these servers; ``None`` is an unreachable context (a closed port).

        HTTPS servers get their own certificate as the CA unless ``ca_files`` says otherwise.
        """
        urls = {
            n: (s.url if s is not None else f"http://127.0.0.1:{closed_port()}")
            for n, s in contexts.items()
        }
        cas = {n: s.tls[0] for n, s in contexts.items() if s is not None and s.tls}
        cas.update(ca_files or {})
        return str(write_kubeconfig(self.tmp_path / name, urls, users=users, ca_files=cas))

    def stop_all(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers.clear()


@pytest.fixture
def fake_api(tmp_path: Path) -> Iterator[FakeAPIFactory]:
    """Start fake API servers with ``fake_api.start(dir_or_objects)``; all stop at teardown."""
    factory = FakeAPIFactory(tmp_path)
    try:
        yield factory
    finally:
        factory.stop_all()


def wait_for(predicate: Any, timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds pass (a bounded loop)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())
