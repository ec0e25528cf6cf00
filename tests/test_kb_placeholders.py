"""Placeholders in parsed knowledge: strings only, never comments; from the marker to the end
of its line."""

from __future__ import annotations

from upgradeplan.kb import placeholders


def test_the_placeholder_is_the_marker_to_the_end_of_its_line() -> None:
    text = "Moves the hook.\nTODO: what the operator sees.\nMore."
    assert placeholders.first_in(text) == "TODO: what the operator sees."
    assert placeholders.first_in("Nothing to do (a todo list is not one).") is None


def test_every_placeholder_with_its_key_path() -> None:
    data = {"title": "TODO: one line", "notes": [{"text": "fine"}, {"text": "x TODO: y"}], "n": 1}
    assert list(placeholders.in_data(data)) == [
        (("title",), "TODO: one line"),
        (("notes", 1, "text"), "TODO: y"),
    ]
