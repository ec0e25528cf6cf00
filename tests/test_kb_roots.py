"""Knowledge roots: bundled first, each directory once, named as pathlib names it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from upgradeplan.errors import BadInput
from upgradeplan.kb import roots

pytestmark = pytest.mark.skipif(os.sep != "/", reason="POSIX path names")


def test_a_root_is_named_without_repeated_slashes_or_dot_parts(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    named = roots.root_dirs([f"{tmp_path}//./kb/", f"{tmp_path}/kb/../kb"], bundled=False)
    assert named == [f"{tmp_path}/kb"]  # the second is the same directory: kept once
    assert roots.root_dirs([f"{tmp_path}/kb/../kb"], bundled=False) == [f"{tmp_path}/kb/../kb"]


def test_the_bundled_root_comes_first(tmp_path: Path) -> None:
    assert roots.root_dirs([tmp_path], bundled=True) == [roots.bundled_path(), str(tmp_path)]


def test_a_missing_knowledge_directory_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        roots.root_dirs([tmp_path / "nope"], bundled=True)


def test_the_bundled_root_alone_does_not_import_pathlib(monkeypatch: pytest.MonkeyPatch) -> None:
    """pathlib (with urllib.parse and ipaddress) waits for a command given --kb."""
    monkeypatch.setitem(sys.modules, "pathlib", None)  # importing it now raises ImportError
    assert roots.root_dirs([], bundled=True) == [roots.bundled_path()]
