"""A PR blocked only because a held pin stays behind is headlined with that fix."""

from __future__ import annotations

from support.cli import run_stdout

MOVE = [
    "check", "-o", "markdown",
    "--installed", "agent-platform=4.7.19", "--pin", "agent-platform=4.7.19",
    "--pin", "agent-platform-connectivity=4.7.18", "--fact", "kubernetes=1.35.0",
    "--to", "agent-platform=4.8.1",
]  # fmt: skip


def test_the_blocked_headline_names_the_pin_to_move_too() -> None:
    code, out = run_stdout(*MOVE, "--hold", "agent-platform-connectivity")
    assert code == 3
    head = out.splitlines()[1]
    assert head.startswith("### upgradeplan check: **blocked** (exit 3): ")
    assert "move the pin of `agent-platform-connectivity` in this same change" in head


def test_without_a_held_pin_there_is_no_such_headline() -> None:
    _, out = run_stdout(*MOVE)
    assert "in this same change" not in out.splitlines()[1]
