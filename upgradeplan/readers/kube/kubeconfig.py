"""Kubeconfig files as kubectl reads them, and what one context needs to connect.

``load`` merges a ``:``-list of files the way kubectl does: files that do not exist are
skipped; for clusters, users and contexts the first file that defines a name wins; the
current context comes from the first file that sets one; relative certificate, key and
token-file paths are relative to the folder of the file that defines them.

``connection`` turns one context into the settings the standard-library transport
(:mod:`upgradeplan.readers.kube.transport`) needs, when the context asks for nothing else: a
bearer token or token file, a client certificate and key, a user name and password, or no
credentials at all; a server URL, a certificate authority (file or data), skipping TLS
verification, a TLS server name; an exec credential plugin, run here with a timeout (its
stderr and stdout are never shown: they may hold secrets). Anything else (auth providers,
impersonation, socks proxies, fields that contradict each other, fields it does not know) gives a
:class:`Fallback` with the reason, and the kubernetes client reads that context.

Token and key material is held in fields left out of ``repr``, never put in a message, and
registered with :mod:`upgradeplan.redact` as soon as it is read. A token with a line break
or another control character is refused (no header could carry it).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from msgspec import Struct

from upgradeplan.errors import BadInput, ExitCode, UpgradeplanError
from upgradeplan.escape import control_char
from upgradeplan.filekind import describe
from upgradeplan.readers.inputs import read_bounded, regular_file
from upgradeplan.redact import register
from upgradeplan.yamlload import YamlError, load_one

SECTIONS = {"clusters": "cluster", "users": "user", "contexts": "context"}

# Fields the transport understands; anything else set in a user or cluster means fallback.
USER_FIELDS = frozenset(
    {
        "token",
        "tokenFile",
        "username",
        "password",
        "client-certificate",
        "client-certificate-data",
        "client-key",
        "client-key-data",
        "exec",
        "extensions",
    }
)
EXEC_FIELDS = frozenset(
    {"command", "args", "env", "apiVersion", "interactiveMode", "installHint", "provideClusterInfo"}
)
EXEC_TIMEOUT = 10.0  # seconds an exec credential plugin may take (the request timeout)
CLUSTER_FIELDS = frozenset(
    {
        "server",
        "certificate-authority",
        "certificate-authority-data",
        "insecure-skip-tls-verify",
        "tls-server-name",
        "proxy-url",
        "extensions",
        "disable-compression",
    }
)


class Named(Struct, frozen=True):
    """One named cluster, user or context, with the file that defines it."""

    name: str
    body: Mapping[str, Any]
    file: Path

    def set(self, key: str) -> bool:
        """Whether the field is given (null and "" count as not given, as in kubectl)."""
        return self.body.get(key) not in (None, "")

    def path(self, key: str) -> Path:
        """A file field, relative to the folder of the file that defines this entry."""
        return self.file.parent / str(self.body[key])


class Kubeconfig(Struct, frozen=True):
    """The merged view of one or more kubeconfig files."""

    files: tuple[Path, ...]
    clusters: Mapping[str, Named]
    users: Mapping[str, Named]
    contexts: Mapping[str, Named]  # in merge order
    current: str

    @property
    def names(self) -> list[str]:
        return list(self.contexts)

    @property
    def where(self) -> str:
        return os.pathsep.join(str(f) for f in self.files)


class Connection(Struct, frozen=True):
    """How the standard-library transport reaches one context's API server."""

    context: str
    scheme: str  # "http" or "https"
    host: str
    port: int
    base_path: str  # a path prefix of the server URL ("" for none)
    insecure: bool = False
    server_name: str = ""  # TLS server name (SNI and verification), when not the host
    ca_file: Path | None = None
    ca_data: bytes | None = None  # secret: not in repr
    cert_file: Path | None = None
    cert_data: bytes | None = None  # secret: not in repr
    key_file: Path | None = None
    key_data: bytes | None = None  # secret: not in repr
    authorization: str = ""  # the Authorization header value (secret: not in repr)
    proxy: str = ""  # an http:// proxy (proxy-url or environment; may hold credentials)

    @property
    def server(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.base_path}"

    def __repr__(self) -> str:  # the secret fields (data, authorization, proxy) left out
        shown = ("context", "scheme", "host", "port", "base_path", "insecure", "server_name")
        kept = [f"{k}={getattr(self, k)!r}" for k in (*shown, "ca_file", "cert_file", "key_file")]
        return f"Connection({', '.join(kept)})"


