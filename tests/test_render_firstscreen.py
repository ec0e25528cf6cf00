"""The first screen of check and plan: findings by name, why each stop, one command."""

from __future__ import annotations

from test_render_text import CHECK, PLAN

from upgradeplan.api import PlanResult
from upgradeplan.render import firstscreen


def test_check_first_screen_names_findings_gives_stop_reasons_and_one_command() -> None:
    out = firstscreen.check_screen(
        [CHECK], command=["upgradeplan", "check", "--to", "platform=4.8.0"]
    )
    lines = out.splitlines()
    assert lines[0] == "check platform 4.7.18 → 4.8.0 [prod]: blocked"
    assert "observed " not in out and "if ignored" not in out and "not in scope" not in out
    assert any("applies" in line and "handover-skipped" in line for line in lines)
    # the stop 4.7.19 says in one line why the path stops there
    assert "    4.7.19  stop: a jump past it hits handover-skipped (applies)" in lines
    assert lines[-1].startswith("  $ upgradeplan check --to platform=4.8.0 --fact ")
    assert lines[-1].endswith("=VALUE")


def test_first_screen_wraps_to_the_width_and_cuts_may_apply_titles() -> None:
    for width in (60, 100):
        out = firstscreen.check_screen([CHECK], width=width)
        assert all(len(line) <= width for line in out.splitlines() if "$ " not in line), width


def test_first_screen_colours_verdicts_only_when_asked() -> None:
    plain = firstscreen.plan_screen([PlanResult("prod", None, PLAN)])
    assert "\x1b[" not in plain
    coloured = firstscreen.plan_screen([PlanResult("prod", None, PLAN)], color=True)
    assert "\x1b[" in coloured
    assert _strip_ansi(coloured) == plain


def _strip_ansi(s: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", s)
