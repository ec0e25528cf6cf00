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


def _loaded(args: list[str]) -> tuple[int, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=HEAVY)],
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


def test_a_warm_offline_check_imports_neither_openssl_nor_pickle_py(tmp_path: Path) -> None:
    """The console script's second run (caches filled) keeps the warm path's imports light.

    (pathlib is not asserted: an editable install's import finder loads it at start-up.)"""
    import os

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("UPGRADEPLAN_NO_CACHE", None)
    argv = [sys.executable, "-X", "importtime", "-m", "upgradeplan", "check", *S1_STATED]
    argv += ["--to", "agent-platform=4.8.0"]
    runs = [subprocess.run(argv, capture_output=True, text=True, env=env) for _ in range(2)]
    assert [r.returncode for r in runs] == [3, 3] and runs[0].stdout == runs[1].stdout
    warm = {line.rsplit("|", 1)[-1].strip() for line in runs[1].stderr.splitlines()}
    assert warm >= {"upgradeplan.planner", "_blake2"}
    assert not warm & {"_hashlib", "hashlib", "pickle", "yaml", "jinja2", "click"}  # commands.fast
    # no __init__ compiled (upgradeplan/inits.py has them written out), so none kept
    assert not list(tmp_path.glob("upgradeplan/inits-*.marshal"))


def test_an_offline_check_imports_neither_dataclasses_nor_inspect(tmp_path: Path) -> None:
    """Record classes declare their fields without :mod:`dataclasses` (upgradeplan.frozen),
    which would bring :mod:`inspect` with ``ast``, ``dis`` and ``tokenize``: about a tenth of
    an offline check. Both the first run (caches empty) and the second are held to it."""
    import os

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("UPGRADEPLAN_NO_CACHE", None)
    argv = [sys.executable, "-X", "importtime", "-m", "upgradeplan", "check", *S1_STATED]
    argv += ["--to", "agent-platform=4.8.0"]
    for _ in range(2):
        run = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        assert run.returncode == 3, run.stderr[-2000:]
        imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines()}
        assert "upgradeplan.planner" in imported
        assert not imported & {"dataclasses", "inspect", "ast", "dis", "tokenize"}
