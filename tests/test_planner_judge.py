"""The verdict of ``check`` where the knowledge stops: above a product's ``reviewed_through``."""

from __future__ import annotations

from pathlib import Path

from support.cli import check

KB = str(Path(__file__).resolve().parent / "fixtures" / "kb-reviewed")


def test_a_move_within_the_reviewed_history_is_safe() -> None:
    code, res = check("--kb", KB, "--installed", "widget=1.0.0", "--to", "widget=1.1.0")
    assert (code, res["verdict"]) == (0, "safe")
    assert not any("reviewed through" in n for n in res.get("notes", []))


def test_a_move_above_reviewed_through_is_no_known_hazards_never_safe() -> None:
    code, res = check("--kb", KB, "--installed", "widget=1.1.0", "--to", "widget=1.2.0")
    assert (code, res["verdict"]) == (4, "undetermined")
    assert (
        "widget 1.2.0: no known hazards (knowledge reviewed through 1.1.0); not called safe"
        in (res["notes"])
    )


def test_an_installation_above_reviewed_through_is_not_safe_as_it_is() -> None:
    code, res = check("--kb", KB, "--installed", "widget=1.2.0")
    assert res["verdict"] != "safe" and code == 4
    assert any("no known hazards (knowledge reviewed through 1.1.0)" in n for n in res["notes"])
