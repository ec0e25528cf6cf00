"""The fact-key table is the one source of fact keys: kb lint, --fact, the snapshot reader and
the "missing fact" hint all follow it, and every fact a reader gives has a row."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@pytest.mark.parametrize("row", keys.KEYS, ids=lambda r: r.key)
def test_every_key_a_row_matches_starts_with_its_literal_prefix(row: keys.KeyRow) -> None:
    """match() skips a row's regex when the key lacks the row's literal prefix: never wrongly."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    assert row.literal  # every row of the table is filtered
    pattern = re.compile(row.pattern)

    @settings(max_examples=40, deadline=None)
    @given(st.from_regex(pattern, fullmatch=True))
    def check(key: str) -> None:
        if pattern.match(key):
            assert key.startswith(row.literal)

    check()


def test_literal_prefix_stops_before_what_is_not_literal() -> None:
    assert keys.literal_prefix(r"^installed\.(?P<p>[^.]+)$") == "installed."
    assert keys.literal_prefix(r"^nodes\.taints$") == "nodes.taints"
    assert keys.literal_prefix(r"^ab*c") == "a"  # b may be absent
    assert keys.literal_prefix(r"^a\.b{2}") == "a."
    assert keys.literal_prefix(r"^a|b") == ""  # an alternation: no filter
    assert keys.literal_prefix(r"a\.b") == ""  # not anchored: no filter


def _by_regex(key: str) -> keys.Match | None:
    """keys.match as the regular expressions alone answer it (the reference)."""
    for row in keys.KEYS:
        m = row.compiled.match(key)
        if m is not None:
            return keys.Match(row, m.groupdict().get("p"))
    return None


_ROW_WORDS = sorted({w for row in keys.KEYS for w in re.split(r"[^A-Za-z-]+", row.pattern) if w})
_WORDS = st.sampled_from(
    [".", "..", "a", "Z", "9", "-", "\n", "é", "_", "Harness", "kagent", "exists", *_ROW_WORDS]
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_WORDS, max_size=9).map("".join))
def test_a_key_matches_the_row_and_product_its_regular_expression_gives(key: str) -> None:
    """The rows' patterns are run as string tests (keys.shape_of): the same answers."""
    assert keys.match(key) == _by_regex(key)


@pytest.mark.parametrize(
    "key",
    [
        "installed.kagent",
        "installed.kagent\n",
        "object.Harness.kagent.kagent.exists",
        "object.Harness.kagent.a.b.exists",
        "object.Har-ness.kagent.kagent.exists",
        "object.9Harness.ns.n.labels",
        "object.Harness",
        "object.Harness.ns.n.spec.x",
        "crd..stored-versions",
        "crd.x.stored-versions",
        "values.kagent.",
        "values.kagent.a.b",
        "cloud.",
        "cloud.x",
        "workload..namespace",
        "secret.ns.a.b.type",
    ],
)
def test_the_string_tests_answer_as_the_regex_on_edges(key: str) -> None:
    assert keys.match(key) == _by_regex(key)


def test_every_row_of_the_table_is_read_as_string_tests() -> None:
    assert all(row.shape is not None for row in keys.KEYS)
    assert keys.shape_of(r"^a(b|c)$") is None and keys.shape_of(r"^a\.[^.]+x$") is None
