"""Chart archives built from small charts, and a Helm repository and an OCI registry serving
them on 127.0.0.1 (plain HTTP, a thread each), counting every request.

The Helm repository is the layout ``helm repo index`` writes: ``/index.yaml`` listing each
chart version with its ``urls`` (relative) and ``digest`` (sha256 of the archive), and the
archives beside it. The registry speaks the OCI distribution API a Helm chart push leaves:
``/v2/<repo>/manifests/<tag>`` (an image manifest whose one layer has the Helm chart media
type) and ``/v2/<repo>/blobs/<digest>``; with ``token=True`` it first answers 401 with a
``Bearer`` challenge whose realm (``/token``) hands out an anonymous token, as public
registries do.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import yaml

HELM_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
CONFIG = "application/vnd.cncf.helm.config.v1+json"
TOKEN = "anon-pull-token-for-tests"


def crd(group: str, plural: str, kind: str, versions: Mapping[str, bool]) -> dict[str, Any]:
    """A CustomResourceDefinition; ``versions``: name -> storage."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "plural": plural},
            "scope": "Namespaced",
            "versions": [
                {"name": v, "served": True, "storage": s, "schema": {"openAPIV3Schema": {}}}
                for v, s in versions.items()
            ],
        },
    }


def chart_tgz(
    name: str,
    version: str,
    *,
    app_version: str = "1.0.0",
    kube_version: str = "",
    values: Mapping[str, Any] | None = None,
    schema: Mapping[str, Any] | None = None,
    crds: Mapping[str, Any] | None = None,
    templates: Mapping[str, str] | None = None,
    extra: Mapping[str, bytes] | None = None,
) -> bytes:
    """A chart archive as ``helm package`` lays it out: ``<name>/Chart.yaml`` and the rest
    under the chart's folder (``extra``: raw members by their full path, for hostile ones)."""
    meta: dict[str, Any] = {"apiVersion": "v2", "name": name, "version": version}
    meta["appVersion"] = app_version
    if kube_version:
        meta["kubeVersion"] = kube_version
    files: dict[str, bytes] = {
        f"{name}/Chart.yaml": yaml.safe_dump(meta).encode(),
        f"{name}/values.yaml": yaml.safe_dump(dict(values or {})).encode(),
        f"{name}/templates/deployment.yaml": (
            b"kind: Deployment\nmetadata: {name: {{ .Release.Name }}}\n"
        ),
    }
    if schema is not None:
        files[f"{name}/values.schema.json"] = json.dumps(schema).encode()
    for file, doc in (crds or {}).items():
        files[f"{name}/crds/{file}"] = yaml.safe_dump(doc).encode()
    for file, text in (templates or {}).items():
        files[f"{name}/templates/{file}"] = text.encode()
    files.update(extra or {})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Served:
    """What a server has served: every request path, in order."""

    url: str
    requests: list[str] = field(default_factory=list)
    fail: set[str] = field(default_factory=set)  # paths answered 500 (every time)


def _index(charts: Mapping[tuple[str, str], bytes]) -> bytes:
    entries: dict[str, list[dict[str, Any]]] = {}
    for (name, version), data in sorted(charts.items()):
        entries.setdefault(name, []).append(
            {
                "apiVersion": "v2",
                "name": name,
                "version": version,
                "urls": [f"charts/{name}-{version}.tgz"],
                "digest": sha256(data),
            }
        )
    return yaml.safe_dump({"apiVersion": "v1", "entries": entries}).encode()


@contextmanager
def helm_repository(charts: Mapping[tuple[str, str], bytes]) -> Iterator[Served]:
    """A Helm repository of ``charts`` ((name, version) -> archive) on 127.0.0.1."""
    index = _index(charts)
    files = {"/index.yaml": index}
    files.update({f"/charts/{n}-{v}.tgz": data for (n, v), data in charts.items()})
    with _serve(lambda h, path: _static(h, path, files)) as served:
        yield served


def _static(h: BaseHTTPRequestHandler, path: str, files: Mapping[str, bytes]) -> None:
    body = files.get(path)
    _answer(h, 200 if body is not None else 404, body or b"not found", "application/octet-stream")


@contextmanager
def oci_registry(
    charts: Mapping[tuple[str, str], bytes], prefix: str = "charts", token: bool = True
) -> Iterator[Served]:
    """An OCI registry holding ``charts`` as ``<prefix>/<name>:<version>`` on 127.0.0.1."""
    blobs: dict[str, bytes] = {}
    manifests: dict[str, bytes] = {}
    for (name, version), data in charts.items():
        config = json.dumps({"name": name, "version": version}).encode()
        for blob in (config, data):
            blobs["sha256:" + sha256(blob)] = blob
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": CONFIG,
                "digest": "sha256:" + sha256(config),
                "size": len(config),
            },
            "layers": [
                {"mediaType": HELM_LAYER, "digest": "sha256:" + sha256(data), "size": len(data)}
            ],
        }
        manifests[f"/v2/{prefix}/{name}/manifests/{version.replace('+', '_')}"] = json.dumps(
            manifest
        ).encode()
    box: dict[str, str] = {}

    def handle(h: BaseHTTPRequestHandler, path: str) -> None:
        if path == "/token":
            return _answer(h, 200, json.dumps({"token": TOKEN}).encode(), "application/json")
        if token and h.headers.get("Authorization") != f"Bearer {TOKEN}":
            h.send_response(401)
            realm = f'Bearer realm="{box["url"]}/token",service="test-registry"'
            realm += ',scope="repository:x:pull"'
            h.send_header("WWW-Authenticate", realm)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return None
        if path in manifests:
            kind = "application/vnd.oci.image.manifest.v1+json"
            return _answer(h, 200, manifests[path], kind)
        marker = "/blobs/"
        if path.startswith(f"/v2/{prefix}/") and marker in path:
            digest = path.split(marker, 1)[1]
            if digest in blobs:
                return _answer(h, 200, blobs[digest], "application/octet-stream")
        return _answer(h, 404, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}', "application/json")

    with _serve(handle) as served:
        box["url"] = served.url
        yield served


def _answer(h: BaseHTTPRequestHandler, status: int, body: bytes, kind: str) -> None:
    h.send_response(status)
    h.send_header("Content-Type", kind)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


@contextmanager
def _serve(handle: Any) -> Iterator[Served]:
    served = Served("")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            served.requests.append(path)
            if path in served.fail:
                _answer(self, 500, b"boom", "text/plain")
                return
            handle(self, path)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
