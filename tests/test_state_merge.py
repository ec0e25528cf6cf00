"""Merging states from several inputs: the later wins per key; unreadable until supplied."""

from __future__ import annotations

from upgradeplan.model import Fact, State
from upgradeplan.provenance import text
from upgradeplan.state.merge import merge


def _state(name: str, unreadable: dict[str, str] | None = None, **facts: str) -> State:
    return State(
        facts={
            k.replace("_", "."): Fact(k.replace("_", "."), v, text(name)) for k, v in facts.items()
        },
        name=name,
        unreadable=unreadable or {},
    )


def test_later_state_wins_and_names_join() -> None:
    merged = merge(_state("snap", installed_x="1.0.0"), _state("stated", installed_x="2.0.0"))
    assert merged.value("installed.x") == "2.0.0"
    assert merged.get("installed.x") == Fact("installed.x", "2.0.0", text("stated"))
    assert merged.name == "snap + stated"


def test_unreadable_stays_until_a_later_input_supplies_it() -> None:
    a = _state("cluster", unreadable={"secret": "403"})
    assert merge(a).unreadable == {"secret": "403"}
    b = _state("stated", secret_ns_name_type="Opaque")
    assert merge(a, b).unreadable == {}
