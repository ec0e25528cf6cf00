"""The disk side of patches: the files the facts name, read as they are; all-or-nothing writes.

One step of ``patch --write`` may change several files (a BOM and the OCIRepository that
follows it). :func:`write_all` changes them as one: after a crash at any instant, the next
run (:func:`recover`) leaves either every file old or every file new, and no temporary file.

How: every new content is staged in a temporary file beside its target, and a journal (in
the user's state directory, see :func:`journal_dir`) records the targets, their temporary
files, the hash of their old and new content and the old content itself. The journal grows
by whole lines, each fsynced: ``intent`` (before any temporary file exists), ``commit``
(when every temporary file is complete and every target was checked again, just before the
first rename) and ``rollback`` (when a rename failed in this process). The next run reads
it: without ``commit`` it deletes the temporary files (all old); with ``commit`` it moves the
remaining temporary files into place (all new); with ``rollback`` it puts the old content
back (all old). The writer holds an advisory lock on its journal, so a run beside it never
finishes a write that is still going on.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct

from upgradeplan.errors import BadInput
from upgradeplan.model import Plan, State
from upgradeplan.patches.patchset import files_of

#: Called after every filesystem call of a write or a recovery with the call's name. Tests
#: set it to stop the process at each point; None otherwise.
after_call: Callable[[str], None] | None = None

_NOTHING = "nothing was changed"


def _fs(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    out = fn(*args)
    if after_call is not None:
        after_call(name)
    return out


def read_named(plan: Plan | None, state: State) -> dict[str, str]:
    """The text of every file a fact or a move of ``plan`` names (file:line), as it is now."""

    sources = [f.source for f in state]
    if plan is not None:
        sources += [m.source for s in plan.steps for m in s.moves if m.source is not None]
    out: dict[str, str] = {}
    for source in sources:
        loc = files_of(source)
        if loc is None or loc[0] in out:
            continue
        try:
            out[loc[0]] = Path(loc[0]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def write_changes(changes: Iterable[Any]) -> list[str]:
    """Write the file changes of a step all or nothing (:func:`write_all`): every file is
    checked first, a stale, read-only or irregular one stops all writing. Returns the path of
    each file written."""
    pending = list(changes)
    write_all([(c.path, c.result, c.original_hash) for c in pending])
    return [change.path for change in pending]


def content_hash(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def ensure_unchanged(path: str | Path, expected_hash: str) -> bytes:
    """The content of ``path``; :class:`BadInput` when it is not what was read before."""
    target = Path(path)
    try:
        current = target.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror}", location=str(target)) from None
    if content_hash(current) != expected_hash:
        raise _changed(target)
    return current


def _changed(target: Path) -> BadInput:
    return BadInput(
        "changed since it was read; not writing any file of this step",
        location=str(target),
        hint="re-run the command on the current file",
    )


def journal_dir() -> Path:
    """Where journals of unfinished writes live: ``$XDG_STATE_HOME/upgradeplan/journal``
    (``~/.local/state/upgradeplan/journal`` when XDG_STATE_HOME is unset or not absolute;
    ``/tmp/upgradeplan-UID/journal`` without a home directory)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not (base and os.path.isabs(base)):
        home = os.path.expanduser("~")
        if not os.path.isabs(home):  # no home directory: the user's own folder under /tmp
            import tempfile

            uid = os.getuid() if hasattr(os, "getuid") else 0
            return Path(tempfile.gettempdir()) / f"upgradeplan-{uid}" / "journal"
        base = os.path.join(home, ".local", "state")
    return Path(base) / "upgradeplan" / "journal"


class _Target(Struct):
    shown: Path
    real: Path
    old: bytes
    new: bytes
    mode: int
    size: int
    mtime_ns: int
    temp: Path


