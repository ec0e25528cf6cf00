"""Writes are all or nothing per step, survive a kill, and never replace what they must not."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import fixture_path

from upgradeplan.cli import cli
from upgradeplan.errors import BadInput
from upgradeplan.patches import files
from upgradeplan.patches.files import content_hash, recover, write_all


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
    with pytest.raises(BadInput, match="No space left on device; nothing was changed"):
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
    assert paths[1].read_text().endswith("# an edit meanwhile\n")
    assert paths[0].read_text().startswith("version: 'old-0'")


CHILD = """
import os, sys
os.environ["XDG_STATE_HOME"] = sys.argv.pop()
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
    state = os.environ["XDG_STATE_HOME"]
    subprocess.run([sys.executable, "-c", CHILD, *map(str, paths), state], check=True, timeout=60)
    whole = time.monotonic() - started
    seen: set[bool] = set()  # after the next run: the step all new (True) or all old
    for n in range(60):  # until kills landed both before and after the commit
        for p, data in zip(paths, old, strict=True):
            p.write_bytes(data)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, *map(str, paths), os.environ["XDG_STATE_HOME"]],
            stdout=subprocess.PIPE,
        )
        assert child.stdout is not None
        child.stdout.readline()  # imported and about to write
        time.sleep(whole * 1.2 * ((n * 0.618034) % 1))  # spread over the whole write
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        for i, p in enumerate(paths):
            data = p.read_bytes()
            assert data in (old[i], new[i]), f"kill {n}: {p.name} is neither old nor new"
        recover()  # the next run: finishes or undoes what the kill left
        after = [p.read_bytes() for p in paths]
        assert after in (old, new), f"kill {n}: the step is half written"
        assert sorted(q.name for q in tmp_path.iterdir()) == ["f0.yaml", "f1.yaml", "f2.yaml"]
        seen.add(after == new)
        if n >= 10 and len(seen) == 2:
            break
    assert seen == {False, True}  # the kills landed before and after the commit


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


# ------------------------------------------------------------- patch --write, call by call

HARNESS_FACTS = [
    "--fact", "object.Harness.kagent.kagent.exists=true",
    "--fact", "object.Harness.kagent.kagent.annotations=",
]  # fmt: skip
STEP_ONE = ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1"]
TARGETS = ("bom.yaml", "agent-platform/ocirepository.yaml")


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(fixture_path("gitops", "s1"), repo)
    return repo


