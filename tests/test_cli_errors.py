"""Bad input: exit 2, one clear line on stderr naming the input, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from upgradeplan.cli import cli


def _fails_cleanly(*args: str) -> str:
    result: Result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("upgradeplan: error: ")
    return lines[0]


def test_unknown_product_suggests_the_nearest() -> None:
    line = _fails_cleanly("check", "--installed", "agent-platfrom=4.7.18")
    assert "'agent-platfrom'" in line and "agent-platform" in line


def test_unknown_target_product() -> None:
    line = _fails_cleanly(
        "check", "--installed", "agent-platform=4.7.18", "--to", "agent-plaform=4.8.0"
    )
    assert "'agent-plaform'" in line and "agent-platform" in line


def test_unknown_target_version_suggests_the_nearest_known_versions() -> None:
    line = _fails_cleanly(
        "check", "--installed", "agent-platform=4.7.18", "--to", "agent-platform=4.8.2"
    )
    assert "'4.8.2'" in line
    assert "4.8.1" in line and "4.8.0" in line


def test_bare_unknown_target_version() -> None:
    line = _fails_cleanly("plan", "--installed", "agent-platform=4.7.18", "--to", "4.8.2")
    assert "'4.8.2'" in line and "4.8.1" in line


def test_malformed_state_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "state.yaml"
    path.write_text(
        "schema_version: 1\nkind: upgradeplan-state\nfacts:\n  installed.x: [unclosed\n",
        encoding="utf-8",
    )
    line = _fails_cleanly("check", "--state", str(path))
    assert f"{path}:" in line
    assert "malformed YAML" in line


def test_missing_state_file() -> None:
    line = _fails_cleanly("check", "--snapshot", "/nonexistent/state.yaml")
    assert "/nonexistent/state.yaml" in line


@pytest.mark.parametrize(
    ("args", "quoted", "flag"),
    [
        (["--installed", "agent-platform=4.7.x.1"], "4.7.x.1", "--installed"),
        (["--installed", "agent-platform=banana"], "banana", "--installed"),
        (
            ["--installed", "agent-platform=4.7.18", "--pin", "agent-platform-connectivity=>>4"],
            ">>4",
            "--pin",
        ),
        (["--installed", "agent-platform=4.7.18", "--to", "agent-platform=4..8"], "4..8", "--to"),
        (["--installed", "harness-delegate=0.29.0", "--fact", "kubernetes=1.2x"], "1.2x", "--fact"),
    ],
)
def test_invalid_version_or_constraint_is_quoted_with_its_flag(
    args: list[str], quoted: str, flag: str
) -> None:
    line = _fails_cleanly("check", *args)
    assert flag in line
    assert repr(quoted) in line


def test_ambiguous_bare_target_lists_the_products() -> None:
    line = _fails_cleanly("check", "--installed", "harness-delegate=0.29.0", "--to", "4.8.0")
    assert "agent-platform=4.8.0" in line and "agent-platform-connectivity=4.8.0" in line
    assert "--to PRODUCT=VERSION" in line


def test_bare_target_means_the_installed_product_that_is_not_a_bom_component() -> None:
    import json

    result = CliRunner().invoke(
        cli,
        [
            "check",
            "-o",
            "json",
            "--installed",
            "agent-platform=4.7.18",
            "--installed",
            "agent-platform-connectivity=4.7.19",
            "--to",
            "4.8.1",
        ],
    )
    assert result.exit_code in (0, 3, 4), result.output
    targets = json.loads(result.stdout)["results"][0]["targets"]
    assert targets == [{"product": "agent-platform", "version": "4.8.1"}]


def test_malformed_fact_names_the_flag() -> None:
    line = _fails_cleanly("check", "--installed", "agent-platform=4.7.18", "--fact", "nokey")
    assert "--fact" in line


def test_no_installation_given() -> None:
    line = _fails_cleanly("check", "--to", "agent-platform=4.8.0")
    assert "--installed" in line


def test_unknown_hold() -> None:
    line = _fails_cleanly(
        "plan", "--installed", "agent-platform=4.7.18", "--hold", "conectivity", "--to", "latest"
    )
    assert "'conectivity'" in line


def test_diagnose_missing_file() -> None:
    line = _fails_cleanly("diagnose", "/nonexistent/log.txt")
    assert "/nonexistent/log.txt" in line


def test_click_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(cli, ["check", "--fail-on", "sometimes"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
