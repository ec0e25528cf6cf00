"""Facts derived from others: an exact pin gives the installed version, a range nothing."""

from __future__ import annotations

from upgradeplan.model import Fact, State
from upgradeplan.provenance import derived_from_pin, in_file
from upgradeplan.state.derive import derive


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
