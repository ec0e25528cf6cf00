"""Writes are all or nothing per step, survive a kill, and never replace what they must not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from upgradeplan.cli import cli
from upgradeplan.errors import BadInput
from upgradeplan.patches.files import content_hash, write_all


def _files(tmp_path: Path, n: int = 3, size: int = 10) -> list[Path]:
    out = []
    for i in range(n):
        path = tmp_path / f"f{i}.yaml"
        path.write_text(f"version: 'old-{i}'\n" * size, encoding="utf-8")
        out.append(path)
    return out


def _changes(paths: list[Path], size: int = 10) -> list[tuple[str | Path, str, str]]:
    return [
        (p, f"version: 'new-{i}'\n" * size, content_hash(p.read_bytes()))
        for i, p in enumerate(paths)
    ]


def test_a_read_only_file_stops_the_whole_step_before_any_write(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    before = [p.read_bytes() for p in paths]
    paths[2].chmod(0o444)  # refused by its mode bits, so also when running as root
    with pytest.raises(BadInput, match="read-only; not writing any file of this step"):
        write_all(_changes(paths))
    assert [p.read_bytes() for p in paths] == before


def test_a_symlinked_target_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (target,) = _files(real, 1)
    link = tmp_path / "bom.yaml"
    link.symlink_to(target)
    write_all(_changes([link]))
    assert link.is_symlink() and target.read_text().startswith("version: 'new-0'")


def test_a_failed_move_puts_back_the_files_already_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _files(tmp_path)
    before = [p.read_bytes() for p in paths]
    real_replace = os.replace
    calls = []

    def flaky(src: str, dst: object) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(OSError):
        write_all(_changes(paths))
    monkeypatch.undo()
    assert [p.read_bytes() for p in paths] == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f0.yaml", "f1.yaml", "f2.yaml"]


def test_a_changed_file_is_refused_by_content(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    changes = _changes(paths)
    paths[1].write_text(paths[1].read_text() + "# an edit meanwhile\n", encoding="utf-8")
    with pytest.raises(BadInput, match="changed since it was read"):
        write_all(changes)
    assert paths[0].read_text().startswith("version: 'old-0'")


CHILD = """
import sys
from pathlib import Path
from upgradeplan.patches.files import content_hash, write_all
paths = [Path(p) for p in sys.argv[1:]]
print("ready", flush=True)
write_all([(p, f"version: 'new-{i}'\\n" * 200000, content_hash(p.read_bytes()))
           for i, p in enumerate(paths)])
"""


def test_a_kill_at_any_moment_leaves_each_file_old_or_fully_new(tmp_path: Path) -> None:
    size = 200_000  # lines: a few MB per file, so a write takes long enough to be hit
    paths = _files(tmp_path, 3, size)
    old = [p.read_bytes() for p in paths]
    new = [(f"version: 'new-{i}'\n" * size).encode() for i in range(3)]
    # how long a whole write takes here, to spread the kills over it
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", CHILD, *map(str, paths)], check=True, timeout=60)
    whole = time.monotonic() - started
    outcomes = set()
    for n in range(50):
        for p, data in zip(paths, old, strict=True):
            p.write_bytes(data)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, *map(str, paths)], stdout=subprocess.PIPE
        )
        assert child.stdout is not None
        child.stdout.readline()  # imported and about to write
        time.sleep(whole * 0.6 * n / 50)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        for i, p in enumerate(paths):
            data = p.read_bytes()
            assert data in (old[i], new[i]), f"kill {n}: {p.name} is neither old nor new"
            outcomes.add((i, data == new[i]))
        stray = [q.name for q in tmp_path.iterdir() if q.name.endswith(".tmp")]
        for name in stray:  # a kill may leave a temporary file; it is never a target
            (tmp_path / name).unlink()
    assert len(outcomes) >= 4  # the kills landed before, between and after the moves


def test_snapshot_file_writes_only_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    from upgradeplan.commands.scan import write_atomically

    with pytest.raises(BadInput, match="not a regular file"):
        write_atomically(str(fifo), "x")
    with pytest.raises(BadInput, match="not a regular file"):
        write_atomically(str(tmp_path), "x")
    real = tmp_path / "real.yaml"
    real.write_text("old\n", encoding="utf-8")
    link = tmp_path / "snap.yaml"
    link.symlink_to(real)
    write_atomically(str(link), "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"
    result = CliRunner().invoke(
        cli, ["snapshot", "--kubeconfig", str(tmp_path / "none"), "-f", str(fifo)]
    )
    assert result.exit_code == 2


def test_patch_gitops_moves_a_delegate_pinned_by_its_image_tag(tmp_path: Path) -> None:
    fixture = Path(__file__).parent / "fixtures" / "gitops" / "s7" / "delegate.yaml"
    repo = tmp_path / "s7"
    repo.mkdir()
    original = fixture.read_text(encoding="utf-8").replace("delegate:0.31.2", "delegate:0.29.0")
    (repo / "delegate.yaml").write_text(original, encoding="utf-8")
    args = ["patch", "--gitops", str(repo), "--to", "harness-delegate=0.31.2"]
    args += ["--installed", "harness-cd=24.12.0"]
    shown = CliRunner().invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    assert "+          image: harness/delegate:0.31.2" in shown.stdout
    written = CliRunner().invoke(cli, [*args, "--write"])
    assert written.exit_code == 0, written.output
    after = (repo / "delegate.yaml").read_text(encoding="utf-8")
    assert after == original.replace("delegate:0.29.0", "delegate:0.31.2")  # nothing else moved
    # the fixture as it is (already on 0.31.2) has no pin to move and exits 0 too
    as_is = CliRunner().invoke(cli, ["patch", "--gitops", str(fixture.parent), *args[3:]])
    assert as_is.exit_code == 0, as_is.output
