"""Start-up stays light: --help and version import no heavy library; offline check no kubernetes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.scenarios import S1_STATED

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("kubernetes", "networkx", "jinja2")

PROBE = """
import json, sys
from upgradeplan.cli import run
code = run({args!r})
sys.stdout.flush()
print("\\n@@" + json.dumps({{"code": code, "loaded": [m for m in {heavy!r} if m in sys.modules]}}))
"""


def _loaded(args: list[str], heavy: tuple[str, ...] = HEAVY) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=heavy)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    marker = proc.stdout.rsplit("@@", 1)
    assert len(marker) == 2, proc.stdout + proc.stderr
    doc = json.loads(marker[1])
    return int(doc["code"]), list(doc["loaded"])


def test_help_imports_no_heavy_library() -> None:
    code, loaded = _loaded(["--help"])
    assert code == 0
    assert loaded == []


def test_help_does_not_import_the_records_library() -> None:
    """The command list needs no record class (the global option table is plain tuples): the
    msgspec import stays out of ``--help``, which has the tighter start-up budget."""
    code, loaded = _loaded(["--help"], ("msgspec",))
    assert code == 0
    assert loaded == []


def test_version_imports_no_heavy_library() -> None:
    code, loaded = _loaded(["version"])
    assert code == 0
    assert loaded == []


def test_subcommand_help_imports_no_heavy_library() -> None:
    code, loaded = _loaded(["check", "--help"])
    assert code == 0
    assert loaded == []


def test_offline_check_with_stated_facts_does_not_import_kubernetes() -> None:
    code, loaded = _loaded(["check", *S1_STATED, "--to", "agent-platform=4.8.0"])
    assert code == 3
    assert "kubernetes" not in loaded


def test_offline_check_from_a_snapshot_does_not_import_kubernetes() -> None:
    code, loaded = _loaded(
        ["check", "--state", "examples/installation-4.7.18.yaml", "--to", "agent-platform=4.8.0"]
    )
    assert code == 3
    assert "kubernetes" not in loaded


def test_scan_imports_neither_the_fleet_nor_the_gitops_reader() -> None:
    """A live scan pays for no module it does not run: the snapshot command's fleet and S3
    helpers, and the GitOps reader, stay unimported."""
    probe = (
        "import sys, upgradeplan.commands.scan; "
        "print([m for m in sys.modules if m.startswith(('upgradeplan.fleet', "
        "'upgradeplan.readers.gitops', 'upgradeplan.commands.fleet'))])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert proc.stdout.strip() == "[]"
