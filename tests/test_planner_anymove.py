"""A check of the installation as it is tells the hazards judged on every move of their product
whose condition already holds (upgradeplan/planner/anymove.py)."""

from __future__ import annotations

import pytest

from upgradeplan import api
from upgradeplan.model import KnowledgeBase


@pytest.mark.parametrize(
    ("value", "told"),
    [("true", "applies"), ("false", "applies"), (None, None)],
)
def test_an_as_is_check_tells_a_value_the_next_roll_refuses(
    kb: KnowledgeBase, value: str | None, told: str | None
) -> None:
    """A support answer: values that set a key a release refuses were silent on an as-is
    check. klaus-gateway-crd-keys-refused is judged on every move of the meta chart (no
    release is named), so a set key is now told on the installation as it is too; with the
    values unknown the check is as before."""
    stated = (f"values.agent-platform.klausGateway.crd.install={value}",) if value else ()
    state = api.gather(kb, api.Inputs(installed=("agent-platform=4.15.5",), facts=stated))[0].state
    assert state is not None
    as_is = api.check(kb, state)
    found = {f.hazard: f for f in as_is.findings}
    if told is None:
        assert "klaus-gateway-crd-keys-refused" not in found
        return
    finding = found["klaus-gateway-crd-keys-refused"]
    assert finding.status == told
    assert finding.reason.startswith("applies as it is: judged on every move of agent-platform")
    # a notice: the verdict and the exit code stay what the other findings make them
    bare = api.gather(kb, api.Inputs(installed=("agent-platform=4.15.5",)))[0].state
    assert bare is not None
    plain = api.check(kb, bare)
    assert (as_is.verdict, as_is.exit_code) == (plain.verdict, plain.exit_code)
