"""The standard-library transport against the fake API server (HTTP and HTTPS), and the
kubernetes client it leaves exec plugins and the like to: same facts, same failures."""

from __future__ import annotations

import base64
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.fakeapi import (
    FakeAPIFactory,
    FakeAPIServer,
    Faults,
    exec_plugin_user,
    fake_api,
    make_certificate,
    wait_for,
)
from support.scenarios import CLUSTER_FIXTURES

from upgradeplan.model import KnowledgeBase
from upgradeplan.readers.kube import cluster, kubeconfig, transport

__all__ = ["fake_api"]

REPO = Path(__file__).resolve().parents[1]
CLIENT = "kubernetes client"


def read(
    kb: KnowledgeBase,
    kubeconfig: str,
    *,
    client: bool = False,
    context: str | None = None,
    **kw: Any,
) -> cluster.ContextResult:
    """One context, through the fast transport or (``client``) the kubernetes client."""
    factory = cluster.new_client if client else None
    contexts = [context] if context else []
    [res] = cluster.read_contexts(kb, kubeconfig, contexts, False, client_factory=factory, **kw)
    return res


def edit_user(kubeconfig: str, user: dict[str, Any], **cluster_fields: Any) -> str:
    """Replace the (only) user of a kubeconfig and add fields to its (only) cluster."""
    path = Path(kubeconfig)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["users"][0]["user"] = user
    doc["clusters"][0]["cluster"].update(cluster_fields)
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return kubeconfig


def https(fake_api: FakeAPIFactory, fixture: str = "s8", **kw: Any) -> FakeAPIServer:
    server = FakeAPIServer.from_dir(CLUSTER_FIXTURES / fixture)
    server.tls = make_certificate(Path(tempfile.mkdtemp(dir=fake_api.tmp_path)))
    server.client_ca = kw.get("client_ca")
    fake_api.servers.append(server.start())
    return server


