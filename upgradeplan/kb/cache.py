"""A compiled cache of the loaded knowledge, so a command does not re-parse the YAML each run.

One file per knowledge content: ``<cache dir>/kb-<key>.pickle``, where the cache directory is
``$XDG_CACHE_HOME/upgradeplan`` (``~/.cache/upgradeplan`` when XDG_CACHE_HOME is unset or not
absolute) and the key is a hash (:func:`upgradeplan.usercache.hasher`: BLAKE2b, SHA-256 above a
mebibyte) over the upgradeplan version, the Python version, a stamp of the installed code
(path, size and modification time of each module and schema) and, for each knowledge root in
load order, its path and the path and bytes of every YAML file under it. Editing, adding or
removing a knowledge file, or upgrading upgradeplan, selects another key; entries beyond the
newest few are removed.

Never trusted: a file that is not private to the current user (owner, no group/other write on
it or its directory) is not read; its header carries a hash of the pickled payload (the same
hasher), so a truncated or corrupted file is detected, ignored and rewritten; an entry that
does not unpickle to a knowledge base is treated the same. Writes go to a temporary file in the
same directory and are renamed into place. ``UPGRADEPLAN_NO_CACHE`` (any non-empty value) turns
the cache off. The console script writes a new entry after the command's answer is printed
(:func:`upgradeplan.usercache.defer_writes`); a library call writes it before returning. Loads
with error-level problems are not cached (they raise every time anyway).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING

from upgradeplan import collector
from upgradeplan.errors import KnowledgeError
from upgradeplan.kb.roots import root_dirs
from upgradeplan.model import KnowledgeBase
from upgradeplan.usercache import (
    cache_dir,
    code_stamp,
    digest,
    hasher,
    later,
    prune,
    read_private,
    write_private,
)

if TYPE_CHECKING:
    from pathlib import Path

    from upgradeplan.kb.problems import Problem
    from upgradeplan.usercache import StrPath

MAGIC = b"upgradeplan knowledge cache 2\n"
_DIGEST = 32  # bytes of the payload's hash (usercache.hasher)
KEEP = 8  # newest entries kept
_YAML = (".yaml", ".yml")

Entry = tuple[KnowledgeBase, list["Problem"]]


def load(dirs: Sequence[str | Path] = (), *, bundled: bool = True) -> KnowledgeBase:
    """:func:`upgradeplan.kb.loader.load` through the cache; raises KnowledgeError likewise."""
    kb, problems = load_with_problems(dirs, bundled=bundled)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise KnowledgeError(errors)
    return kb


def load_with_problems(dirs: Sequence[str | Path] = (), *, bundled: bool = True) -> Entry:
    """:func:`upgradeplan.kb.loader.load_with_problems` through the cache."""
    roots = root_dirs(dirs, bundled=bundled)
    where = cache_dir()
    texts: dict[str, bytes] = {}
    key = fingerprint(roots, texts) if where is not None else None
    if where is not None and key is not None:
        hit = read(where, key)
        if hit is not None:
            return hit
    from upgradeplan.kb.loader import _read_text, load_all

    def read_text(path: str) -> str:
        """The text the key was computed from (what the file held), as read_text gives it."""
        data = texts.pop(path, None)
        if data is None:
            return _read_text(path)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return _read_text(path)  # the loader reports it, worded as always
        return text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines

    loaded = load_all(roots, bundled=False, read_text=read_text)
    kb, problems = loaded.kb, loaded.problems
    if where is not None and key is not None and all(p.severity != "error" for p in problems):
        later(partial(write, where, key, (kb, problems)))  # the console script: after the answer
    return kb, problems


# --------------------------------------------------------------------------- the key


def fingerprint(roots: Sequence[StrPath], texts: dict[str, bytes] | None = None) -> str | None:
    """The key of the knowledge in ``roots`` (None when a file could not be read); the bytes
    of each file go into ``texts`` (by path) when it is given."""
    from upgradeplan import __version__

    parts = [MAGIC, f"{__version__}\0{sys.version}\0{code_stamp()}\0".encode()]
    try:
        for root in roots:
            parts.append(f"root\0{root}\0".encode())
            for rel, path in _yaml_files(os.fspath(root)):
                fd = os.open(path, os.O_RDONLY)
                try:
                    data = os.read(fd, os.fstat(fd).st_size + 1)
                finally:
                    os.close(fd)
                parts.append(f"file\0{rel}\0{len(data)}\0".encode())
                parts.append(data)
                if texts is not None:
                    texts[path] = data
    except OSError:
        return None  # the loader reports what it cannot read; nothing is cached for it
    h = hasher(sum(map(len, parts)))
    for part in parts:
        h.update(part)
    return h.hexdigest()


def _yaml_files(top: str) -> Iterator[tuple[str, str]]:
    """(relative path, path) of every YAML file under ``top`` the loader could read, sorted.

    A superset of what the loader reads (hidden files are included), so no file that changes
    a load can be left out of the key. Directories as os.walk walks them (not a linked one).
    """
    found: list[tuple[str, str]] = []
    pending = [(top, ".")]
    while pending:
        path, rel = pending.pop()
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            continue  # as os.walk: an unreadable directory is left out (the loader says so)
        for entry in entries:
            name = entry.name
            if entry.is_dir():
                if not name.startswith((".", "__")) and not entry.is_symlink():
                    pending.append((entry.path, name if rel == "." else f"{rel}/{name}"))
            elif name.endswith(_YAML):
                found.append((f"{rel}/{name}", entry.path))  # "./x.yaml" at the top, as before
    return iter(sorted(found))


# --------------------------------------------------------------------------- the files


def entry_path(where: StrPath, key: str) -> str:
    return os.path.join(where, f"kb-{key}.pickle")


def read(where: StrPath, key: str) -> Entry | None:
    """The entry for ``key``, or None when absent, not private, corrupt or not knowledge."""
    try:
        from _pickle import loads  # pickle.py's own Pickler classes: not needed to read
    except ImportError:
        from pickle import loads

    blob = read_private(entry_path(where, key))
    if blob is None:
        return None
    head = len(MAGIC)
    payload = blob[head + _DIGEST :]
    if not blob.startswith(MAGIC) or digest(payload) != blob[head : head + _DIGEST]:
        return None
    try:
        with collector.paused():  # thousands of small objects, all kept
            value = loads(payload)
    except Exception:  # an entry of other code: unpickling can fail in any way
        return None
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and isinstance(value[0], KnowledgeBase)
        and isinstance(value[1], list)
    ):
        return value[0], value[1]
    return None


def write(where: StrPath, key: str, entry: Entry) -> bool:
    """Store ``entry`` atomically; False (and nothing left behind) when it cannot be written."""
    try:
        from _pickle import PicklingError  # the C pickler: pickle.py is not imported
    except ImportError:
        from pickle import PicklingError

    try:
        payload = _dumps(entry)
    except (PicklingError, RecursionError, TypeError, AttributeError):
        return False
    if not write_private(entry_path(where, key), MAGIC + digest(payload) + payload):
        return False
    prune(where, "kb-", ".pickle", KEEP)
    return True


def _dumps(entry: Entry) -> bytes:
    try:
        from _pickle import dumps  # pickle.py's own Pickler classes: not needed to write
    except ImportError:
        from pickle import dumps

    with collector.paused():  # pickling allocates no cycles worth collecting
        return dumps(entry, protocol=5)  # pickle.HIGHEST_PROTOCOL of Python 3.8 and later


__all__ = [
    "KEEP",
    "MAGIC",
    "cache_dir",
    "digest",
    "fingerprint",
    "load",
    "load_with_problems",
    "read",
    "write",
]
