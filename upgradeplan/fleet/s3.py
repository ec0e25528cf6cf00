"""Snapshots in object storage: ``snapshot --output s3://bucket/prefix/`` and ``fleet s3://…``.

Through the optional extra ``upgradeplan[s3]`` (boto3). Credentials, region and endpoint come
from where boto3 looks for them: ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` /
``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and the shared files, ``AWS_DEFAULT_REGION``,
``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` for an S3-compatible server, and a pod's web
identity. Nothing here reads, stores or prints a credential: errors name the bucket, key and
the service's error code only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from upgradeplan import errors, redact
from upgradeplan.escape import control_char
from upgradeplan.fleet.members import (
    Member,
    is_snapshot_name,
    snapshot_members,
    states_from_bytes,
    stem,
)
from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers import snapshot
from upgradeplan.redact import clean

EXTRA_HINT = "install the s3 extra: pip install 'upgradeplan[s3]'"


def require() -> Any:
    """The boto3 module; errors.BadInput (exit 2) naming the extra when it is not installed."""
    try:
        import boto3
    except ImportError:
        raise errors.BadInput("s3:// URLs need the 's3' extra", hint=EXTRA_HINT) from None
    return boto3


def split(url: str) -> tuple[str, str]:
    """``s3://bucket/some/prefix`` -> (``bucket``, ``some/prefix``)."""
    if not url.startswith("s3://"):
        raise errors.BadInput(f"{url}: not an s3:// URL")
    bucket, _, key = url[len("s3://") :].partition("/")
    if not bucket:
        raise errors.BadInput(f"{url}: no bucket", hint="use s3://BUCKET/PREFIX")
    return bucket, key


ENDPOINT_VARS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")


def checked_endpoints() -> None:
    """The endpoint variables boto3 reads, checked before it does: one URL on one line
    (BadInput naming the variable, never its value); a password in one is registered as a
    secret, so no message shows it."""
    import os
    from urllib.parse import urlsplit

    for var in ENDPOINT_VARS:
        value = os.environ.get(var, "")
        if not value:
            continue
        found = control_char(value)
        if found is not None or any(c.isspace() for c in value.strip()):
            what = f"U+{ord(found):04X}" if found is not None else "a space"
            raise errors.BadInput(
                f"{var} holds {what}; an endpoint is one URL without spaces or line breaks",
                hint=f"set {var} to a URL such as https://s3.example.com",
            )
        try:
            parts = urlsplit(value.strip())
            password, user = parts.password, parts.username
        except ValueError:
            raise errors.BadInput(
                f"{var} is not a URL", hint=f"set {var} to a URL such as https://s3.example.com"
            ) from None
        redact.register(password, user)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise errors.BadInput(
                f"{var} is not an http(s) URL with a host: {redact.clean(value)}",
                hint=f"set {var} to a URL such as https://s3.example.com",
            )


def client() -> Any:
    boto3 = require()
    checked_endpoints()
    return boto3.session.Session().client("s3")


def _problem(exc: BaseException, url: str) -> errors.UpgradeplanError:
    """A one-line error for a failed request: the service's code and message, the URL."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        err = response.get("Error") or {}
        code = err.get("Code", "error")
        message = err.get("Message", "")
        text = f"{url}: {code}" + (f" ({message})" if message else "")
    else:
        text = f"{url}: {type(exc).__name__}: {exc}"

    text = clean(text)  # an endpoint's user:password@ never shown
    if type(exc).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
        return errors.BadInput(
            f"{url}: no credentials for object storage",
            hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)",
        )
    if type(exc).__name__ in ("EndpointConnectionError", "ConnectTimeoutError"):
        return errors.ClusterUnreachable(text)
    return errors.BadInput(text)


def _botocore_errors() -> tuple[type[BaseException], ...]:
    from botocore.exceptions import BotoCoreError, ClientError

    return (BotoCoreError, ClientError)


def put(url: str, body: bytes, *, content_type: str = "application/yaml") -> None:
    """Write one object (a single PUT: readers see the old object or the new one)."""
    bucket, key = split(url)
    if not key or key.endswith("/"):
        raise errors.BadInput(f"{url}: no object name", hint="use s3://BUCKET/PREFIX/NAME.yaml")
    s3 = client()
    try:
        s3.put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)
    except _botocore_errors() as exc:
        raise _problem(exc, url) from None


def keys(url: str) -> list[str]:
    """The snapshot objects under a prefix, sorted (paged; ``.yaml``/``.yml``/``.json``/``.gz``)."""
    bucket, prefix = split(url)
    s3 = client()
    out: list[str] = []
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            out.extend(str(o["Key"]) for o in page.get("Contents", ()))
    except _botocore_errors() as exc:
        raise _problem(exc, url) from None
    return sorted(k for k in out if is_snapshot_name(k))


def get(url: str) -> bytes:
    bucket, key = split(url)
    s3 = client()
    try:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"]
        data: bytes = body.read()
    except _botocore_errors() as exc:
        raise _problem(exc, url) from None
    return data


def members(url: str, kb: KnowledgeBase) -> Iterator[Member]:
    """Every snapshot object under ``url`` as fleet members, fetched one at a time."""
    bucket, _ = split(url)
    found = keys(url)
    if not found:
        raise errors.BadInput(f"{url}: no snapshot objects (.yaml, .yml, .json, .gz) under it")
    for key in found:
        where = f"s3://{bucket}/{key}"
        try:
            states = states_from_bytes(get(where), where, kb)
        except errors.UpgradeplanError as exc:
            yield Member(stem(key), where, None, exc.one_line())
            continue
        yield from snapshot_members(states, where)


def write_states(url: str, states: Sequence[State], fmt: str) -> list[str]:
    """``snapshot --output URL``: a prefix ending in '/' gets one object per context
    (``<prefix><context>.<fmt>``); a full key gets them all as one stream. Returns the URLs."""

    split(url)
    kind = "application/json" if fmt == "json" else "application/yaml"
    if url.endswith("/"):
        written: list[str] = []
        for state in states:
            where = f"{url}{_safe(state.name)}.{fmt}"
            put(where, snapshot.dump(state, fmt).encode("utf-8"), content_type=kind)
            written.append(where)
        return written
    text = snapshot.dump(states[0], fmt) if len(states) == 1 else snapshot.write_all(states, fmt)
    put(url, text.encode("utf-8"), content_type=kind)
    return [url]


def _safe(name: str) -> str:
    """A context name as an object name (``/`` and other odd characters become ``_``)."""
    return "".join(ch if ch.isalnum() or ch in "-_.@" else "_" for ch in name) or "context"
