"""--write edits: only the pin values change (byte for byte), atomically, never a changed file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from upgradeplan.errors import BadInput
from upgradeplan.patches.files import content_hash, write_all
from upgradeplan.patches.yamledit import ScalarEdit, set_scalars

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
    with pytest.raises(OSError):
        write_all([(f, "components: {}\n", content_hash(BOM))])
    assert f.read_text() == BOM
    assert _leftovers(tmp_path) == ["bom.yaml"]
    assert os.path.exists(f)
