"""The integrations in the repository: the GitHub Action's shell steps, the pre-commit hook's
entry and the Dockerfile, exercised against a fixture GitOps repository."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO
from support.cli import git as _git
from support.sarif_schema import valid_sarif

GITOPS = REPO / "tests" / "fixtures" / "gitops"
KNOWN = ["--fact", "object.Harness.kagent.kagent.exists=true", "--fact", "kubernetes=1.35.0"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A GitOps repository whose main branch (and origin/main) holds S1 at 4.7.18."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "fleet"
    shutil.copytree(GITOPS / "s1", root / "clusters" / "prod")
    # the facts git cannot hold, stated once for the repository
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "agent-platform 4.7.18")
    _git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    return root


def _bump(repo: Path, version: str, *, bom: bool = True) -> None:
    oci = repo / "clusters/prod/agent-platform/ocirepository.yaml"
    oci.write_text(oci.read_text().replace('semver: "4.7.18"', f'semver: "{version}"'))
    if bom:
        path = repo / "clusters/prod/bom.yaml"
        path.write_text(path.read_text().replace('"4.7.18"', f'"{version}"'))


def _shim(tmp_path: Path) -> Path:
    """A bin folder whose ``upgradeplan`` runs this checkout (what the install step provides)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "upgradeplan"
    shim.write_text(
        f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(REPO))} exec {shlex.quote(sys.executable)} "
        '-m upgradeplan "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    return bin_dir


# --------------------------------------------------------------------------- action.yml


