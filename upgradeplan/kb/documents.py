"""What the loader produces: the parsed knowledge files (:class:`Document`) and the result of a
load (:class:`Loaded`: the knowledge, every problem, the documents). The semantic checks and
``kb lint`` read these; they never need the loader itself, so the loader may run the checks
without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from upgradeplan.kb.problems import Problem
from upgradeplan.kb.yamlio import LineDict, line_of
from upgradeplan.model import KnowledgeBase, Location


@dataclass
class Document:
    """One parsed knowledge file."""

    path: Path
    file: str  # shown in messages: relative to the parent of its knowledge root
    root: str
    kind: str  # from the directory it is in (or its `kind:` when that is all there is)
    data: LineDict

    def at(self, *path: Any) -> Location:
        return Location(self.file, line_of(self.data, path))


@dataclass
class Loaded:
    """What the loader produced: the knowledge, every problem, and the parsed documents."""

    kb: KnowledgeBase
    problems: list[Problem]
    documents: dict[str, Document] = field(default_factory=dict)


__all__ = ["Document", "Loaded"]