def write_all(changes: Sequence[tuple[str | Path, str, str]]) -> list[Path]:
    """Write several files as one step: all of them, or none (``(path, text, expected_hash)``).

    Every target is checked first: a symlink is written through to the file it names (the
    link stays a link), the real file must be a regular file, writable (a read-only file is
    refused, not replaced) in a writable directory, and unchanged since it was read (its
    content compared with ``expected_hash``). Its size, modification time and content are
    checked once more just before the first rename. An OS error (a full disk, a lost
    permission) is :class:`BadInput` with the OS message, and no file is changed. Returns the
    real paths written.
    """
    recover()
    targets = [_checked(Path(path), text, expected) for path, text, expected in changes]
    if not targets:
        return []
    journal = _Journal.create(targets)
    current = targets[0]
    try:
        try:
            for current in targets:
                _stage(current.temp, current.new, current.mode)
            for current in targets:
                _verify(current)
            journal.mark("commit")
        except BaseException:
            _drop(targets)
            journal.close(remove=True)
            raise
        replaced = 0
        try:
            for current in targets:
                _fs("replace", os.replace, current.temp, current.real)
                replaced += 1
            for directory in {t.real.parent for t in targets}:
                _fsync_dir(directory)
        except OSError:
            if replaced:
                journal.mark("rollback")
                try:
                    _roll_back(journal.entries)
                except OSError as again:
                    journal.close(remove=False)  # the next run puts the old content back
                    raise BadInput(
                        f"cannot write: {again.strerror or again}; the step is half written",
                        location=str(current.shown),
                        hint="run the same upgradeplan patch command again: it puts back the "
                        "old content of every file of the step first",
                    ) from None
            else:
                _drop(targets)
            journal.close(remove=True)
            raise
        journal.close(remove=True)
    except OSError as exc:
        raise BadInput(
            f"cannot write: {exc.strerror or exc}; {_NOTHING}", location=str(current.shown)
        ) from None
    return [t.real for t in targets]


def _checked(shown: Path, text: str, expected: str) -> _Target:
    """The real file behind ``shown`` and what to write there; BadInput when it may not be
    written (not a regular file, read-only, in a read-only folder, changed since read)."""
    real = Path(os.path.realpath(shown))
    if not real.is_file():
        raise BadInput("not a regular file; not writing", location=str(shown))
    if not os.access(real, os.W_OK) or not real.stat().st_mode & 0o222:  # root too
        raise BadInput(
            "read-only; not writing any file of this step",
            location=str(shown),
            hint="make it writable, or apply the patch by hand",
        )
    if not os.access(real.parent, os.W_OK | os.X_OK):
        raise BadInput(
            f"its folder {real.parent} is not writable; not writing any file of this step",
            location=str(shown),
        )
    before = real.stat()
    old = ensure_unchanged(real, expected)
    temp = real.parent / f".{real.name}.upgradeplan-{secrets.token_hex(4)}.tmp"
    return _Target(
        shown,
        real,
        old,
        text.encode("utf-8"),
        before.st_mode & 0o7777,
        before.st_size,
        before.st_mtime_ns,
        temp,
    )


def _verify(t: _Target) -> None:
    """Refuse when ``t`` changed since it was read: its size, modification time or content."""
    try:
        now = _fs("stat", os.stat, t.real)
        data = _fs("read", Path(t.real).read_bytes)
    except FileNotFoundError:
        raise _changed(t.shown) from None
    if (now.st_size, now.st_mtime_ns) != (t.size, t.mtime_ns) or data != t.old:
        raise _changed(t.shown)


