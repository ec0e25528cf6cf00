"""Chart archives obtained: from a folder (``--charts DIR``), a Helm repository or an OCI registry.

A Helm repository (a HelmRepository's ``https://`` URL): its ``index.yaml``, the entry of the
chart at the version, its first URL (relative to the repository), checked against the entry's
``digest``. An OCI registry (``oci://host/path/chart``; a HelmRepository of ``type: oci``
names the path without the chart): the distribution API's manifest of the tag (the version,
``+`` written ``_``), then the blob of the layer of media type
``application/vnd.cncf.helm.chart.content.v1.tar+gzip``, checked against its digest. A
registry that answers 401 with a ``Bearer`` challenge gets one anonymous token request (the
public-registry flow); a repository that needs credentials is named as such (a Flux
``secretRef`` is never read).

Every request goes through the cluster reader's transport (:mod:`upgradeplan.readers.kube.
transport`: a whole-request timeout, a size cap, the environment's ``http://`` proxy by the
same rules); a timeout, a cut-off answer, 429 or 5xx is tried again twice, backing off, within
the run's deadline; at most five redirects (an ``Authorization`` header never follows one to
another host). A host that could not be reached is not asked again in the same run.

The cache (``$XDG_CACHE_HOME/upgradeplan/charts``, else ``~/.cache/upgradeplan/charts``)
keeps each archive under its URL and digest, and what a chart version resolved to: a chart
version read before is read from there without any request (published chart versions are
taken as immutable; delete the folder to read them again). URL credentials (``user:pw@``) are
never shown.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from msgspec import Struct, field

from upgradeplan import redact, yamlload
from upgradeplan.charts.archive import MAX_ARCHIVE
from upgradeplan.readers.kube.kubeconfig import Connection, proxy_for
from upgradeplan.readers.kube.transport import HttpTransport, NoAnswer, Unreachable

HELM_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
_MANIFESTS = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
MAX_REDIRECTS = 5
RETRIES = 2


class NotRead(Exception):
    """An archive that could not be obtained; the message names it and why (no credentials)."""


class Fetcher(Struct):
    """Obtains archives for one run: a request timeout, a deadline for the whole run, a cache."""

    timeout: float = 5.0
    deadline: float = float("inf")  # monotonic seconds
    cache: Path | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    requests: int = 0
    _unreached: dict[str, str] = field(default_factory=dict)  # host -> why, this run
    _indexes: dict[str, Any] = field(default_factory=dict)  # index.yaml URL -> its data

    def __repr__(self) -> str:  # the environment (proxies, tokens) and the URLs read left out
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in ("timeout", "cache", "requests"))
        return f"Fetcher({shown})"

    # ------------------------------------------------------------------ entry point

    def archive(
        self, repository: str, chart: str, version: str, insecure: bool = False
    ) -> tuple[bytes, str]:
        """The archive of ``chart`` at ``version`` from ``repository``, and where it was read
        (the archive's URL, credentials removed); NotRead saying why. ``insecure``: the Flux
        source's ``spec.insecure`` (an OCI registry spoken to over plain HTTP)."""
        ref_key = _digest_of(f"{repository}|{chart}|{version}".encode())
        oci = repository.startswith("oci://")
        known = self._cached_ref(ref_key)
        if known is not None:
            data = self._cached_blob(known["url"], known["digest"])
            if data is not None:
                shown = _oci_shown(repository, chart, version) if oci else known["url"]
                return data, f"{redact.strip_userinfo(shown)} (cached)"
        if oci:
            url, digest, data = self._oci(repository, chart, version, insecure)
        else:
            url, digest, data = self._helm(repository, chart, version)
        self._store(ref_key, url, digest, data)
        return data, redact.strip_userinfo(_oci_shown(repository, chart, version) if oci else url)

    # ------------------------------------------------------------------ Helm repositories

    def _helm(self, repository: str, chart: str, version: str) -> tuple[str, str, bytes]:
        base = repository.rstrip("/") + "/"
        index_url = base + "index.yaml"
        index = self._indexes.get(index_url)
        if index is None:
            status, _, body = self.get(index_url)
            if status != 200:
                raise NotRead(f"{_shown(index_url)}: {_status(status)}")
            try:
                index = yamlload.load_one(body.decode("utf-8", "replace"))
            except yamlload.YamlError as exc:
                raise NotRead(f"{_shown(index_url)} is not YAML ({exc.message})") from None
            self._indexes[index_url] = index  # read once per run
        entries = index.get("entries") if isinstance(index, dict) else None
        listed = entries.get(chart) if isinstance(entries, dict) else None
        if not isinstance(listed, list):
            raise NotRead(f"{_shown(index_url)} lists no chart {chart}")
        entry = next(
            (
                e
                for e in listed
                if isinstance(e, dict) and _same_version(str(e.get("version")), version)
            ),
            None,
        )
        urls = entry.get("urls") if entry is not None else None
        if not isinstance(urls, list) or not urls:
            raise NotRead(f"{_shown(index_url)} lists no {chart} {version}")
        url = urljoin(base, str(urls[0]))
        digest = str(entry.get("digest") or "") if entry is not None else ""
        digest = f"sha256:{digest}" if digest and ":" not in digest else digest
        cached = self._cached_blob(url, digest) if digest else None
        if cached is not None:
            return url, digest, cached
        status, _, data = self.get(url)
        if status != 200:
            raise NotRead(f"{_shown(url)}: {_status(status)}")
        _verify(url, digest, data)
        return url, digest, data

    # ------------------------------------------------------------------ OCI registries

    def _oci(
        self, repository: str, chart: str, version: str, insecure: bool
    ) -> tuple[str, str, bytes]:
        parts = urlsplit(repository)
        path = parts.path.strip("/")
        if not path.endswith("/" + chart) and path != chart:
            path = f"{path}/{chart}" if path else chart
        # plain HTTP as Flux's spec.insecure asks, and for a registry on this machine (as
        # Docker treats localhost registries)
        plain = insecure or (parts.hostname or "") in ("localhost", "127.0.0.1", "::1")
        scheme = "http" if plain else "https"
        api = f"{scheme}://{parts.netloc}/v2/{path}"
        tag = version.replace("+", "_")
        manifest_url = f"{api}/manifests/{quote(tag, safe='')}"
        headers = {"Accept": ", ".join(_MANIFESTS)}
        status, answer, body = self.get(manifest_url, headers)
        if status == 401:
            token = self._token(dict(answer), path)
            if token:
                headers["Authorization"] = f"Bearer {token}"
                status, answer, body = self.get(manifest_url, headers)
        if status != 200:
            raise NotRead(f"{_shown(manifest_url)}: {_status(status)}")
        try:
            manifest = json.loads(body)
        except ValueError:
            raise NotRead(f"{_shown(manifest_url)}: the manifest is not JSON") from None
        layers = manifest.get("layers") if isinstance(manifest, dict) else None
        layer = next(
            (
                item
                for item in layers or []
                if isinstance(item, dict) and item.get("mediaType") == HELM_LAYER
            ),
            None,
        )
        if layer is None or not isinstance(layer.get("digest"), str):
            raise NotRead(f"{_shown(manifest_url)}: no layer of media type {HELM_LAYER}")
        digest = str(layer["digest"])
        url = f"{api}/blobs/{digest}"
        cached = self._cached_blob(url, digest)
        if cached is not None:
            return url, digest, cached
        blob_headers = {k: v for k, v in headers.items() if k == "Authorization"}
        status, _, data = self.get(url, blob_headers)
        if status != 200:
            raise NotRead(f"{_shown(url)}: {_status(status)}")
        _verify(url, digest, data)
        return url, digest, data

    def _token(self, headers: Mapping[str, str], path: str) -> str:
        """An anonymous pull token from the registry's ``Bearer`` challenge ("" without one)."""
        challenge = next((v for k, v in headers.items() if k.lower() == "www-authenticate"), "")
        scheme, _, rest = challenge.partition(" ")
        if scheme.lower() != "bearer":
            return ""
        fields = _challenge(rest)
        realm = fields.get("realm", "")
        if not realm.startswith(("https://", "http://")):
            return ""
        query = {"service": fields.get("service", ""), "scope": f"repository:{path}:pull"}
        query["scope"] = fields.get("scope") or query["scope"]
        sep = "&" if "?" in realm else "?"
        url = realm + sep + "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items() if v)
        status, _, body = self.get(url)
        if status != 200:
            return ""
        try:
            answer = json.loads(body)
        except ValueError:
            return ""
        token = (
            answer.get("token") or answer.get("access_token") if isinstance(answer, dict) else ""
        )
        if isinstance(token, str) and token:
            redact.register(token)
            return token
        return ""

    # ------------------------------------------------------------------ one GET

    def get(
        self, url: str, headers: Mapping[str, str] | None = None
    ) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
        """GET ``url`` (redirects followed, retried as the module says): status, headers, body."""
        sent = dict(headers or {})
        for _ in range(MAX_REDIRECTS + 1):
            status, answer, body = self._once(url, sent)
            if status not in (301, 302, 303, 307, 308):
                return status, answer, body
            location = next((v for k, v in answer if k.lower() == "location"), "")
            if not location:
                return status, answer, body
            target = urljoin(url, location)
            if urlsplit(target).netloc != urlsplit(url).netloc:
                sent.pop("Authorization", None)
            url = target
        raise NotRead(f"{_shown(url)}: more than {MAX_REDIRECTS} redirects")

    def _once(
        self, url: str, headers: Mapping[str, str]
    ) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise NotRead(f"{_shown(url)}: not an http(s) URL")
        host = parts.netloc.rpartition("@")[2]
        if host in self._unreached:
            raise NotRead(f"{_shown(url)}: {self._unreached[host]} (earlier in this run)")
        transport = HttpTransport(self._connection(url))
        transport.headers = {"User-Agent": transport.headers["User-Agent"], **headers}
        if parts.username:  # a repository URL with user:password@: HTTP basic, never shown
            import base64
            from urllib.parse import unquote

            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            redact.register(pair)
            transport.headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode(
                "ascii"
            )
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        if transport.prefix.startswith("http://"):  # plain HTTP through a proxy
            target = f"{parts.scheme}://{host}{target}"
        last = ""
        try:
            for attempt in range(RETRIES + 1):
                left = self.deadline - time.monotonic()
                if attempt:
                    pause = 0.2 * (3 ** (attempt - 1))
                    if pause >= left:
                        break
                    time.sleep(pause)
                    left -= pause
                if left <= 0.01:
                    last = last or "the chart checks' deadline passed"
                    break
                self.requests += 1
                try:
                    resp = transport.fetch(target, min(self.timeout, left))
                except Unreachable as exc:
                    why = redact.strip_userinfo(str(exc))
                    self._unreached[host] = why
                    raise NotRead(f"{_shown(url)}: {why}") from None
                except NoAnswer as exc:
                    last = str(exc)
                    continue
                if resp.status == 429 or resp.status >= 500:
                    last = _status(resp.status)
                    continue
                return resp.status, resp.headers, resp.data
        finally:
            transport.close()
        raise NotRead(f"{_shown(url)}: {last or 'no answer'}")

    def _connection(self, url: str) -> Any:
        parts = urlsplit(url)
        https = parts.scheme == "https"
        proxy, why = proxy_for(f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}", self.environ)
        if why:
            raise NotRead(f"{_shown(url)}: {why}")
        return Connection(
            context=parts.hostname or "",
            scheme=parts.scheme,
            host=parts.hostname or "",
            port=parts.port or (443 if https else 80),
            base_path="",
            proxy=proxy,
        )

    # ------------------------------------------------------------------ the cache

    def _cached_ref(self, key: str) -> dict[str, str] | None:
        if self.cache is None:
            return None
        try:
            data = json.loads((self.cache / "refs" / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None
        if isinstance(data, dict) and isinstance(data.get("url"), str):
            return {"url": data["url"], "digest": str(data.get("digest") or "")}
        return None

    def _blob_path(self, url: str, digest: str) -> Path | None:
        if self.cache is None:
            return None
        return self.cache / "blobs" / _digest_of(f"{url}|{digest}".encode())

    def _cached_blob(self, url: str, digest: str) -> bytes | None:
        path = self._blob_path(url, digest)
        try:
            data = path.read_bytes() if path is not None else None
        except OSError:
            return None
        if data is None:
            return None
        try:
            _verify(url, digest, data)
        except NotRead:
            return None
        return data

    def _store(self, key: str, url: str, digest: str, data: bytes) -> None:
        path = self._blob_path(url, digest)
        if path is None or self.cache is None:
            return
        try:
            _write(path, data)
            _write(
                self.cache / "refs" / f"{key}.json",
                json.dumps({"url": url, "digest": digest}).encode(),
            )
        except OSError:
            pass  # a cache that cannot be written only costs the next run a download


def cache_dir(environ: Mapping[str, str]) -> Path:
    """Where downloaded chart archives are kept (the user's cache folder)."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "upgradeplan" / "charts"


def from_folder(folder: Path, chart: str, version: str) -> tuple[bytes, str]:
    """``<chart>-<version>.tgz`` in ``folder`` (a ``v`` before the version or not)."""
    bare = version.removeprefix("v")
    for name in dict.fromkeys(
        (f"{chart}-{version}.tgz", f"{chart}-{bare}.tgz", f"{chart}-v{bare}.tgz")
    ):
        path = folder / name
        if path.is_file():
            if path.stat().st_size > MAX_ARCHIVE:
                raise NotRead(f"{path}: larger than {MAX_ARCHIVE} bytes")
            try:
                return path.read_bytes(), str(path)
            except OSError as exc:
                raise NotRead(f"{path}: {exc.strerror or exc}") from None
    raise NotRead(f"{folder / f'{chart}-{version}.tgz'}: no such file")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _verify(url: str, digest: str, data: bytes) -> None:
    algo, _, want = digest.partition(":")
    if not digest or algo != "sha256":
        return  # no digest given (or one this reader does not compute): taken as it came
    if hashlib.sha256(data).hexdigest() != want.lower():
        raise NotRead(f"{_shown(url)}: the archive does not match its digest {digest}")


def _digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _oci_shown(repository: str, chart: str, version: str) -> str:
    """``oci://host/path/chart:version`` (the chart appended when the path does not end in it)."""
    ref = repository.rstrip("/")
    if not ref.endswith("/" + chart):
        ref = f"{ref}/{chart}"
    return f"{ref}:{version}"


def _same_version(listed: str, wanted: str) -> bool:
    return listed == wanted or listed.removeprefix("v") == wanted.removeprefix("v")


def _shown(url: str) -> str:
    return redact.strip_userinfo(url)


def _status(status: int) -> str:
    if status in (401, 403):
        return f"HTTP {status}: the repository needs credentials (a Flux secretRef is never read)"
    if status == 404:
        return "HTTP 404: not found"
    return f"HTTP {status}"


def _challenge(text: str) -> dict[str, str]:
    """``realm="…",service="…",scope="…"`` as a mapping (quoted values may hold commas)."""
    import re

    return {k.lower(): v for k, v in re.findall(r'(\w+)="([^"]*)"', text)}
