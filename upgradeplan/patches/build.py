"""The patch set of a plan (or of the installation as it is, when there is no plan)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from upgradeplan.model import Action, Jump, KnowledgeBase, Plan, State

_AS_IT_IS = Plan(
    schema_version=1,
    targets=(),
    current={},
    direct=Jump(findings=(), verdict="safe"),
    steps=(),
    verdict="safe",
)


def build(
    plan: Plan | None,
    state: State,
    *,
    files: Mapping[str, str],
    current_actions: Sequence[Action] = (),
    kb: KnowledgeBase | None = None,
) -> Any:
    """The :class:`~upgradeplan.render.patches.PatchSet` of ``plan`` (None: no step)."""
    from upgradeplan.render import patches

    return patches.build(
        plan or _AS_IT_IS, state, files=dict(files), current_actions=current_actions, kb=kb
    )


__all__ = ["build"]
