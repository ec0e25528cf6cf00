"""Live-cluster reading against the fake API server: scenarios, redaction, faults, requests."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from support.fakeapi import (
    FakeAPIFactory,
    FakeAPIServer,
    Faults,
    exec_plugin_user,
    fake_api,
    load_documents,
)
from support.scenarios import CASES, CLUSTER_FIXTURES, Case, check_mismatches

from upgradeplan import api
from upgradeplan.cli import cli
from upgradeplan.model import KnowledgeBase
from upgradeplan.readers.kube import cluster, listing, objects, session
from upgradeplan.readers.kube.transport import Unreachable
from upgradeplan.results import Inputs

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

SECRET_B64 = "c3VwZXItc2VjcmV0LWRvLW5vdC1sZWFr"
SECRET_PLAIN = "super-secret-do-not-leak"
OTHER_B64 = "aHVudGVyMi1uZXZlci1wcmludA=="


def invoke(args: list[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, args, env=env)


def one_context(
    fake_api: FakeAPIFactory, fixture: str, faults: Faults | None = None
) -> tuple[FakeAPIServer, str]:
    server = fake_api.start(CLUSTER_FIXTURES / fixture, faults=faults)
    return server, fake_api.kubeconfig({fixture: server})


# --------------------------------------------------------------------------- scenarios


CLUSTER_CASES = [c for c in CASES if c.cluster]


@pytest.mark.parametrize("case", CLUSTER_CASES, ids=[c.id for c in CLUSTER_CASES])
def test_scenario_from_a_cluster_answers_like_the_stated_facts(
    case: Case, fake_api: FakeAPIFactory
) -> None:
    assert case.cluster is not None
    _, kubeconfig = one_context(fake_api, case.cluster)
    common = [case.command, "-o", "json", *case.args]
    live = invoke([*common, "--kubeconfig", kubeconfig, *case.cluster_extra])
    stated = invoke([*common, *case.stated])
    assert live.exception is None or isinstance(live.exception, SystemExit), live.output
    assert check_mismatches(case, json.loads(live.stdout), live.exit_code, cluster=True) == [], (
        live.stdout
    )
    assert check_mismatches(case, json.loads(stated.stdout), stated.exit_code) == []


def test_facts_name_the_object_and_field_they_were_read_from(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    _, kubeconfig = one_context(fake_api, "s1")
    [res] = cluster.read_contexts(kb, kubeconfig, [], False)
    assert res.state is not None and res.error is None
    state = res.state
    drift = state.get("helmrelease.kagent.drift-detection")
    assert drift is not None and drift.value == "disabled"
    assert (
        str(drift.source)
        == "cluster s1: HelmRelease flux-giantswarm/kagent spec.driftDetection (unset)"
    )
    installed = state.get("installed.agent-platform")
    assert (
        installed is not None and installed.value == "4.7.18"
    )  # the +digest of the OCI chart is gone
    assert "status.history[0].chartVersion" in str(installed.source)
    pin = state.get("pin.agent-platform-connectivity")
    assert pin is not None and pin.value == "4.7.18" and "spec.ref.semver" in str(pin.source)
    assert state.value("installed.kubernetes") == "1.35.0"
    assert state.value("object.Harness.kagent.kagent.annotations") == {
        "meta.helm.sh/release-name": "agent-platform-connectivity",
        "meta.helm.sh/release-namespace": "kagent",
    }


def test_a_missing_harness_is_known_absent_when_its_kind_was_listed(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    _, kubeconfig = one_context(fake_api, "s4")
    [res] = cluster.read_contexts(kb, kubeconfig, [], False)
    assert res.state is not None
    fact = res.state.get("object.Harness.kagent.kagent.exists")
    assert fact is not None and fact.value is False
    assert str(fact.source) == "cluster s4: Harness kagent/kagent not found"


# --------------------------------------------------------------------------- secrets


def test_snapshot_of_a_cluster_with_secret_data_holds_none_of_it(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server, kubeconfig = one_context(fake_api, "s6")
    out = tmp_path / "snap.yaml"
    result = invoke(["snapshot", "--kubeconfig", kubeconfig, "-f", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    scan = invoke(["scan", "-o", "json", "--kubeconfig", kubeconfig])
    for output in (text, scan.stdout, result.output):
        for value in (SECRET_B64, SECRET_PLAIN, OTHER_B64, "hunter2", 'DELEGATE_TOKEN":'):
            assert value not in output
    assert "secret.harness-delegate-ng.harness-api-key.type" in text
    assert "unrelated-db-password" not in text  # a Secret nobody references is not even named
    secret_requests = [r for r in server.requests if "/secrets" in r.path]
    assert {r.path for r in secret_requests} == {
        "/api/v1/namespaces/harness-delegate-ng/secrets/harness-api-key"
    }


def test_snapshot_is_deterministic_and_replays_offline(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    _, kubeconfig = one_context(fake_api, "s1")
    first = invoke(["snapshot", "--kubeconfig", kubeconfig])
    second = invoke(["snapshot", "--kubeconfig", kubeconfig])
    assert first.exit_code == 0 and first.stdout == second.stdout
    doc = yaml.safe_load(first.stdout)
    assert doc["kind"] == "upgradeplan-state" and doc["name"] == "s1"
    assert list(doc["facts"]) == sorted(doc["facts"])
    snap = tmp_path / "s1.yaml"
    snap.write_text(first.stdout, encoding="utf-8")
    case = next(c for c in CASES if c.id == "S1-check")
    replay = invoke(["check", "-o", "json", "--snapshot", str(snap), *case.args])
    assert check_mismatches(case, json.loads(replay.stdout), replay.exit_code) == []


def test_snapshot_json_to_a_file_is_written_whole(fake_api: FakeAPIFactory, tmp_path: Path) -> None:
    _, kubeconfig = one_context(fake_api, "s7")
    target = tmp_path / "out.json"
    result = invoke(["snapshot", "--kubeconfig", kubeconfig, "-o", "json", "-f", str(target)])
    assert result.exit_code == 0
    assert (
        json.loads(target.read_text())["facts"][
            "secret.harness-delegate-ng.harness-delegate-token.type"
        ]["value"]
        == "harness.io/token"
    )
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".upgradeplan-")] == []


# --------------------------------------------------------------------- kubectl output as a snapshot


@pytest.mark.parametrize("form", ["yaml-list", "json-list", "multi-document"])
def test_kubectl_output_is_a_snapshot(form: str, tmp_path: Path) -> None:
    objects = load_documents([CLUSTER_FIXTURES / "s1" / "objects.yaml"])
    version = {"apiVersion": "v1", "kind": "List", "items": []}
    if form == "yaml-list":
        text = yaml.safe_dump(
            {"apiVersion": "v1", "kind": "List", "items": objects, "metadata": {}}
        )
    elif form == "json-list":
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    else:
        text = yaml.safe_dump_all([*objects, version])
    path = tmp_path / f"kubectl.{'json' if form == 'json-list' else 'yaml'}"
    path.write_text(text, encoding="utf-8")
    case = next(c for c in CASES if c.id == "S1-check")
    result = invoke(["check", "-o", "json", "--snapshot", str(path), *case.args])
    assert check_mismatches(case, json.loads(result.stdout), result.exit_code) == []


# --------------------------------------------------------------------------- requests


def test_no_discovery_and_one_list_per_resource_type_plus_pages(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "PAGE_SIZE", 2)
    server, kubeconfig = one_context(fake_api, "s1")
    [res] = cluster.read_contexts(kb, kubeconfig, [], False)
    assert res.state is not None and res.requests == len(server.requests)
    paths = server.paths()
    assert not {"/api", "/apis", "/api/v1", "/apis/apps/v1"} & set(paths)
    for resource in listing.RESOURCES:
        lists = server.list_requests(resource.plural)
        firsts = [r for r in lists if "continue" not in r.query]
        assert len(firsts) == 1, (resource.plural, [r.path for r in lists])
        assert all(r.query.get("limit") == ["2"] for r in lists)
    # 4 HelmReleases in pages of 2: one list and one continue
    assert len(server.list_requests("helmreleases")) == 2
    assert res.state.value("installed.kagent") == "0.11.0-gs.6"
    assert all(r.auth for r in server.requests)


CRD_GETS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"


def _crd_gets(server: FakeAPIServer) -> list[str]:
    return sorted(r.path[len(CRD_GETS) :] for r in server.requests if r.path.startswith(CRD_GETS))


def test_the_crds_a_hazard_of_an_installed_product_reads_are_read(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server, kubeconfig = one_context(fake_api, "s2")  # agent-platform 3.x, kagent CRDs
    [res] = cluster.read_contexts(kb, kubeconfig, [], False)
    assert res.state is not None and res.state.installed("agent-platform") is not None
    assert _crd_gets(server) == sorted(objects.interests(kb).crds)
    assert res.state.get("crd.modelconfigs.kagent.dev.stored-versions") is not None


def test_no_crd_is_read_when_no_product_found_has_a_hazard_reading_one(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server, kubeconfig = one_context(fake_api, "s6")  # harness-delegate, no agent-platform
    [res] = cluster.read_contexts(kb, kubeconfig, [], False)
    assert res.state is not None and res.state.installed("agent-platform") is None
    assert _crd_gets(server) == []
    # not read: unknown (a hazard reading it would be "may apply"), never "not found"
    assert not [k for k in res.state.facts if k.startswith("crd.")]
    assert res.requests == len(server.requests)


def test_the_garbage_collector_is_on_again_after_a_read(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    import gc

    server, kubeconfig = one_context(fake_api, "s6")
    assert gc.isenabled()
    cluster.read_contexts(kb, kubeconfig, [], False)
    assert gc.isenabled()
    server.stop()  # nothing answers now: the read fails, the collector is still restored
    [res] = cluster.read_contexts(kb, kubeconfig, [], False, timeout=0.5, retries=0)
    assert res.state is None and gc.isenabled()


def test_a_product_another_input_states_has_its_crds_read(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server, kubeconfig = one_context(fake_api, "s6")
    inputs = Inputs(kubeconfig=kubeconfig, installed=("agent-platform=3.9.0",))
    [gathered] = api.gather(kb, inputs)
    assert _crd_gets(server) == sorted(objects.interests(kb).crds)
    assert gathered.state is not None
    assert gathered.state.value("crd.modelconfigs.kagent.dev.stored-versions") == []


@pytest.mark.parametrize("how", ["helmreleases forbidden", "deployments forbidden", "namespace"])
def test_every_crd_is_read_when_which_products_run_is_not_known(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, how: str
) -> None:
    plural = how.split()[0]
    faults = Faults(forbidden={plural}) if "forbidden" in how else None
    server, kubeconfig = one_context(fake_api, "s6", faults)
    namespace = "harness-delegate-ng" if how == "namespace" else None
    [res] = cluster.read_contexts(kb, kubeconfig, [], False, namespace=namespace)
    assert res.state is not None
    assert _crd_gets(server) == sorted(objects.interests(kb).crds)


def test_flux_not_installed(kb: KnowledgeBase, fake_api: FakeAPIFactory) -> None:
    server, kubeconfig = one_context(fake_api, "s8")
    [res] = cluster.read_contexts(kb, kubeconfig, [], False)
    assert res.state is not None
    assert "Flux is not installed" in res.state.unreadable["helmrelease"]
    assert not [k for k in res.state.facts if k.startswith("helmrelease.")]
    assert (
        res.state.value("installed.harness-delegate") == "0.29.0"
    )  # from the Deployment's chart label
    assert res.state.value("installed.kubernetes") == "1.27.3"
    # older versions tried only after a 404, the group asked once, nothing else discovered
    hr_paths = [r.path for r in server.requests if "helm.toolkit" in r.path]
    assert hr_paths == [
        "/apis/helm.toolkit.fluxcd.io/v2/helmreleases",
        "/apis/helm.toolkit.fluxcd.io",
    ]
    scan = invoke(["scan", "--kubeconfig", fake_api.kubeconfig({"s8": server}, name="kc2")])
    assert scan.exit_code == 0 and "Flux is not installed" in scan.stdout


# --------------------------------------------------------------------------- faults


def read(kb: KnowledgeBase, kubeconfig: str, **kw: Any) -> cluster.ContextResult:
    [res] = cluster.read_contexts(kb, kubeconfig, [], False, **kw)
    return res


def test_403_on_secrets_leaves_the_secret_type_unknown_and_named(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    _, kubeconfig = one_context(fake_api, "s7", Faults(forbidden={"secrets"}))
    res = read(kb, kubeconfig)
    assert res.state is not None
    assert "secret.harness-delegate-ng.harness-delegate-token.type" not in res.state
    reason = res.state.unreadable["secret.harness-delegate-ng.harness-delegate-token"]
    assert reason.startswith(
        "Secret harness-delegate-ng/harness-delegate-token in context s7: 403 Forbidden"
    )
    result = invoke(["check", "--kubeconfig", kubeconfig, "--installed", "harness-cd=24.12.0"])
    assert result.exit_code == 4, result.output  # the token hazard may apply
    assert "Traceback" not in result.output


def test_500s_are_retried_then_read(kb: KnowledgeBase, fake_api: FakeAPIFactory) -> None:
    server, kubeconfig = one_context(fake_api, "s1", Faults(errors_500={"helmreleases": 2}))
    res = read(kb, kubeconfig, timeout=2)
    assert res.state is not None and res.state.value("installed.agent-platform") == "4.7.18"
    assert [r.status for r in server.list_requests("helmreleases")] == [500, 500, 200]


def test_persistent_500s_leave_the_facts_unknown(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server, kubeconfig = one_context(fake_api, "s1", Faults(errors_500={"helmreleases": -1}))
    res = read(kb, kubeconfig, timeout=2)
    assert res.state is not None
    assert "installed.agent-platform" not in res.state
    assert (
        "500" in res.state.unreadable["helmrelease"]
        and "after 3 attempts" in res.state.unreadable["helmrelease"]
    )
    assert len(server.list_requests("helmreleases")) == 3
    assert res.state.value("pin.agent-platform-connectivity") == "4.7.18"  # the rest was read


def test_truncated_json_is_unknown_not_a_crash(kb: KnowledgeBase, fake_api: FakeAPIFactory) -> None:
    _, kubeconfig = one_context(fake_api, "s1", Faults(truncated={"harnesses"}))
    res = read(kb, kubeconfig, timeout=2)
    assert res.state is not None
    assert "not valid JSON" in res.state.unreadable["object.Harness"]
    assert "object.Harness.kagent.kagent.exists" not in res.state


@pytest.mark.parametrize("fault", ["slow", "no_answer"])
def test_slow_or_silent_answers_time_out(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, fault: str
) -> None:
    faults = (
        Faults(slow={"agenttemplates": 3.0})
        if fault == "slow"
        else Faults(no_answer={"agenttemplates"})
    )
    _, kubeconfig = one_context(fake_api, "s1", faults)
    started = time.monotonic()
    # the whole read may take timeout x (retries + 1) = 2 s: time enough for the other
    # resources on a busy machine, and still less than the 3 s slow answer
    res = read(kb, kubeconfig, timeout=1.0, retries=1)
    assert time.monotonic() - started < 30  # loose bound: the run ends, it does not hang
    assert res.state is not None
    assert "no complete answer" in res.state.unreadable["object.AgentTemplate"]
    assert res.state.value("installed.agent-platform") == "4.7.18"


def test_a_server_that_never_answers_is_unreachable_not_a_hang(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    server, kubeconfig = one_context(fake_api, "s1", Faults(no_answer={"/version"}))
    started = time.monotonic()
    res = read(kb, kubeconfig, timeout=0.3, retries=1)
    assert time.monotonic() - started < 30
    assert res.state is None and res.error is not None
    assert "GET /version: no complete answer" in res.error and "(after 2 attempts)" in res.error
    assert server.paths() == ["/version", "/version"]  # nothing else is tried


def test_expired_continue_token_relists(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "PAGE_SIZE", 3)
    server, kubeconfig = one_context(fake_api, "s1", Faults(gone_on_continue=1))
    res = read(kb, kubeconfig)
    assert res.state is not None
    assert res.state.value("installed.kagent-crds") == "0.11.0-gs.6"
    assert 410 in [r.status for r in server.requests]
    assert not res.state.unreadable


def test_unreachable_cluster_is_a_clear_error(fake_api: FakeAPIFactory) -> None:
    kubeconfig = fake_api.kubeconfig({"gone": None})
    result = invoke(["scan", "--kubeconfig", kubeconfig])
    assert result.exit_code == 1
    assert "gone" in result.output and "connection refused" in result.output
    assert "Traceback" not in result.output


def test_three_contexts_one_unreachable(fake_api: FakeAPIFactory) -> None:
    one = fake_api.start(CLUSTER_FIXTURES / "s1")
    two = fake_api.start(CLUSTER_FIXTURES / "s6")
    kubeconfig = fake_api.kubeconfig({"prod": one, "edge": two, "lost": None})
    result = invoke(["scan", "-o", "json", "--kubeconfig", kubeconfig, "--all-contexts"])
    assert result.exit_code == 4
    doc = json.loads(result.stdout)
    by_name = {r["name"]: r for r in doc["results"]}
    assert set(by_name) == {"prod", "edge", "lost"}
    assert by_name["prod"]["state"]["facts"]["installed.agent-platform"]["value"] == "4.7.18"
    assert by_name["edge"]["state"]["facts"]["installed.harness-delegate"]["value"] == "0.29.0"
    assert "cannot reach" in by_name["lost"]["error"]
    assert "'lost' could not be read" in result.stderr
    check = invoke(["check", "--kubeconfig", kubeconfig, "--context", "prod", "--context", "lost"])
    assert check.exit_code == 4 and "lost" in check.output and "connection refused" in check.output


def test_kubeconfig_list_as_kubectl_and_unknown_context(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    one = fake_api.start(CLUSTER_FIXTURES / "s7")
    two = fake_api.start(CLUSTER_FIXTURES / "s8")
    first = fake_api.kubeconfig({"a": one}, name="first")
    second = fake_api.kubeconfig({"b": two}, name="second")
    env = {"KUBECONFIG": f"{first}:{second}"}
    result = invoke(["scan", "-o", "json", "--all-contexts"], env=env)
    assert result.exit_code == 0, result.output
    assert [r["name"] for r in json.loads(result.stdout)["results"]] == ["a", "b"]
    only_b = invoke(["scan", "-o", "json", "--context", "b"], env=env)
    assert [r["name"] for r in json.loads(only_b.stdout)["results"]] == ["b"]
    assert one.requests and len(two.requests) > 0
    wrong = invoke(["scan", "--context", "c"], env=env)
    assert wrong.exit_code == 2 and "unknown kubeconfig context 'c'" in wrong.output


def test_missing_kubeconfig_is_bad_input(tmp_path: Path) -> None:
    result = invoke(["scan", "--kubeconfig", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "not found" in result.output


def test_scan_text_shows_provenance(fake_api: FakeAPIFactory) -> None:
    _, kubeconfig = one_context(fake_api, "s6")
    result = invoke(["scan", "--kubeconfig", kubeconfig])
    assert result.exit_code == 0
    assert (
        "workload.harness-delegate.args = --instance-metadata-url=https://169.254.169.254"
        in result.stdout
    )
    assert "from cluster s6: Deployment harness-delegate-ng/harness-delegate" in result.stdout
    as_yaml = invoke(["scan", "-o", "yaml", "--kubeconfig", kubeconfig])
    assert yaml.safe_load(as_yaml.stdout)["results"][0]["state"]["name"] == "s6"


# --------------------------------------------------------------------- TLS and credentials


def test_https_with_the_cluster_ca(kb: KnowledgeBase, fake_api: FakeAPIFactory) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s8", tls=True)
    assert server.url.startswith("https://")
    res = read(kb, fake_api.kubeconfig({"tls": server}))
    assert res.error is None and res.state is not None
    assert res.state.value("installed.kubernetes") == "1.27.3"


def test_https_with_a_wrong_ca_is_a_named_context_error(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s8", tls=True)
    other = fake_api.start(CLUSTER_FIXTURES / "s8", tls=True)
    assert other.tls is not None
    kubeconfig = fake_api.kubeconfig({"tls": server}, ca_files={"tls": other.tls[0]})
    res = read(kb, kubeconfig)
    assert res.state is None and res.error is not None
    assert "tls" in res.error and "CERTIFICATE_VERIFY_FAILED" in res.error.upper().replace(" ", "_")
    result = invoke(["scan", "--kubeconfig", kubeconfig])
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_exec_credential_plugin(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s7")
    user = exec_plugin_user(tmp_path)
    res = read(kb, fake_api.kubeconfig({"exec": server}, users={"exec": user}))
    assert res.state is not None and res.state.value("installed.harness-delegate") == "0.31.2"
    assert {r.authorization for r in server.requests} == {"Bearer from-the-plugin"}


def test_snapshot_of_several_contexts_writes_the_readable_ones(fake_api: FakeAPIFactory) -> None:
    one = fake_api.start(CLUSTER_FIXTURES / "s7")
    two = fake_api.start(CLUSTER_FIXTURES / "s8")
    kubeconfig = fake_api.kubeconfig({"a": one, "b": two, "down": None})
    result = invoke(["snapshot", "--kubeconfig", kubeconfig, "--all-contexts"])
    assert result.exit_code == 4
    assert [d["name"] for d in yaml.safe_load_all(result.stdout)] == ["a", "b"]
    assert "'down' could not be read" in result.stderr
    as_json = invoke(["snapshot", "--kubeconfig", kubeconfig, "--context", "b", "-o", "json"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)["name"] == "b"
    nothing = invoke(["snapshot", "--kubeconfig", kubeconfig, "--context", "down"])
    assert nothing.exit_code == 1 and "no context could be read" in nothing.output


def test_parallel_calls_keep_their_order_and_hand_back_the_first_error() -> None:
    def slow(i: int) -> int:
        time.sleep(0.01 * (5 - i))  # the first calls end last
        return i

    calls: list[Callable[[], int]] = [partial(slow, i) for i in range(6)]
    assert session.in_parallel(calls, 4) == list(range(6))

    def boom() -> int:
        raise Unreachable("connection refused")

    with pytest.raises(Unreachable, match="connection refused"):
        session.in_parallel([*calls, boom], 4)
