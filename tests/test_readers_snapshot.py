"""Snapshot files: read and write upgradeplan-state documents; kubectl output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run_stdout
from support.fakeapi import FakeAPIFactory, fake_api
from support.scenarios import CLUSTER_FIXTURES

from upgradeplan import errors
from upgradeplan.model import Fact, KnowledgeBase, State
from upgradeplan.provenance import ObjectRef, in_file, read_from, text
from upgradeplan.readers import snapshot
from upgradeplan.readers.kube import cluster

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

REPO = Path(__file__).resolve().parents[1]

STATE = State(
    facts={
        "installed.agent-platform": Fact(
            "installed.agent-platform",
            "4.7.18",
            read_from(
                "HelmRelease x/agent-platform status.history[0]",
                "cluster prod",
                obj=ObjectRef("HelmRelease", "x", "agent-platform"),
                path="status.history[0]",
            ),
        ),
        "pin.agent-platform-connectivity": Fact(
            "pin.agent-platform-connectivity", "4.7.18", in_file("clusters/prod/bom.yaml", 9)
        ),
        "object.Harness.kagent.kagent.annotations": Fact(
            "object.Harness.kagent.kagent.annotations", {"b": "2", "a": "1"}, text("cluster prod")
        ),
        "object.Harness.kagent.kagent.exists": Fact(
            "object.Harness.kagent.kagent.exists", True, text("cluster prod")
        ),
        "workload.harness-delegate.args": Fact(
            "workload.harness-delegate.args", ["--x=1", "--y"], text("cluster prod")
        ),
        "pin.kagent": Fact("pin.kagent", None, text("cluster prod")),
    },
    name="prod",
    unreadable={"secret": "403 Forbidden listing secrets"},
)


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_dump_then_read_gives_the_same_state(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"state.{fmt}"
    path.write_text(snapshot.dump(STATE, fmt), encoding="utf-8")
    back = snapshot.read(str(path))
    assert back.name == "prod"
    assert dict(back.facts) == dict(STATE.facts)
    assert dict(back.unreadable) == dict(STATE.unreadable)


def test_dump_is_deterministic_and_sorted() -> None:
    reordered = State(
        facts=dict(reversed(list(STATE.facts.items()))), name="prod", unreadable=STATE.unreadable
    )
    text = snapshot.dump(STATE)
    assert text == snapshot.dump(reordered)
    import yaml

    keys = list(yaml.safe_load(text)["facts"])
    assert keys == sorted(keys)
    doc = json.loads(snapshot.dump(STATE, "json"))
    assert list(doc) == ["schema_version", "kind", "name", "facts", "unreadable"]


def test_the_example_installation_reads() -> None:
    state = snapshot.read(str(REPO / "examples" / "installation-4.7.18.yaml"))
    assert state.value("installed.agent-platform") == "4.7.18"
    assert state.value("object.Harness.kagent.kagent.exists") is True
    fact = state.get("pin.agent-platform-connectivity")
    assert fact is not None and str(fact.source) == "example: clusters/prod/bom.yaml:9"


BAD_SNAPSHOTS = [
    pytest.param(
        "bad.yaml",
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n  installed.x: {value: [\n",
        "",
        ("malformed YAML",),
        id="malformed-yaml",
    ),
    pytest.param(
        "bad.json",
        '{\n  "schema_version": 1,\n  "kind": oops\n}\n',
        "3",
        (),
        id="malformed-json",
    ),
    pytest.param(
        "s.yaml",
        "schema_version: 1\nkind: something-else\nfacts: {}\n",
        "2",
        ("upgradeplan-state",),
        id="wrong-kind",
    ),
    pytest.param(
        "s.yaml",
        "schema_version: 7\nkind: upgradeplan-state\nfacts: {}\n",
        "1",
        ("schema_version 7",),
        id="unsupported-schema-version",
    ),
    pytest.param(
        "s.yaml",
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n"
        "  installed.agent-platform: {value: 'four', source: x}\n",
        "4",
        ("'four'",),
        id="invalid-version",
    ),
    pytest.param(
        "s.yaml",
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n"
        "  installed.kubernetes: {value: 1.31, source: x}\n",
        "4",
        ("quoted",),
        id="unquoted-number-version",
    ),
    pytest.param(
        "s.yaml",
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n"
        "  pin.kagent: {value: '1.0.0', from: {file: bom.yaml, lines: 9}}\n",
        "4",
        ("fact 'pin.kagent': from: unknown source field 'lines'", "docs/state-format.md"),
        id="bad-from-field",
    ),
    pytest.param(
        "s.yaml",
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n"
        "  pin.kagent: {value: '1.0.0', from: {kind: derived}}\n",
        "4",
        ("a derived source needs behind",),
        id="from-missing-what-its-text-needs",
    ),
    pytest.param(
        "s.yaml",
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n"
        "  pin.kagent: {value: '1.0.0', source: 'bom.yaml:9', from: {file: bom.yaml, line: 10}}\n",
        "4",
        ("source 'bom.yaml:9' is not what its from fields say ('bom.yaml:10')", "edit both"),
        id="source-text-and-from-disagree",
    ),
]


@pytest.mark.parametrize(("name", "text", "line", "words"), BAD_SNAPSHOTS)
def test_a_bad_snapshot_is_a_clear_error_naming_file_and_line(
    tmp_path: Path, name: str, text: str, line: str, words: tuple[str, ...]
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(errors.BadInput) as info:
        snapshot.read(str(path))
    message = str(info.value)
    assert f"{path}:{line}" in message
    for word in words:
        assert word in message


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(errors.BadInput, match="no such file"):
        snapshot.read(str(tmp_path / "nope.yaml"))


def test_plain_kubectl_list_is_read_through_the_object_reader(
    tmp_path: Path, kb: KnowledgeBase
) -> None:

    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "helm.toolkit.fluxcd.io/v2",
                "kind": "HelmRelease",
                "metadata": {"name": "kagent", "namespace": "flux-giantswarm"},
                "spec": {"chart": {"spec": {"chart": "kagent", "version": "0.11.0-gs.6"}}},
            }
        ],
    }
    path = tmp_path / "objects.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    state = snapshot.read(str(path), kb=kb)
    assert state.value("helmrelease.kagent.namespace") == "flux-giantswarm"
    fact = state.get("helmrelease.kagent.namespace")
    assert fact is not None and str(path) in str(fact.source)


def test_multi_document_states_merge_later_wins(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n"
        "  installed.agent-platform: {value: '4.7.18', source: a}\n"
        "---\n"
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n"
        "  installed.agent-platform: {value: '4.7.19', source: b}\n",
        encoding="utf-8",
    )
    assert snapshot.read(str(path)).value("installed.agent-platform") == "4.7.19"


def test_an_empty_kubectl_list_is_an_empty_state_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems: []\n", encoding="utf-8")
    assert list(snapshot.read(str(path))) == []


def test_an_empty_file_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    with pytest.raises(errors.BadInput, match="no state"):
        snapshot.read(str(path))


# --------------------------------------------------------------------------- recorded sources


@pytest.mark.parametrize("fixture", sorted(p.name for p in CLUSTER_FIXTURES.iterdir()))
def test_a_snapshot_of_a_cluster_reads_back_as_the_live_read(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path, fixture: str
) -> None:
    """Every fact's source comes back with its kind and fields (the object, the field path),
    exactly the Source the cluster reader built, not one re-read from its text."""
    server = fake_api.start(CLUSTER_FIXTURES / fixture)
    [live] = cluster.read_contexts(kb, fake_api.kubeconfig({fixture: server}), [], False)
    assert live.state is not None
    path = tmp_path / "snap.yaml"
    path.write_text(snapshot.dump(live.state), encoding="utf-8")
    back = snapshot.read(str(path))
    assert dict(back.facts) == dict(live.state.facts)
    assert back.unread == live.state.unread and back.name == live.state.name


def test_check_and_patch_from_a_snapshot_are_the_live_ones(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """S6: the delegate's values are patched through its HelmRelease (the object the values
    fact was read from), from the cluster and from its snapshot alike."""
    server = fake_api.start(CLUSTER_FIXTURES / "s6")
    kubeconfig = fake_api.kubeconfig({"s6": server})
    code, text = run_stdout("snapshot", "--kubeconfig", kubeconfig)
    assert code == 0
    snap = tmp_path / "s6.yaml"
    snap.write_text(text, encoding="utf-8")
    to = ("--to", "harness-delegate=0.31.2")
    for command in (("check", "-o", "json"), ("check", "-o", "sarif"), ("patch", "-o", "json")):
        live = run_stdout(*command, *to, "--kubeconfig", kubeconfig)
        replayed = run_stdout(*command, *to, "--snapshot", str(snap))
        assert replayed == live, command
    patches = json.loads(live[1])
    assert "strategic-merge" in [i["kind"] for i in patches["patches"]]


def test_gitops_file_lines_survive_a_state_file(tmp_path: Path) -> None:
    """The state ``scan --gitops -o json`` prints, given back with --state, locates findings
    (SARIF, GitHub annotations) and edits (patch) at the same file lines as the tree."""
    tree = str(REPO / "tests" / "fixtures" / "gitops" / "s1")
    code, scanned = run_stdout("scan", "--gitops", tree, "-o", "json")
    assert code == 0
    [result] = json.loads(scanned)["results"]
    kinds = {f["from"]["kind"] for f in result["state"]["facts"].values()}
    assert {"file", "derived", "default"} <= kinds
    state = tmp_path / "state.json"
    state.write_text(json.dumps(result["state"]), encoding="utf-8")
    to = ("--to", "agent-platform=4.8.0")
    for command in (("check", "-o", "sarif"), ("check", "-o", "github"), ("patch", "-o", "json")):
        live = run_stdout(*command, *to, "--gitops", tree)
        replayed = run_stdout(*command, *to, "--state", str(state))
        assert replayed == live, command
    assert "file=" in run_stdout("check", "-o", "github", *to, "--state", str(state))[1]


def _one_fact(tmp_path: Path, entry: str) -> Fact:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"schema_version: 1\nkind: upgradeplan-state\nfacts:\n  pin.kagent: {entry}\n",
        encoding="utf-8",
    )
    fact = snapshot.read(str(path)).get("pin.kagent")
    assert fact is not None
    return fact


def test_a_source_recorded_only_as_text_stays_text(tmp_path: Path) -> None:
    """Snapshots of earlier versions (and hand-written files) with a ``source`` text only:
    the text is printed as it stands and nothing is read out of it (no file line to locate
    or edit; docs/state-format.md)."""
    fact = _one_fact(tmp_path, "{value: '1.0.0', source: 'clusters/prod/bom.yaml:9'}")
    assert fact.source == text("clusters/prod/bom.yaml:9")
    assert fact.source.file_line is None


def test_a_hand_written_file_line_is_a_place_to_locate_and_edit(tmp_path: Path) -> None:
    fact = _one_fact(tmp_path, "{value: '1.0.0', from: {file: clusters/prod/bom.yaml, line: 9}}")
    assert fact.source == in_file("clusters/prod/bom.yaml", 9)
    assert str(fact.source) == "clusters/prod/bom.yaml:9"


def test_a_text_source_is_written_without_fields() -> None:
    doc = snapshot.to_document(STATE)
    facts = doc["facts"]
    assert "from" not in facts["pin.kagent"]
    assert facts["pin.agent-platform-connectivity"]["from"] == {
        "kind": "file",
        "file": "clusters/prod/bom.yaml",
        "line": 9,
    }


def test_the_documented_state_file_reads_as_documented(tmp_path: Path) -> None:
    """docs/state-format.md's example: a recorded object source and a hand-written file line."""
    import re

    doc = (REPO / "docs" / "state-format.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(schema_version: 1\n.*?)```", doc, re.S)
    assert block is not None
    path = tmp_path / "documented.yaml"
    path.write_text(block.group(1), encoding="utf-8")
    state = snapshot.read(str(path))
    pin = state.get("pin.agent-platform-connectivity")
    assert pin is not None and pin.source.file_line == ("clusters/prod/bom.yaml", 9)
    drift = state.get("helmrelease.kagent.drift-detection")
    assert drift is not None and drift.source.kind == "object"
    assert str(drift.source) == (
        "cluster prod: HelmRelease flux-giantswarm/kagent spec.driftDetection (unset)"
    )
