"""The one object recogniser (readers/recognise.py): a Kubernetes object read from a cluster
(or a snapshot) and the same object read from GitOps files give the same product and the same
facts; only where each fact was read differs (an object reference, a file line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers import gitops
from upgradeplan.readers.kube.objects import state_from_objects
from upgradeplan.readers.recognise import Recogniser, workload_facts

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: delegate
  namespace: harness-delegate-ng
spec:
  strategy:
    rollingUpdate:
      maxSurge: 1
  template:
    metadata:
      annotations:
        sidecar.istio.io/inject: "false"
    spec:
      initContainers:
        - name: init
          image: busybox:1.36
          envFrom:
            - secretRef:
                name: delegate-proxy
      containers:
        - name: delegate
          image: registry.example.org/harness/delegate:25.01.84800@sha256:0123abcd
          args: [--metadata-endpoint=https://169.254.169.254]
          env:
            - name: ACCOUNT_ID
              value: abc
            - name: DELEGATE_TOKEN
              valueFrom:
                secretKeyRef: {name: delegate-token, key: token}
      tolerations:
        - key: dedicated
          operator: Equal
          value: ci
          effect: NoSchedule
        - operator: Exists
"""


def _workload(state: State) -> dict[str, Any]:
    return {f.key: f.value for f in state if f.key.startswith("workload.")}


def test_a_deployment_gives_the_same_facts_from_a_cluster_and_from_files(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    obj = yaml.safe_load(DEPLOYMENT)
    cluster = state_from_objects(kb, [obj], source_prefix="cluster prod")
    (tmp_path / "delegate.yaml").write_text(DEPLOYMENT)
    files = gitops.read(kb, str(tmp_path))
    read = _workload(files)
    assert read == _workload(cluster)
    assert read["workload.harness-delegate.env-secrets"] == ["delegate-proxy", "delegate-token"]
    assert read["workload.harness-delegate.tolerations"] == [
        "dedicated:Equal:NoSchedule",
        ":Exists:",
    ]
    assert read["workload.harness-delegate.max-surge"] == "1"
    # the same fact, located each reader's way
    key = "workload.harness-delegate.env-secret-refs"
    assert (
        str(files.facts[key].source) == f"{tmp_path}/delegate.yaml:28"
    )  # the env entry that reads it
    assert str(cluster.facts[key].source).startswith("cluster prod")


def test_the_product_of_an_object_is_found_once_for_every_reader(kb: KnowledgeBase) -> None:
    shared = Recogniser(kb)
    obj = yaml.safe_load(DEPLOYMENT)
    assert shared.workload(obj) == "harness-delegate"  # by its image repository
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = "example.org/other:1.0"
    assert shared.workload(obj) is None
    assert shared.release("agent-platform") == "agent-platform"
    assert shared.release("my-kagent", ["kagent"]) == "kagent"
    name = {f.key: f for f in workload_facts("p", {"metadata": {"name": "x"}})}["workload.p.name"]
    assert (name.key, name.value, name.path) == ("workload.p.name", "x", ("metadata", "name"))


RELEASE = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: agent-platform
  namespace: flux-giantswarm
spec:
  url: oci://gsoci.azurecr.io/charts/giantswarm/agent-platform
  ref:
    semver: "4.7.18"
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: agent-platform
  namespace: flux-giantswarm
spec:
  chartRef:
    kind: OCIRepository
    name: agent-platform
  driftDetection:
    mode: warn
"""


def test_a_helmrelease_and_its_oci_repository_give_the_same_facts_everywhere(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    objs = list(yaml.safe_load_all(RELEASE))
    cluster = state_from_objects(kb, objs, source_prefix="cluster prod")
    (tmp_path / "release.yaml").write_text(RELEASE)
    files = gitops.read(kb, str(tmp_path))
    keys = [f"helmrelease.agent-platform.{k}" for k in ("namespace", "drift-detection")]
    keys.append("pin.agent-platform")
    assert {k: files.value(k) for k in keys} == {k: cluster.value(k) for k in keys}
    assert files.value("pin.agent-platform") == "4.7.18"
    assert files.value("helmrelease.agent-platform.drift-detection") == "warn"
    # a digest pins a version neither reader can see
    digest = RELEASE.replace('semver: "4.7.18"', "digest: sha256:" + "a" * 64)
    (tmp_path / "release.yaml").write_text(digest)
    for state in (
        gitops.read(kb, str(tmp_path)),
        state_from_objects(kb, list(yaml.safe_load_all(digest)), source_prefix="cluster prod"),
    ):
        assert "pin.agent-platform" not in state
        assert "spec.ref.digest pins sha256:" in state.unreadable["pin.agent-platform"]
