"""Facts stated with --installed, --pin and --fact (docs/state-format.md)."""

from __future__ import annotations

import pytest
from support.builders import bare_kb

from upgradeplan import errors
from upgradeplan.readers.stated import from_flags
from upgradeplan.state.derive import derive
from upgradeplan.state.merge import merge

KB = bare_kb("agent-platform", "agent-platform-connectivity", "kubernetes", "harness-delegate")


def test_installed_and_pin_become_facts_with_their_flag_as_source() -> None:
    state = from_flags(
        KB, ["agent-platform=4.7.18"], ["agent-platform-connectivity=>=4.7.0 <5.0.0"], []
    )
    fact = state.get("installed.agent-platform")
    assert fact is not None and fact.value == "4.7.18" and str(fact.source) == "flag --installed"
    pin = state.get("pin.agent-platform-connectivity")
    assert pin is not None and pin.value == ">=4.7.0 <5.0.0" and str(pin.source) == "flag --pin"


def test_empty_pin_states_known_absent() -> None:
    state = from_flags(KB, [], ["agent-platform-connectivity="], [])
    pin = state.get("pin.agent-platform-connectivity")
    assert pin is not None and pin.value is None


def test_fact_values_are_typed_by_key() -> None:
    state = from_flags(
        KB,
        [],
        [],
        [
            "object.Harness.kagent.kagent.exists=true",
            "object.Harness.kagent.kagent.annotations=helm.sh/resource-policy=keep,a=b",
            "workload.harness-delegate.args=--instance-metadata-url=https://169.254.169.254",
            "helmrelease.kagent.drift-detection=disabled",
            "helmrelease.kagent.crds=install=Create,upgrade=CreateReplace",
            'workload.harness-delegate.env-secrets=["x,y", "z"]',
            "secret.ns.name.type=null",
        ],
    )
    assert state.value("object.Harness.kagent.kagent.exists") is True
    assert state.value("object.Harness.kagent.kagent.annotations") == {
        "helm.sh/resource-policy": "keep",
        "a": "b",
    }
    assert state.value("workload.harness-delegate.args") == [
        "--instance-metadata-url=https://169.254.169.254"
    ]
    assert state.value("helmrelease.kagent.drift-detection") == "disabled"
    assert state.value("helmrelease.kagent.crds") == {
        "install": "Create",
        "upgrade": "CreateReplace",
    }
    assert state.value("workload.harness-delegate.env-secrets") == ["x,y", "z"]
    assert "secret.ns.name.type" in state and state.value("secret.ns.name.type") is None
    assert all(str(f.source) == "flag --fact" for f in state)


def test_empty_map_is_an_empty_map_not_unknown() -> None:
    state = from_flags(KB, [], [], ["object.Harness.kagent.kagent.annotations="])
    assert state.value("object.Harness.kagent.kagent.annotations") == {}


def test_bare_product_fact_is_installed_version() -> None:
    state = from_flags(KB, [], [], ["kubernetes=1.27.3"])
    assert state.value("installed.kubernetes") == "1.27.3"


@pytest.mark.parametrize(
    ("installed", "pins", "facts", "quoted", "flag"),
    [
        (["agent-platform=4.7.x.1"], [], [], "4.7.x.1", "--installed"),
        ([], ["agent-platform-connectivity=>>4.7"], [], ">>4.7", "--pin"),
        ([], [], ["kubernetes=1.2.3.4"], "1.2.3.4", "--fact installed.kubernetes"),
        ([], [], ["pin.agent-platform=~>>1"], "~>>1", "--fact pin.agent-platform"),
    ],
)
def test_invalid_versions_and_constraints_quote_the_input_and_name_the_flag(
    installed: list[str], pins: list[str], facts: list[str], quoted: str, flag: str
) -> None:
    with pytest.raises((errors.InvalidVersion, errors.InvalidConstraint)) as info:
        from_flags(KB, installed, pins, facts)
    message = str(info.value)
    assert repr(quoted) in message
    assert message.startswith(flag)


def test_unknown_product_suggests_the_nearest() -> None:
    with pytest.raises(errors.UnknownName) as info:
        from_flags(KB, ["agent-platfrom=4.7.18"], [], [])
    assert "agent-platform" in info.value.suggestions
    assert "'agent-platfrom'" in str(info.value)


@pytest.mark.parametrize(
    ("installed", "facts", "flag"),
    [
        (["agent-platform"], [], "--installed"),
        (["=4.7.18"], [], "--installed"),
        ([], ["helmrelease.kagent.drift-detection"], "--fact"),
        ([], ["object.Harness.kagent.kagent.exists=maybe"], "--fact"),
        ([], ["object.Harness.kagent.kagent.labels=novalue"], "--fact"),
        ([], ["nosuchprefix.x=1"], "--fact"),
    ],
)
def test_malformed_flags_are_bad_input_naming_the_flag(
    installed: list[str], facts: list[str], flag: str
) -> None:
    with pytest.raises(errors.BadInput) as info:
        from_flags(KB, installed, [], facts)
    assert flag in str(info.value)


def test_later_flags_win_and_merge_keeps_the_later_state() -> None:
    a = from_flags(KB, ["agent-platform=4.7.18"], [], [])
    b = from_flags(KB, ["agent-platform=4.7.19"], [], [])
    assert merge(a, b).value("installed.agent-platform") == "4.7.19"
    assert merge(b, a).value("installed.agent-platform") == "4.7.18"


def test_exact_pin_derives_installed_version_a_range_does_not() -> None:
    state = derive(
        from_flags(
            KB,
            [],
            ["agent-platform-connectivity=4.7.18", "agent-platform=>=4.7.0 <5.0.0"],
            [],
        )
    )
    fact = state.get("installed.agent-platform-connectivity")
    assert fact is not None and fact.value == "4.7.18"
    assert str(fact.source) == "derived: exact pin (flag --pin)"
    assert "installed.agent-platform" not in state


def test_stated_installed_wins_over_the_derived_one() -> None:
    state = derive(
        from_flags(
            KB, ["agent-platform-connectivity=4.7.19"], ["agent-platform-connectivity=4.7.18"], []
        )
    )
    assert state.value("installed.agent-platform-connectivity") == "4.7.19"