class Fallback(Struct, frozen=True):
    """A context the standard-library transport leaves to the kubernetes client, and why."""

    context: str
    reason: str


# --------------------------------------------------------------------------- files


def existing_files(path_list: str) -> list[Path]:
    """The files of a ``:``-list that exist, in order (as kubectl: missing ones are skipped)."""
    out: list[Path] = []
    for part in path_list.split(os.pathsep):
        if part:
            path = Path(os.path.expanduser(part))
            if path.exists() and path not in out:
                out.append(path)
    return out


MAX_KUBECONFIG = 64 * 1024 * 1024  # bytes of one kubeconfig file
MAX_TOKEN_FILE = 1024 * 1024  # bytes of a tokenFile


def _read(path: Path) -> Mapping[str, Any]:
    data = read_bounded(path, f"kubeconfig {path}", cap=MAX_KUBECONFIG)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"kubeconfig {path}: cannot read it ({exc.reason})") from None
    try:
        doc = load_one(text)
    except YamlError as exc:
        raise BadInput(
            f"kubeconfig is not valid YAML: {exc.problem}",
            location=f"{path}:{exc.line}" if exc.line else str(path),
            hint="check the file with 'kubectl config view'",
        ) from None
    if doc is None:
        return {}  # an empty file is an empty configuration, as in kubectl
    if not isinstance(doc, Mapping):
        raise BadInput(f"kubeconfig {path}: expected a mapping (kind: Config)")
    return doc


def _entries(doc: Mapping[str, Any], section: str, path: Path) -> list[Named]:
    items = doc.get(section) or []
    if not isinstance(items, list):
        raise BadInput(f"kubeconfig {path}: '{section}' must be a list")
    out: list[Named] = []
    for item in items:
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name:
            raise BadInput(f"kubeconfig {path}: an entry of '{section}' has no name")
        body = item.get(SECTIONS[section]) or {}
        if not isinstance(body, Mapping):
            raise BadInput(f"kubeconfig {path}: {section} entry {name!r} must be a mapping")
        _check_fields(body, section, name, path)
        out.append(Named(name, body, path))
    return out


# fields of a kubeconfig entry that are text, and those that are maps (kubectl refuses others)
_TEXT_FIELDS = {
    "clusters": (
        "server",
        "certificate-authority",
        "certificate-authority-data",
        "tls-server-name",
        "proxy-url",
    ),
    "users": (
        "token",
        "tokenFile",
        "username",
        "password",
        "client-certificate",
        "client-certificate-data",
        "client-key",
        "client-key-data",
    ),
    "contexts": ("cluster", "user", "namespace"),
}
_MAP_FIELDS = {"clusters": (), "users": ("exec", "auth-provider"), "contexts": ()}


def _check_fields(body: Mapping[str, Any], section: str, name: str, path: Path) -> None:
    """BadInput naming the entry and field when a field is of the wrong type (kubectl refuses
    such a file as a whole); the value is not shown (it may be a credential). A line break in
    a text field fails only the contexts that use it (:func:`_check_line`)."""

    where = f"kubeconfig {path}: {section} entry {name!r}"
    for key in _TEXT_FIELDS[section]:
        value = body.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise BadInput(f"{where}: {key} is {describe(value)}, expected a string")
    for key in _MAP_FIELDS[section]:
        value = body.get(key)
        if value is not None and not isinstance(value, Mapping):
            raise BadInput(f"{where}: {key} is {describe(value)}, expected a mapping")


