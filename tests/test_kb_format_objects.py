"""Custom-resource fields, predicates over every object of a kind, and change facts.

On the fragment tests/fixtures/kb-format: fpool declares the kinds Pool and Template and the
fields its hazards read; fapp and fdb are two charts a change should move together. Each is
shown through the CLI with stated facts, a fake API server (the live-cluster reader) or a
throw-away git repository (the pull-request gate).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import git
from support.fakeapi import FakeAPIFactory, Faults, fake_api
from test_kb_format_features import FORMAT, check_json, run, status_of

from upgradeplan.kb.loader import load
from upgradeplan.readers.kube import cluster

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

WORKER = "fpool-worker-behind-controller"
UNADMITTED = "fpool-templates-unadmitted"
UNLABELLED = "fpool-templates-unlabelled"
IMAGE = "object.Pool.fpool.default.spec.workerImage"
API = "pools.example.test/v1"


def template(name: str, admitted: list[str] | None, *, ns: str = "fpool", cls: str = "") -> Any:
    obj: dict[str, Any] = {
        "apiVersion": API,
        "kind": "Template",
        "metadata": {"name": name, "namespace": ns},
    }
    if cls:
        obj["metadata"]["labels"] = {"pools.example.test/class": cls}
    if admitted is not None:
        obj["status"] = {"admitted": admitted}
    return obj


POOL = {
    "apiVersion": API,
    "kind": "Pool",
    "metadata": {"name": "default", "namespace": "fpool"},
    "spec": {"workerImage": "registry.example.test/worker:1.0.0"},
}


# --------------------------------------------------------------------------- stated facts


def test_a_declared_field_compared_with_another_fact() -> None:
    base = ("--installed", "fpool=1.1.0")
    _, doc = check_json(*base, "--fact", f"{IMAGE}=reg/worker:1.1.0")
    assert status_of(doc, WORKER) == "does-not-apply"
    _, doc = check_json(*base, "--fact", f"{IMAGE}=reg/worker:1.0.0")
    assert status_of(doc, WORKER) == "applies"
    _, out, _ = run("-v", "check", *base)
    assert f"may-apply      warning  {WORKER}" in out and f"missing {IMAGE}" in out


def test_any_object_of_a_kind_from_stated_facts() -> None:
    base = ("--installed", "fpool=1.0.0", "--fact", "object.Template=fpool/a,fpool/b")
    a, b = "object.Template.fpool.a.status.admitted", "object.Template.fpool.b.status.admitted"
    code, doc = check_json(*base, "--fact", f'{a}=["p1"]', "--fact", f"{b}=[]")
    assert (code, status_of(doc, UNADMITTED)) == (3, "applies")
    code, doc = check_json(*base, "--fact", f'{a}=["p1"]', "--fact", f'{b}=["p1"]')
    assert status_of(doc, UNADMITTED) == "does-not-apply"
    _, out, _ = run("-v", "check", *base, "--fact", f'{a}=["p1"]')
    assert f"may-apply      blocking {UNADMITTED}" in out and f"missing {b}" in out
    # without the list of the kind, only a matching object can settle it
    _, out, _ = run("-v", "check", "--installed", "fpool=1.0.0", "--fact", f'{a}=["p1"]')
    assert f"may-apply      blocking {UNADMITTED}" in out and "missing object.Template" in out


# --------------------------------------------------------------------------- the cluster


def _check_cluster(fake_api: FakeAPIFactory, objects: list[Any], **kw: Any) -> dict[str, Any]:
    server = fake_api.start(objects, **kw)
    kubeconfig = fake_api.kubeconfig({"lab": server})
    hop = ("--installed", "fpool=1.0.0", "--to", "fpool=1.1.0")
    _, doc = check_json("--kubeconfig", kubeconfig, *hop)
    return doc


def test_the_cluster_reader_lists_a_declared_kind_and_reads_its_fields(
    fake_api: FakeAPIFactory,
) -> None:
    kb = load([FORMAT])
    server = fake_api.start([POOL, template("a", ["default"], cls="gpu"), template("b", [])])
    [res] = cluster.read_contexts(kb, fake_api.kubeconfig({"lab": server}), [], False)
    assert res.state is not None
    assert res.state.value(IMAGE) == "registry.example.test/worker:1.0.0"
    assert res.state.value("object.Template") == ["fpool/a", "fpool/b"]
    assert res.state.value("object.Template.fpool.b.status.admitted") == []
    label = "object.Template.fpool.b.metadata.labels.pools\\.example\\.test/class"
    assert res.state.value(label) is None and label in res.state  # read, and absent
    fact = res.state.get(IMAGE)
    assert (
        fact is not None and str(fact.source) == "cluster lab: Pool fpool/default spec.workerImage"
    )
    assert "/apis/pools.example.test/v1/templates" in {p.split("?")[0] for p in server.paths()}


def test_any_and_all_objects_judged_on_a_cluster(fake_api: FakeAPIFactory) -> None:
    doc = _check_cluster(fake_api, [POOL, template("a", ["default"], cls="gpu"), template("b", [])])
    assert status_of(doc, UNADMITTED) == "applies"  # b is admitted by no pool
    assert status_of(doc, UNLABELLED) == "applies"  # b has no class label
    ok = [POOL, template("a", ["default"], cls="gpu"), template("b", ["default"], cls="cpu")]
    doc = _check_cluster(fake_api, ok)
    assert status_of(doc, UNADMITTED) == "does-not-apply"
    assert status_of(doc, UNLABELLED) == "does-not-apply"


def test_no_object_of_the_kind_is_a_known_empty_list(fake_api: FakeAPIFactory) -> None:
    doc = _check_cluster(fake_api, [POOL, template("x", [], ns="elsewhere")])
    assert status_of(doc, UNADMITTED) == "does-not-apply"  # none in the fpool namespace


def test_a_403_on_the_kind_leaves_the_object_predicates_may_apply(
    fake_api: FakeAPIFactory,
) -> None:
    objects = [POOL, template("a", ["default"], cls="gpu")]
    doc = _check_cluster(fake_api, objects, faults=Faults(forbidden={"templates"}))
    assert status_of(doc, UNADMITTED) == "may-apply"
    assert status_of(doc, UNLABELLED) == "may-apply"
    text = json.dumps(doc)
    assert "templates.pools.example.test" in text and "403" in text


def test_lint_names_an_object_field_no_product_declares(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(FORMAT, kb)
    hazard = kb / "hazards" / "fpool-worker-behind-controller.yaml"
    hazard.write_text(hazard.read_text().replace("spec.workerImage", "spec.image"))
    code, out, _ = run("kb", "lint", str(kb))
    assert code == 0  # a warning: a stated fact can still settle it
    assert (
        "kb/hazards/fpool-worker-behind-controller.yaml:10 KB029 warning: facts_same_version: "
        "object.Pool.fpool.default.spec.image is a field no product declares under objects:"
    ) in out


# --------------------------------------------------------------------------- change facts

MOVES = "fapp-moves-without-fdb"


def _release(name: str, version: str) -> str:
    return (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        f"metadata: {{name: {name}, namespace: apps}}\n"
        "spec:\n  interval: 10m\n  chart:\n    spec:\n"
        f"      chart: {name}\n"
        f'      version: "{version}"\n'
        "      sourceRef: {kind: HelmRepository, name: charts}\n"
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    apps = tmp_path / "apps"
    apps.mkdir()
    (apps / "fapp.yaml").write_text(_release("fapp", "1.0.0"))
    (apps / "fdb.yaml").write_text(_release("fdb", "1.0.0"))
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "fapp and fdb 1.0.0")
    return tmp_path


def _gate(repo: Path) -> tuple[int, dict[str, Any]]:
    import os

    here = os.getcwd()
    os.chdir(repo)
    try:
        code, out, err = run("check", "--gitops", "apps", "--base", "HEAD", "-o", "json")
    finally:
        os.chdir(here)
    assert code in (0, 3, 4), err
    doc: dict[str, Any] = json.loads(out)
    return code, doc


def test_a_change_that_moves_one_pin_without_the_other(repo: Path) -> None:
    (repo / "apps" / "fapp.yaml").write_text(_release("fapp", "1.1.0"))
    code, doc = _gate(repo)
    assert (code, status_of(doc, MOVES)) == (3, "applies")
    [finding] = [f for f in doc_findings(doc) if f["hazard"] == MOVES]
    assert "apps/fapp.yaml" in json.dumps(finding)


def test_a_change_that_moves_both_pins(repo: Path) -> None:
    (repo / "apps" / "fapp.yaml").write_text(_release("fapp", "1.1.0"))
    (repo / "apps" / "fdb.yaml").write_text(_release("fdb", "1.1.0"))
    code, doc = _gate(repo)
    assert (code, status_of(doc, MOVES)) == (0, "does-not-apply")


def test_without_base_the_change_facts_are_unknown() -> None:
    code, out, _ = run("-v", "check", "--installed", "fapp=1.0.0", "--to", "fapp=1.1.0")
    assert code == 4
    assert f"may-apply      blocking {MOVES}" in out and "missing change.fapp" in out
    code, doc = check_json(
        "--installed", "fapp=1.0.0", "--to", "fapp=1.1.0", "--fact", "change.fapp=moved",
        "--fact", "change.fdb=kept",
    )  # fmt: skip
    assert (code, status_of(doc, MOVES)) == (3, "applies")


def doc_findings(doc: object) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "hazard" in node and "status" in node:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    return found


def test_a_snapshot_keeps_the_fields_and_the_list_of_the_kind(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = fake_api.start([POOL, template("a", ["default"], cls="gpu"), template("b", [])])
    kubeconfig = fake_api.kubeconfig({"lab": server})
    out = tmp_path / "lab.yaml"
    code, _, err = run("snapshot", "--kubeconfig", kubeconfig, "-f", str(out))
    assert code == 0, err
    hop = ("--installed", "fpool=1.0.0", "--to", "fpool=1.1.0")
    _, doc = check_json("--snapshot", str(out), *hop)
    assert status_of(doc, UNADMITTED) == "applies"
    assert status_of(doc, UNLABELLED) == "applies"


def test_kubectl_output_gives_the_fields_but_not_a_complete_list(tmp_path: Path) -> None:
    # `kubectl get templates -A -o yaml` prints a plain List, which may have been filtered
    items = [template("a", ["default"], cls="x")]
    listing = {"apiVersion": "v1", "kind": "List", "items": items}
    path = tmp_path / "kubectl.json"
    path.write_text(json.dumps(listing))
    hop = ("--installed", "fpool=1.0.0", "--to", "fpool=1.1.0")
    _, doc = check_json("--snapshot", str(path), *hop)
    assert status_of(doc, UNADMITTED) == "may-apply"  # a admitted; others may exist
    items.append(template("b", []))
    path.write_text(json.dumps(listing))
    _, doc = check_json("--snapshot", str(path), *hop)
    assert status_of(doc, UNADMITTED) == "applies"  # b is one, whatever else exists
