"""The fact-key table is the one source of fact keys: kb lint, --fact, the snapshot reader and
the "missing fact" hint all follow it, and every fact a reader gives has a row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from upgradeplan import conditions, errors
from upgradeplan.kb.lint import lint
from upgradeplan.model import KnowledgeBase
from upgradeplan.readers import gitops, snapshot, stated
from upgradeplan.state import keys

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
GPU = keys.KeyRow(
    "gpu.<pool>.sizes",
    r"^gpu\.[^.]+\.sizes$",
    "list",
    "--fact {key}=SIZES (ask the platform team)",
    stated_only=True,
)


def _kb_with_gpu_effect(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb-mini", root)
    release = sorted((root / "releases" / "alpha").glob("*.yaml"))[0]
    release.write_text(release.read_text() + 'effects:\n  gpu.pool-a.sizes: "a,b"\n')
    return root


def _snapshot_with_gpu(tmp_path: Path) -> Path:
    path = tmp_path / "snap.yaml"
    path.write_text(
        "schema_version: 1\nkind: upgradeplan-state\nname: t\nfacts:\n"
        '  gpu.pool-a.sizes: {value: ["a", "b"], source: "stated"}\n'
    )
    return path


def _kb024(root: Path) -> list[str]:
    return [str(p) for p in lint([root], bundled=False) if p.code == "KB024"]


def test_a_key_added_to_the_table_is_accepted_by_all_four(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, snap = _kb_with_gpu_effect(tmp_path), _snapshot_with_gpu(tmp_path)
    # before: not a fact key anywhere
    assert any("gpu.pool-a.sizes" in p for p in _kb024(root))
    with pytest.raises(errors.BadInput, match=r"unknown fact key 'gpu\.pool-a\.sizes'"):
        stated.from_flags(kb, facts=["gpu.pool-a.sizes=a,b"])
    with pytest.raises(errors.BadInput, match=r"'gpu\.pool-a\.sizes' is not a fact key"):
        snapshot.read(str(snap), kb)
    assert conditions.missing_fact_hint("gpu.pool-a.sizes").endswith(keys.READERS_HINT)

    monkeypatch.setattr(keys, "KEYS", (*keys.KEYS, GPU))

    assert _kb024(root) == []
    flagged = stated.from_flags(kb, facts=["gpu.pool-a.sizes=a,b"])
    assert flagged.value("gpu.pool-a.sizes") == ["a", "b"]  # typed by the row: a list
    assert snapshot.read(str(snap), kb).value("gpu.pool-a.sizes") == ["a", "b"]
    hint = conditions.missing_fact_hint("gpu.pool-a.sizes")
    assert hint == "--fact gpu.pool-a.sizes=SIZES (ask the platform team)"


def test_the_row_types_a_stated_value(kb: KnowledgeBase) -> None:
    state = stated.from_flags(
        kb,
        facts=[
            "object.Harness.kagent.kagent.exists=yes",
            "object.Harness.kagent.kagent.annotations=a=1,b=2",
            "nodes.taints=x=y:NoSchedule,z",
            "secret.ns.name.type=Opaque",
            "cluster.autopilot=0",
        ],
    )
    assert state.value("object.Harness.kagent.kagent.exists") is True
    assert state.value("object.Harness.kagent.kagent.annotations") == {"a": "1", "b": "2"}
    assert state.value("nodes.taints") == ["x=y:NoSchedule", "z"]
    assert state.value("secret.ns.name.type") == "Opaque"
    assert state.value("cluster.autopilot") is False


def test_a_known_prefix_with_an_unknown_key_names_the_keys_of_that_prefix(
    kb: KnowledgeBase,
) -> None:
    with pytest.raises(errors.BadInput) as exc:
        stated.from_flags(kb, facts=["workload.harness-delegate.replicas=3"])
    assert "unknown fact key 'workload.harness-delegate.replicas'" in str(exc.value)
    assert "workload.<product>.args" in exc.value.hint


def test_every_documented_key_is_in_the_table_and_every_row_is_documented() -> None:
    doc = (REPO / "docs" / "state-format.md").read_text()
    section = doc.split("## Fact keys", 1)[1].split("\n## ", 1)[0]
    documented = {
        cell.strip("`")
        for line in section.splitlines()
        if line.startswith("| `")
        for cell in [line.split("|")[1].strip()]
    }
    assert documented == {row.key for row in keys.KEYS}


def _reader_states(kb: KnowledgeBase) -> list[object]:
    states: list[object] = []
    for objects in sorted((FIXTURES / "cluster").glob("*/objects.yaml")):
        states.append(snapshot.read(str(objects), kb))
    for tree in sorted(p for p in (FIXTURES / "gitops").iterdir() if p.is_dir()):
        states.append(gitops.read(kb, str(tree)))
    for layout in sorted(p for p in (FIXTURES / "gitops-layouts").iterdir() if p.is_dir()):
        states.extend(gitops.read_installations(kb, str(layout)))
    return states


def test_every_fact_the_readers_give_on_our_fixtures_has_a_row(kb: KnowledgeBase) -> None:
    from upgradeplan.model import State

    seen = 0
    for state in _reader_states(kb):
        assert isinstance(state, State)
        for fact in state:
            seen += 1
            assert keys.match(fact.key) is not None, f"{fact.key} ({fact.source})"
    assert seen > 100


@pytest.mark.parametrize(
    ("key", "row", "product"),
    [
        ("installed.kagent", "installed.<product>", "kagent"),
        ("installed.kagent\n", "installed.<product>", "kagent\n"),  # "$" matches before it
        ("object.Harness.kagent.kagent.exists", "object.<Kind>.<namespace>.<name>.exists", None),
        ("object.Harness.kagent.a.b.exists", "object.<Kind>.<namespace>.<name>.exists", None),
        ("object.Har-ness.kagent.kagent.exists", None, None),
        ("object.9Harness.ns.n.labels", None, None),
        ("object.Harness", "object.<Kind>", None),
        ("object.Harness.ns.n.spec.x", "object.<Kind>.<namespace>.<name>.<field>", None),
        ("crd..stored-versions", None, None),
        ("crd.x.stored-versions", "crd.<name>.stored-versions", None),
        ("values.kagent.", None, None),
        ("values.kagent.a.b", "values.<product>.<key>", "kagent"),
        ("values.kagent", "values.<product>", "kagent"),
        ("cloud.", None, None),
        ("cloud.x", "cloud.<topic>", None),
        ("workload..namespace", None, None),
        ("workload.kagent.max-surge", "workload.<product>.max-surge", "kagent"),
        ("secret.ns.a.b.type", "secret.<namespace>.<name>.type", None),
        ("nodes.taints", "nodes.taints", None),
        ("nodes.taints.x", None, None),
        ("", None, None),
    ],
)
def test_a_key_is_read_by_the_first_row_that_matches_it(
    key: str, row: str | None, product: str | None
) -> None:
    found = keys.match(key)
    assert ((found.row.key, found.product) if found else (None, None)) == (row, product)
