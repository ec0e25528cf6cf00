"""The user's cache directory and the stamp of the installed code, for what upgradeplan caches.

``$XDG_CACHE_HOME/upgradeplan`` (``~/.cache/upgradeplan`` when XDG_CACHE_HOME is unset or not
absolute, as the XDG base directory specification says); ``UPGRADEPLAN_NO_CACHE`` (any
non-empty value) turns caching off. Entries are only read when :func:`private` holds for them
and their directory. Imports nothing of the package, so the console script can use it before
anything heavy is loaded; paths are strings (``os.path``), so neither does pathlib (with
urllib.parse and ipaddress, about a fifth of an interpreter start), nor hashlib's OpenSSL
(:func:`hasher`).
"""

from __future__ import annotations

import contextlib
import os

TYPE_CHECKING = False  # not typing's: the --help fast path imports neither typing nor collections
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    class Hash(Protocol):
        def update(self, data: bytes, /) -> None: ...
        def digest(self) -> bytes: ...
        def hexdigest(self) -> str: ...

    StrPath = str | os.PathLike[str]


def cache_dir() -> str | None:
    """Where entries live; None when caching is turned off or there is no home directory."""
    if os.environ.get("UPGRADEPLAN_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if base and os.path.isabs(base):
        return os.path.join(base, "upgradeplan")
    home = os.path.expanduser("~")
    if home.startswith("~"):  # no home directory to expand ~ to
        return None
    return os.path.join(home, ".cache", "upgradeplan")


SMALL = 1 << 20  # bytes up to which hasher() gives BLAKE2b


def hasher(size: int) -> Hash:
    """A 32-byte hash for ``size`` bytes of cache key or entry, the same for the same size.

    Up to :data:`SMALL` bytes BLAKE2b from the interpreter's own module: hashlib would load
    OpenSSL's library (about 4 ms, a sixth of an interpreter start) for what BLAKE2b hashes in
    under a millisecond. Above it SHA-256 from hashlib, which OpenSSL computes several times
    faster (with the processor's SHA instructions, 1.3 GB/s against 0.36 GB/s here).
    """
    if size <= SMALL:
        try:
            from _blake2 import blake2b
        except ImportError:  # an interpreter built without it
            from hashlib import blake2b
        return blake2b(digest_size=32)
    from hashlib import sha256

    return sha256()


def digest(payload: bytes) -> bytes:
    """The hash a cache file's header carries of its payload (:func:`hasher`)."""
    h = hasher(len(payload))
    h.update(payload)
    return h.digest()


def private(st: os.stat_result) -> bool:
    """Owned by the current user and not writable by group or others."""
    getuid = getattr(os, "getuid", None)
    owner_ok = getuid is None or st.st_uid == getuid()
    return owner_ok and not st.st_mode & 0o022


_STAMP: list[str] = []
_STAMPED = (".py", ".json", ".j2", ".md", ".txt")


def code_stamp() -> str:
    """Path, size and mtime of every module and data file of the installed package (once).

    The bundled knowledge is left out: the knowledge cache hashes its content instead.
    """
    if not _STAMP:
        package = os.path.dirname(os.path.abspath(__file__))
        parts = [package]
        _stamp_dir(package, ".", parts)
        _STAMP.append("\n".join(parts))
    return _STAMP[0]


def module_stamp(name: str) -> str:
    """Where the top-level module ``name`` is installed and when it changed (click's: its
    formatting and parsing are part of what the help text and the argv table hold)."""
    from importlib.util import find_spec

    spec = find_spec(name)
    origin = spec.origin if spec is not None and spec.origin else ""
    try:
        st = os.stat(origin)
    except OSError:
        return origin
    return f"{origin}:{st.st_size}:{st.st_mtime_ns}"


def _stamp_dir(path: str, rel: str, parts: list[str]) -> None:
    """``rel/name:size:mtime_ns`` of the stamped files under ``path``, sorted as os.walk
    top-down with sorted names gives them (a directory's files, then its subdirectories)."""
    with os.scandir(path) as it:
        entries = sorted(it, key=lambda e: e.name)
    subdirs = []
    for entry in entries:
        if entry.is_dir():
            if entry.name not in ("__pycache__", "knowledge") and not entry.is_symlink():
                subdirs.append(entry)  # as os.walk, a linked directory is not descended
        elif entry.name.endswith(_STAMPED):
            st = entry.stat()
            parts.append(f"{rel}/{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    for entry in subdirs:
        _stamp_dir(entry.path, entry.name if rel == "." else f"{rel}/{entry.name}", parts)


def read_private(path: StrPath) -> bytes | None:
    """The bytes of ``path`` when it and its directory are private to the user, else None."""
    try:
        if not private(os.stat(os.path.dirname(os.path.abspath(path)))):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            if not private(os.fstat(f.fileno())):
                return None
            return f.read()
    except OSError:
        return None


def write_private(path: StrPath, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file renamed into place), creating
    the directory private to the user; False (nothing left behind) when it cannot."""
    where, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(where, f".{name}.{os.getpid()}.tmp")
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        if not private(os.stat(where)):
            return False
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def prune(where: StrPath, prefix: str, suffix: str, keep: int) -> None:
    """Remove all but the newest ``keep`` files named ``prefix…suffix`` in ``where``."""
    try:
        with os.scandir(where) as it:
            found = [e for e in it if e.name.startswith(prefix) and e.name.endswith(suffix)]
        entries = sorted(found, key=lambda e: e.stat().st_mtime_ns)
        for old in entries[:-keep]:
            os.unlink(old.path)
    except OSError:
        pass  # another process pruned or wrote at the same time


# --------------------------------------------------------------------------- deferred writes

_LATER: list[Callable[[], object]] = []
_DEFERRING: list[bool] = []


def defer_writes() -> None:
    """From now on :func:`later` keeps writes for :func:`run_later` instead of doing them.

    The console script calls it: a cache entry (the knowledge cache's pickling of a cold load)
    is then written after the command's answer is printed, not before. A forked child keeps
    none of the parent's pending writes.
    """
    if not _DEFERRING:
        _DEFERRING.append(True)
        os.register_at_fork(after_in_child=_LATER.clear)


def later(write: Callable[[], object]) -> None:
    """Do ``write`` now, or after the answer when the console script deferred writes."""
    if _DEFERRING:
        _LATER.append(write)
    else:
        write()


def run_later() -> None:
    """Do the deferred writes (in order); a failing one never stops the others."""
    while _LATER:
        write = _LATER.pop(0)
        with contextlib.suppress(Exception):  # a cache write is never worth an error
            write()
