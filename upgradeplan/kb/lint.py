"""``kb lint``: every problem of a knowledge base in one run, as ``file:line CODE message``.

Lint = the loader's structural problems + full JSON Schema validation of every file + all
semantic checks (including the lint-only ones such as template rendering). A specific problem
wins over a generic schema message on the same line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from upgradeplan.kb.checks import run_checks
from upgradeplan.kb.documents import Loaded
from upgradeplan.kb.loader import load_all
from upgradeplan.kb.problems import CATALOGUE, CheckInfo, Problem, problem
from upgradeplan.kb.schema import validate

__all__ = ["CATALOGUE", "CheckInfo", "Problem", "format_problems", "lint", "lint_loaded"]


def lint(dirs: Sequence[str | Path] = (), *, bundled: bool = True) -> list[Problem]:
    """Every problem of the knowledge in ``dirs`` (plus the bundled one), sorted."""
    return lint_loaded(load_all(dirs, bundled=bundled, semantic=False))


def lint_loaded(loaded: Loaded) -> list[Problem]:
    problems = list(loaded.problems)
    problems.extend(schema_problems(loaded))
    problems.extend(run_checks(loaded, lint=True))
    return _settle(problems)


def schema_problems(loaded: Loaded) -> list[Problem]:
    """KB002 for every JSON Schema violation, at the line of the offending key."""
    out: list[Problem] = []
    for doc in loaded.documents.values():
        for err in validate(doc.data, doc.kind):
            out.append(problem("KB002", doc.at(*err.path), err.message))
    return out


def _settle(problems: Iterable[Problem]) -> list[Problem]:
    """Drop duplicates; one KB002 per line, and none where a specific code covers the line."""
    unique = sorted(set(problems))
    specific = {(p.location.file, p.location.line) for p in unique if p.code != "KB002"}
    out: list[Problem] = []
    seen_schema: set[tuple[str, int]] = set()
    # schema messages from jsonschema mention the property path ("a.b: ..."), the loader's
    # shorter ones; prefer the longer, more precise message for a line.
    for p in sorted(unique, key=lambda p: (p.location, p.code, -len(p.message))):
        key = (p.location.file, p.location.line)
        if p.code == "KB002":
            if key in specific or key in seen_schema:
                continue
            seen_schema.add(key)
        out.append(p)
    return sorted(out)


def format_problems(problems: Iterable[Problem]) -> str:
    """One ``file:line CODE message`` line per problem (warnings marked), sorted."""
    lines = []
    for p in sorted(problems):
        mark = "" if p.severity == "error" else "warning: "
        lines.append(f"{p.location} {p.code} {mark}{p.message}")
    return "\n".join(lines)