def _stage(temp: Path, data: bytes, mode: int) -> None:
    """``data`` in a new, fsynced file ``temp`` (truncated when it exists: a recovery)."""
    fd = _fs("open", os.open, temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[_fs("write", os.write, fd, view) :]
        _fs("fsync", os.fsync, fd)
    finally:
        os.close(fd)
    _fs("chmod", os.chmod, temp, mode)  # the umask may have narrowed it


def _drop(targets: Iterable[_Target]) -> None:
    for t in targets:
        with contextlib.suppress(FileNotFoundError):
            _fs("unlink", os.unlink, t.temp)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            _fs("fsync", os.fsync, fd)
        finally:
            os.close(fd)


# ---------------------------------------------------------------------------- the journal


class _Journal:
    """One write's journal: a file of JSON lines, locked while its write runs."""

    def __init__(self, path: Path, fd: int, entries: list[dict[str, Any]]) -> None:
        self.path, self.fd, self.entries = path, fd, entries

    @classmethod
    def create(cls, targets: Sequence[_Target]) -> _Journal:
        folder = journal_dir()
        entries = [
            {
                "path": str(t.real),
                "temp": str(t.temp),
                "mode": t.mode,
                "old": base64.b64encode(t.old).decode("ascii"),
                "old_hash": content_hash(t.old),
                "new_hash": content_hash(t.new),
            }
            for t in targets
        ]
        path = folder / f"write-{os.getpid()}-{secrets.token_hex(4)}.journal"
        try:
            _fs("mkdir", os.makedirs, folder, 0o700, True)
            fd = _fs("open", os.open, path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            raise BadInput(
                f"cannot write the journal of this step ({exc.strerror}); {_NOTHING}",
                location=str(folder),
                hint="make it writable, or set XDG_STATE_HOME to a writable folder",
            ) from None
        _lock(fd, wait=True)
        journal = cls(path, fd, entries)
        try:
            journal._append({"intent": entries})
        except OSError as exc:
            journal.close(remove=True)
            raise BadInput(
                f"cannot write the journal of this step ({exc.strerror or exc}); {_NOTHING}",
                location=str(folder),
            ) from None
        except BaseException:
            journal.close(remove=True)
            raise
        return journal

    def _append(self, record: object) -> None:
        line = (json.dumps(record, sort_keys=True) + "\n").encode("utf-8")
        _fs("write", os.write, self.fd, line)
        _fs("fsync", os.fsync, self.fd)

    def mark(self, state: str) -> None:
        self._append(state)

    def close(self, *, remove: bool) -> None:
        if remove:
            with contextlib.suppress(FileNotFoundError):
                _fs("unlink", os.unlink, self.path)
        os.close(self.fd)


def _lock(fd: int, *, wait: bool) -> bool:
    try:
        import fcntl
    except ImportError:  # no advisory locks here (Windows): one run at a time is assumed
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _read_journal(data: bytes) -> tuple[list[dict[str, Any]], str]:
    """The entries and the last state a journal's complete lines record ('' when none)."""
    entries: list[dict[str, Any]] = []
    state = ""
    for raw in data.split(b"\n")[:-1]:  # a last line without its newline was cut off
        record = json.loads(raw)
        if isinstance(record, dict) and "intent" in record:
            entries, state = list(record["intent"]), "intent"
        elif isinstance(record, str):
            state = record
    return entries, state


def recover() -> list[str]:
    """Finish what a killed write left behind (see the module's text): each file of its step
    all old or all new, its temporary files gone. Returns the paths whose content it set."""
    folder = journal_dir()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    touched: list[str] = []
    for name in names:
        if not name.endswith(".journal"):
            continue
        path = folder / name
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            continue
        try:
            if not _lock(fd, wait=False):
                continue  # a write still running
            try:
                if os.fstat(fd).st_ino != os.stat(path).st_ino:
                    continue  # finished and replaced meanwhile
            except FileNotFoundError:
                continue
            with open(fd, "rb", closefd=False) as fh:
                data = fh.read()
            try:
                entries, state = _read_journal(data)
            except (ValueError, KeyError, TypeError):
                entries, state = [], ""  # not ours or damaged: nothing to replay
            if state == "commit":
                touched += _roll_forward(entries)
            elif state == "rollback":
                touched += _roll_back(entries)
            else:
                for entry in entries:
                    with contextlib.suppress(FileNotFoundError):
                        _fs("unlink", os.unlink, entry["temp"])
            with contextlib.suppress(FileNotFoundError):
                _fs("unlink", os.unlink, path)
        finally:
            os.close(fd)
    return touched


def _roll_forward(entries: Sequence[dict[str, Any]]) -> list[str]:
    done = []
    for entry in entries:
        if os.path.exists(entry["temp"]):  # complete: 'commit' follows every staging
            _fs("replace", os.replace, entry["temp"], entry["path"])
            done.append(entry["path"])
    for directory in {os.path.dirname(e["path"]) for e in entries}:
        _fsync_dir(Path(directory))
    return done


def _roll_back(entries: Sequence[dict[str, Any]]) -> list[str]:
    done = []
    for entry in entries:
        with contextlib.suppress(FileNotFoundError):
            _fs("unlink", os.unlink, entry["temp"])
        try:
            current = Path(entry["path"]).read_bytes()
        except OSError:
            continue
        if content_hash(current) == entry["new_hash"]:
            _stage(Path(entry["temp"]), base64.b64decode(entry["old"]), int(entry["mode"]))
            _fs("replace", os.replace, entry["temp"], entry["path"])
            done.append(entry["path"])
    for directory in {os.path.dirname(e["path"]) for e in entries}:
        _fsync_dir(Path(directory))
    return done


__all__ = [
    "after_call",
    "content_hash",
    "ensure_unchanged",
    "journal_dir",
    "read_named",
    "recover",
    "write_all",
    "write_changes",
]