def load(path_list: str) -> Kubeconfig:
    """Merge the kubeconfig files of a ``:``-list; BadInput when none exists or one is broken."""
    files = existing_files(path_list)
    if not files:
        raise BadInput(
            f"kubeconfig {path_list} not found", hint="pass --kubeconfig PATH or set KUBECONFIG"
        )
    merged: dict[str, dict[str, Named]] = {section: {} for section in SECTIONS}
    current = ""
    for path in files:
        doc = _read(path)
        for section, known in merged.items():
            for entry in _entries(doc, section, path):
                known.setdefault(entry.name, entry)  # the first file defining a name wins
        if not current and doc.get("current-context"):
            if not isinstance(doc["current-context"], str):
                raise BadInput(f"kubeconfig {path}: current-context is not a name")
            current = doc["current-context"]
    return Kubeconfig(
        tuple(files), merged["clusters"], merged["users"], merged["contexts"], current
    )


# --------------------------------------------------------------------------- one context


def connection(
    config: Kubeconfig,
    context: str,
    environ: Mapping[str, str] | None = None,
    *,
    exec_timeout: float = EXEC_TIMEOUT,
) -> Connection | Fallback:
    """How to reach one context without the kubernetes client, or why not.

    BadInput for what no client could use: an unknown context or cluster, a cluster without
    a server, data fields that are not base64, a token file that cannot be read.
    """
    ctx = config.contexts.get(context)
    if ctx is None:
        raise BadInput(f"kubeconfig {config.where} has no context {context!r}")
    cluster_name = str(ctx.body.get("cluster") or "")
    cluster = config.clusters.get(cluster_name)
    if cluster is None:
        raise BadInput(f"cluster {cluster_name!r} is not defined in kubeconfig {config.where}")
    user_name = str(ctx.body.get("user") or "")
    user = config.users.get(user_name)  # an unknown user means no credentials (as kubectl)
    env = os.environ if environ is None else environ
    for name in ("server", "proxy-url", "tls-server-name"):  # one line each (not shown)
        _check_line(str(cluster.body.get(name) or ""), f"the {name} of cluster {cluster.name!r}")
    proxy, why = _proxy(cluster, env)
    reason = _unsupported(cluster, user) or why
    if reason:
        return Fallback(context, reason)
    server = str(cluster.body.get("server") or "")
    if not server:
        raise BadInput(f"cluster {cluster.name!r} has no server")
    url = urlsplit(server)
    if url.scheme not in ("http", "https") or not url.hostname or url.query or url.username:
        return Fallback(context, f"server URL {server!r} is not a plain http(s) URL")
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
    except ValueError:
        return Fallback(context, f"server URL {server!r} has no valid port")
    settings: dict[str, Any] = {}
    if url.scheme == "https":  # TLS material is used only over TLS (as the client does)
        settings = _tls(cluster, user)
    authorization = _authorization(user)
    if user is not None and user.set("exec"):
        token, cert, key = _exec_credential(user, server, exec_timeout, env)
        if token:
            authorization = f"Bearer {token}"
        if cert and key and url.scheme == "https":
            settings.update(cert_data=cert, key_data=key, cert_file=None, key_file=None)
    return Connection(
        context=context,
        scheme=url.scheme,
        host=url.hostname,
        port=port,
        base_path=url.path.rstrip("/"),
        authorization=authorization,
        proxy=proxy,
        **settings,
    )


class ExecFailed(UpgradeplanError):
    """An exec credential plugin failed: the context cannot be read (its output is not shown)."""

    exit_code = ExitCode.ERROR


