"""A plan's patches as data: items (one per migration or move, per step) and file changes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from msgspec import Struct, field

from upgradeplan.model import Step
from upgradeplan.provenance import Source

PathStep = str | int
# an image reference whose tag is the version: registry/repo:tag (no digest: it pins the bytes)
_IMAGE = re.compile(r"(?P<repo>[^\s@]*[^\s@:]):(?P<tag>[^\s:/@]+)")
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


class ScalarEdit(Struct, frozen=True):
    """Set the scalar written on ``line`` (1-based) whose value is ``before`` to ``after``."""

    line: int
    before: str
    after: str
    what: str = ""  # e.g. "pin.agent-platform-connectivity", for messages

    def replaced(self, value: str) -> str | None:
        """The new text of a scalar holding ``before`` (itself, ``v``-prefixed, or as the tag
        of an image reference such as ``harness/delegate:0.29.0``), or None when it does not."""

        def versioned(current: str) -> str | None:
            if current == self.before:
                return self.after
            if current.startswith("v") and current[1:] == self.before and current[1:2].isdigit():
                return self.after if self.after.startswith("v") else "v" + self.after
            return None

        whole = versioned(value)
        image = _IMAGE.fullmatch(value) if whole is None else None
        if image is None:
            return whole
        tag = versioned(image.group("tag"))
        return f"{image.group('repo')}:{tag}" if tag is not None else None


class KeyEdit(Struct, frozen=True):
    """Set the string at ``path`` (keys and list indexes from the root of document ``doc``)."""

    doc: int
    path: tuple[PathStep, ...]
    after: str
    line: int = 0  # the line the edit is about (for messages), 1-based
    what: str = ""  # e.g. "components.kagent.driftDetection.mode"


class PatchItem(Struct, frozen=True):
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


class FileChange(Struct, frozen=True):
    """All edits to one file through a given step: what ``--write`` writes."""

    path: str
    original: str
    original_hash: str
    edits: tuple[ScalarEdit, ...]
    result: str
    keys: tuple[KeyEdit, ...] = ()  # values set at a key path, added where missing


class PatchSet(Struct, frozen=True):
    items: tuple[PatchItem, ...]
    steps: tuple[Step, ...]
    changes_by_step: tuple[tuple[FileChange, ...], ...]  # [k] = cumulative through step k+1

    def file_changes(self, through_step: int) -> tuple[FileChange, ...]:
        """The cumulative file changes of steps 1..through_step (empty when there are none)."""
        if through_step < 1 or not self.changes_by_step:
            return ()
        return self.changes_by_step[min(through_step, len(self.changes_by_step)) - 1]


__all__ = ["KIND_OF_MIGRATION", "FileChange", "ItemKind", "PatchItem", "PatchSet", "files_of"]
