"""Code compiled at run time, kept between runs of the console script.

The ``__init__`` of every ``@frozen`` class is compiled from source when its first instance is
made (:func:`upgradeplan.frozen.init_of`); an offline check compiles about twenty, a tenth of
an interpreter start. :func:`code` compiles a source once per process; after
:func:`keep_between_runs` (the console script calls it) it first looks in a file of the user
cache directory, ``inits-<key>.marshal``, and the code compiled in the run is written there
after the answer (:func:`upgradeplan.usercache.later`).

The key is a hash of the Python version and the stamp of the installed code
(:func:`upgradeplan.usercache.code_stamp`), so an upgrade of either selects another file; within
a file, code is found by its exact source and file name, never by a class's name. The file is
never trusted: it is read only when private to the user (:func:`upgradeplan.usercache.private`),
its header carries a hash of the payload, and anything that does not check out or unmarshal to
code objects is ignored (and the file rewritten after the run). ``UPGRADEPLAN_NO_CACHE`` turns
it off with the other caches. A library caller compiles as before.
"""

from __future__ import annotations

import os
import sys
from types import CodeType

from upgradeplan import usercache

MAGIC = b"upgradeplan compiled code 1\n"
KEEP = 4  # newest files kept (one per installed code)

_CODES: dict[str, CodeType] = {}  # "filename\0source" -> code, read or compiled
_STATE: dict[str, bool] = {}  # "keep": keep_between_runs() was called; "read", "new"


def keep_between_runs() -> None:
    """From now on look compiled code up in the user cache and write new code back."""
    _STATE["keep"] = True


def code(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, from the kept code when the same was compiled in
    an earlier run."""
    key = f"{filename}\0{source}"
    found = _CODES.get(key)
    if found is None and _STATE.get("keep") and not _STATE.get("read"):
        _STATE["read"] = True
        _CODES.update(_read())
        found = _CODES.get(key)
    if found is None:
        found = compile(source, filename, "exec")
        _CODES[key] = found
        if _STATE.get("keep") and not _STATE.get("new"):
            _STATE["new"] = True
            usercache.later(_write)  # after the answer, with all the run compiled
    return found


def _path() -> str | None:
    where = usercache.cache_dir()
    if where is None:
        return None
    key = f"{sys.version}\0{usercache.code_stamp()}".encode()
    h = usercache.hasher(len(key))
    h.update(key)
    return os.path.join(where, f"inits-{h.hexdigest()}.marshal")


def _read() -> dict[str, CodeType]:
    """The kept code, or nothing when the file is absent, not private or does not check out."""
    path = _path()
    blob = usercache.read_private(path) if path is not None else None
    if blob is None or not blob.startswith(MAGIC):
        return {}
    head = len(MAGIC) + 32
    payload = blob[head:]
    if usercache.digest(payload) != blob[len(MAGIC) : head]:
        return {}
    import marshal

    try:
        value = marshal.loads(payload)
    except Exception:  # written by other code: ignored
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _write() -> None:
    import marshal

    path = _path()
    if path is None:
        return
    payload = marshal.dumps(dict(_CODES))
    if usercache.write_private(path, MAGIC + usercache.digest(payload) + payload):
        usercache.prune(os.path.dirname(path), "inits-", ".marshal", KEEP)
