"""How a user supplies a fact a condition needed and did not have (from the key table)."""

from __future__ import annotations

from upgradeplan.state.keys import READERS_HINT, how_to_supply


def missing_fact_hint(key: str) -> str:
    """How a user supplies the fact ``key`` (its row's ``supply`` in the fact-key table)."""
    return how_to_supply(key)


__all__ = ["READERS_HINT", "missing_fact_hint"]
