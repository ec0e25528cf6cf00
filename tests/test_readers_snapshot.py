"""Snapshot files: read and write upgradeplan-state documents; kubectl output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from upgradeplan import errors
from upgradeplan.model import Fact, KnowledgeBase, State
from upgradeplan.provenance import in_file, recorded, text
from upgradeplan.readers import snapshot

REPO = Path(__file__).resolve().parents[1]

STATE = State(
    facts={
        "installed.agent-platform": Fact(
            "installed.agent-platform",
            "4.7.18",
            recorded("cluster prod: HelmRelease x/agent-platform"),
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
