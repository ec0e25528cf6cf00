"""Input files, read bounded: regular files only, at most a cap of bytes.

A FIFO, a device or a socket is refused by name before it is opened (``/dev/zero`` never
ends; a FIFO nobody writes blocks for ever); a symlink is followed to what it names. Every
refusal is bad input (exit 2) naming the file and the cap.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from upgradeplan.errors import BadInput


def file_kind(mode: int) -> str:
    """``a FIFO (named pipe)``, ``a character device``, … for a mode that is not a file."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def regular_file(path: str | Path, what: str, *, hint: str = "", cap: int = 0) -> int:
    """The size of the regular file ``path``; BadInput when it is missing, not a regular
    file or (with ``cap``) larger than ``cap`` bytes. ``what`` names it in the message."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise BadInput(f"{what}: no such file", hint=hint) from None
    except OSError as exc:
        raise BadInput(f"{what}: cannot read ({exc.strerror})", hint=hint) from None
    if not stat.S_ISREG(info.st_mode):
        raise BadInput(f"{what}: is {file_kind(info.st_mode)}, not a regular file", hint=hint)
    if cap and info.st_size > cap:
        raise BadInput(
            f"{what}: {info.st_size} bytes is more than the cap of {cap} bytes", hint=hint
        )
    return info.st_size


def read_bounded(path: str | Path, what: str, *, cap: int, hint: str = "") -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` of them (BadInput beyond)."""
    regular_file(path, what, hint=hint, cap=cap)
    try:
        with open(path, "rb") as fh:
            data = fh.read(cap + 1)
    except OSError as exc:
        raise BadInput(f"{what}: cannot read ({exc.strerror})", hint=hint) from None
    if len(data) > cap:  # it grew since it was looked at
        raise BadInput(f"{what}: more than the cap of {cap} bytes", hint=hint)
    return data


__all__ = ["file_kind", "read_bounded", "regular_file"]
