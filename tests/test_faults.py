"""The fault suite: check, scan and snapshot against a fake API server in every fault mode.

Each run must end within --request-timeout x (retries + 1) + 5 s, name the cause, and exit
as documented (4: a source could not be read, its facts unknown). Runs are in-process (the
same code as the console script, without start-up costs) on a thread, so a hang fails the
test instead of stalling it; every server is stopped by its test.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from support.fakeapi import FakeAPIFactory, Faults, fake_api
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
        said = result.stdout + result.stderr
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
    kubeconfig = fake_api.kubeconfig({"refused": refused, "fine": fine})
    args = ["check", "--to", "agent-platform=4.8.0", "--all-contexts", "--kubeconfig", kubeconfig]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 3, result.output  # 'fine' is blocked, and judged
    assert "[fine]: blocked" in result.stdout
    assert "[refused]: undetermined" in result.stdout and "401 Unauthorized" in result.stdout
