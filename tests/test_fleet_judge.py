"""fleet/judge: which installations share one judgement (the state key)."""

from __future__ import annotations

from pathlib import Path

from upgradeplan import provenance
from upgradeplan.fleet.judge import Judge, state_key
from upgradeplan.fleet.members import Member
from upgradeplan.model import Fact, FactValue, KnowledgeBase, State


def _state(name: str, *facts: Fact, unreadable: dict[str, str] | None = None) -> State:
    return State(facts={f.key: f for f in facts}, name=name, unreadable=unreadable or {})


def test_where_a_fact_was_read_does_not_split_the_key() -> None:
    a = _state("a", Fact("pin.kagent", "0.11.0", provenance.in_file("a/bom.yaml", 3)))
    b = _state("b", Fact("pin.kagent", "0.11.0", provenance.text("cluster b: HelmRelease x")))
    assert state_key(a) == state_key(b)


def test_a_pin_that_follows_a_release_range_is_not_shared_with_a_written_pin() -> None:
    # the planner moves a pin whose source is the release's published range with the release,
    # and keeps a written one: the same value judged differently
    written = _state("a", Fact("pin.kagent", ">=0.11.0", provenance.in_file("bom.yaml", 3)))
    default = _state(
        "b",
        Fact(
            "pin.kagent",
            ">=0.11.0",
            provenance.release_default("agent-platform@4.8.0", "components.kagent.versionRange"),
        ),
    )
    assert state_key(written) != state_key(default)


def test_an_installed_version_derived_from_a_pin_is_not_shared_with_a_read_one(
    kb: KnowledgeBase,
) -> None:
    # with what runs unreadable, a version derived from the pin is a guess (undetermined)
    where = provenance.in_file("bom.yaml", 3)
    unread = {"installed.agent-platform": "HelmRelease list forbidden (403)"}
    pin = Fact("pin.agent-platform", "4.8.0", where)
    guessed = _state("a", pin, unreadable=unread)
    read = _state("b", pin, Fact("installed.agent-platform", "4.8.0", where), unreadable=unread)
    judge = Judge(kb)
    a, b = (judge.state_of(Member(s.name, s.name, s)) for s in (guessed, read))
    assert a.facts["installed.agent-platform"].source.kind == "derived"
    assert a.facts["installed.agent-platform"].value == b.facts["installed.agent-platform"].value
    assert state_key(a) != state_key(b)


def test_values_equal_in_python_but_not_as_facts_are_not_shared() -> None:
    where = provenance.in_file("bom.yaml", 3)
    values: list[FactValue] = [True, 1, "1", {"a": 1}, [["a", 1]], {"1": "x"}, None, [], {}]
    values += [1.0, {1: "x"}]  # type: ignore[list-item]  # as YAML can give them
    keys = {state_key(_state("a", Fact("values.kagent", v, where))) for v in values}
    assert len(keys) == len(values)


def test_an_installation_that_cannot_be_judged_is_undetermined_and_says_why(
    kb: KnowledgeBase,
) -> None:
    # pinned by a range, what runs unknown: check refuses, the row says why (exit 4)
    pinned = _state("a", Fact("pin.kagent", ">=0.1.0", provenance.in_file("bom.yaml", 3)))
    row = Judge(kb, to=["kagent=0.11.0-gs.6"]).judge(Member("a", "a", pinned))
    assert (row.verdict, row.exit_code) == ("undetermined", 4)
    assert row.error is not None and row.error.startswith("cannot be judged: ")
    assert "--installed kagent=VERSION" in row.error


def test_an_empty_snapshot_asked_something_is_undetermined_never_safe(tmp_path: Path) -> None:
    from support.cli import run_stdout

    empty = tmp_path / "empty.yaml"
    empty.write_text("apiVersion: v1\nkind: List\nitems: []\n", encoding="utf-8")
    code, out = run_stdout("fleet", str(empty), "--to", "agent-platform=4.8.0")
    assert code == 4 and f"nothing read from {empty}" in out
    code, out = run_stdout("fleet", str(empty), "--hazard", "harness-handover-skipped")
    assert code == 4 and f"nothing read from {empty}" in out
    code, out = run_stdout("check", "--snapshot", str(empty), "--to", "agent-platform=4.8.0")
    assert code == 4 and f"nothing read from {empty}" in out
    for output in ("json", "sarif", "github", "markdown"):
        code, _ = run_stdout(
            "check", "--snapshot", str(empty), "--to", "agent-platform=4.8.0", "-o", output
        )
        assert code == 4, output
    # asked nothing, there is nothing to judge: 0, as before
    assert run_stdout("fleet", str(empty))[0] == 0
