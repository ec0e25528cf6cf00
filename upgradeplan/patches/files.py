"""The disk side of patches: the files the facts name, read as they are; guarded atomic writes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from upgradeplan.model import Plan, State


def read_named(plan: Plan | None, state: State) -> dict[str, str]:
    """The text of every file a fact or a move of ``plan`` names (file:line), as it is now."""
    from upgradeplan.render.patchset import files_of

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
    from upgradeplan.render.yamledit import ensure_unchanged, write_atomic

    pending = list(changes)
    for change in pending:
        ensure_unchanged(change.path, change.original_hash)
    for change in pending:
        write_atomic(change.path, change.result, expected_hash=change.original_hash)
        yield change.path


__all__ = ["read_named", "write_changes"]
