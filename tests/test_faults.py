"""The fault suite: check, scan and snapshot against a fake API server in every fault mode;
fleet and snapshot against object storage that cannot be reached or refuses.

Each run must end within --request-timeout x (retries + 1) + 5 s, name the cause, and exit
as documented (4: a source could not be read, its facts unknown). Runs are in-process (the
same code as the console script, without start-up costs) on a thread, so a hang fails the
test instead of stalling it; every server is stopped by its test.

Every server URL here carries a password in its userinfo (``http://user:PASSWORD@host``, in
the kubeconfig and in ``AWS_ENDPOINT_URL``), and no run may print it (:func:`_said`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.fakeapi import (
    FakeAPIFactory,
    FakeAPIServer,
    Faults,
    closed_port,
    fake_api,
    write_kubeconfig,
)
from support.scenarios import CLUSTER_FIXTURES

from upgradeplan.cli import cli
from upgradeplan.model import KnowledgeBase
from upgradeplan.readers.kube import cluster, listing, transport

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

TIMEOUT = 0.5  # --request-timeout
RETRIES = cluster.DEFAULT_RETRIES
BOUND = TIMEOUT * (RETRIES + 1) + 5

HR = "helmreleases"
# mode -> (the faults, words the output must hold)
MODES: dict[str, tuple[Faults, str]] = {
    "403": (Faults(status={HR: 403}), "403 Forbidden"),
    "401": (Faults(status={HR: 401}), "401 Unauthorized"),
    "404": (Faults(status={HR: 404}), "404 Not Found"),
    "500": (Faults(status={HR: 500}), "500 Internal Server Error"),
    "429": (Faults(status={HR: 429}, retry_after="1"), "429 Too Many Requests"),
    "hang": (Faults(no_answer={HR}), "timeout"),
    "slow": (Faults(slow={HR: 3.0}), "timeout"),
    "trickle": (Faults(trickle={HR: 0.3}), "timeout"),
    "drop": (Faults(drop={HR}), "cut off"),
    "truncated": (Faults(truncated={HR}), "parse error"),
    "garbage": (Faults(garbage={HR}), "parse error"),
    "garbage-items": (Faults(garbage_items={HR}), "items are not objects"),
    "410-continue": (Faults(always_gone={HR}), "410 Gone"),
    "repeated-continue": (Faults(repeat_continue={HR}), "repeated a continue token"),
    "empty-pages": (Faults(empty_pages={HR}), "pages without items"),
    "huge": (Faults(huge={HR: 300_000}), "too large"),
}

PASSWORD = "pw-0f-userinfo-9c1e"


def _with_userinfo(url: str) -> str:
    return url.replace("://", f"://alice:{PASSWORD}@", 1)


def _kubeconfig(fake_api: FakeAPIFactory, servers: dict[str, FakeAPIServer | None]) -> str:
    """A kubeconfig whose every server URL carries the password (None: a closed port)."""
    urls = {
        name: _with_userinfo(s.url if s is not None else f"http://127.0.0.1:{closed_port()}")
        for name, s in servers.items()
    }
    return str(write_kubeconfig(fake_api.tmp_path / "kubeconfig", urls))


def _said(result: Result) -> str:
    """Everything a run printed; the password of a URL is never in it."""
    said = result.stdout + result.stderr
    assert PASSWORD not in said, said
    return said


@pytest.fixture(autouse=True)
def _s3_endpoint_with_a_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", _with_userinfo(f"http://127.0.0.1:{closed_port()}"))
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAULTSUITE000001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fault-suite-secret-key-5d0b")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")


COMMANDS: dict[str, list[str]] = {
    "check": ["check", "--to", "agent-platform=4.8.1"],
    "scan": ["scan"],
    "snapshot": ["snapshot"],
}


def _bounded(args: list[str]) -> tuple[Result | None, float]:
    box: list[Result] = []
    started = time.monotonic()
    thread = threading.Thread(target=lambda: box.append(CliRunner().invoke(cli, args)))
    thread.daemon = True
    thread.start()
    thread.join(BOUND + 10)
    return (box[0] if box else None), time.monotonic() - started


@pytest.mark.parametrize("mode", list(MODES))
def test_every_command_ends_in_time_naming_the_cause(
    fake_api: FakeAPIFactory, monkeypatch: pytest.MonkeyPatch, mode: str, tmp_path: Path
) -> None:
    monkeypatch.setattr(listing, "PAGE_SIZE", 1)  # every list is paged: continue faults bite
    monkeypatch.setattr(transport, "MAX_BODY", 200_000)
    faults, cause = MODES[mode]
    server = fake_api.start(CLUSTER_FIXTURES / "s1", faults=faults)
    kubeconfig = fake_api.kubeconfig({"s1": server})
    for command, args in COMMANDS.items():
        result, took = _bounded(
            [*args, "--kubeconfig", kubeconfig, "--request-timeout", str(TIMEOUT)]
        )
        assert result is not None, f"{command} under {mode} did not end"
        assert took < BOUND, f"{command} under {mode} took {took:.1f}s"
        said = _said(result)
        assert result.exit_code == 4, (command, mode, said)
        assert cause in said, (command, mode, said)
        assert "helmreleases.helm.toolkit.fluxcd.io" in said
        assert "Traceback" not in said


def test_a_context_answering_401_everywhere_does_not_hide_the_other(
    kb: KnowledgeBase, fake_api: FakeAPIFactory
) -> None:
    listed = listing.resources(kb)  # the built-in types and the kinds the knowledge declares
    every: dict[str, Any] = {"/version": 401, **{r.plural: 401 for r in listed}}
    every["customresourcedefinitions"] = 401
    every.update({f"/apis/{g}": 401 for g in {r.group for r in listed if r.group}})
    refused = fake_api.start(CLUSTER_FIXTURES / "s1", faults=Faults(status=every))
    fine = fake_api.start(CLUSTER_FIXTURES / "s1", git_version="v1.31.4")
    kubeconfig = _kubeconfig(fake_api, {"refused": refused, "fine": fine})
    args = ["check", "--to", "agent-platform=4.8.0", "--all-contexts", "--kubeconfig", kubeconfig]
    result = CliRunner().invoke(cli, args)
    _said(result)
    assert result.exit_code == 3, result.output  # 'fine' is blocked, and judged
    assert "[fine]: blocked" in result.stdout
    assert "[refused]: undetermined" in result.stdout and "401 Unauthorized" in result.stdout


@pytest.mark.parametrize("mode", ["403", "drop", "garbage"])
def test_a_server_url_with_a_password_is_never_printed(
    fake_api: FakeAPIFactory, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A URL with userinfo is read through the kubernetes client (the own client refuses it);
    its faults are named all the same, the password never."""
    server = fake_api.start(CLUSTER_FIXTURES / "s1", faults=MODES[mode][0])
    kubeconfig = _kubeconfig(fake_api, {"s1": server})
    for command, args in COMMANDS.items():
        result, _ = _bounded([*args, "--kubeconfig", kubeconfig, "--request-timeout", "0.5"])
        assert result is not None, f"{command} under {mode} did not end"
        said = _said(result)
        assert result.exit_code == 4, (command, mode, said)
        assert "Traceback" not in said


