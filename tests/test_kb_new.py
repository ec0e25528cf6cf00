"""kb new release|hazard|migration: skeletons that lint without errors, never overwriting."""

from __future__ import annotations

from pathlib import Path

from support.cli import run


def _fill(path: Path, text: str) -> None:
    """What a maintainer does: every ``TODO:`` placeholder replaced by a real sentence."""
    import re

    filled = re.sub(r"TODO: [^\n\"]*", text, path.read_text(encoding="utf-8"))
    path.write_text(filled, encoding="utf-8")


def test_each_skeleton_fails_lint_naming_its_placeholders_until_filled(tmp_path: Path) -> None:
    kb = str(tmp_path / "team-kb")
    code, out = run("kb", "new", "release", "agent-platform", "4.99.0", "--dir", kb)
    assert code == 0, out
    assert "KB030" in out  # it says lint rejects the placeholders
    release = tmp_path / "team-kb" / "releases" / "agent-platform" / "4.99.0.yaml"
    assert release.is_file()
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
    assert code == 2, out  # errors: the placeholders
    mine = [line for line in out.splitlines() if "team-kb" in line and "KB030" in line]
    assert (
        "team-kb/releases/agent-platform/4.99.0.yaml:5 KB030 title is still the "
        "placeholder 'TODO: the release in one line'" in out
    ), out
    assert any("hazards/egress-hook.yaml" in line and "consequence" in line for line in mine)
    assert any("migrations/open-egress.yaml" in line and "template" in line for line in mine)
    for path in tmp_path.rglob("*.yaml"):
        _fill(path, "Moves the egress hook to its own job")
    code, out = run("kb", "lint", kb)
    assert code == 0, out  # warnings only: they name what is left to write
    mine = [line for line in out.splitlines() if "team-kb" in line]
    assert all(" warning: " in line for line in mine), mine
    assert any("KB019" in line for line in mine)  # no symptoms yet


def test_docs_upgrade_md_refuses_a_placeholder(tmp_path: Path) -> None:
    kb = str(tmp_path / "team-kb")
    assert run("kb", "new", "release", "agent-platform", "4.99.0", "--dir", kb)[0] == 0
    code, out = run("--kb", kb, "docs", "upgrade-md", "--product", "agent-platform")
    assert code == 2, out
    assert "4.99.0.yaml:1: title is still the placeholder 'TODO: the release in one line'" in out
    assert "Traceback" not in out and "TODO: the release" not in out.split("\n", 1)[1]
    release = tmp_path / "team-kb" / "releases" / "agent-platform" / "4.99.0.yaml"
    _fill(release, "Moves the egress hook to its own job")
    code, out = run("--kb", kb, "docs", "upgrade-md", "--product", "agent-platform")
    assert code == 0, out
    assert "Moves the egress hook to its own job" in out


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
