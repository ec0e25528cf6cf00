"""The real kubectl against the fake API server: proof that the fake behaves like a cluster."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.fakeapi import FakeAPIFactory, fake_api, load_documents
from support.scenarios import CASES, CLUSTER_FIXTURES, check_mismatches

from upgradeplan.cli import cli

__all__ = ["fake_api"]

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def kubectl(kubeconfig: str, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run(
        [
            KUBECTL,
            "--kubeconfig",
            kubeconfig,
            "--cache-dir",
            str(cache),
            "--request-timeout",
            "20s",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def names(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return sorted(
        f"{i['metadata'].get('namespace', '')}/{i['metadata']['name']}" for i in doc["items"]
    )


def fixture_names(fixture: str, kind: str, **match: str) -> list[str]:
    objects = load_documents([CLUSTER_FIXTURES / fixture / "objects.yaml"])
    return sorted(
        f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
        for o in objects
        if o["kind"] == kind and all(o.get(k) == v for k, v in match.items())
    )


def test_kubectl_reads_flux_objects_deployments_and_secret_types(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s6", git_version="v1.31.4")
    kubeconfig = fake_api.kubeconfig({"s6": server})
    cache = tmp_path / "cache"
    hr = kubectl(
        kubeconfig, cache, "get", "helmreleases.helm.toolkit.fluxcd.io", "-A", "-o", "json"
    )
    assert names(hr) == fixture_names("s6", "HelmRelease")
    oci = kubectl(kubeconfig, cache, "get", "helmcharts", "-A", "-o", "json")
    assert names(oci) == fixture_names("s6", "HelmChart")
    deployments = kubectl(kubeconfig, cache, "get", "deployments", "-A", "-o", "json")
    assert names(deployments) == ["harness-delegate-ng/harness-delegate"]
    opaque = kubectl(
        kubeconfig, cache, "get", "secrets", "-A", "--field-selector", "type=Opaque", "-o", "json"
    )
    assert names(opaque) == fixture_names("s6", "Secret", type="Opaque")
    labelled = kubectl(
        kubeconfig,
        cache,
        "get",
        "deployments",
        "-n",
        "harness-delegate-ng",
        "-l",
        "harness.io/name=harness-delegate",
        "-o",
        "json",
    )
    assert names(labelled) == ["harness-delegate-ng/harness-delegate"]
    assert any(r.path == "/apis" for r in server.requests)  # kubectl discovers; the reader does not


def test_kubectl_ocirepositories_with_pages(fake_api: FakeAPIFactory, tmp_path: Path) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s1", git_version="v1.33.1")
    kubeconfig = fake_api.kubeconfig({"s1": server})
    proc = kubectl(
        kubeconfig,
        tmp_path / "cache",
        "get",
        "ocirepositories",
        "-A",
        "--chunk-size=2",
        "-o",
        "json",
    )
    assert names(proc) == fixture_names("s1", "OCIRepository")
    pages = server.list_requests("ocirepositories")
    assert len(pages) == 2 and "continue" in pages[1].query


def test_kubectl_sees_flux_missing_and_the_server_version(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s8")  # v1.27.3-eks-…
    kubeconfig = fake_api.kubeconfig({"s8": server})
    cache = tmp_path / "cache"
    missing = kubectl(
        kubeconfig, cache, "get", "helmreleases.helm.toolkit.fluxcd.io", "-A", "-o", "json"
    )
    assert missing.returncode != 0
    assert "doesn't have a resource type" in missing.stderr or "NotFound" in missing.stderr
    version = kubectl(kubeconfig, cache, "version", "-o", "json")
    assert json.loads(version.stdout)["serverVersion"]["gitVersion"] == "v1.27.3-eks-4f4795d"


def test_the_kubectl_commands_of_docs_snapshots_replay_as_a_snapshot(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """docs/snapshots.md: a customer's kubectl dump gives support the live cluster's answer."""
    server = fake_api.start(CLUSTER_FIXTURES / "s1", git_version="v1.33.0")
    kubeconfig = fake_api.kubeconfig({"s1": server})
    cache = tmp_path / "cache"
    commands = {
        "flux.yaml": [
            "get",
            "helmreleases.helm.toolkit.fluxcd.io,ocirepositories.source.toolkit.fluxcd.io,"
            "helmcharts.source.toolkit.fluxcd.io",
            "-A",
            "-o",
            "yaml",
        ],
        "kagent.yaml": [
            "get",
            "harnesses.kagent.dev,agenttemplates.kagent.dev",
            "-A",
            "-o",
            "yaml",
        ],
        "deployments.json": ["get", "deployments", "-A", "-o", "json"],
        "cluster.yaml": ["get", "namespaces,nodes,storageclasses", "-o", "yaml"],
        "version.json": ["version", "-o", "json"],
    }
    snapshots: list[str] = []
    for name, args in commands.items():
        proc = kubectl(kubeconfig, cache, *args)
        assert proc.returncode == 0, proc.stderr
        (tmp_path / name).write_text(proc.stdout, encoding="utf-8")
        snapshots += ["--snapshot", str(tmp_path / name)]
    case = next(c for c in CASES if c.id == "S1-check")
    scan = CliRunner().invoke(cli, ["scan", "-o", "json", *snapshots])
    facts = json.loads(scan.stdout)["results"][0]["state"]["facts"]
    assert facts["installed.kubernetes"]["value"] == "1.33.0"  # from `kubectl version -o json`
    assert facts["helmrelease.kagent.drift-detection"]["value"] == "disabled"
    # agent-platform 4.8 requires Kubernetes 1.35, and kubectl's dispatcher needs a server
    # of at most 1.33: a stated fact (later inputs win) sets the version the scenario has
    args = ["check", "-o", "json", *snapshots, "--fact", "kubernetes=1.35.0", *case.args]
    result = CliRunner().invoke(cli, args)
    assert check_mismatches(case, json.loads(result.stdout), result.exit_code) == [], result.output
