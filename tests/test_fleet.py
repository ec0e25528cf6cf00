"""upgradeplan fleet: the roll-up is the sum of the one-by-one checks.

A folder of 200 generated snapshots (the eight reference scenarios' states with varied names
and versions, in upgradeplan's own format and as plain kubectl dumps, some gzipped) plus five
malformed files. Every installation is also checked on its own, the way `upgradeplan check
--snapshot FILE` does (api.gather + api.check, and the real CLI for a sample), and the fleet's
per-hazard counts, verdicts, exit code and --hazard listing must equal what those say.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import run_stdout
from support.fleet_corpus import MALFORMED, Generated, generate, readable_copy

from upgradeplan import api, errors
from upgradeplan.fleet.render import render
from upgradeplan.model import KnowledgeBase, State

HANDOVER = "harness-handover-skipped"


@pytest.fixture(scope="module")
def corpus(kb: KnowledgeBase, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    directory = tmp_path_factory.mktemp("fleet") / "snapshots"
    return directory, generate(kb, directory, 200)


def _one_state(kb: KnowledgeBase, g: Generated, tmp: Path) -> State:
    """The state `check --snapshot FILE` judges (a .gz is given to check gunzipped)."""
    [gathered] = api.gather(kb, api.Inputs(state_files=(str(readable_copy(g, tmp)),)))
    assert gathered.state is not None
    return gathered.state


def _runs_a_chart_or_agent(kb: KnowledgeBase, state: State) -> bool:
    return any(
        state.installed(p) is not None
        for p, spec in kb.products.items()
        if spec.kind in ("chart", "agent")
    )


_CHECKS: dict[str | None, list[tuple[Generated, api.CheckResult]]] = {}


def _one_by_one(
    kb: KnowledgeBase, corpus: list[Generated], tmp: Path, to: str | None
) -> list[tuple[Generated, api.CheckResult]]:
    """Each installation checked alone. A target naming a product the installation does not
    run is left out for it (check would refuse it: that installation is judged as it is)."""
    if to not in _CHECKS:
        _CHECKS[to] = _each(kb, corpus, tmp, to)
    return _CHECKS[to]


def _each(
    kb: KnowledgeBase, corpus: list[Generated], tmp: Path, to: str | None
) -> list[tuple[Generated, api.CheckResult]]:
    out = []
    for g in corpus:
        state = _one_state(kb, g, tmp)
        wanted: list[str] = []
        if to == "latest" and _runs_a_chart_or_agent(kb, state):
            wanted = ["latest"]
        elif to and to != "latest" and state.installed(to.partition("=")[0]):
            wanted = [to]
        try:
            result = api.check(kb, state, wanted)
        except errors.BadInput as exc:  # already past the target: judged as it is
            assert "is below the installed" in str(exc)
            result = api.check(kb, state, [])
        out.append((g, result))
    return out


_RUNS: dict[tuple[str, ...], tuple[int, dict[str, Any]]] = {}


def _fleet(*args: str) -> tuple[int, dict[str, Any]]:
    """`upgradeplan fleet -o json ARGS` (each distinct command run once per session)."""
    if args not in _RUNS:
        code, out = run_stdout("fleet", "-o", "json", *args)
        doc: dict[str, Any] = json.loads(out)
        assert doc["exit_code"] == code
        _RUNS[args] = code, doc
    code, doc = _RUNS[args]
    return code, copy.deepcopy(doc)


def _counts(checks: list[tuple[Generated, api.CheckResult]]) -> dict[str, tuple[int, int]]:
    applies: Counter[str] = Counter()
    may: Counter[str] = Counter()
    for _, result in checks:
        for f in result.findings:
            if f.status == "applies":
                applies[f.hazard] += 1
            elif f.status == "may-apply":
                may[f.hazard] += 1
    return {h: (applies[h], may[h]) for h in sorted(set(applies) | set(may))}


@pytest.mark.parametrize("to", [None, "latest", "agent-platform=4.8.0"])
def test_per_hazard_counts_are_the_sum_of_one_by_one_checks(
    kb: KnowledgeBase, corpus: tuple[Path, list[Generated]], tmp_path: Path, to: str | None
) -> None:
    directory, generated = corpus
    code, doc = _fleet(str(directory), *(["--to", to] if to else []))
    checks = _one_by_one(kb, generated, tmp_path, to)

    rolled = {h["hazard"]: (h["applies"], h["may_apply"]) for h in doc["hazards"]}
    assert rolled == _counts(checks)
    severity = {
        f.hazard: f.severity for _, r in checks for f in r.findings if f.status != "does-not-apply"
    }
    assert {h["hazard"]: h["severity"] for h in doc["hazards"]} == severity
    assert sum(a + m for a, m in rolled.values()) > 0

    # every installation's verdict and exit code are its own check's
    by_name = {i["name"]: i for i in doc["installations"]}
    assert len(by_name) == 200
    for g, result in checks:
        row = by_name[g.path.name.split(".")[0]]
        assert (row["verdict"], row["exit_code"]) == (result.shown_verdict, result.exit_code), g
    # the five malformed files are listed with their reasons
    reasons = {Path(u["source"]).name: u["reason"] for u in doc["unreadable"]}
    assert sorted(reasons) == sorted(MALFORMED)
    for file, (_, words) in MALFORMED.items():
        assert words in reasons[file]
        assert file in reasons[file]
    # the worst code: 3 over 4 over 0, an unreadable member counting as 4
    worst = api.worst_exit([r.exit_code for _, r in checks] + [4] * len(MALFORMED))
    assert code == worst
    assert doc["summary"]["installations"] == 205


def test_the_real_check_command_agrees_on_a_sample(
    corpus: tuple[Path, list[Generated]], tmp_path: Path
) -> None:
    directory, generated = corpus
    _, doc = _fleet(str(directory), "--to", "latest")
    by_name = {i["name"]: i for i in doc["installations"]}
    for g in generated[::25]:
        row = by_name[g.path.name.split(".")[0]]
        args = ["--to", "latest"] if row["targets"] else []
        code, out = run_stdout(
            "check", "-o", "json", "--snapshot", str(readable_copy(g, tmp_path)), *args
        )
        [one] = json.loads(out)["results"]
        assert (row["verdict"], row["exit_code"]) == (one["verdict"], code)
        statuses = {f["hazard"]: f["status"] for f in one["findings"]}
        assert {f["hazard"]: f["status"] for f in row["findings"]} == {
            h: s for h, s in statuses.items() if s != "does-not-apply"
        }
        assert row["missing"] == sorted(
            {m["key"] for f in one["findings"] if f["status"] == "may-apply" for m in f["missing"]}
        )


@pytest.mark.parametrize("to", [None, "agent-platform=4.8.0"])
def test_hazard_lists_exactly_where_it_applies_or_may_apply(
    kb: KnowledgeBase, corpus: tuple[Path, list[Generated]], tmp_path: Path, to: str | None
) -> None:
    directory, generated = corpus
    code, doc = _fleet(str(directory), "--hazard", HANDOVER, *(["--to", to] if to else []))
    # a skip hazard without --to is judged against the newest release it lands on
    assert doc["to"] == ["agent-platform=4.8.0"]
    checks = _one_by_one(kb, generated, tmp_path, "agent-platform=4.8.0")
    expected = {}
    for g, result in checks:
        for f in result.findings:
            if f.hazard == HANDOVER and f.status != "does-not-apply":
                expected[g.path.name.split(".")[0]] = f.status
    listed = {i["name"]: i["status"] for i in doc["installations"]}
    assert listed == expected
    assert expected  # the corpus holds installations it hits
    [hits] = doc["hazards"]
    assert hits["hazard"] == HANDOVER
    assert (hits["applies"], hits["may_apply"]) == (
        list(expected.values()).count("applies"),
        list(expected.values()).count("may-apply"),
    )
    assert code == (3 if "applies" in expected.values() else 4)


def test_hazard_added_with_kb(
    kb: KnowledgeBase, corpus: tuple[Path, list[Generated]], tmp_path: Path
) -> None:
    """A hazard just written (--kb) is evaluated over the fleet like a bundled one."""
    extra = tmp_path / "kb" / "hazards"
    extra.mkdir(parents=True)
    (extra / "delegate-028-state-probe.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "kind": "hazard",
                "id": "delegate-028-state-probe",
                "title": "Delegate 0.28 runs with the old probe",
                "product": "harness-delegate",
                "severity": "warning",
                "scope": "state",
                "when": {"version_below": {"product": "harness-delegate", "version": "0.29.0"}},
                "consequence": "The delegate restarts under load.",
                "avoid": "Move to 0.29.0.",
                "recover": "Restart the delegate.",
            }
        )
    )
    directory, generated = corpus
    code, doc = _kb_fleet(tmp_path / "kb", directory)
    on_028 = sorted(
        g.path.name.split(".")[0]
        for g in generated
        if g.scenario in ("s6", "s7", "s8") and g.version == "0.28.0"
    )
    assert on_028
    assert sorted(i["name"] for i in doc["installations"]) == on_028
    assert {i["status"] for i in doc["installations"]} == {"applies"}
    assert code == 3


def _kb_fleet(kb_dir: Path, directory: Path) -> tuple[int, dict[str, Any]]:
    code, out = run_stdout(
        "--kb",
        str(kb_dir),
        "fleet",
        "-o",
        "json",
        str(directory),
        "--hazard",
        "delegate-028-state-probe",
    )
    return code, json.loads(out)


def test_every_format_renders_the_same_roll_up(
    kb: KnowledgeBase, corpus: tuple[Path, list[Generated]]
) -> None:
    directory, _ = corpus
    code, doc = _fleet(str(directory), "--to", "latest")
    text_code, text = run_stdout("fleet", str(directory), "--to", "latest")
    assert text_code == code
    assert text.startswith("Fleet: 205 installations (")
    for h in doc["hazards"]:
        assert f"{h['hazard']} [{h['severity']}]: applies {h['applies']}, may apply " in text
    for file in MALFORMED:
        assert file in text
    # the other formats of the same roll-up (rendered in-process: the CLI only prints them)
    fleet = api.fleet(kb, [str(directory)], ["latest"])
    assert fleet.exit_code == code
    assert json.loads(render(fleet, "json")) == doc
    assert yaml.safe_load(render(fleet, "yaml")) == doc
    rows = list(csv.DictReader(io.StringIO(render(fleet, "csv"))))
    assert len(rows) == 205
    assert {r["name"]: r["verdict"] for r in rows if not r["error"]} == {
        i["name"]: i["verdict"] for i in doc["installations"]
    }
    assert sum(1 for r in rows if r["error"]) == 5
    markdown = render(fleet, "markdown")
    assert markdown.startswith("# Fleet\n")
    assert "## Hazards" in markdown and "## Not judged" in markdown
    for h in doc["hazards"]:
        assert (
            f"| {h['hazard']} | {h['severity']} | {h['applies']} | {h['may_apply']} |" in markdown
        )


def test_fail_on(corpus: tuple[Path, list[Generated]]) -> None:
    directory, _ = corpus
    delegates = str(directory / "s[68]-*")  # a glob: the S6 and S8 installations
    blocking, doc = _fleet(delegates, "--to", "latest")
    assert blocking == 3
    assert {i["name"][:2] for i in doc["installations"]} == {"s6", "s8"}
    never, doc = _fleet(delegates, "--to", "latest", "--fail-on", "never")
    assert never == 0
    assert doc["installations"]  # still judged and listed
    _, doc = _fleet(delegates, "--to", "latest", "--fail-on", "notice")
    # with every severity counting, warnings and notices block too
    assert any(f["severity"] != "blocking" for i in doc["installations"] for f in i["blocking"])
