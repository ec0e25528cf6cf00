"""The disk side of patches: the files the facts name, read as they are; guarded atomic writes."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from upgradeplan.errors import BadInput
from upgradeplan.model import Plan, State


def read_named(plan: Plan | None, state: State) -> dict[str, str]:
    """The text of every file a fact or a move of ``plan`` names (file:line), as it is now."""
    from upgradeplan.patches.patchset import files_of

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


def write_changes(changes: Iterable[Any]) -> Iterator[str]:
    """Write each file change atomically; every file is checked first (a stale one stops
    all writing). Yields the path of each file written."""
    pending = list(changes)
    for change in pending:
        ensure_unchanged(change.path, change.original_hash)
    for change in pending:
        write_atomic(change.path, change.result, expected_hash=change.original_hash)
        yield change.path


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
        raise BadInput(
            "changed since it was read; not writing",
            location=str(target),
            hint="re-run the command on the current file",
        )
    return current


def write_atomic(path: str | Path, text: str, *, expected_hash: str) -> None:
    """Replace ``path`` with ``text`` atomically, refusing if it changed since it was read.

    ``expected_hash`` is :func:`content_hash` of the content the edit was computed from. The
    new content goes to a temporary file in the same directory (same filesystem), is flushed
    and fsynced, takes the original's permission bits, and replaces the file with
    :func:`os.replace`. On any failure the temporary file is removed and the original is left
    as it was.
    """
    target = Path(path)
    ensure_unchanged(target, expected_hash)
    mode = target.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


__all__ = ["content_hash", "ensure_unchanged", "read_named", "write_atomic", "write_changes"]
