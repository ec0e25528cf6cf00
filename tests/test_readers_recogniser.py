"""One Kubernetes-object recogniser: the same objects give the same facts whether they are
read from a live cluster (the fake API server), a kubectl dump given as --snapshot, or
GitOps files. A digest-pinned image (``repo:tag@sha256:…``) is the case they once disagreed on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.fakeapi import FakeAPIFactory, fake_api

from upgradeplan import api
from upgradeplan.model import KnowledgeBase, State

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

IMAGE = "harness/delegate:0.31.2@sha256:" + "ab" * 32
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "harness-delegate", "namespace": "harness"},
    "spec": {"template": {"spec": {"containers": [{"name": "delegate", "image": IMAGE}]}}},
}


def _one(kb: KnowledgeBase, inputs: api.Inputs) -> State:
    [gathered] = api.gather(kb, inputs)
    assert gathered.state is not None, gathered.error
    return gathered.state


def _workload(state: State) -> dict[str, object]:
    return {f.key: f.value for f in state if f.key.startswith("workload.harness-delegate.")}


def _three(kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp: Path) -> tuple[State, ...]:
    """The Deployment read from a cluster, from a kubectl dump, and from GitOps files."""
    server = fake_api.start([DEPLOYMENT])
    live = _one(kb, api.Inputs(kubeconfig=fake_api.kubeconfig({"t": server}), contexts=("t",)))
    dump = tmp / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [DEPLOYMENT]}))
    snapshot = _one(kb, api.Inputs(state_files=(str(dump),)))
    tree = tmp / "tree"
    tree.mkdir()
    (tree / "delegate.yaml").write_text(json.dumps(DEPLOYMENT))
    return live, snapshot, _one(kb, api.Inputs(gitops=str(tree)))


def test_a_digest_pinned_image_gives_the_same_facts_from_all_three_readers(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    live, snapshot, gitops = _three(kb, fake_api, tmp_path)
    image = "workload.harness-delegate.image"
    assert live.value(image) == snapshot.value(image) == gitops.value(image) == IMAGE
    # what runs (cluster, dump) and what the files pin (GitOps): the tag, not the digest
    assert live.value("installed.harness-delegate") == "0.31.2"
    assert snapshot.value("installed.harness-delegate") == "0.31.2"
    assert gitops.value("pin.harness-delegate") == "0.31.2"
    assert _workload(snapshot) == _workload(live)


def test_every_workload_fact_is_the_same_from_gitops_files(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    live, _, gitops = _three(kb, fake_api, tmp_path)
    assert _workload(gitops) == _workload(live)
