"""A plan's patches as data: items (one per migration or move, per step) and file changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from upgradeplan.model import Step
from upgradeplan.patches.yamledit import KeyEdit, ScalarEdit
from upgradeplan.provenance import Source

ItemKind = Literal["file-edit", "strategic-merge", "json6902", "manifest", "command", "snippet"]

KIND_OF_MIGRATION: dict[str, ItemKind] = {
    "helmrelease-patch": "strategic-merge",
    "json6902": "json6902",
    "manifest": "manifest",
    "command": "command",
    "bom-pin": "snippet",
    "values-edit": "snippet",
}


def files_of(source: Source) -> tuple[str, int] | None:
    """``(file, line)`` a patch may edit for a fact of this source: the line it was read
    from, or the BOM entry whose chart default gave it (a drift-detection mode)."""
    if source.kind == "default":
        return source.file, source.line
    return source.file_line


@dataclass(frozen=True)
class PatchItem:
    step: int  # 1-based index of the plan step; 0 = a fix for the installation as it is
    kind: ItemKind
    migration: str  # migration id, or "pin-move" for the version/pin moves of a step
    title: str
    when: Literal["before", "after", "during"]
    content: str  # unified diff, YAML patch/manifest, or shell commands
    target: Mapping[str, Any] = field(default_factory=dict)
    file: str = ""  # file-edit: the file it changes
    edits: tuple[ScalarEdit, ...] = ()  # file-edit: the scalar changes behind the diff
    keys: tuple[KeyEdit, ...] = ()  # file-edit: the values set at key paths behind the diff
    placeholders: tuple[str, ...] = ()
    fixes: tuple[str, ...] = ()
    note: str = ""  # e.g. why no diff could be made


@dataclass(frozen=True)
class FileChange:
    """All edits to one file through a given step: what ``--write`` writes."""

    path: str
    original: str
    original_hash: str
    edits: tuple[ScalarEdit, ...]
    result: str
    keys: tuple[KeyEdit, ...] = ()  # values set at a key path, added where missing


@dataclass(frozen=True)
class PatchSet:
    items: tuple[PatchItem, ...]
    steps: tuple[Step, ...]
    changes_by_step: tuple[tuple[FileChange, ...], ...]  # [k] = cumulative through step k+1

    def file_changes(self, through_step: int) -> tuple[FileChange, ...]:
        """The cumulative file changes of steps 1..through_step (empty when there are none)."""
        if through_step < 1 or not self.changes_by_step:
            return ()
        return self.changes_by_step[min(through_step, len(self.changes_by_step)) - 1]


__all__ = ["KIND_OF_MIGRATION", "FileChange", "ItemKind", "PatchItem", "PatchSet", "files_of"]
