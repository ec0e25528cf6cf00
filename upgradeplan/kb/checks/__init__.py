"""The coded semantic checks over a loaded knowledge base.

Each check is a function taking the :class:`~upgradeplan.kb.documents.Loaded` result and yielding
:class:`~upgradeplan.kb.problems.Problem` s; the codes and their descriptions live in
:data:`upgradeplan.kb.problems.CATALOGUE`. Checks marked ``lint_only`` (template rendering)
run in ``kb lint`` only; the others also run whenever the knowledge is loaded. The checks of
references and versions are in :mod:`.versions`, those of what entries say in :mod:`.content`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from msgspec import Struct

from upgradeplan.kb.checks.content import (
    check_advice,
    check_crossing_notes,
    check_fact_keys,
    check_hazard_references,
    check_inferred,
    check_migration_references,
    check_object_fields,
    check_patterns,
    check_reference_format,
    check_templates,
    sample_values,
)
from upgradeplan.kb.checks.context import walk_conditions
from upgradeplan.kb.checks.placeholders import check_placeholders
from upgradeplan.kb.checks.versions import (
    check_dates,
    check_hazard_ranges,
    check_references,
    check_upgrade_edges,
)
from upgradeplan.kb.documents import Loaded
from upgradeplan.kb.problems import Problem

__all__ = ["CHECKS", "Check", "run_checks", "sample_values", "walk_conditions"]


class Check(Struct, frozen=True):
    codes: tuple[str, ...]
    run: Callable[[Loaded], Iterable[Problem]]
    lint_only: bool = False


CHECKS: tuple[Check, ...] = (
    Check(("KB005", "KB006", "KB007", "KB008", "KB009"), check_references),
    Check(("KB006", "KB008", "KB009", "KB010", "KB011"), check_hazard_ranges),
    Check(("KB012", "KB013"), check_upgrade_edges),
    Check(("KB016", "KB023"), check_dates),
    Check(("KB015",), check_patterns, lint_only=True),
    Check(("KB019", "KB020"), check_advice),
    Check(("KB021",), check_reference_format),
    Check(("KB025",), check_inferred),
    Check(("KB026",), check_hazard_references, lint_only=True),
    Check(("KB005", "KB024"), check_fact_keys),
    Check(("KB029",), check_object_fields),
    Check(("KB014",), check_templates, lint_only=True),
    Check(("KB030",), check_placeholders, lint_only=True),
    Check(("KB031",), check_crossing_notes),
    Check(("KB032",), check_migration_references, lint_only=True),
)


def run_checks(loaded: Loaded, *, lint: bool) -> list[Problem]:
    """Every check's problems (the lint-only ones only with ``lint``)."""
    out: list[Problem] = []
    for check in CHECKS:
        if check.lint_only and not lint:
            continue
        out.extend(check.run(loaded))
    return out
