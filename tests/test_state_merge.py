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


def test_a_states_own_facts_under_its_unknown_prefix_never_drop_it() -> None:
    # one input read some values of a release and could not read the rest (a Secret): the
    # values it read do not make the rest known, merged alone or first
    partial = _state(
        "files", unreadable={"values.x": "Secret x-values not read"}, values_x_replicas="2"
    )
    assert merge(partial).unreadable == {"values.x": "Secret x-values not read"}
    assert merge(partial, _state("snap")).unreadable == {"values.x": "Secret x-values not read"}
    assert merge(partial).value("values.x.replicas") == "2"
    # a later input that supplies a fact under the prefix still settles it
    assert merge(partial, _state("stated", values_x_image="a")).unreadable == {}


def test_a_record_of_a_state_with_its_own_facts_under_it_is_kept() -> None:
    from upgradeplan.unreadable import Unreadable

    rec = Unreadable("Secret x-values", "secret data not read", kind="file", keys=("values.x",))
    partial = State(
        facts={"values.x.replicas": Fact("values.x.replicas", "2", text("files"))},
        name="files",
        unreadable={"values.x": str(rec)},
        unread=(rec,),
    )
    assert merge(partial).unread == (rec,)
