"""The disk side of patches: the files the facts name, read as they are; guarded atomic writes."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterable, Sequence
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
        raise BadInput(
            "changed since it was read; not writing",
            location=str(target),
            hint="re-run the command on the current file",
        )
    return current


def write_all(changes: Sequence[tuple[str | Path, str, str]]) -> list[Path]:
    """Write several files as one step: all of them, or none (``(path, text, expected_hash)``).

    Every target is checked first: a symlink is written through to the file it names (the
    link stays a link), the real file must be a regular file, writable (a read-only file is
    refused, not replaced) in a writable directory, and unchanged since it was read (its
    content compared with ``expected_hash``). Then each new content goes to a temporary file
    next to its real target, fsynced; only when all are ready is each moved into place with
    :func:`os.replace` (so a kill at any moment leaves each file as it was or fully written).
    If a move fails, the files already replaced get their old content back. Returns the
    real paths written.
    """
    prepared = [_checked(Path(path), expected) for path, _, expected in changes]
    temps = _staged(
        [
            (real, text, mode)
            for (real, _, mode), (_, text, _) in zip(prepared, changes, strict=True)
        ]
    )
    done: list[int] = []
    try:
        for i, (tmp, real) in enumerate(temps):
            os.replace(tmp, real)
            done.append(i)
        for directory in {real.parent for _, real in temps}:
            _fsync_dir(directory)
    except BaseException:
        for i in done:  # put back what was already replaced
            real, old, _ = prepared[i]
            with contextlib.suppress(OSError):
                _restore(real, old)
        _drop(temps)
        raise
    return [real for real, _, _ in prepared]


def _checked(shown: Path, expected: str) -> tuple[Path, bytes, int]:
    """The real file behind ``shown``, its content and mode; BadInput when it may not be
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
    old = ensure_unchanged(real, expected)
    return real, old, real.stat().st_mode & 0o7777


def _staged(files: Sequence[tuple[Path, str, int]]) -> list[tuple[str, Path]]:
    """Each new content in a fsynced temporary file beside its target: (temp, target)."""
    temps: list[tuple[str, Path]] = []
    try:
        for real, text, mode in files:
            fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
            temps.append((tmp, real))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
    except BaseException:
        _drop(temps)
        raise
    return temps


def _drop(temps: Sequence[tuple[str, Path]]) -> None:
    for tmp, _ in temps:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _restore(real: Path, old: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    with os.fdopen(fd, "wb") as fh:
        fh.write(old)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, real)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


__all__ = [
    "content_hash",
    "ensure_unchanged",
    "read_named",
    "write_all",
    "write_changes",
]
