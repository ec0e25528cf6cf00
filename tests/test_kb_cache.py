"""The knowledge cache: same knowledge as a fresh load, keyed by content, never trusted."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from upgradeplan import usercache
from upgradeplan.kb import cache, loader

MINI = Path(__file__).resolve().parent / "fixtures" / "kb-mini"


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("UPGRADEPLAN_NO_CACHE", raising=False)
    return tmp_path / "xdg" / "upgradeplan"


def _entries(where: Path) -> list[Path]:
    return sorted(where.glob("kb-*.pickle"))


def test_a_cached_load_is_the_fresh_load(where: Path) -> None:
    fresh = loader.load_with_problems([MINI], bundled=False)
    first = cache.load_with_problems([MINI], bundled=False)  # cold: builds and writes
    assert len(_entries(where)) == 1
    second = cache.load_with_problems([MINI], bundled=False)  # warm: read back
    assert first == fresh and second == fresh
    assert second[0] is not first[0]
    assert cache.load([MINI], bundled=False) == loader.load([MINI], bundled=False)


def test_the_entry_is_private_to_the_user(where: Path) -> None:
    cache.load()
    assert where.stat().st_mode & 0o777 == 0o700
    (entry,) = _entries(where)
    assert entry.stat().st_mode & 0o777 == 0o600
    assert not list(where.glob(".kb-*.tmp"))  # the temporary file was renamed into place


def test_an_edited_knowledge_file_is_never_served_stale(where: Path, tmp_path: Path) -> None:
    kb_dir = tmp_path / "kb"
    shutil.copytree(MINI, kb_dir)
    before = cache.load([kb_dir], bundled=False)
    release = kb_dir / "releases" / "alpha" / "1.0.0.yaml"
    text = release.read_text()
    assert "the first release" in text
    release.write_text(text.replace("the first release", "the very first release"))
    after = cache.load([kb_dir], bundled=False)
    assert after != before
    assert after == loader.load([kb_dir], bundled=False)
    assert len(_entries(where)) == 2


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "other-object"])
def test_a_corrupted_entry_is_detected_ignored_and_rewritten(where: Path, damage: str) -> None:
    good = cache.load_with_problems([MINI], bundled=False)
    (entry,) = _entries(where)
    blob = entry.read_bytes()
    if damage == "flip":
        bad = blob[:-100] + bytes([blob[-100] ^ 0xFF]) + blob[-99:]
    elif damage == "truncate":
        bad = blob[: len(blob) // 2]
    elif damage == "garbage":
        bad = b"\x00" * 64
    else:  # a well-formed entry that does not hold knowledge
        payload = pickle.dumps({"not": "knowledge"})
        bad = cache.MAGIC + cache.digest(payload) + payload
    entry.write_bytes(bad)
    key = entry.name.removeprefix("kb-").removesuffix(".pickle")
    assert cache.read(where, key) is None
    assert cache.load_with_problems([MINI], bundled=False) == good
    assert entry.read_bytes() == blob  # rewritten with the good entry
    assert cache.read(where, key) == good


def test_an_entry_others_can_write_is_not_read(where: Path) -> None:
    cache.load([MINI], bundled=False)
    (entry,) = _entries(where)
    key = entry.name.removeprefix("kb-").removesuffix(".pickle")
    entry.chmod(0o666)
    assert cache.read(where, key) is None
    entry.chmod(0o600)
    where.chmod(0o777)
    assert cache.read(where, key) is None
    # still loads, from the YAML
    assert cache.load([MINI], bundled=False) == loader.load([MINI], bundled=False)


def test_no_cache_when_turned_off(where: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UPGRADEPLAN_NO_CACHE", "1")
    assert usercache.cache_dir() is None
    assert cache.load([MINI], bundled=False) == loader.load([MINI], bundled=False)
    assert not where.exists()


def test_the_default_directory_is_under_the_home_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("UPGRADEPLAN_NO_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert usercache.cache_dir() == str(tmp_path / ".cache" / "upgradeplan")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # not absolute: ignored, as XDG says
    assert usercache.cache_dir() == str(tmp_path / ".cache" / "upgradeplan")


def test_a_knowledge_error_is_raised_and_not_cached(where: Path, tmp_path: Path) -> None:
    kb_dir = tmp_path / "kb"
    shutil.copytree(MINI, kb_dir)
    (kb_dir / "hazards" / "broken.yaml").write_text("schema_version: 1\nkind: hazard\nid: [\n")
    with pytest.raises(Exception) as first:
        loader.load([kb_dir], bundled=False)
    with pytest.raises(type(first.value)):
        cache.load([kb_dir], bundled=False)
    assert _entries(where) == []


def test_only_the_newest_entries_are_kept(where: Path, tmp_path: Path) -> None:
    kb_dir = tmp_path / "kb"
    shutil.copytree(MINI, kb_dir)
    product = kb_dir / "products" / "alpha.yaml"
    text = product.read_text()
    for i in range(cache.KEEP + 3):
        product.write_text(f"{text}# edit {i}\n")  # a comment: another key, same knowledge
        cache.load([kb_dir], bundled=False)
    assert len(_entries(where)) == cache.KEEP


def test_commands_load_through_the_cache(where: Path) -> None:
    from upgradeplan import api

    kb = api.load_kb()
    assert len(_entries(where)) == 1
    assert api.load_kb() == kb == loader.load()


def test_a_cold_load_reads_each_file_once_and_as_the_loader_does(
    where: Path, tmp_path: Path
) -> None:
    kb_dir = tmp_path / "kb"
    shutil.copytree(MINI, kb_dir)
    product = kb_dir / "products" / "alpha.yaml"
    product.write_bytes(product.read_bytes().replace(b"\n", b"\r\n"))  # CRLF, as from Windows
    (kb_dir / "hazards" / "latin1.yaml").write_bytes(b"title: caf\xe9\n")  # not UTF-8
    assert cache.load_with_problems([kb_dir], bundled=False) == loader.load_with_problems(
        [kb_dir], bundled=False
    )


def test_the_console_script_writes_a_new_entry_after_the_answer(where: Path) -> None:
    """Deferred (usercache.defer_writes): nothing written while the command runs, all after."""
    import os
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from upgradeplan import usercache\n"
        "from upgradeplan.kb import cache\n"
        "usercache.defer_writes()\n"
        f"where = Path({str(where)!r})\n"
        f"kb = cache.load([{str(MINI)!r}], bundled=False)\n"
        "print(len(list(where.glob('kb-*.pickle'))))\n"
        "usercache.run_later()\n"
        "print(len(list(where.glob('kb-*.pickle'))))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(where.parent)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert proc.stdout.split() == ["0", "1"]
    assert cache.load_with_problems([MINI], bundled=False) == loader.load_with_problems(
        [MINI], bundled=False
    )
    # and the console script itself: a cold check leaves the entry behind, its output complete
    args = ["check", "--to", "agent-platform=4.8.0", "--installed", "agent-platform=4.7.18"]
    done = subprocess.run(
        [sys.executable, "-m", "upgradeplan", *args], capture_output=True, text=True, env=env
    )
    assert "Recommended path" in done.stdout and done.returncode in (3, 4)
    assert len(_entries(where)) == 2
