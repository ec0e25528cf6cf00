"""Knowledge roots are named as pathlib names them, without importing pathlib."""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from upgradeplan.kb import roots

pytestmark = pytest.mark.skipif(os.sep != "/", reason="POSIX path names")


@given(st.lists(st.sampled_from(["/", "//", ".", "..", "a", "b.c", ""]), min_size=1, max_size=7))
def test_a_root_is_named_as_pathlib_names_it(parts: list[str]) -> None:
    path = "".join(parts)
    if path:
        assert roots._pathlib_name(path) == str(PurePosixPath(path))


def test_naming_a_knowledge_directory_does_not_import_pathlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pathlib (with urllib.parse and ipaddress) is not imported on a cold knowledge load."""
    monkeypatch.setitem(sys.modules, "pathlib", None)  # importing it now raises ImportError
    assert roots.root_dirs([f"{tmp_path}//./"], bundled=True)[1:] == [str(tmp_path)]
