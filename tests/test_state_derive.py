"""Facts derived from others: an exact pin gives the installed version, a range nothing."""

from __future__ import annotations

from upgradeplan.model import Fact, KnowledgeBase, State
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


def _running(version: str, unreadable: dict[str, str]) -> State:
    """An installation running agent-platform ``version`` that pins none of its components."""
    running = Fact("installed.agent-platform", version, in_file("release.yaml", 2))
    return State(facts={running.key: running}, unreadable=unreadable)


def test_a_release_publishes_the_pin_of_a_component_nobody_pins(kb: KnowledgeBase) -> None:
    rel = next(r for r in kb.releases["agent-platform"] if "kagent" in r.components)
    state = derive(_running(rel.version, {}), kb)
    assert state.value("pin.kagent") == rel.components["kagent"]


def test_a_pin_list_that_could_not_be_read_never_gets_a_published_pin(kb: KnowledgeBase) -> None:
    # the whole list of pins (a forbidden source list: the prefix ``pin``) or the one pin
    # could not be read: what the release would publish is no reading of it, it stays unknown
    rel = next(r for r in kb.releases["agent-platform"] if "kagent" in r.components)
    for prefix in ("pin", "pin.kagent"):
        state = derive(_running(rel.version, {prefix: "ocirepositories: 403 Forbidden"}), kb)
        assert "pin.kagent" not in state.facts, prefix
        assert state.unreadable == {prefix: "ocirepositories: 403 Forbidden"}
    # a prefix that only looks alike covers nothing
    state = derive(_running(rel.version, {"pin.kagent-crds": "403"}), kb)
    assert state.value("pin.kagent") == rel.components["kagent"]
