"""docs/deploy: the kustomize base (and the s3 overlay) that runs `upgradeplan snapshot` on a
schedule, checked with the real kubectl.

`kubectl kustomize` builds both. `kubectl apply --dry-run=client` needs an API server for
discovery: it runs against the fake API server on 127.0.0.1, told about the built-in types
the manifests use (with their real scopes) through CRD-shaped declarations. The fake serves
no OpenAPI schema, so kubectl's schema validation is off (--validate=false); the fields that
matter are asserted here instead.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO
from support.cli import run
from support.fakeapi import FakeAPIFactory, fake_api
from support.scenarios import CLUSTER_FIXTURES

__all__ = ["fake_api"]

KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
DEPLOY = REPO / "docs" / "deploy"

# group, version, plural, kind, scope
TYPES = (
    ("", "v1", "serviceaccounts", "ServiceAccount", "Namespaced"),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", "Namespaced"),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", "Cluster"),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", "Cluster"),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", "Namespaced"),
    ("batch", "v1", "cronjobs", "CronJob", "Namespaced"),
)


def _kubectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run(
        [KUBECTL, *args], input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


def _build(overlay: str) -> list[dict[str, Any]]:
    proc = _kubectl("kustomize", str(DEPLOY / overlay))
    assert proc.returncode == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    [found] = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    return found


def _declarations() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group or 'core'}"},
            "spec": {
                "group": group,
                "names": {"plural": plural, "kind": kind, "singular": kind.lower()},
                "scope": scope,
                "versions": [{"name": version, "served": True}],
            },
        }
        for group, version, plural, kind, scope in TYPES
    ]


@pytest.mark.parametrize("overlay", ["base", "s3"])
def test_manifests_pass_kubectl_apply_dry_run(
    overlay: str, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    docs = _build(overlay)
    server = fake_api.start(_declarations())
    kubeconfig = fake_api.kubeconfig({"fake": server})
    proc = _kubectl(
        "--kubeconfig",
        kubeconfig,
        "--cache-dir",
        str(tmp_path / "cache"),
        "apply",
        "--dry-run=client",
        "--validate=false",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(docs),
    )
    assert proc.returncode == 0, proc.stderr
    created = [line for line in proc.stdout.splitlines() if line.endswith("created (dry run)")]
    assert len(created) == len(docs)
    kinds = sorted(d["kind"] for d in docs)
    expected = ["ClusterRole", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "CronJob"]
    expected += ["Namespace", "RoleBinding", "ServiceAccount"]
    if overlay == "base":
        expected.append("PersistentVolumeClaim")
    assert kinds == sorted(expected)


@pytest.mark.parametrize("overlay", ["base", "s3"])
def test_the_cronjob_runs_snapshot_as_non_root_on_a_read_only_root(overlay: str) -> None:
    docs = _build(overlay)
    job = _one(docs, "CronJob")
    pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "upgradeplan"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    [container] = pod["containers"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["runAsNonRoot"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert container["args"][0] == "snapshot"
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/etc/upgradeplan"]["readOnly"] is True
    assert "/tmp" in mounts
    if overlay == "s3":
        assert container["args"][-2:] == ["--output", "s3://fleet-snapshots/clusters/"]
        assert container["envFrom"] == [{"secretRef": {"name": "upgradeplan-s3", "optional": True}}]
        assert "/snapshots" not in mounts
    else:
        assert mounts["/snapshots"]["name"] == "snapshots"


def test_the_service_account_is_bound_to_the_read_only_roles_of_docs_rbac() -> None:
    docs = _build("base")
    shipped = [d for d in yaml.safe_load_all((REPO / "docs" / "rbac.yaml").read_text()) if d]
    for role in (d for d in shipped if d["kind"] == "ClusterRole"):
        built = _one(docs, "ClusterRole", role["metadata"]["name"])
        assert built["rules"] == role["rules"]
        verbs = {v for rule in built["rules"] for v in rule["verbs"]}
        assert verbs <= {"get", "list"}  # read-only
    account = _one(docs, "ServiceAccount")
    subject = {"kind": "ServiceAccount", "name": "upgradeplan", "namespace": "upgradeplan"}
    assert account["metadata"]["namespace"] == "upgradeplan"
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        assert _one(docs, kind)["subjects"] == [subject]
    assert _one(docs, "RoleBinding")["metadata"]["namespace"] == "harness-delegate-ng"


def test_the_cronjob_command_writes_a_snapshot(fake_api: FakeAPIFactory, tmp_path: Path) -> None:
    """The CronJob's own arguments, with the in-pod paths moved to this machine: the
    kubeconfig of the ConfigMap (server and credential files swapped for a fake cluster's)."""
    docs = _build("base")
    shipped = yaml.safe_load(_one(docs, "ConfigMap")["data"]["kubeconfig"])
    assert shipped["current-context"] == "this-cluster"
    user = shipped["users"][0]["user"]
    assert user == {"tokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"}
    cluster = shipped["clusters"][0]["cluster"]
    assert cluster["certificate-authority"].startswith("/var/run/secrets/kubernetes.io/")
    server = fake_api.start(CLUSTER_FIXTURES / "s6")
    token = tmp_path / "token"
    token.write_text("token-of-the-service-account\n")
    cluster["server"] = server.url  # the fake speaks plain HTTP on 127.0.0.1: no CA
    del cluster["certificate-authority"]
    user["tokenFile"] = str(token)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(shipped))
    pod = _one(docs, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    args = [
        str(kubeconfig)
        if a == "/etc/upgradeplan/kubeconfig"
        else a.replace("/snapshots", str(tmp_path))
        for a in pod["containers"][0]["args"]
    ]
    code, out = run(*args)
    assert code == 0, out
    written = yaml.safe_load((tmp_path / "this-cluster.yaml").read_text())
    assert written["kind"] == "upgradeplan-state" and written["name"] == "this-cluster"
    assert written["facts"]["installed.harness-delegate"]["value"] == "0.29.0"
    assert {r.authorization for r in server.requests} == {"Bearer token-of-the-service-account"}
