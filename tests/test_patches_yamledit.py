"""--write edits: only the pin values change (byte for byte), missing keys are added with only
the new lines differing, atomically, never a changed file."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from upgradeplan.errors import BadInput
from upgradeplan.patches.files import content_hash, write_all
from upgradeplan.patches.patchset import KeyEdit, ScalarEdit
from upgradeplan.patches.yamledit import (
    entry_paths_at,
    set_key,
    set_keys,
    set_scalars,
)

BOM = """\
# Customer BOM  -- keep this header
gitops:   {namespace: flux-giantswarm, interval: 30m}   # flow map, odd spacing

components:
    agent-platform-connectivity:     # four-space indent
        versionRange: '4.7.18'   # single-quoted, comment after
    kagent:
        versionRange: "0.11.0-gs.6"
    muster: {versionRange: 4.7.18, enabled: true}
    kagent-crds:
        versionRange: >-
          0.11.0-gs.6
"""


def test_only_the_values_change_in_their_quote_style() -> None:
    out = set_scalars(
        BOM,
        [
            ScalarEdit(6, "4.7.18", "4.7.19"),
            ScalarEdit(8, "0.11.0-gs.6", "0.11.0-gs.16"),
            ScalarEdit(9, "4.7.18", "4.8.0"),
        ],
    )
    expected = (
        BOM.replace("'4.7.18'", "'4.7.19'")
        .replace('"0.11.0-gs.6"', '"0.11.0-gs.16"')
        .replace("{versionRange: 4.7.18,", "{versionRange: 4.8.0,")
    )
    assert out == expected


def test_a_value_that_would_not_stay_a_string_gets_quoted() -> None:
    out = set_scalars("a:\n  v: 4.7.18\n", [ScalarEdit(2, "4.7.18", "4.8")])
    assert out == 'a:\n  v: "4.8"\n'


def test_image_tag_keeps_its_v_prefix() -> None:
    out = set_scalars("image:\n  tag: v0.29.0\n", [ScalarEdit(2, "0.29.0", "0.31.2")])
    assert out == "image:\n  tag: v0.31.2\n"


def test_a_line_without_the_expected_value_is_refused() -> None:
    with pytest.raises(BadInput, match=r"bom.yaml:6: no value '4.7.17'"):
        set_scalars(BOM, [ScalarEdit(6, "4.7.17", "4.7.19")], where="bom.yaml")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_write_replaces_and_keeps_permissions(tmp_path: Path) -> None:
    f = tmp_path / "bom.yaml"
    f.write_text(BOM)
    f.chmod(0o640)
    new = set_scalars(BOM, [ScalarEdit(6, "4.7.18", "4.7.19")])
    write_all([(f, new, content_hash(BOM))])
    assert f.read_text() == new
    assert (f.stat().st_mode & 0o777) == 0o640
    assert _leftovers(tmp_path) == ["bom.yaml"]


def test_write_refuses_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    f = tmp_path / "bom.yaml"
    f.write_text(BOM)
    read_hash = content_hash(BOM)
    f.write_text(BOM + "# someone else's edit\n")
    with pytest.raises(BadInput, match="changed since it was read"):
        write_all([(f, "x: 1\n", read_hash)])
    assert f.read_text().endswith("# someone else's edit\n")


@pytest.mark.parametrize("fail_in", ["replace", "fsync"])
def test_a_failing_write_leaves_the_original_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_in: str
) -> None:
    f = tmp_path / "bom.yaml"
    f.write_text(BOM)

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, fail_in, boom)
    with pytest.raises(BadInput, match=r"No space left on device.*nothing was changed"):
        write_all([(f, "components: {}\n", content_hash(BOM))])
    assert f.read_text() == BOM
    assert _leftovers(tmp_path) == ["bom.yaml"]
    assert os.path.exists(f)


DRIFT = ("components", "kagent", "driftDetection", "mode")

KEYS_BOM = """\
# Customer KEYS_BOM  -- keep this header
gitops:   {namespace: flux-giantswarm, interval: 30m}   # flow map, odd spacing

components:
    agent-platform-connectivity:     # four-space indent
        versionRange: '4.7.18'   # single-quoted, comment after
    kagent:
        versionRange: "0.11.0-gs.6"    # kagent and kagent-crds move together

    # the CRDs chart
    kagent-crds:
        versionRange: "0.11.0-gs.6"
