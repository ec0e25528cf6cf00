"""Where a fleet's installations come from: contexts, GitOps trees, subdirectories, streams of
snapshot documents; and the bad input that stops a run before it starts (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from support.cli import run, run_stdout
from support.fakeapi import FakeAPIFactory, fake_api
from support.scenarios import CLUSTER_FIXTURES

__all__ = ["fake_api"]

REPO = Path(__file__).resolve().parents[1]


def _fleet(*args: str) -> tuple[int, dict[str, Any]]:
    code, out = run_stdout("fleet", "-o", "json", *args)
    return code, json.loads(out)


def _check(*args: str) -> tuple[int, list[dict[str, Any]]]:
    code, out = run_stdout("check", "-o", "json", *args)
    return code, list(json.loads(out)["results"])


def _statuses(findings: list[dict[str, Any]]) -> dict[str, str]:
    return {f["hazard"]: f["status"] for f in findings if f["status"] != "does-not-apply"}


def test_every_context_of_a_kubeconfig(fake_api: FakeAPIFactory) -> None:
    servers = {n: fake_api.start(CLUSTER_FIXTURES / n) for n in ("s1", "s6")}
    kubeconfig = fake_api.kubeconfig({**servers, "gone": None})
    code, doc = _fleet("--kubeconfig", kubeconfig, "--to", "latest")
    judged = {i["name"]: i for i in doc["installations"]}
    assert sorted(judged) == ["s1", "s6"]
    [gone] = doc["unreadable"]
    assert gone["name"] == "gone" and gone["source"] == "context gone" and gone["reason"]
    _, alone = _check("--kubeconfig", kubeconfig, "--all-contexts", "--to", "latest")
    for one in alone:
        if one["name"] in judged:
            row = judged[one["name"]]
            assert (row["verdict"], row["exit_code"]) == (one["verdict"], one["exit_code"])
            assert {f["hazard"]: f["status"] for f in row["findings"]} == _statuses(one["findings"])
    assert code == 3


def test_every_installation_of_a_gitops_tree(tmp_path: Path) -> None:
    tree = tmp_path / "monorepo"
    shutil.copytree(REPO / "tests" / "fixtures" / "gitops-layouts" / "monorepo", tree)
    code, doc = _fleet("--gitops", str(tree))
    _, alone = _check("--gitops", str(tree))
    assert sorted(i["name"] for i in doc["installations"]) == sorted(r["name"] for r in alone)
    assert len(alone) > 1
    by_name = {i["name"]: i for i in doc["installations"]}
    for one in alone:
        assert by_name[one["name"]]["verdict"] == one["verdict"]
    assert code == max((r["exit_code"] for r in alone), key=[0, 4, 3].index)


def test_a_subdirectory_is_one_installation_of_several_files(tmp_path: Path) -> None:
    """A kubectl dump in several files, as support receives it: one installation, judged as
    `check --snapshot a --snapshot b` judges it."""
    fleet = tmp_path / "fleet" / "customer-a"
    fleet.mkdir(parents=True)
    shutil.copy(CLUSTER_FIXTURES / "s8" / "objects.yaml", fleet / "objects.yaml")
    (fleet / "version.json").write_text('{"serverVersion": {"gitVersion": "v1.27.3"}}')
    code, doc = _fleet(str(tmp_path / "fleet"), "--to", "latest")
    [row] = doc["installations"]
    assert row["name"] == "customer-a" and row["source"].endswith("customer-a/")
    check_code, [one] = _check(
        "--snapshot",
        str(fleet / "objects.yaml"),
        "--snapshot",
        str(fleet / "version.json"),
        "--to",
        "latest",
    )
    assert (code, row["verdict"]) == (check_code, one["verdict"])
    assert row["findings"] and _statuses(one["findings"]) == {
        f["hazard"]: f["status"] for f in row["findings"]
    }
    assert row["current"]["kubernetes"] == "1.27.3"


def test_a_stream_of_snapshots_is_one_installation_per_document(tmp_path: Path) -> None:
    docs = []
    for name, delegate in (("prod", "0.29.0"), ("staging", "0.31.2")):
        docs.append(
            "schema_version: 1\nkind: upgradeplan-state\n"
            f"name: {name}\nfacts:\n"
            f"  installed.harness-delegate: {{value: '{delegate}', source: stated}}\n"
            "  installed.kubernetes: {value: '1.31.0', source: stated}\n"
        )
    stream = tmp_path / "all-contexts.yaml"
    stream.write_text("---\n".join(docs))
    _, doc = _fleet(str(stream))
    assert [(i["name"], i["source"]) for i in doc["installations"]] == [
        ("prod", f"{stream} (document 1)"),
        ("staging", f"{stream} (document 2)"),
    ]
    assert [i["current"]["harness-delegate"] for i in doc["installations"]] == [
        "0.29.0",
        "0.31.2",
    ]


def test_targets_that_do_not_apply_are_named(tmp_path: Path) -> None:
    snap = tmp_path / "delegate.yaml"
    snap.write_text(
        "schema_version: 1\nkind: upgradeplan-state\nname: d\nfacts:\n"
        "  installed.harness-delegate: {value: '0.31.2', source: stated}\n"
    )
    _, doc = _fleet(str(snap), "--to", "agent-platform=4.8.1", "--to", "harness-delegate=0.29.0")
    [row] = doc["installations"]
    assert row["not_applied"] == ["agent-platform=4.8.1", "harness-delegate=0.29.0"]
    assert row["targets"] == []  # judged as it is


def test_bad_input_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    snap = tmp_path / "a.yaml"
    snap.write_text("schema_version: 1\nkind: upgradeplan-state\nname: a\nfacts: {}\n")
    cases = [
        ((), "no installations given"),
        ((str(tmp_path / "missing"),), "no such file or directory"),
        ((str(tmp_path / "*.json"),), "matches no file"),
        ((str(snap), "--to", "agent-platfrom=4.8.1"), "unknown product"),
        ((str(snap), "--to", "agent-platform=9.9.9"), "agent-platform release"),
        ((str(snap), "--hazard", "no-such-hazard"), "unknown hazard"),
    ]
    for args, words in cases:
        code, out = run("fleet", *args)
        assert code == 2, (args, out)
        assert words in out and "Traceback" not in out, (args, out)
        assert len(out.strip().splitlines()) == 1, out
