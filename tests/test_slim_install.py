"""The slim install: ``pip install .`` without extras has no kubernetes client, pulls at most
15 distributions, and still reads stated facts, snapshots, GitOps files and token- and
exec-plugin-authenticated kubeconfig contexts (against the fake API server).

One fresh virtual environment per test session (pip's cache keeps it to seconds on a warm
machine); the commands run in it as a user would run them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO
from support.fakeapi import FakeAPIFactory, exec_plugin_user, fake_api

__all__ = ["fake_api"]  # the fixture, imported for pytest

# upgradeplan itself included (the limit of 13, plus google-re2 since issue 33: the
# linear-time engine diagnose runs symptom patterns on, a wheel with no dependencies; plus
# msgspec since issue 29: the record classes, a wheel with no dependencies; 39 with kubernetes)
MAX_DISTRIBUTIONS = 15


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _installed(python: Path) -> set[str]:
    done = _pip(python, "list", "--format=json")
    assert done.returncode == 0, done.stderr
    return {d["name"].lower() for d in json.loads(done.stdout)}


@pytest.fixture(scope="session")
def slim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, set[str]]]:
    """A fresh venv with ``pip install .`` (no extras): its python and what the install added."""
    root = tmp_path_factory.mktemp("slim")
    source = root / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for name in ("upgradeplan", "knowledge", "packs"):
        shutil.copytree(
            REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    before = _installed(python)
    done = _pip(python, "install", "--quiet", str(source))
    if done.returncode != 0:
        pytest.fail(f"pip install . failed: {done.stderr.strip()[-2000:]}")
    yield python, _installed(python) - before
    shutil.rmtree(root, ignore_errors=True)


def _upgradeplan(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBECONFIG")}
    done = subprocess.run(
        [str(python.parent / "upgradeplan"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env=env,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_the_slim_install_has_no_kubernetes_client_and_few_distributions(
    slim: tuple[Path, set[str]],
) -> None:
    python, added = slim
    assert "upgradeplan" in added
    assert "kubernetes" not in added
    assert len(added) <= MAX_DISTRIBUTIONS, sorted(added)
    absent = subprocess.run(
        [str(python), "-c", "import importlib.util; print(importlib.util.find_spec('kubernetes'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert absent.stdout.strip() == "None"


def test_gitops_and_snapshot_checks_run_without_the_client(slim: tuple[Path, set[str]]) -> None:
    python, _ = slim
    done = _upgradeplan(
        python, "check", "--gitops", "tests/fixtures/gitops/s1", "--to", "agent-platform=4.8.0"
    )
    assert done.returncode in (3, 4), done.stderr
    assert "harness-handover-skipped" in done.stdout
    done = _upgradeplan(
        python,
        "check",
        "--snapshot",
        "examples/installation-4.7.18.yaml",
        "--to",
        "agent-platform=4.8.0",
        "-o",
        "json",
    )
    assert done.returncode in (3, 4), done.stderr
    assert json.loads(done.stdout)["results"][0]["verdict"] in ("blocked", "undetermined")


def test_token_and_exec_plugin_contexts_are_read_without_the_client(
    slim: tuple[Path, set[str]], fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    python, _ = slim
    server = fake_api.start(REPO / "tests" / "fixtures" / "cluster" / "s1")
    kubeconfig = fake_api.kubeconfig(
        {"token": server, "plugin": server}, users={"plugin": exec_plugin_user(tmp_path)}
    )
    done = _upgradeplan(python, "scan", "--kubeconfig", kubeconfig, "--all-contexts", "-o", "json")
    assert done.returncode == 0, done.stderr
    results = {r["name"]: r for r in json.loads(done.stdout)["results"]}
    assert set(results) == {"token", "plugin"}
    for name, result in results.items():
        facts = result["state"]["facts"]
        assert facts["installed.agent-platform"]["value"] == "4.7.18", name
    seen = {r.authorization for r in server.requests}
    assert "Bearer token-of-token" in seen
    assert "Bearer from-the-plugin" in seen
    done = _upgradeplan(
        python,
        "check",
        "--kubeconfig",
        kubeconfig,
        "--context",
        "plugin",
        "--to",
        "agent-platform=4.8.0",
    )
    assert done.returncode in (0, 3, 4), done.stderr


def test_an_auth_provider_context_names_the_extra(
    slim: tuple[Path, set[str]], tmp_path: Path
) -> None:
    python, _ = slim
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: old\n"
        "clusters: [{name: old, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: old, user: {auth-provider: {name: oidc, config: {}}}}]\n"
        "contexts: [{name: old, context: {cluster: old, user: old}}]\n",
        encoding="utf-8",
    )
    done = _upgradeplan(python, "check", "--kubeconfig", str(config))
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert "pip install 'upgradeplan[kubernetes]'" in line
    assert "auth-provider" in line
