"""Completion where people press Tab: real bash, in a terminal, with the script ``upgradeplan
completion bash`` prints and COMP_WORDBREAKS as bash ships it; and ``kubectl upgradeplan``
through kubectl's own completion and ``kubectl_complete-upgradeplan``.

Each test starts ``bash -i`` on a pseudo-terminal, types a line and a Tab, and reads what
readline shows.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from upgradeplan import __main__ as console

BIN = Path(sys.executable).parent  # the environment's console scripts
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")


def _read(fd: int, until: str, seconds: float, quiet: float = 4.0) -> str:
    """What ``fd`` gives until ``until`` appears, or (without one) until it has been quiet
    for ``quiet`` seconds after the first output; at most ``seconds``."""
    out = b""
    end = time.monotonic() + seconds
    last = None
    while time.monotonic() < end:
        if not until and last is not None and time.monotonic() - last > quiet:
            break
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            last = time.monotonic()
            if until and until.encode() in out:
                break
    return out.decode(errors="replace")


def tab(tmp_path: Path, setup: list[str], line: str) -> str:
    """What the terminal shows after typing ``line`` and a Tab in ``bash -i`` after ``setup``
    (with no ``line``: what ``setup`` printed)."""
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    if not (BIN / "upgradeplan").exists():
        pytest.skip(f"the upgradeplan console script is not in {BIN} (pip install -e .)")
    inputrc = tmp_path / "inputrc"
    inputrc.write_text(
        "set show-all-if-ambiguous on\nset completion-query-items -1\n"
        "set page-completions off\nset bell-style none\n",
        encoding="utf-8",
    )
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "INPUTRC": str(inputrc),
        "TERM": "dumb",
        "UPGRADEPLAN_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "COLUMNS": "200",
    }
    pid, fd = pty.fork()
    if pid == 0:  # the child: an interactive bash without the user's startup files
        os.execve(shutil.which("bash") or "/bin/bash", ["bash", "--norc", "--noprofile", "-i"], env)
    try:
        for command in ["PS1='$ '", *setup, "echo READY-$((6*7))"]:
            os.write(fd, command.encode() + b"\n")
        before = _read(fd, "READY-42", 60)
        if not line:
            return before
        os.write(fd, line.encode() + b"\t")
        shown = _read(fd, "", 20)
        os.write(fd, b"\x15exit\n")  # Ctrl-U clears the line
        _read(fd, "", 2)
        return shown
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "upgradeplan.bash"
    done = subprocess.run(
        [str(BIN / "upgradeplan"), "completion", "bash"], capture_output=True, text=True, check=True
    )
    script.write_text(done.stdout, encoding="utf-8")
    return script


def test_bash_breaks_words_at_equals_as_distributed(tmp_path: Path) -> None:
    shown = tab(tmp_path, ['printf "WB<%s>\\n" "$COMP_WORDBREAKS"'], "")
    # the default COMP_WORDBREAKS of bash holds "=" and ":" (the reason for the script's work)
    breaks = shown.rsplit("WB<", 1)[1].split(">\r\n", 1)[0]
    assert "=" in breaks and ":" in breaks, shown


def test_bash_completes_versions_after_equals(tmp_path: Path) -> None:
    script = _script(tmp_path)
    shown = tab(tmp_path, [f"source {script}"], "upgradeplan plan --to agent-platform=4.8.")
    assert "4.8.0" in shown and "4.8.1" in shown, shown
    # one candidate: readline writes it into the line after the "="
    shown = tab(tmp_path, [f"source {script}"], "upgradeplan plan --to agent-platform=4.8.1")
    assert "agent-platform=4.8.1 " in shown, shown


def test_bash_completes_a_product_then_stops_at_equals(tmp_path: Path) -> None:
    script = _script(tmp_path)
    shown = tab(tmp_path, [f"source {script}"], "upgradeplan check --to agent-platform-con")
    assert "--to agent-platform-connectivity=" in shown, shown
    assert "--to agent-platform-connectivity= " not in shown  # no space: the version follows


def test_kubectl_upgradeplan_completes_through_the_plugin(tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    if not BASH_COMPLETION.exists():
        pytest.skip(f"kubectl's bash completion needs bash-completion ({BASH_COMPLETION})")
    if not (BIN / "kubectl_complete-upgradeplan").exists():
        pytest.skip("kubectl_complete-upgradeplan is not installed (pip install -e .)")
    setup = [f"source {BASH_COMPLETION}", "source <(kubectl completion bash)"]
    shown = tab(tmp_path, setup, "kubectl upgradeplan ")
    for command in ("check", "plan", "explain", "renovate"):
        assert command in shown, shown
    shown = tab(tmp_path, setup, "kubectl upgradeplan plan --to agent-platform=4.8.")
    assert "4.8.0" in shown and "4.8.1" in shown, shown


def test_kubectl_complete_speaks_cobras_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    console.kubectl_complete(["plan", "--to", "agent-platform=4.8."])
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == ":4"  # no file names
    assert "agent-platform=4.8.1\trelease" in lines
    console.kubectl_complete(["check", "--to", "agent-platform-con"])
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["agent-platform-connectivity=\tproduct", ":6"]  # and no space after "="
