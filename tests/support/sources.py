"""Sources as tests write them: a place ``file:line`` (the package never reads a Source back
from text; a test may name a place the short way)."""

from __future__ import annotations

from upgradeplan.provenance import Source, in_file


def at(where: str) -> Source:
    """The file-line Source of ``"bom.yaml:9"``."""
    file, _, line = where.rpartition(":")
    return in_file(file, int(line))
