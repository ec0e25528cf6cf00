"""kb new release|hazard|migration: skeletons that lint without errors, never overwriting."""

from __future__ import annotations

from pathlib import Path

from support.cli import run


def test_each_skeleton_lints_without_errors(tmp_path: Path) -> None:
    kb = str(tmp_path / "team-kb")
    code, out = run("kb", "new", "release", "agent-platform", "4.16.0", "--dir", kb)
    assert code == 0, out
    assert (tmp_path / "team-kb" / "releases" / "agent-platform" / "4.16.0.yaml").is_file()
    ref = "giantswarm/agent-platform#413"
    code, out = run(
        "kb", "new", "hazard", "egress-hook", "--product", "agent-platform", "--reference", ref,
        "--dir", kb,
    )  # fmt: skip
    assert code == 0, out
    code, out = run("kb", "new", "migration", "open-egress", "--product", "agent-platform",
                    "--dir", kb)  # fmt: skip
    assert code == 0, out
    code, out = run("kb", "lint", kb)
    assert code == 0, out  # warnings only: they name what is left to write
    mine = [line for line in out.splitlines() if "team-kb" in line]
    assert all(" warning: " in line for line in mine), mine
    assert any("KB019" in line for line in mine)  # no symptoms yet


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    kb = str(tmp_path)
    args = ("kb", "new", "migration", "m1", "--product", "agent-platform", "--dir", kb)
    assert run(*args)[0] == 0
    path = tmp_path / "migrations" / "m1.yaml"
    path.write_text("mine\n", encoding="utf-8")
    code, out = run(*args)
    assert code == 2
    assert "exists already" in out
    assert path.read_text(encoding="utf-8") == "mine\n"


def test_bad_names_are_refused(tmp_path: Path) -> None:
    code, out = run("kb", "new", "hazard", "Bad Id", "--product", "agent-platform",
                    "--reference", "x/y#1", "--dir", str(tmp_path))  # fmt: skip
    assert code == 2 and "lower-case" in out
    code, out = run("kb", "new", "release", "agent-platfrom", "1.0.0", "--dir", str(tmp_path))
    assert code == 2 and "agent-platform" in out
    code, out = run("kb", "new", "release", "agent-platform", "4.x", "--dir", str(tmp_path))
    assert code == 2
