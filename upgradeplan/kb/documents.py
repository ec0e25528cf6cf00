"""What the loader produces: the parsed knowledge files (:class:`Document`) and the result of a
load (:class:`Loaded`: the knowledge, every problem, the documents). The semantic checks and
``kb lint`` read these; they never need the loader itself, so the loader may run the checks
without an import cycle.
"""

from __future__ import annotations

import os
from typing import Any

from msgspec import Struct, field

from upgradeplan.kb.problems import Problem
from upgradeplan.model import KnowledgeBase, Location
from upgradeplan.yamlload import LineDict, line_of


class Document(Struct, eq=False):  # compared and hashed by identity
    """One parsed knowledge file."""

    path: str  # the file as opened (a string: no pathlib on a command's path)
    file: str  # shown in messages: relative to the parent of its knowledge root
    root: str
    kind: str  # from the directory it is in (or its `kind:` when that is all there is)
    data: LineDict

    def __repr__(self) -> str:
        return f"Document({self.file!r}, kind={self.kind!r})"

    @property
    def name(self) -> str:
        """The file's name (``x.yaml``)."""
        return os.path.basename(self.path)

    @property
    def stem(self) -> str:
        """The file's name without its suffix (``x``), as ``PurePath.stem`` gives it."""
        name = self.name
        i = name.rfind(".")
        return name[:i] if 0 < i < len(name) - 1 else name

    def at(self, *path: Any) -> Location:
        return Location(self.file, line_of(self.data, path))


class Loaded(Struct, eq=False):
    """What the loader produced: the knowledge, every problem, and the parsed documents."""

    kb: KnowledgeBase
    problems: list[Problem]
    documents: dict[str, Document] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Loaded({len(self.documents)} documents, {len(self.problems)} problems)"


__all__ = ["Document", "Loaded"]
