"""Merging states from several inputs, and facts derived from exact pins."""

from __future__ import annotations

from upgradeplan.model import Fact, State
from upgradeplan.provenance import derived_from_pin, in_file, text
from upgradeplan.readers.combine import derive, merge


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


def test_derive_uses_the_normalised_exact_version_and_keeps_ranges_unknown() -> None:
    state = derive(
        State(
            facts={
                "pin.a": Fact("pin.a", "v1.2.3", in_file("bom.yaml", 3)),
                "pin.b": Fact("pin.b", ">=1.0.0", in_file("bom.yaml", 4)),
                "pin.c": Fact("pin.c", None, in_file("bom.yaml", 5)),
            }
        )
    )
    derived = state.get("installed.a")
    assert derived is not None and derived.value == "1.2.3"
    assert derived.source == derived_from_pin(in_file("bom.yaml", 3))
    assert str(derived.source) == "derived: exact pin (bom.yaml:3)"
    assert "installed.b" not in state and "installed.c" not in state