def _action() -> dict[str, Any]:
    doc = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def _expand(text: str, context: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        assert m.group(1) in context, f"expression not provided by the test: {m.group(1)}"
        return context[m.group(1)]

    return _EXPR.sub(one, text)


def _run_action(
    repo: Path, tmp_path: Path, inputs: dict[str, str], env: dict[str, str] | None = None
) -> tuple[dict[str, str], str, int, Path]:
    """Run the Action's shell steps as the runner would (inputs as env, GITHUB_OUTPUT, …)."""
    action = _action()
    values = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    values.update(inputs)
    context = {f"inputs.{k}": v for k, v in values.items()}
    context["github.action_path"] = str(REPO)
    out_file = tmp_path / "github_output"
    summary = tmp_path / "step_summary"
    temp = tmp_path / "runner_temp"
    temp.mkdir(exist_ok=True)
    out_file.write_text("")
    base_env = {
        **os.environ,
        "PATH": f"{_shim(tmp_path)}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_OUTPUT": str(out_file),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(temp),
        **(env or {}),
    }
    outputs: dict[str, str] = {}
    stdout = ""
    gate_code = -1
    for step in action["runs"]["steps"]:
        if "uses" in step:
            assert step["uses"].startswith("github/codeql-action/upload-sarif@")
            assert _expand(step["with"]["sarif_file"], context) == values["sarif-file"]
            continue
        assert step["shell"] == "bash"
        step_env = {k: _expand(str(v), context) for k, v in (step.get("env") or {}).items()}
        if step["name"] == "Install upgradeplan":
            # not run here (it installs this checkout with pip): the shim stands in for it
            assert step_env["UPGRADEPLAN_SOURCE"] == str(REPO)
            assert '"$UPGRADEPLAN_SOURCE"' in step["run"]
            continue
        assert "${{" not in step["run"], "inputs reach the script through env only"
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", step["run"]],
            cwd=repo,
            env={**base_env, **step_env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert "Traceback" not in done.stderr, done.stderr
        if step.get("id") == "check":
            assert done.returncode == 0, done.stderr
            stdout = done.stdout
            for line in out_file.read_text().splitlines():
                key, _, value = line.partition("=")
                outputs[key] = value
            context.update({f"steps.check.outputs.{k}": v for k, v in outputs.items()})
        if step["name"] == "Gate":
            gate_code = done.returncode
    return outputs, stdout, gate_code, summary


def test_action_declares_the_inputs_and_outputs() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert {"path", "base", "targets", "fail-on", "accept-file"} <= set(action["inputs"])
    assert {"verdict", "exit-code"} <= set(action["outputs"])
    assert any("upload-sarif" in s.get("uses", "") for s in action["runs"]["steps"])


def test_action_blocks_an_unsafe_bump_and_reports_it(repo: Path, tmp_path: Path) -> None:
    _bump(repo, "4.8.0")
    (repo / ".upgradeplan.yaml").write_text("accept: []\n", encoding="utf-8")
    inputs = {"path": "clusters/prod", "targets": ""}
    env = {"GITHUB_BASE_REF": "main"}
    outputs, stdout, gate, summary = _run_action(repo, tmp_path, inputs, env)
    # without the Harness facts git cannot hold, the skip may apply: undetermined (exit 4)
    assert outputs == {"verdict": "undetermined", "exit-code": "4"}
    assert gate == 4
    assert "::error file=clusters/prod/agent-platform/ocirepository.yaml,line=13" in stdout
    sarif = valid_sarif((repo / "upgradeplan.sarif").read_text())
    assert sarif["runs"][0]["automationDetails"]["id"] == "upgradeplan/clusters/prod/"
    assert summary.read_text().startswith("<!-- upgradeplan-check -->")


def test_action_passes_an_in_order_bump(repo: Path, tmp_path: Path) -> None:
    _bump(repo, "4.7.19")
    outputs, _, gate, _ = _run_action(
        repo,
        tmp_path,
        {"path": "clusters/prod", "base": "origin/main", "args": " ".join(KNOWN)},
    )
    assert outputs["exit-code"] == "0"
    assert outputs["verdict"] in ("safe", "safe-with-actions")
    assert gate == 0


def test_action_bad_input_still_writes_sarif_and_exits_2(repo: Path, tmp_path: Path) -> None:
    (repo / "accept.yaml").write_text("accept:\n  - hazard: nope\n", encoding="utf-8")
    outputs, stdout, gate, _ = _run_action(
        repo, tmp_path, {"path": "clusters/prod", "accept-file": "accept.yaml"}
    )
    assert outputs == {"verdict": "error", "exit-code": "2"}
    assert gate == 2
    assert "::error file=accept.yaml,line=2" in stdout
    doc = valid_sarif((repo / "upgradeplan.sarif").read_text())
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False


# --------------------------------------------------------------------------- pre-commit


def _hook() -> dict[str, Any]:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    [hook] = [h for h in hooks if h["id"] == "upgradeplan-check"]
    assert isinstance(hook, dict)
    return hook


def _run_hook(repo: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    hook = _hook()
    argv = [*shlex.split(hook["entry"]), *hook.get("args", []), *extra]
    assert argv[0] == "upgradeplan"
    return subprocess.run(
        argv,
        cwd=repo,
        env={**os.environ, "PATH": f"{_shim(tmp_path)}{os.pathsep}{os.environ.get('PATH', '')}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_pre_commit_hook_blocks_a_skip_and_passes_the_stop(repo: Path, tmp_path: Path) -> None:
    hook = _hook()
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert re.search(hook["files"], "clusters/prod/bom.yaml")
    unprotected = [*KNOWN, "--fact", "object.Harness.kagent.kagent.annotations="]
    _bump(repo, "4.8.0")
    done = _run_hook(repo, tmp_path, *unprotected)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "harness-handover-skipped" in done.stdout
    _git(repo, "checkout", "-q", "--", ".")
    _bump(repo, "4.7.19")
    done = _run_hook(repo, tmp_path, *unprotected)
    assert done.returncode == 0, done.stdout + done.stderr


# --------------------------------------------------------------------------- Dockerfile


def test_dockerfile_builds_a_small_non_root_image_without_the_kubernetes_client() -> None:
    # no container runtime on the test machines: the file is checked, not built (docs/ci.md)
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    stages = [ln for ln in text.splitlines() if ln.startswith("FROM ")]
    assert all("-slim" in ln for ln in stages)
    users = [ln.split()[1] for ln in text.splitlines() if ln.startswith("USER ")]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    assert 'ENTRYPOINT ["upgradeplan"]' in text
    assert "[kubernetes]" not in text
    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".git" in ignored and ".venv" in ignored
