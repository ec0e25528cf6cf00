"""The package tree of docs/architecture.md: one line per module, its docstring's first sentence.

``python tests/support/tree.py`` prints it (paste it into the doc's tree block);
tests/test_architecture.py checks the doc against it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "upgradeplan"
COLUMN = 21  # where the description starts


def _summary(path: Path) -> str:
    """The docstring's first sentence."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    taken: list[str] = []
    for line in doc.strip().splitlines():
        if not line.strip():
            break
        taken.append(line.strip())
        if line.rstrip().endswith("."):
            break
    text = " ".join(taken)
    end = re.search(r"\.(?=\s)", text)
    return text[: end.end()] if end else text


def _line(indent: int, name: str, summary: str) -> str:
    head = " " * indent + name
    if not summary:
        return head
    return head.ljust(COLUMN - 1) + " " + summary if len(head) < COLUMN else f"{head} {summary}"


def _walk(directory: Path, indent: int) -> list[str]:
    lines: list[str] = []
    for path in sorted(directory.glob("*.py")):
        if path.name != "__init__.py":
            lines.append(_line(indent, path.name, _summary(path)))
    for sub in sorted(p for p in directory.iterdir() if (p / "__init__.py").is_file()):
        lines.append(_line(indent, sub.name + "/", _summary(sub / "__init__.py")))
        lines += _walk(sub, indent + 2)
    return lines


def tree(package: Path = PACKAGE) -> str:
    """The tree block's text (without the fences)."""
    return "\n".join([package.name + "/", *_walk(package, 2)]) + "\n"


if __name__ == "__main__":
    print(tree(), end="")
