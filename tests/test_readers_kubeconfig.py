"""Kubeconfig files merged as kubectl merges them; which contexts the fast transport serves."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from upgradeplan.errors import BadInput
from upgradeplan.readers.kube import cluster
from upgradeplan.readers.kube.kubeconfig import Connection, Fallback, connection, load

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def config(
    clusters: dict[str, dict[str, Any]] | None = None,
    users: dict[str, dict[str, Any]] | None = None,
    contexts: dict[str, tuple[str, str]] | None = None,
    current: str | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in (clusters or {}).items()],
        "users": [{"name": n, "user": u} for n, u in (users or {}).items()],
        "contexts": [
            {"name": n, "context": {"cluster": c, "user": u}}
            for n, (c, u) in (contexts or {}).items()
        ],
    }
    if current is not None:
        doc["current-context"] = current
    return doc


def single(
    tmp_path: Path, cluster_body: dict[str, Any], user_body: dict[str, Any] | None
) -> Connection | Fallback:
    users = {"u": user_body} if user_body is not None else {}
    path = write(
        tmp_path / "kc",
        config({"c": cluster_body}, users, {"ctx": ("c", "u")}, current="ctx"),
    )
    return connection(load(str(path)), "ctx", environ={})


def fast(result: Connection | Fallback) -> Connection:
    assert isinstance(result, Connection), result
    return result


def fallback(result: Connection | Fallback) -> str:
    assert isinstance(result, Fallback), result
    return result.reason


# --------------------------------------------------------------------------- merging


def test_the_first_file_defining_a_name_wins_and_the_first_current_context(
    tmp_path: Path,
) -> None:
    first = write(
        tmp_path / "a" / "config",
        config(
            {"shared": {"server": "https://first.example:6443"}},
            {"reader": {"token": "first-token"}},
            {"prod": ("shared", "reader")},
        ),  # no current-context here
    )
    second = write(
        tmp_path / "b" / "config",
        config(
            {
                "shared": {"server": "https://second.example:6443"},
                "edge": {"server": "http://edge.example:8080"},
            },
            {"reader": {"token": "second-token"}},
            {"prod": ("edge", "reader"), "edge": ("edge", "reader")},
            current="edge",
        ),
    )
    third = write(tmp_path / "c" / "config", config(current="prod"))
    merged = load(os.pathsep.join([str(first), str(tmp_path / "missing"), str(second), str(third)]))
    assert merged.files == (first, second, third)  # the missing file is skipped
    assert merged.names == ["prod", "edge"]
    assert merged.current == "edge"  # the first file that sets one
    prod = fast(connection(merged, "prod", environ={}))
    assert (prod.host, prod.port, prod.scheme) == ("first.example", 6443, "https")
    assert prod.authorization == "Bearer first-token"
    edge = fast(connection(merged, "edge", environ={}))
    assert (edge.host, edge.port, edge.scheme) == ("edge.example", 8080, "http")
    assert edge.authorization == "Bearer first-token"  # user "reader" came from the first file
    assert cluster.list_contexts(f"{first}{os.pathsep}{second}") == (["prod", "edge"], "edge")


def test_relative_paths_are_relative_to_the_file_that_defines_them(tmp_path: Path) -> None:
    clusters_file = write(
        tmp_path / "clusters" / "config",
        config({"c": {"server": "https://k.example", "certificate-authority": "pki/ca.crt"}}),
    )
    users_file = write(
        tmp_path / "users" / "config",
        config(
            users={
                "u": {"tokenFile": "secrets/token"},
                "certs": {"client-certificate": "tls/client.crt", "client-key": "tls/client.key"},
            },
            contexts={"ctx": ("c", "u"), "mtls": ("c", "certs")},
        ),
    )
    (tmp_path / "users" / "secrets").mkdir()
    (tmp_path / "users" / "secrets" / "token").write_text("from-the-file\n", encoding="utf-8")
    merged = load(f"{clusters_file}{os.pathsep}{users_file}")
    ctx = fast(connection(merged, "ctx", environ={}))
    assert ctx.ca_file == tmp_path / "clusters" / "pki" / "ca.crt"
    assert ctx.authorization == "Bearer from-the-file"  # read relative to the users file
    mtls = fast(connection(merged, "mtls", environ={}))
    assert mtls.cert_file == tmp_path / "users" / "tls" / "client.crt"
    assert mtls.key_file == tmp_path / "users" / "tls" / "client.key"
    assert mtls.authorization == ""


def test_no_file_at_all_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not found"):
        load(f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}")


def test_broken_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    path.write_text("apiVersion: v1\nclusters:\n  - name: [unclosed\n", encoding="utf-8")
    with pytest.raises(BadInput) as err:
        load(str(path))
    assert f"{path}:" in str(err.value) and "kubectl config view" in str(err.value)


def test_an_empty_file_is_an_empty_configuration(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("", encoding="utf-8")
    other = write(tmp_path / "kc", config({"c": {"server": "http://x"}}, {}, {"a": ("c", "u")}))
    assert load(f"{empty}{os.pathsep}{other}").names == ["a"]


def test_a_context_naming_an_undefined_cluster_is_bad_input(tmp_path: Path) -> None:
    path = write(tmp_path / "kc", config({}, {}, {"lost": ("nowhere", "u")}))
    with pytest.raises(BadInput, match="cluster 'nowhere' is not defined"):
        connection(load(str(path)), "lost", environ={})


# --------------------------------------------------------------------------- credentials


def test_token_basic_auth_and_no_credentials(tmp_path: Path) -> None:
    server = {"server": "https://10.0.0.1:6443/prefix/"}
    token = fast(single(tmp_path, server, {"token": "abc"}))
    assert token.authorization == "Bearer abc" and token.base_path == "/prefix"
    basic = fast(single(tmp_path, server, {"username": "admin", "password": "pa:ss"}))
    assert basic.authorization == "Basic " + base64.b64encode(b"admin:pa:ss").decode()
    assert fast(single(tmp_path, server, {})).authorization == ""
    assert fast(single(tmp_path, server, None)).authorization == ""  # an undefined user


def test_secrets_never_appear_in_repr(tmp_path: Path) -> None:
    key = b"-----BEGIN PRIVATE KEY-----\nsecret-key-bytes\n-----END PRIVATE KEY-----\n"
    result = fast(
        single(
            tmp_path,
            {
                "server": "https://k.example",
                "certificate-authority-data": base64.b64encode(PEM).decode(),
            },
            {
                "token": "very-secret-token",
                "client-certificate-data": base64.b64encode(PEM).decode(),
                "client-key-data": base64.b64encode(key).decode(),
            },
        )
    )
    assert result.ca_data == PEM and result.key_data == key
    text = repr(result)
    assert "very-secret-token" not in text and "secret-key-bytes" not in text


def test_tls_settings_are_read(tmp_path: Path) -> None:
    result = fast(
        single(
            tmp_path,
            {
                "server": "https://k.example",
                "insecure-skip-tls-verify": True,
                "tls-server-name": "api.internal",
            },
            {"token": "t"},
        )
    )
    assert result.insecure and result.server_name == "api.internal"
    assert (result.port, result.ca_file, result.ca_data) == (443, None, None)


def test_tls_material_is_ignored_over_plain_http(tmp_path: Path) -> None:
    result = fast(
        single(
            tmp_path,
            {"server": "http://k.example", "certificate-authority": "missing.crt"},
            {"token": "t", "client-certificate": "c.crt", "client-key": "c.key"},
        )
    )
    assert (result.ca_file, result.cert_file, result.port) == (None, None, 80)


def test_an_unreadable_token_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"tokenFile .* of user 'u' cannot be read"):
        single(tmp_path, {"server": "https://k.example"}, {"tokenFile": "nope"})


def test_data_that_is_not_base64_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="certificate-authority-data of 'c' is not base64"):
        single(
            tmp_path,
            {"server": "https://k.example", "certificate-authority-data": "@@not base64@@"},
            {},
        )


# --------------------------------------------------------------------------- fallbacks


@pytest.mark.parametrize(
    ("cluster_body", "user_body", "reason"),
    [
        ({"server": "https://k"}, {"auth-provider": {"name": "oidc"}}, "uses auth-provider"),
        ({"server": "https://k"}, {"token": "t", "as": "admin"}, "uses as"),
        ({"server": "https://k", "proxy-url": "socks5://proxy:1080"}, {}, "socks5 proxy"),
        ({"server": "https://k"}, {"token": "t", "tokenFile": "f"}, "both token and tokenFile"),
        ({"server": "https://k"}, {"token": "t", "username": "a", "password": "b"}, "both token"),
        ({"server": "https://k"}, {"username": "a"}, "user name or password without"),
        ({"server": "https://k"}, {"client-certificate-data": "AA=="}, "without the other"),
        (
            {
                "server": "https://k",
                "certificate-authority": "ca",
                "insecure-skip-tls-verify": True,
            },
            {},
            "both certificate-authority and insecure-skip-tls-verify",
        ),
        ({"server": "k.example:6443"}, {}, "not a plain http(s) URL"),
    ],
)
def test_what_the_fast_transport_does_not_understand_goes_to_the_client(
    tmp_path: Path, cluster_body: dict[str, Any], user_body: dict[str, Any], reason: str
) -> None:
    assert reason in fallback(single(tmp_path, cluster_body, user_body))


def test_empty_fields_do_not_count(tmp_path: Path) -> None:
    result = single(tmp_path, {"server": "https://k"}, {"token": "t", "exec": None, "as": ""})
    assert fast(result).authorization == "Bearer t"


def test_a_proxy_from_the_environment_is_used_unless_no_proxy_says_so(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "kc",
        config({"c": {"server": "https://api.prod.example:6443"}}, {}, {"ctx": ("c", "u")}),
    )
    merged = load(str(path))
    proxied = connection(merged, "ctx", environ={"HTTPS_PROXY": "http://proxy:3128"})
    assert fast(proxied).proxy == "http://proxy:3128"
    assert "socks5 proxy" in fallback(
        connection(merged, "ctx", environ={"all_proxy": "socks5://p"})
    )
    for no_proxy in ("*", "api.prod.example", ".example", "prod.example", "api.prod.example:6443"):
        env = {"https_proxy": "http://proxy:3128", "no_proxy": f"localhost,{no_proxy}"}
        assert fast(connection(merged, "ctx", environ=env)).proxy == "", no_proxy
    only_http = {"http_proxy": "http://proxy:3128"}  # an https server is not affected
    assert fast(connection(merged, "ctx", environ=only_http)).proxy == ""