"""


def _inserted(before: str, after: str) -> list[str]:
    """The lines ``after`` adds to ``before``; fails when anything else differs."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    added: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b).get_opcodes():
        assert tag in ("equal", "insert"), (tag, a[i1:i2], b[j1:j2])
        if tag == "insert":
            added += b[j1:j2]
    return added


def test_missing_keys_are_added_with_the_siblings_indentation() -> None:
    out = set_key(KEYS_BOM, KeyEdit(0, DRIFT, "enabled", 7))
    assert _inserted(KEYS_BOM, out) == [
        "        driftDetection:\n",
        "            mode: enabled\n",
    ]
    # right after the last entry of components.kagent, before the blank line and comment
    assert '0.11.0-gs.6"    # kagent and kagent-crds move together\n        drift' in out


def test_an_existing_mapping_gets_the_key_and_an_existing_value_is_spliced() -> None:
    text = (
        "components:\n"
        "  kagent:\n"
        "    driftDetection:\n"
        "      ignore:\n"
        "        - paths: ['/spec/replicas']\n"
        "  other: {}\n"
    )
    out = set_key(text, KeyEdit(0, DRIFT, "enabled"))
    assert _inserted(text, out) == ["      mode: enabled\n"]
    again = set_key(out, KeyEdit(0, DRIFT, "warn"))
    assert again == out.replace("mode: enabled", "mode: warn")
    quoted = "components:\n  kagent:\n    driftDetection: {mode: 'disabled'}\n"
    assert set_key(quoted, KeyEdit(0, DRIFT, "enabled")) == quoted.replace(
        "'disabled'", "'enabled'"
    )


def test_end_of_file_without_newline_crlf_and_later_documents() -> None:
    assert set_key("components:\n  kagent:\n    versionRange: x", KeyEdit(0, DRIFT, "on")) == (
        'components:\n  kagent:\n    versionRange: x\n    driftDetection:\n      mode: "on"\n'
    )
    crlf = "components:\r\n  kagent:\r\n    versionRange: x\r\n"
    assert set_key(crlf, KeyEdit(0, DRIFT, "enabled")).endswith(
        "versionRange: x\r\n    driftDetection:\r\n      mode: enabled\r\n"
    )
    two = "a: 1\n---\ncomponents:\n  kagent:\n    versionRange: x\n---\nb: 2\n"
    out = set_keys(two, [KeyEdit(1, DRIFT, "enabled")])
    assert _inserted(two, out) == ["    driftDetection:\n", "      mode: enabled\n"]
    assert out.endswith("      mode: enabled\n---\nb: 2\n")


def test_a_block_sequence_or_flow_value_last_in_the_mapping() -> None:
    text = (
        "components:\n  kagent:\n    dependsOn:\n      - kagent-crds\n"
        "    tags: [a,\n      b]\nx: 1\n"
    )
    out = set_key(text, KeyEdit(0, DRIFT, "enabled"))
    assert _inserted(text, out) == ["    driftDetection:\n", "      mode: enabled\n"]
    assert "b]\n    driftDetection:" in out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('components:\n  kagent: {versionRange: "0.11.0-gs.6"}\n', "flow mapping"),
        ("components:\n  kagent:\n    driftDetection: {ignore: []}\n", "flow mapping"),
        ("components:\n  kagent: enabled\n", "not a mapping"),
        ("components:\n  kagent:\n    driftDetection:\n      mode: |\n        x\n", "one-line"),
    ],
)
def test_refuses_what_it_cannot_edit_safely(text: str, words: str) -> None:
    with pytest.raises(BadInput) as info:
        set_key(text, KeyEdit(0, DRIFT, "enabled", 2), where="bom.yaml")
    message = info.value.one_line()
    assert words in message and "bom.yaml:2" in message
    assert "components.kagent.driftDetection.mode" in message


def test_entry_paths_name_every_key_on_the_line() -> None:
    text = "a: 1\n---\ncomponents:\n  kagent: {versionRange: x}\n"
    assert entry_paths_at(text, 4) == [
        (1, ("components", "kagent")),
        (1, ("components", "kagent", "versionRange")),
    ]
    assert entry_paths_at(text, 2) == []
