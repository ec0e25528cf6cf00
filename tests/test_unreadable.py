"""What could not be read is named and counts: never a false "safe", never a leaked secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from support.fakeapi import FakeAPIFactory, Faults, fake_api
from support.scenarios import CLUSTER_FIXTURES

from upgradeplan.cli import cli
from upgradeplan.model import KnowledgeBase, State
from upgradeplan.state.merge import merge
from upgradeplan.unreadable import Unreadable, depending, note, records, status_cause

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect


def run(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def results(result: Result) -> list[dict[str, object]]:
    doc = json.loads(result.stdout)
    out: list[dict[str, object]] = doc["results"]
    return out


# --------------------------------------------------------------------------- the record


def test_a_record_says_what_where_and_why_and_round_trips() -> None:
    rec = Unreadable(
        "harnesses.kagent.dev",
        status_cause(403),
        status=403,
        context="prod",
        detail="forbidden",
        keys=("object.Harness",),
    )
    assert str(rec) == "harnesses.kagent.dev in context prod: 403 Forbidden: forbidden"
    assert Unreadable.from_dict(rec.to_dict()) == rec
    index: dict[str, str] = {}
    recs: list[Unreadable] = []
    note(index, recs, rec)
    assert index == {"object.Harness": str(rec)} and recs == [rec]
    assert depending(recs, ["object.Harness.kagent.kagent.exists"]) == [rec]
    assert depending(recs, ["object.HarnessX.a"]) == []


def test_index_entries_without_a_record_are_still_named() -> None:
    got = records((), {"file apps/bom.yaml": "apps/bom.yaml:3: not YAML"})
    assert [(r.kind, r.source, r.detail) for r in got] == [
        ("file", "apps/bom.yaml", "apps/bom.yaml:3: not YAML")
    ]


def test_a_merge_drops_a_record_once_another_input_supplies_its_facts() -> None:
    from upgradeplan.model import Fact
    from upgradeplan.provenance import flag

    rec = Unreadable("/version", "403 Forbidden", status=403, keys=("installed.kubernetes",))
    read = State(unreadable={"installed.kubernetes": str(rec)}, unread=(rec,))
    assert merge(read, State()).unread == (rec,)
    said = State(facts={"installed.kubernetes": Fact("installed.kubernetes", "1.35.0", flag("f"))})
    assert merge(read, said).unread == ()


# --------------------------------------------------------------------------- false "safe"


def _kubeconfig(fake_api: FakeAPIFactory, fixture: str, faults: Faults, git: str) -> str:
    server = fake_api.start(CLUSTER_FIXTURES / fixture, faults=faults, git_version=git)
    return fake_api.kubeconfig({fixture: server})


def test_an_unreadable_kubernetes_version_never_drops_the_requirement(
    fake_api: FakeAPIFactory,
) -> None:
    args = ["check", "--to", "agent-platform=4.8.1"]
    readable = _kubeconfig(fake_api, "s4", Faults(), "v1.31.4")
    assert run([*args, "--kubeconfig", readable]).exit_code == 3  # 4.8.1 needs >= 1.35
    hidden = _kubeconfig(fake_api, "s4", Faults(status={"/version": 403}), "v1.31.4")
    text = run([*args, "--kubeconfig", hidden])
    assert text.exit_code == 4, text.output
    missing = text.stdout.split("To decide, supply", 1)[1]
    assert "installed.kubernetes" in missing
    assert "/version in context s4: 403 Forbidden" in text.stdout
    as_json = run([*args, "--kubeconfig", hidden, "-o", "json"])
    assert as_json.exit_code == 4
    (res,) = results(as_json)
    assert res["verdict"] == "undetermined"
    assert res["unreadable"] == [
        {
            "source": "/version",
            "kind": "resource",
            "cause": "403 Forbidden",
            "status": 403,
            "context": "s4",
            "detail": "injected",
            "unknown": ["installed.kubernetes"],
        }
    ]
    req = next(f for f in res["findings"] if f["hazard"] == "requires:agent-platform@4.8.1")  # type: ignore[attr-defined]
    assert req["status"] == "may-apply"


def test_a_kubernetes_version_nobody_stated_is_may_apply_not_safe() -> None:
    stated = ["check", "--installed", "agent-platform=4.8.0", "--to", "agent-platform=4.8.1"]
    stated += ["--pin", "agent-platform-connectivity=4.8.0"]
    stated += ["--fact", "object.Harness.kagent.kagent.exists=true"]
    stated += ["--fact", "helmrelease.kagent.drift-detection=disabled"]
    result = run(stated)
    assert result.exit_code == 4, result.output
    assert "installed.kubernetes" in result.stdout
    assert run([*stated, "--fact", "kubernetes=1.31.4"]).exit_code == 3
    assert run([*stated, "--fact", "kubernetes=1.35.0"]).exit_code == 0


def test_a_403_on_harnesses_is_undetermined_and_named(fake_api: FakeAPIFactory) -> None:
    args = ["check", "--to", "agent-platform=4.8.1"]
    readable = _kubeconfig(fake_api, "s1", Faults(), "v1.35.0")
    assert run([*args, "--kubeconfig", readable]).exit_code == 0
    kubeconfig = _kubeconfig(fake_api, "s1", Faults(forbidden={"harnesses"}), "v1.35.0")
    text = run([*args, "--kubeconfig", kubeconfig])
    assert text.exit_code == 4, text.output
    assert "Could not be read" in text.stdout
    assert "harnesses.kagent.dev in context s1: 403 Forbidden" in text.stdout
    as_json = run([*args, "--kubeconfig", kubeconfig, "-o", "json"])
    assert as_json.exit_code == 4
    (res,) = results(as_json)
    recs: list[dict[str, object]] = res["unreadable"]  # type: ignore[assignment]
    (rec,) = recs
    assert rec["source"] == "harnesses.kagent.dev" and rec["status"] == 403
    assert rec["unknown"] == ["object.Harness"]
    sarif = json.loads(run([*args, "--kubeconfig", kubeconfig, "-o", "sarif"]).stdout)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any("harnesses.kagent.dev" in n["message"]["text"] for n in notes)
    github = run([*args, "--kubeconfig", kubeconfig, "-o", "github"]).stdout
    assert "::notice title=upgradeplan [s1] read::could not be read: harnesses.kagent.dev" in github
    # --fail-on never publishes without failing, the 403 still named
    never = run([*args, "--kubeconfig", kubeconfig, "--fail-on", "never"])
    assert never.exit_code == 0 and "403 Forbidden" in never.stdout


@pytest.mark.parametrize(("fixture", "before"), [("s1", "safe-with-actions"), ("s4", "safe")])
def test_a_403_on_helmreleases_never_judges_on_versions_only_derived_from_pins(
    fake_api: FakeAPIFactory, fixture: str, before: str
) -> None:
    args = ["check", "--to", "agent-platform=4.8.1"]
    readable = run([*args, "--kubeconfig", _kubeconfig(fake_api, fixture, Faults(), "v1.35.0")])
    assert readable.exit_code == 0 and f"[{fixture}]: {before}" in readable.stdout
    kubeconfig = _kubeconfig(fake_api, fixture, Faults(forbidden={"helmreleases"}), "v1.35.0")
    text = run([*args, "--kubeconfig", kubeconfig])
    assert text.exit_code == 4, text.output
    assert f"[{fixture}]: undetermined" in text.stdout
    assert "agent-platform 4.8.0" in text.stdout or fixture == "s1"
    guess = next(line for line in text.stdout.splitlines() if "derived from its exact pin" in line)
    assert "403 Forbidden" in guess and "--installed agent-platform=VERSION" in guess
    assert f"helmreleases.helm.toolkit.fluxcd.io in context {fixture}: 403 Forbidden" in text.stdout
    assert "Recommended path (safe)" not in text.stdout
    as_json = run([*args, "--kubeconfig", kubeconfig, "-o", "json"])
    assert as_json.exit_code == 4
    (res,) = results(as_json)
    assert res["verdict"] == "undetermined"
    notes: list[str] = res["notes"]  # type: ignore[assignment]
    assert any(n.startswith("agent-platform ") and "403 Forbidden" in n for n in notes)
    recs: list[dict[str, Any]] = res["unreadable"]  # type: ignore[assignment]
    (rec,) = recs
    assert rec["status"] == 403 and "installed.agent-platform" in rec["unknown"]
    assert "values.agent-platform" in rec["unknown"]
    markdown = run([*args, "--kubeconfig", kubeconfig, "-o", "markdown"]).stdout
    assert "could not be read: helmreleases.helm.toolkit.fluxcd.io" in markdown


def test_a_snapshot_keeps_what_a_forbidden_helmrelease_list_leaves_unknown(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    kubeconfig = _kubeconfig(fake_api, "s4", Faults(forbidden={"helmreleases"}), "v1.35.0")
    out = tmp_path / "snap.yaml"
    assert run(["snapshot", "--kubeconfig", kubeconfig, "-f", str(out)]).exit_code == 4
    (rec,) = yaml.safe_load(out.read_text(encoding="utf-8"))["unread"]
    assert "installed.agent-platform" in rec["unknown"]
    replay = run(["check", "--snapshot", str(out), "--to", "agent-platform=4.8.1"])
    assert replay.exit_code == 4 and "agent-platform 4.8.0 is only derived" in replay.stdout


def test_a_failed_helmchart_list_keeps_the_pins_other_sources_gave(
    fake_api: FakeAPIFactory,
) -> None:
    args = ["check", "--to", "agent-platform=4.8.1", "-o", "json"]
    kubeconfig = _kubeconfig(fake_api, "s1", Faults(forbidden={"helmcharts"}), "v1.35.0")
    result = run([*args, "--kubeconfig", kubeconfig])
    (res,) = results(result)
    recs: list[dict[str, Any]] = res["unreadable"]  # type: ignore[assignment]
    (rec,) = recs
    assert rec["source"] == "helmcharts.source.toolkit.fluxcd.io" and rec["status"] == 403
    assert "pin" not in rec["unknown"] and "pin.agent-platform-connectivity" not in rec["unknown"]
    text = run(["-v", "check", "--to", "agent-platform=4.8.1", "--kubeconfig", kubeconfig]).stdout
    read = "observed pin.agent-platform-connectivity = 4.8.1 (from cluster s1: OCIRepository"
    assert read in text
    # nothing the judgement uses rests on the HelmCharts: judged as the readable cluster is
    readable = _kubeconfig(fake_api, "s1", Faults(), "v1.35.0")
    assert result.exit_code == run([*args, "--kubeconfig", readable]).exit_code == 0


def test_what_runs_stated_with_installed_is_judged_on_it(fake_api: FakeAPIFactory) -> None:
    kubeconfig = _kubeconfig(fake_api, "s4", Faults(forbidden={"helmreleases"}), "v1.35.0")
    args = ["check", "--to", "agent-platform=4.8.1", "--kubeconfig", kubeconfig]
    args += ["--installed", "agent-platform=4.8.0"]
    args += ["--installed", "agent-platform-connectivity=4.8.0"]
    values = ["klausGateway.crd.install", "klausGateway.controller.enabled"]
    values += ["muster.autoscaling.enabled"]
    for key in values:
        args += ["--fact", f"values.agent-platform.{key}=false"]
    result = run(args)
    assert result.exit_code == 0, result.output
    assert "derived from its exact pin" not in result.stdout
    assert "403 Forbidden" in result.stdout  # still named: the HelmReleases were not read
    assert run([*args[:-2]]).exit_code == 4  # one value left unread: may apply, blind


def test_what_runs_unreadable_and_underivable_is_exit_4_naming_the_cause(
    fake_api: FakeAPIFactory,
) -> None:
    # s8: a delegate whose version only its Deployment says (no Flux, no pin to derive from)
    args = ["check", "--to", "harness-delegate=0.31.2", "--installed", "harness-cd=24.12.0"]
    readable = _kubeconfig(fake_api, "s8", Faults(), "v1.27.3")
    assert run([*args, "--kubeconfig", readable]).exit_code == 3  # Flux not served: no unknown
    forbidden = _kubeconfig(fake_api, "s8", Faults(forbidden={"deployments"}), "v1.27.3")
    result = run([*args, "--kubeconfig", forbidden])
    assert result.exit_code == 4, result.output
    line = result.stderr.strip()
    assert "installed version of harness-delegate could not be read" in line
    assert "deployments.apps in context s8: 403 Forbidden" in line
    assert "--installed harness-delegate=VERSION" in line and "Traceback" not in result.output
    stated = run([*args, "--kubeconfig", forbidden, "--installed", "harness-delegate=0.29.0"])
    assert stated.exit_code == 3, stated.output  # judged on what the user states


def test_a_snapshot_of_a_partly_unreadable_cluster_says_so(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    kubeconfig = _kubeconfig(fake_api, "s1", Faults(forbidden={"harnesses"}), "v1.35.0")
    out = tmp_path / "snap.yaml"
    result = run(["snapshot", "--kubeconfig", kubeconfig, "-f", str(out)])
    assert result.exit_code == 4, result.output
    assert "could not read harnesses.kagent.dev in context s1: 403 Forbidden" in result.stderr
    doc = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert doc["unread"][0]["status"] == 403
    replay = run(["check", "--snapshot", str(out), "--to", "agent-platform=4.8.1"])
    assert replay.exit_code == 4 and "403 Forbidden" in replay.stdout  # the replay knows too
    scan = run(["scan", "--kubeconfig", kubeconfig])
    assert scan.exit_code == 4 and "403 Forbidden" in scan.stderr


@pytest.mark.parametrize("command", ["check", "scan", "snapshot"])
def test_nothing_readable_is_exit_1_with_the_cause(fake_api: FakeAPIFactory, command: str) -> None:
    everything = {
        p: 401
        for p in (
            "/version",
            "helmreleases",
            "ocirepositories",
            "helmcharts",
            "harnesses",
            "agenttemplates",
            "workerpools",  # a kind the bundled knowledge declares (product substrate)
            "deployments",
            "namespaces",
            "nodes",
            "storageclasses",
            "customresourcedefinitions",
            "/apis/helm.toolkit.fluxcd.io",
            "/apis/source.toolkit.fluxcd.io",
            "/apis/kagent.dev",
            "/apis/ate.dev",
        )
    }
    kubeconfig = _kubeconfig(fake_api, "s1", Faults(status=everything), "v1.35.0")
    result = run([command, "--kubeconfig", kubeconfig])
    assert result.exit_code == 1, result.output
    assert "401 Unauthorized" in result.stderr


def test_a_pin_left_to_flux_substitution_is_located_by_its_typed_line(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    """The record of a pin Flux fills in at apply time carries the pin's file line typed
    (from the fact's Source): SARIF locates it there without reading the record's text."""
    from upgradeplan.readers import gitops

    (tmp_path / "bom.yaml").write_text(
        "components:\n  agent-platform-connectivity:\n    versionRange: '${v}'\n",
        encoding="utf-8",
    )
    state = gitops.read(kb, str(tmp_path))
    [rec] = [r for r in state.unread if "pin.agent-platform-connectivity" in r.keys]
    assert rec.at == (f"{tmp_path}/bom.yaml", 3) and rec.location == f"{tmp_path}/bom.yaml:3"
    assert Unreadable.from_dict(rec.to_dict()) == rec  # the text is what is written
    at = ["--gitops", str(tmp_path), "--installed", "agent-platform=4.7.18"]
    out = run(["check", *at, "--to", "agent-platform=4.8.1", "-o", "sarif"])
    notes = json.loads(out.stdout)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    [note] = [n for n in notes if "${v}" in n["message"]["text"]]
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