def certificate(directory: Path, cn: str, san: str) -> tuple[str, str]:
    """A self-signed certificate for ``san`` (openssl CLI): (certificate file, key file)."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / f"{cn}.crt", directory / f"{cn}.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", f"/CN={cn}", "-addext", f"subjectAltName={san}"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return str(cert), str(key)


# --------------------------------------------------------------------------- credentials


def test_a_token_over_https_goes_the_fast_way(kb: KnowledgeBase, fake_api: FakeAPIFactory) -> None:
    server = https(fake_api)
    res = read(kb, fake_api.kubeconfig({"tls": server}))
    assert res.via == "standard library" and res.error is None and res.state is not None
    assert res.state.value("installed.kubernetes") == "1.27.3"
    assert {r.authorization for r in server.requests} == {"Bearer token-of-tls"}
    assert {r.accept for r in server.requests} == {"application/json"}
    assert res.requests == len(server.requests)


def test_a_token_file_relative_to_the_kubeconfig(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = https(fake_api)
    (tmp_path / "tokens").mkdir()
    (tmp_path / "tokens" / "reader").write_text("token-from-a-file\n", encoding="utf-8")
    kubeconfig = edit_user(fake_api.kubeconfig({"tls": server}), {"tokenFile": "tokens/reader"})
    res = read(kb, kubeconfig)
    assert res.via == "standard library" and res.state is not None
    assert {r.authorization for r in server.requests} == {"Bearer token-from-a-file"}


def test_basic_auth(kb: KnowledgeBase, fake_api: FakeAPIFactory) -> None:
    server = https(fake_api)
    kubeconfig = edit_user(
        fake_api.kubeconfig({"tls": server}), {"username": "reader", "password": "s3cret"}
    )
    res = read(kb, kubeconfig)
    assert res.via == "standard library" and res.state is not None
    expected = "Basic " + base64.b64encode(b"reader:s3cret").decode()
    assert {r.authorization for r in server.requests} == {expected}


@pytest.mark.parametrize("given_as", ["files", "data"])
def test_a_client_certificate_is_presented(
    kb: KnowledgeBase,
    fake_api: FakeAPIFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    given_as: str,
) -> None:
    cert, key = certificate(tmp_path / "tls", "upgradeplan-reader", "DNS:reader")
    server = https(fake_api, client_ca=cert)
    if given_as == "files":  # relative to the kubeconfig's folder
        user = {"client-certificate": "tls/upgradeplan-reader.crt"}
        user["client-key"] = "tls/upgradeplan-reader.key"
    else:
        user = {
            "client-certificate-data": base64.b64encode(Path(cert).read_bytes()).decode(),
            "client-key-data": base64.b64encode(Path(key).read_bytes()).decode(),
        }
    kubeconfig = edit_user(fake_api.kubeconfig({"tls": server}), user)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    modes: list[int] = []
    written = transport._private_file

    def watched(folder: str, name: str, data: bytes) -> Path:
        path = written(folder, name, data)
        modes.extend((stat.S_IMODE(os.stat(folder).st_mode), stat.S_IMODE(path.stat().st_mode)))
        return path

    monkeypatch.setattr(transport, "_private_file", watched)
    res = read(kb, kubeconfig)
    assert res.via == "standard library" and res.error is None and res.state is not None
    assert {r.client_cert for r in server.requests} == {"upgradeplan-reader"}
    assert {r.authorization for r in server.requests} == {""}
    assert modes == ([] if given_as == "files" else [0o700, 0o600, 0o700, 0o600])
    assert list(scratch.iterdir()) == []  # the key material written for TLS is gone


def test_without_the_client_certificate_the_server_refuses(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    cert, _ = certificate(tmp_path / "tls", "upgradeplan-reader", "DNS:reader")
    server = https(fake_api, client_ca=cert)
    res = read(kb, fake_api.kubeconfig({"tls": server}))
    assert res.state is None and res.error is not None
    assert "cannot reach the API server of context 'tls'" in res.error


def test_insecure_skip_tls_verify(kb: KnowledgeBase, fake_api: FakeAPIFactory) -> None:
    server = https(fake_api)
    kubeconfig = fake_api.kubeconfig({"tls": server}, ca_files={})
    doc = yaml.safe_load(Path(kubeconfig).read_text(encoding="utf-8"))
    del doc["clusters"][0]["cluster"]["certificate-authority-data"]
    doc["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    Path(kubeconfig).write_text(yaml.safe_dump(doc), encoding="utf-8")
    res = read(kb, kubeconfig)
    assert res.via == "standard library" and res.state is not None
    assert res.state.value("installed.kubernetes") == "1.27.3"


def test_without_a_ca_the_system_roots_do_not_trust_the_fake(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server = https(fake_api)
    kubeconfig = fake_api.kubeconfig({"tls": server})
    doc = yaml.safe_load(Path(kubeconfig).read_text(encoding="utf-8"))
    del doc["clusters"][0]["cluster"]["certificate-authority-data"]
    Path(kubeconfig).write_text(yaml.safe_dump(doc), encoding="utf-8")
    res = read(kb, kubeconfig)
    assert res.error is not None and "CERTIFICATE_VERIFY_FAILED" in res.error


def test_a_wrong_ca_is_a_named_context_error(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = https(fake_api)
    other, _ = certificate(tmp_path / "other", "someone-else", "IP:127.0.0.1")
    res = read(kb, fake_api.kubeconfig({"tls": server}, ca_files={"tls": other}))
    assert res.via == "standard library" and res.state is None and res.error is not None
    assert res.error.startswith("cannot reach the API server of context 'tls': TLS handshake")
    assert "CERTIFICATE_VERIFY_FAILED" in res.error
    assert server.requests == []


def test_tls_server_name(kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path) -> None:
    named = certificate(tmp_path / "named", "api.internal", "DNS:api.internal")
    server = FakeAPIServer.from_dir(CLUSTER_FIXTURES / "s8")
    server.tls = named
    fake_api.servers.append(server.start())
    kubeconfig = fake_api.kubeconfig({"named": server})  # its own certificate is the CA
    mismatch = read(kb, kubeconfig)
    assert mismatch.error is not None and "CERTIFICATE_VERIFY_FAILED" in mismatch.error
    doc = yaml.safe_load(Path(kubeconfig).read_text(encoding="utf-8"))
    doc["clusters"][0]["cluster"]["tls-server-name"] = "api.internal"
    Path(kubeconfig).write_text(yaml.safe_dump(doc), encoding="utf-8")
    res = read(kb, kubeconfig)
    assert res.via == "standard library" and res.error is None and res.state is not None


def test_a_bad_client_key_is_a_named_context_error(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = https(fake_api)
    (tmp_path / "bad.key").write_text("not a key\n", encoding="utf-8")
    (tmp_path / "bad.crt").write_text("not a certificate\n", encoding="utf-8")
    kubeconfig = edit_user(
        fake_api.kubeconfig({"tls": server}),
        {"client-certificate": "bad.crt", "client-key": "bad.key"},
    )
    res = read(kb, kubeconfig)
    assert res.state is None and res.error is not None
    assert res.error.startswith("context 'tls': the client certificate or key cannot be used")


# --------------------------------------------------------------------------- the fallback


def test_an_exec_plugin_user_is_read_through_its_plugin_run_here(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = https(fake_api, "s7")
    user = exec_plugin_user(tmp_path)
    res = read(kb, fake_api.kubeconfig({"exec": server}, users={"exec": user}))
    assert res.via == "standard library"  # the plugin runs with a timeout, its stderr never shown
    assert res.state is not None and res.state.value("installed.harness-delegate") == "0.31.2"
    assert {r.authorization for r in server.requests} == {"Bearer from-the-plugin"}


def test_contexts_of_one_kubeconfig_may_take_different_transports(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    plain = fake_api.start(CLUSTER_FIXTURES / "s1")
    other = fake_api.start(CLUSTER_FIXTURES / "s8")
    proxied = {"token": "t", "as": "cluster-admin"}  # impersonation: left to the client
    kubeconfig = fake_api.kubeconfig({"plain": plain, "other": other}, users={"other": proxied})
    results = cluster.read_contexts(kb, kubeconfig, [], True)
    assert [(r.name, r.via.split(" (")[0]) for r in results] == [
        ("plain", "standard library"),
        ("other", CLIENT),
    ]
    assert all(r.state is not None for r in results)


# --------------------------------------------------------------------------- same answers


@pytest.mark.parametrize("fixture", ["s1", "s6", "s8"])
def test_both_transports_give_the_same_facts_and_requests(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, fixture: str
) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / fixture)
    kubeconfig = fake_api.kubeconfig({fixture: server})
    fast = read(kb, kubeconfig)
    fast_paths = sorted(server.paths())
    server.requests.clear()
    slow = read(kb, kubeconfig, client=True)
    assert fast.via == "standard library" and slow.via == "injected"
    assert fast.state is not None and slow.state is not None
    assert fast.state == slow.state
    assert fast.requests == slow.requests
    assert sorted(server.paths()) == fast_paths


@pytest.mark.parametrize("client", [False, True], ids=["standard library", "kubernetes-client"])
def test_both_transports_fail_alike(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, client: bool
) -> None:
    faults = Faults(
        errors_500={"helmreleases": 2, "ocirepositories": -1},
        truncated={"harnesses"},
        forbidden={"storageclasses"},
        no_answer={"agenttemplates"},
    )
    server = fake_api.start(CLUSTER_FIXTURES / "s1", faults=faults)
    res = read(kb, fake_api.kubeconfig({"s1": server}), client=client, timeout=1.0, retries=2)
    assert res.state is not None, res.error
    unreadable = res.state.unreadable
    assert res.state.value("installed.agent-platform") == "4.7.18"  # 500, 500, then read
    pin = unreadable["pin.agent-platform"]  # its OCIRepository list failed: only its pins
    assert "500 Internal Server Error" in pin and "after 3 attempts" in pin
    assert "not valid JSON" in unreadable["object.Harness"]
    assert unreadable["storageclass"].startswith("storageclasses.storage.k8s.io in context s1: 403")
    assert "no complete answer" in unreadable["object.AgentTemplate"]
    lost = fake_api.kubeconfig({"lost": None}, name="lost")
    gone = read(kb, lost, client=client, timeout=0.3)
    assert gone.state is None and gone.error is not None and "connection refused" in gone.error


# --------------------------------------------------------------------------- imports


def test_a_scan_on_the_fast_path_never_imports_the_kubernetes_client(
    fake_api: FakeAPIFactory,
) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s6")
    kubeconfig = fake_api.kubeconfig({"s6": server})
    code = (
        "import sys\n"
        "from upgradeplan.cli import main\n"
        f"sys.argv = ['upgradeplan', 'scan', '-o', 'json', '--kubeconfig', {kubeconfig!r}]\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'kubernetes', 'urllib3', 'requests', 'pydantic', 'oauthlib'})\n"
        "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=False,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "heavy": []}, proc.stderr
    scan = json.loads(proc.stdout)
    assert scan["results"][0]["state"]["facts"]["installed.harness-delegate"]["value"] == "0.29.0"
    assert server.requests


# --------------------------------------------------------------------------- connections


def _fast_transport(fake_api: FakeAPIFactory) -> tuple[FakeAPIServer, transport.HttpTransport]:
    """A fake API server (fixture s1) and the fast transport connected to it."""
    server = fake_api.start(CLUSTER_FIXTURES / "s1")
    config = kubeconfig.load(fake_api.kubeconfig({"s1": server}))
    conn = kubeconfig.connection(config, "s1", environ={})
    assert isinstance(conn, kubeconfig.Connection)
    return server, transport.HttpTransport(conn)


def test_connections_are_kept_alive_and_a_dropped_one_is_replaced(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server, fast = _fast_transport(fake_api)
    try:
        res = cluster.read_context(kb, fast, "s1", timeout=5)
        assert res.state is not None and res.requests == len(server.requests)
        assert fast.connections <= 4 < res.requests  # four requests in flight at most
        opened = fast.connections
        for idle in fast._idle:  # as if the server had closed its idle connections
            assert idle.sock is not None
            idle.sock.close()
            ours, theirs = socket.socketpair()
            theirs.close()
            idle.sock = ours
        answer = fast.fetch("/version", 5)
        assert answer.status == 200 and json.loads(answer.data)["gitVersion"] == "v1.35.0"
        assert fast.connections == opened + 1
    finally:
        fast.close()
    assert fast._idle == []


def test_a_request_written_ahead_is_answered_as_a_plain_fetch(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server, fast = _fast_transport(fake_api)
    try:
        plain = fast.fetch("/version", 5)
        sent = fast.send("/version", 5)
        assert sent is not None  # written before it is read
        assert wait_for(lambda: len(server.requests) == 2)
        assert fast.fetch("/version", 5, sent) == plain
        # on a kept-alive connection the server has closed: once more, afresh
        sent = fast.send("/version", 5)
        assert sent is not None and sent.reused
        assert sent.wire.sock is not None
        sent.wire.sock.close()
        ours, theirs = socket.socketpair()
        theirs.close()
        sent.wire.sock = ours
        opened = fast.connections
        assert fast.fetch("/version", 5, sent) == plain
        assert fast.connections == opened + 1
        # written for another path: not read, and this one asked for afresh
        sent = fast.send("/apis", 5)
        assert sent is not None
        assert fast.fetch("/version", 5, sent) == plain
        assert sent.wire.sock is None
        assert wait_for(lambda: len(server.requests) == 6)
        assert sorted(r.path for r in server.requests) == ["/apis"] + ["/version"] * 5
    finally:
        fast.close()
