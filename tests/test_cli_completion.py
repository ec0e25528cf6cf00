"""Dynamic completion through click's completion protocol (the bash_complete exchange)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from support.fakeapi import write_kubeconfig

from upgradeplan.cli import cli


def complete(words: str, env: dict[str, str] | None = None) -> list[str]:
    """The values the shell would offer for the last word of ``words``."""
    parts = words.split(" ")
    result = CliRunner().invoke(
        cli,
        [],
        prog_name="upgradeplan",
        env={
            "_UPGRADEPLAN_COMPLETE": "bash_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(parts) - 1),
            **(env or {}),
        },
    )
    assert result.exit_code == 0, result.output
    return [line.split(",", 1)[1] for line in result.output.splitlines() if "," in line]


def test_hazard_ids_for_explain() -> None:
    got = complete("upgradeplan explain har")
    assert "harness-missing-on-480" in got
    assert "harness-handover-skipped" in got
    assert all(g.startswith("har") for g in got)


def test_products_then_versions_for_to() -> None:
    got = complete("upgradeplan check --to agent-")
    assert "agent-platform=" in got
    assert all(g.startswith("agent-") for g in got)
    versions = complete("upgradeplan plan --to agent-platform=4.8")
    assert "agent-platform=4.8.1" in versions
    assert "agent-platform=4.8.0" in versions


def test_contexts_from_the_kubeconfig_on_the_line(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(
        tmp_path / "config", {"prod-eu": "http://127.0.0.1:1", "prod-us": "http://127.0.0.1:1"}
    )
    got = complete(f"upgradeplan scan --kubeconfig {kubeconfig} --context prod")
    assert got == ["prod-eu", "prod-us"]
    before = complete(f"upgradeplan --kubeconfig {kubeconfig} --context prod-")
    assert before == ["prod-eu", "prod-us"]
    from_env = complete("upgradeplan check --context p", env={"KUBECONFIG": str(kubeconfig)})
    assert from_env == ["prod-eu", "prod-us"]


def test_an_unreadable_kubeconfig_completes_nothing(tmp_path: Path) -> None:
    assert complete(f"upgradeplan scan --kubeconfig {tmp_path}/missing --context ") == []


def test_products_and_hazard_ids_for_the_other_options() -> None:
    assert "agent-platform" in complete("upgradeplan graph --product agent")
    assert "agent-platform" in complete("upgradeplan kb list --product agent")
    assert complete("upgradeplan fleet --hazard harness-missing") == ["harness-missing-on-480"]
