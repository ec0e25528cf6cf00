"""diagnose is safe by construction: RE2 patterns (kb lint refuses others), a bounded window
over a large paste, binary input refused with exit 2, a pattern-bait paste answered at once."""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from upgradeplan import pasted, symptoms
from upgradeplan.cli import cli
from upgradeplan.model import KnowledgeBase

MINI = Path(__file__).resolve().parent / "fixtures" / "kb-mini"


def _lint_with_pattern(tmp_path: Path, pattern: str) -> tuple[int, str]:
    root = tmp_path / "kb"
    shutil.copytree(MINI, root)
    hazard = root / "hazards" / "landing-120.yaml"
    text = hazard.read_text().replace('pattern: "deprecated field"', f"pattern: '{pattern}'")
    hazard.write_text(text)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["kb", "lint", "--no-bundled", "kb"])
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout


@pytest.mark.parametrize("pattern", [r"(a+)+\1", r"(?=harness)harness-delegate", r"(?<!x)y"])
def test_kb_lint_refuses_a_pattern_re2_cannot_run_in_linear_time(
    tmp_path: Path, pattern: str
) -> None:
    code, out = _lint_with_pattern(tmp_path, pattern)
    assert code == 2
    assert "KB015" in out and "linear time" in out


def test_kb_lint_accepts_a_nested_quantifier_re2_runs_in_linear_time(tmp_path: Path) -> None:
    # catastrophic for a backtracking engine, linear for RE2
    code, out = _lint_with_pattern(tmp_path, "(a+)+$")
    assert code == 0
    assert "KB015" not in out


def test_a_pattern_bait_paste_is_answered_in_under_a_second(kb: KnowledgeBase) -> None:
    # what made the old patterns backtrack: a long run of quoted keys that never ends in
    # "not allowed", and a run of one letter against nested quantifiers
    bait = (
        "additional properties " + "'podAnnotations', " * 20000 + "\n" + "a" * 200000 + "!\n"
    ) * 3
    started = time.perf_counter()
    symptoms.diagnose(kb, bait)
    assert time.perf_counter() - started < 1.0


def test_binary_input_is_a_one_line_exit_2(tmp_path: Path) -> None:
    blob = tmp_path / "core.gz"
    blob.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 64)
    result = CliRunner().invoke(cli, ["diagnose", str(blob)])
    assert result.exit_code == 2
    assert "binary input (a NUL byte at byte 3)" in result.stderr
    assert "Traceback" not in result.output
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(128, 256)) * 64)
    result = CliRunner().invoke(cli, ["diagnose", str(garbage)])
    assert result.exit_code == 2
    assert "are not UTF-8" in result.stderr


def test_a_paste_over_the_window_is_read_in_its_last_part_and_says_so() -> None:
    lines = [f"line {n} healthy" for n in range(1, 2001)]
    lines[1990] = "metadata service unreachable"
    data = ("\n".join(lines) + "\n").encode()
    paste = pasted.read_paste(io.BytesIO(data), "stdin", window=1024)
    assert paste.skipped_bytes > 0
    assert len(paste.text.encode()) <= 1024
    assert paste.text.startswith(lines[paste.first_line - 1])  # whole lines, numbered as given
    assert "read its last" in paste.note


def test_line_numbers_in_the_window_are_those_of_the_whole_input(kb: KnowledgeBase) -> None:
    lines = [f"line {n} healthy" for n in range(1, 2001)]
    lines[1990] = "metadata service unreachable"
    data = ("\n".join(lines) + "\n").encode()
    paste = pasted.read_paste(io.BytesIO(data), "stdin", window=1024)
    found = symptoms.diagnose(kb, paste.text, paste.first_line)
    assert found[0].matches[0].line_number == 1991
