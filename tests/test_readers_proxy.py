"""proxy-url (and proxies from the environment) through the standard-library transport: a
CONNECT tunnel to an https API server, the absolute URL to an http one. A small forwarding
proxy on 127.0.0.1 stands in for the corporate one; every server the test starts is stopped."""

from __future__ import annotations

import json
import select
import socket
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO
from support.cli import invoke
from support.fakeapi import FakeAPIFactory, fake_api

__all__ = ["fake_api"]  # the fixture, imported for pytest

FIXTURE = REPO / "tests" / "fixtures" / "cluster" / "s1"


class _Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[str] = []  # request lines (CONNECT host:port, GET http://…)
        self.auth: list[str] = []


class _Handler(socketserver.StreamRequestHandler):
    server: _Proxy

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 65536:
            chunk = self.connection.recv(4096)
            if not chunk:
                return
            head += chunk
        header, _, rest = head.partition(b"\r\n\r\n")
        lines = header.decode("latin-1").split("\r\n")
        self.server.seen.append(lines[0])
        for line in lines[1:]:
            if line.lower().startswith("proxy-authorization:"):
                self.server.auth.append(line.split(":", 1)[1].strip())
        method, target, _ = lines[0].split(" ", 2)
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host, int(port)), timeout=10)
            self.connection.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:  # GET http://host:port/path: forward with the path only
            from urllib.parse import urlsplit

            url = urlsplit(target)
            upstream = socket.create_connection((url.hostname, url.port or 80), timeout=10)
            first = f"{method} {url.path}{'?' + url.query if url.query else ''} HTTP/1.1"
            kept = [ln for ln in lines[1:] if not ln.lower().startswith("proxy-")]
            upstream.sendall(("\r\n".join([first, *kept]) + "\r\n\r\n").encode("latin-1") + rest)
        self._pipe(upstream)

    def _pipe(self, upstream: socket.socket) -> None:
        sockets = [self.connection, upstream]
        try:
            for _ in range(100000):  # bounded: ends when either side closes
                ready, _, _ = select.select(sockets, [], [], 10)
                if not ready:
                    return
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is self.connection else self.connection).sendall(data)
        finally:
            upstream.close()


@pytest.fixture
def proxy() -> Iterator[_Proxy]:
    server = _Proxy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _with_proxy(kubeconfig: str, url: str) -> str:
    doc: dict[str, Any] = yaml.safe_load(Path(kubeconfig).read_text())
    for cluster in doc["clusters"]:
        cluster["cluster"]["proxy-url"] = url
    Path(kubeconfig).write_text(yaml.safe_dump(doc), encoding="utf-8")
    return kubeconfig


def _scan(kubeconfig: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = invoke("scan", "--kubeconfig", kubeconfig, "-o", "json", env=env)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["results"][0]
    assert isinstance(doc, dict)
    return doc


def test_proxy_url_tunnels_to_an_https_api_server(fake_api: FakeAPIFactory, proxy: _Proxy) -> None:
    server = fake_api.start(FIXTURE, tls=True)
    port = proxy.server_address[1]
    kubeconfig = _with_proxy(
        fake_api.kubeconfig({"s1": server}), f"http://u:p%40ss@127.0.0.1:{port}"
    )
    doc = _scan(kubeconfig)
    assert doc["state"]["facts"]["installed.agent-platform"]["value"] == "4.7.18"
    assert doc.get("via", "standard library").startswith("standard library")
    assert proxy.seen and all(line.startswith("CONNECT 127.0.0.1:") for line in proxy.seen)
    assert proxy.auth and proxy.auth[0] == "Basic dTpwQHNz"  # u:p@ss
    assert all(r.authorization == "Bearer token-of-s1" for r in server.requests)


def test_proxy_url_forwards_to_an_http_api_server(fake_api: FakeAPIFactory, proxy: _Proxy) -> None:
    server = fake_api.start(FIXTURE)
    port = proxy.server_address[1]
    kubeconfig = _with_proxy(fake_api.kubeconfig({"s1": server}), f"http://127.0.0.1:{port}")
    doc = _scan(kubeconfig)
    assert doc["state"]["facts"]["installed.agent-platform"]["value"] == "4.7.18"
    assert proxy.seen and all(line.startswith("GET http://127.0.0.1:") for line in proxy.seen)
    assert server.requests


def test_a_proxy_from_the_environment_is_used(fake_api: FakeAPIFactory, proxy: _Proxy) -> None:
    server = fake_api.start(FIXTURE, tls=True)
    kubeconfig = fake_api.kubeconfig({"s1": server})
    env = {"HTTPS_PROXY": f"http://127.0.0.1:{proxy.server_address[1]}", "NO_PROXY": ""}
    doc = _scan(kubeconfig, env=env)
    assert doc["state"]["facts"]["installed.agent-platform"]["value"] == "4.7.18"
    assert proxy.seen