def test_an_unreachable_cluster_is_named_without_its_password(fake_api: FakeAPIFactory) -> None:
    kubeconfig = _kubeconfig(fake_api, {"gone": None})
    for args in COMMANDS.values():
        result, _ = _bounded([*args, "--kubeconfig", kubeconfig, "--request-timeout", "0.5"])
        assert result is not None
        said = _said(result)
        assert result.exit_code in (1, 4), said  # 1: no context could be read at all
        assert "'gone'" in said and "Traceback" not in said


S3_COMMANDS: dict[str, list[str]] = {
    "fleet": ["fleet", "s3://snapshots/prod/", "--to", "agent-platform=4.8.1"],
    "fleet-hazard": ["fleet", "s3://snapshots/prod/", "--hazard", "harness-gap-skipping-to-481"],
}


@pytest.mark.parametrize("command", ["fleet", "fleet-hazard"])
def test_unreachable_object_storage_is_named_without_its_password(command: str) -> None:
    pytest.importorskip("boto3")
    result, took = _bounded(S3_COMMANDS[command])
    assert result is not None and took < BOUND
    said = _said(result)
    assert result.exit_code in (1, 2, 4), said
    assert "127.0.0.1" in said and "Traceback" not in said
    assert len(result.stderr.strip().splitlines()) == 1, said


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9\nx", "http://h\r\n:9", "ftp://h", ":"])
def test_a_bad_endpoint_is_exit_2_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, endpoint: str
) -> None:
    pytest.importorskip("boto3")
    monkeypatch.setenv("AWS_ENDPOINT_URL", _with_userinfo(endpoint))
    result = CliRunner().invoke(cli, S3_COMMANDS["fleet"])
    said = _said(result)
    assert result.exit_code == 2, said
    assert said.startswith("upgradeplan: error: AWS_ENDPOINT_URL ")
    assert len(said.strip().splitlines()) == 1, said
