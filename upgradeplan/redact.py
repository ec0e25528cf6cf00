"""The one redaction rule: secret text never reaches a message or an output.

Readers that hold secret material (bearer tokens, passwords, client keys, the output of exec
credential plugins) :func:`register` it as soon as they read it; every message that leaves a
reader for the user passes through :func:`clean` at the error boundary (the context boundary
of the cluster reader, and the CLI's error line), which replaces each registered secret —
whole, line by line, and as Python would quote it — with ``<redacted>``. The user part of
any URL in a message (``http://user:password@host``) is removed there too
(:func:`strip_userinfo`), whether or not a reader registered it.
"""

from __future__ import annotations

import re
import threading

MARK = "<redacted>"
_MIN = 4  # shorter fragments are not worth hiding (and would mangle ordinary words)

_lock = threading.Lock()
_secrets: set[str] = set()


def register(*secrets: str | bytes | None) -> None:
    """Remember secret text so :func:`clean` removes it from any later message."""
    with _lock:
        for secret in secrets:
            if not secret:
                continue
            text = secret.decode("utf-8", "replace") if isinstance(secret, bytes) else secret
            for form in (text, text.strip(), repr(text)[1:-1], repr(text.encode())[2:-1]):
                if len(form) >= _MIN:
                    _secrets.add(form)
            for line in text.splitlines():
                if len(line.strip()) >= _MIN:
                    _secrets.add(line.strip())


# scheme://userinfo@ : the userinfo runs to the first '@' before the host (RFC 3986 keeps '/',
# '?', '#' and '@' out of it); quotes and whitespace end a URL inside a message
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#@\s\"'<>]*@")


def strip_userinfo(text: str) -> str:
    """``text`` with the ``user:password@`` part of every URL in it removed."""
    return _USERINFO.sub(r"\1", text) if "@" in text else text


def clean(text: str) -> str:
    """``text`` with URL userinfo removed and every registered secret replaced by
    ``<redacted>``."""
    text = strip_userinfo(text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MARK)
    return text
