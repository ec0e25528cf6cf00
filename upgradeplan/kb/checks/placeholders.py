"""KB030: a placeholder ``kb new`` wrote (``TODO: …``) and nobody has filled in yet."""

from __future__ import annotations

from collections.abc import Iterator

from upgradeplan.kb.documents import Loaded
from upgradeplan.kb.placeholders import in_data
from upgradeplan.kb.problems import Problem, problem


def check_placeholders(loaded: Loaded) -> Iterator[Problem]:
    """KB030 (error): every unfilled placeholder, at the line of its field."""
    for doc in loaded.documents.values():
        for path, text in in_data(doc.data):
            field = ".".join(str(p) for p in path)
            yield problem(
                "KB030",
                doc.at(*path),
                f"{field} is still the placeholder {text!r}; write what the sources say",
            )


__all__ = ["check_placeholders"]
