"""Running the CLI in-process from tests: one place for the invoke/check/plan helpers."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from upgradeplan.cli import cli


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run ``upgradeplan *args``; an exception other than the exit fails the test."""
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and everything written (stdout and stderr)."""
    result = invoke(*args, env=env)
    return result.exit_code, result.output


def run_stdout(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and stdout alone."""
    result = invoke(*args, env=env)
    return result.exit_code, result.stdout


def check(*args: str) -> tuple[int, dict[str, Any]]:
    """``check -o json``: exit code and the one result."""
    code, out = run("check", "-o", "json", *args)
    doc = json.loads(out)
    assert doc["exit_code"] == code
    assert len(doc["results"]) == 1
    return code, dict(doc["results"][0])


def plan(*args: str) -> tuple[int, dict[str, Any]]:
    """``plan -o json``: exit code and the plan of the first result."""
    code, out = run("plan", "-o", "json", *args)
    doc = json.loads(out)
    assert doc["exit_code"] == code
    return code, dict(doc["results"][0]["plan"])


def run_in(args: list[str], cwd: object) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``upgradeplan *args`` run in directory ``cwd``."""
    import os

    old = os.getcwd()
    os.chdir(str(cwd))
    try:
        result = CliRunner().invoke(cli, args)
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def git(repo: Path, *args: str) -> None:
    """Run git in a test repository with a fixed identity (no user config needed)."""
    subprocess.run(
        ["git", "-c", "user.email=ci@example.com", "-c", "user.name=ci", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def s1_repo(root: Path) -> Path:
    """``root`` made a git repository whose HEAD holds the S1 GitOps fixture (agent-platform
    4.7.18 pins) under clusters/prod; the test is skipped where git is not installed."""
    import pytest

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "gitops" / "s1"
    shutil.copytree(fixture, root / "clusters" / "prod")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "agent-platform 4.7.18")
    return root
