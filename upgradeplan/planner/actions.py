"""Actions: which findings the plan's migrations fix, rendering them, merging them per step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from upgradeplan import errors
from upgradeplan.escape import refuse_control
from upgradeplan.kb.templating import render_migration
from upgradeplan.model import Action, Fact, Finding, KnowledgeBase, Migration, State


def migration_available(m: Migration | None, holds: Sequence[str]) -> bool:
    if m is None:
        return False
    if m.kind == "bom-pin":
        named = {str(m.target.get(k)) for k in ("component", "product", "name") if m.target.get(k)}
        if named & set(holds):
            return False
    return True


def fixable(kb: KnowledgeBase, finding: Finding, holds: Sequence[str]) -> bool:
    """Can the step's actions fix ``finding`` (it applies, has migrations, none is held)?"""
    if finding.status != "applies" or finding.scope == "skip":
        return False
    h = kb.hazards.get(finding.hazard)
    if h is None or not h.migrations:
        return False
    return all(migration_available(kb.migrations.get(m), holds) for m in h.migrations)


def _render(m: Migration, values: dict[str, Any]) -> str:
    """The migration rendered with ``values`` (jinja2 is imported here, on first use)."""
    try:
        return render_migration(m, values)
    except Exception as exc:  # jinja2 TemplateError subclasses
        raise errors.BadInput(
            f"migration {m.id} does not render: {exc}",
            location=str(m.location),
            hint="run 'upgradeplan kb lint'",
        ) from None


def render_action(
    m: Migration,
    state: State,
    *,
    product: str,
    from_version: str,
    to_version: str,
    bom: Mapping[str, str],
    fixes: Sequence[str],
) -> Action:
    """Fill ``m``'s params from ``state`` (placeholders where unknown); the action renders
    them when its content is first read (a value with a control character is refused here)."""
    values: dict[str, Any] = {}
    placeholders: list[str] = []
    for name, spec in m.params.items():
        if isinstance(spec, Mapping):
            key = spec.get("fact")
            fact = state.get(str(key)) if key else None
            if fact is not None and fact.value is not None:
                value: Any = fact.value
                _refuse_control(str(key), fact)
            elif "value" in spec:
                value = spec["value"]
            else:
                value = spec.get("placeholder", f"<{name}>")
                placeholders.append(str(name))
        else:
            value = spec
        values[str(name)] = value
    values["step"] = {"product": product, "from": from_version, "to": to_version, "bom": dict(bom)}
    return Action.deferred(
        partial(_render, m, values),
        migration=m.id,
        title=m.title,
        kind=m.kind,
        when=m.when,
        target=dict(m.target),
        fixes=tuple(fixes),
        placeholders=tuple(placeholders),
    )


def _refuse_control(key: str, fact: Fact) -> None:
    """A value substituted into a migration never holds a control character (exit 2)."""
    where = fact.source.file_line
    refuse_control(fact.value, f"fact {key}", location=f"{where[0]}:{where[1]}" if where else "")


def merge_actions(actions: Sequence[Action]) -> tuple[Action, ...]:
    """One action per migration (fixes merged), before-actions first."""
    by_id: dict[str, Action] = {}
    for a in actions:
        if a.migration in by_id:
            old = by_id[a.migration]
            fixes = tuple(dict.fromkeys((*old.fixes, *a.fixes)))
            by_id[a.migration] = old.with_fixes(fixes)
        else:
            by_id[a.migration] = a
    merged = list(by_id.values())
    return tuple(sorted(merged, key=lambda a: 0 if a.when == "before" else 1))
