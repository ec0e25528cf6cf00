"""A chart registry on 127.0.0.1 for the Renovate test: OCI tag lists (the Docker registry API
Renovate's docker datasource reads) and Helm repository indexes, over HTTPS with a
certificate made for the run (Renovate is told to accept it with NODE_TLS_REJECT_UNAUTHORIZED).
"""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _handler(oci: Mapping[str, Sequence[str]], helm: Mapping[str, Any], log: list[str]) -> type:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            log.append(self.path)

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path in ("/v2", "/v2/"):
                return self._send(200, b"{}", "application/json")
            if path.startswith("/v2/") and path.endswith("/tags/list"):
                repo = path[len("/v2/") : -len("/tags/list")]
                if repo in oci:
                    doc = {"name": repo, "tags": list(oci[repo])}
                    return self._send(200, json.dumps(doc).encode(), "application/json")
            for name, charts in helm.items():
                if path == f"/{name}/index.yaml":
                    entries = {
                        chart: [
                            {"name": chart, "version": v, "urls": [f"{chart}-{v}.tgz"]}
                            for v in versions
                        ]
                        for chart, versions in charts.items()
                    }
                    body = json.dumps({"apiVersion": "v1", "entries": entries}).encode()
                    return self._send(200, body, "application/x-yaml")
            return self._send(404, b'{"errors":[{"code":"NAME_UNKNOWN"}]}', "application/json")

    return Handler


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


@contextmanager
def serve(published: Mapping[str, Any], folder: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve ``published`` (``{"oci": {repo: tags}, "helm": {name: {chart: versions}}}``);
    yields ``127.0.0.1:PORT`` and the paths asked for, in order."""
    log: list[str] = []
    handler = _handler(published.get("oci", {}), published.get("helm", {}), log)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*_certificate(folder))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", log
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