def _exec_credential(
    user: Named, server: str, timeout: float, environ: Mapping[str, str]
) -> tuple[str, bytes | None, bytes | None]:
    """(token, client certificate, client key) from the user's exec plugin, run once."""
    import json
    import subprocess

    spec = user.body.get("exec")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("command"), str):
        raise BadInput(f"kubeconfig {user.file}: exec of user {user.name!r} has no command")
    command = str(spec["command"])
    if os.sep in command and not os.path.isabs(command):  # as kubectl: relative to the file
        command = str(user.file.parent / command)
    args = spec.get("args") or []
    if not isinstance(args, list):
        raise BadInput(f"kubeconfig {user.file}: exec args of user {user.name!r} must be a list")
    env = dict(environ)
    for item in spec.get("env") or []:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            env[str(item["name"])] = str(item.get("value") or "")
    api_version = str(spec.get("apiVersion") or "client.authentication.k8s.io/v1")
    info: dict[str, Any] = {
        "apiVersion": api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": False},
    }
    if spec.get("provideClusterInfo") is True:
        info["spec"]["cluster"] = {"server": server}
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    what = f"the exec credential plugin {os.path.basename(command)!r} of user {user.name!r}"
    try:
        done = subprocess.run(
            [command, *map(str, args)],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ExecFailed(f"{what} gave no credential within {timeout:g}s") from None
    except OSError as exc:
        raise ExecFailed(f"{what} cannot be run ({exc.strerror or type(exc).__name__})") from None
    register(done.stdout, done.stderr)
    if done.returncode != 0:
        raise ExecFailed(
            f"{what} failed (exit {done.returncode}; its output is not shown, it may hold secrets)",
            hint="run it yourself to see why",
        )
    try:
        cred = json.loads(done.stdout)
        status = cred.get("status") or {}
        token = str(status.get("token") or "")
        cert = status.get("clientCertificateData")
        key = status.get("clientKeyData")
    except (ValueError, AttributeError, RecursionError):
        raise ExecFailed(f"{what} did not print an ExecCredential (JSON)") from None
    register(token, key if isinstance(key, str) else None)
    _check_token(token, f"the token {what} gave")
    if not token and not (cert and key):
        raise ExecFailed(f"{what} gave neither a token nor a client certificate and key")
    return (
        token,
        cert.encode() if isinstance(cert, str) else None,
        key.encode() if isinstance(key, str) else None,
    )


def _check_token(token: str, what: str) -> None:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in token):
        raise BadInput(
            f"{what} contains a line break or another control character (not shown)",
            hint="a bearer token is one line; fix the kubeconfig or token file",
        )


def _check_line(text: str, what: str) -> None:
    found = control_char(text)
    if found is not None:
        raise BadInput(
            f"{what} holds the control character U+{ord(found):04X} (not shown)",
            hint="it is one line of text; fix the kubeconfig",
        )


def _unsupported(cluster: Named, user: Named | None) -> str:
    """Why the transport cannot serve this cluster and user ("" when it can)."""
    for entry, known, what in ((cluster, CLUSTER_FIELDS, "cluster"), (user, USER_FIELDS, "user")):
        if entry is None:
            continue
        extra = sorted(k for k in entry.body if k not in known and entry.set(str(k)))
        if extra:
            return f"{what} {entry.name!r} uses {', '.join(map(str, extra))}"
    pairs = [
        (cluster, "certificate-authority", "certificate-authority-data"),
        (cluster, "certificate-authority", "insecure-skip-tls-verify"),
        (cluster, "certificate-authority-data", "insecure-skip-tls-verify"),
        (user, "client-certificate", "client-certificate-data"),
        (user, "client-key", "client-key-data"),
        (user, "token", "tokenFile"),
        (user, "token", "username"),
        (user, "tokenFile", "username"),
    ]
    for entry, one, other in pairs:
        if entry is not None and entry.set(one) and entry.set(other):
            if other == "insecure-skip-tls-verify" and entry.body.get(other) is False:
                continue
            return f"{entry.name!r} sets both {one} and {other}"
    skip = cluster.body.get("insecure-skip-tls-verify")
    if skip is not None and not isinstance(skip, bool):
        return f"cluster {cluster.name!r}: insecure-skip-tls-verify is not true or false"
    if user is not None:
        has_cert = user.set("client-certificate") or user.set("client-certificate-data")
        has_key = user.set("client-key") or user.set("client-key-data")
        if has_cert != has_key:
            return f"user {user.name!r} has a client certificate or key without the other"
        if user.set("username") != user.set("password"):
            return f"user {user.name!r} has a user name or password without the other"
    return ""


def _proxy(cluster: Named, environ: Mapping[str, str]) -> tuple[str, str]:
    """The proxy for this server: the cluster's ``proxy-url``, else one from the environment
    (``https_proxy``/``http_proxy``/``all_proxy`` unless ``no_proxy`` covers the server), as
    client-go chooses; and why the transport cannot use it ("" when it can: an http:// proxy,
    with CONNECT for https servers)."""
    server = str(cluster.body.get("server") or "")
    url = urlsplit(server)
    proxy = str(cluster.body.get("proxy-url") or "")
    if not proxy:
        proxy = _env(environ, f"{url.scheme}_proxy") or _env(environ, "all_proxy")
        if not proxy or _no_proxy(url.hostname or "", url.netloc, environ):
            return "", ""
    parsed = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    try:
        parsed.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        return "", f"proxy {parsed.hostname}: the port is not a number"
    if parsed.scheme != "http" or not parsed.hostname:
        return "", f"the proxy of {server} is a {parsed.scheme} proxy (only http:// is built in)"
    return parsed.geturl(), ""