def _contents(repo: Path) -> tuple[bytes, ...]:
    return tuple((repo / name).read_bytes() for name in TARGETS)


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _count_calls(repo: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(files, "after_call", calls.append)
    result = CliRunner().invoke(cli, [*STEP_ONE, "--write"])
    monkeypatch.setattr(files, "after_call", None)
    assert result.exit_code == 0, result.output
    return calls


def _killed_after(n: int, state: Path) -> int:
    """Run `patch --write` in a forked child that dies (os._exit, no clean-up: as a SIGKILL)
    right after its n-th filesystem call; its exit status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        count = [0]

        def die(name: str) -> None:
            count[0] += 1
            if count[0] == n:
                os._exit(137)

        os.environ["XDG_STATE_HOME"] = str(state)
        files.after_call = die
        try:
            CliRunner().invoke(cli, [*STEP_ONE, "--write"])
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_kill_after_every_filesystem_call_of_patch_write_is_all_old_or_all_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.chdir(repo)
    old, tree = _contents(repo), _listing(repo)
    calls = _count_calls(repo, monkeypatch)
    new = _contents(repo)
    assert new != old and all(a != b for a, b in zip(new, old, strict=True))
    assert "replace" in calls and len(calls) >= 10
    seen = set()
    for n in range(1, len(calls) + 1):
        for name, data in zip(TARGETS, old, strict=True):
            (repo / name).write_bytes(data)
        assert _killed_after(n, state) == 137, f"call {n} ({calls[n - 1]}) was not reached"
        nxt = CliRunner().invoke(cli, STEP_ONE)  # the next run, showing the patch only
        assert nxt.exit_code == 0, nxt.output
        after = _contents(repo)
        assert after in (old, new), f"killed after call {n} ({calls[n - 1]}): half written"
        seen.add(after == new)
        assert _listing(repo) == tree, f"killed after call {n}: a stray file"
        assert list(state.rglob("*.journal")) == []
    assert seen == {False, True}  # kills before the commit undo, kills after it finish


def test_a_file_changed_between_read_and_rename_is_refused_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    old, tree = _contents(repo), _listing(repo)
    edited = old[0] + b"# edited meanwhile\n"
    staged = []

    def edit_once_staged(name: str) -> None:  # after the last temporary file's chmod
        staged.append(name)
        if name == "chmod" and staged.count("chmod") == len(TARGETS):
            (repo / TARGETS[0]).write_bytes(edited)

    monkeypatch.setattr(files, "after_call", edit_once_staged)
    result = CliRunner().invoke(cli, [*STEP_ONE, "--write"])
    assert result.exit_code == 2, result.output
    assert "bom.yaml: changed since it was read; not writing any file" in result.stderr
    assert "Traceback" not in result.output
    assert _contents(repo) == (edited, old[1])
    assert _listing(repo) == tree
    assert "replace" not in staged


def test_a_file_touched_but_not_changed_is_refused_by_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    old = _contents(repo)

    def touch(name: str) -> None:
        if name == "chmod":
            os.utime(repo / TARGETS[1], ns=(1, 1))

    monkeypatch.setattr(files, "after_call", touch)
    result = CliRunner().invoke(cli, [*STEP_ONE, "--write"])
    assert result.exit_code == 2, result.output
    assert "ocirepository.yaml: changed since it was read" in result.stderr
    assert _contents(repo) == old


@pytest.mark.parametrize("errno_", [errno.ENOSPC, errno.EDQUOT, errno.EIO])
def test_an_os_error_while_writing_is_exit_2_and_nothing_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, errno_: int
) -> None:
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    old, tree = _contents(repo), _listing(repo)
    writes = []

    def full(name: str) -> None:
        if name == "write":
            writes.append(name)
            if len(writes) == 3:  # the journal's line, the first file, then the second
                raise OSError(errno_, os.strerror(errno_))

    monkeypatch.setattr(files, "after_call", full)
    for debug in ([], ["--debug"]):
        result = CliRunner().invoke(cli, [*debug, *STEP_ONE, "--write"])
        writes.clear()
        assert result.exit_code == 2, result.output
        line = result.stderr.strip().splitlines()[-1]
        assert f"{os.strerror(errno_)}; nothing was changed" in line
        assert ("Traceback (most recent call last)" in result.stderr) == bool(debug)
        assert _contents(repo) == old and _listing(repo) == tree


def test_a_full_disk_at_the_rename_puts_back_the_first_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    old, tree = _contents(repo), _listing(repo)
    replaced = []

    def second_rename_fails(name: str) -> None:
        if name == "replace":
            replaced.append(name)
            if len(replaced) == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "after_call", second_rename_fails)
    result = CliRunner().invoke(cli, [*STEP_ONE, "--write"])
    assert result.exit_code == 2, result.output
    assert "nothing was changed" in result.stderr
    assert _contents(repo) == old and _listing(repo) == tree


def test_the_journal_lives_in_the_state_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", "/srv/state")
    assert files.journal_dir() == Path("/srv/state/upgradeplan/journal")
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # not absolute: ignored
    monkeypatch.setenv("HOME", "/home/u")
    assert files.journal_dir() == Path("/home/u/.local/state/upgradeplan/journal")
    monkeypatch.delenv("HOME")
    monkeypatch.setattr(os.path, "expanduser", lambda p: p)  # no home directory at all
    assert files.journal_dir().name == "journal"
    assert files.journal_dir().parent.name.startswith("upgradeplan-")
    assert files.journal_dir().is_absolute()