def proxy_for(url: str, environ: Mapping[str, str]) -> tuple[str, str]:
    """The proxy for any ``url`` by the same rules as a cluster without ``proxy-url`` (the
    environment's, unless ``no_proxy`` covers it), and why it cannot be used ("" when it can)."""
    return _proxy(Named(url, {"server": url}, Path(".")), environ)


def _no_proxy(host: str, netloc: str, environ: Mapping[str, str]) -> bool:
    host, netloc = host.lower(), netloc.lower()
    for item in _env(environ, "no_proxy").lower().split(","):
        entry = item.strip().lstrip(".")
        if entry == "*" or (entry and entry in (host, netloc)):
            return True
        if entry and (host.endswith("." + entry) or netloc.endswith("." + entry)):
            return True
    return False


def _env(environ: Mapping[str, str], name: str) -> str:
    return environ.get(name) or environ.get(name.upper()) or ""


def _decoded(entry: Named, key: str) -> bytes:
    try:
        return base64.b64decode(str(entry.body[key]), validate=False)
    except (binascii.Error, ValueError):
        raise BadInput(f"kubeconfig {entry.file}: {key} of {entry.name!r} is not base64") from None


def _tls(cluster: Named, user: Named | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "insecure": cluster.body.get("insecure-skip-tls-verify") is True,
        "server_name": str(cluster.body.get("tls-server-name") or ""),
    }
    if cluster.set("certificate-authority-data"):
        out["ca_data"] = _decoded(cluster, "certificate-authority-data")
    elif cluster.set("certificate-authority"):
        out["ca_file"] = _regular(cluster, "certificate-authority")
    if user is not None:
        for kind in ("cert", "key"):
            key = "client-certificate" if kind == "cert" else "client-key"
            if user.set(f"{key}-data"):
                out[f"{kind}_data"] = _decoded(user, f"{key}-data")
                if kind == "key":
                    register(out["key_data"], str(user.body[f"{key}-data"]))
            elif user.set(key):
                out[f"{kind}_file"] = _regular(user, key)
    return out


def _regular(entry: Named, key: str) -> Path:
    """A file field naming a regular file (a FIFO or a device would block the TLS setup)."""

    path = entry.path(key)
    if os.path.exists(path):  # a missing one is named when the connection needs it
        regular_file(path, f"kubeconfig {entry.file}: {key} {path} of {entry.name!r}")
    return path


def _token_file(path: Path, user: str) -> str:
    """The token a tokenFile holds: a regular file (a FIFO or device refused), bounded."""

    what = f"tokenFile {path} of user {user!r}"
    if not os.path.exists(path):
        raise BadInput(f"{what} cannot be read (no such file)")
    try:
        return read_bounded(path, what, cap=MAX_TOKEN_FILE).decode("utf-8").strip()
    except UnicodeDecodeError:
        raise BadInput(f"{what} cannot be read (not UTF-8 text)") from None


def _authorization(user: Named | None) -> str:
    if user is None:
        return ""
    if user.set("token"):
        token = str(user.body["token"]).strip()
        register(token)
        _check_token(token, f"the token of user {user.name!r}")
        return f"Bearer {token}"
    if user.set("tokenFile"):
        path = user.path("tokenFile")
        token = _token_file(path, user.name)
        register(token)
        _check_token(token, f"the token in tokenFile {path} of user {user.name!r}")
        return f"Bearer {token}" if token else ""
    if user.set("username"):
        register(str(user.body["password"]))
        pair = f"{user.body['username']}:{user.body['password']}".encode()
        basic = base64.b64encode(pair).decode("ascii")
        register(basic)
        _check_token(pair.decode(), f"the user name or password of user {user.name!r}")
        return f"Basic {basic}"
    return ""
