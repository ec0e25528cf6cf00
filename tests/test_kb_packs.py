"""Knowledge packs: finding them, enabling them (--pack, UPGRADEPLAN_PACKS, .upgradeplan.yaml),
listing them (kb packs) and linting one alone (kb lint --pack)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import run, run_in, run_stdout

from upgradeplan.kb import packs

PACK_YAML = """name: demo
version: 1.0.0
description: A demo chart line for the tests.
products:
  - id: demo
    reviewed_through: "1.1.0"
sources:
  - https://example.com/demo/UPGRADE.md
"""

PRODUCT = """schema_version: 1
kind: product
id: demo
name: demo
type: chart
description: A demo chart.
reviewed_through: "1.1.0"
recognise:
  helmrelease: [demo]
  chart: [demo]
"""


def _release(version: str, date: str) -> str:
    return (
        f'schema_version: 1\nkind: release\nproduct: demo\nversion: "{version}"\n'
        f'date: "{date}"\ntitle: "demo {version}"\n'
    )


def write_pack(root: Path, name: str = "demo", manifest: str = PACK_YAML) -> Path:
    """A pack of one product with three releases under ``root/name``."""
    pack = root / name
    (pack / "products").mkdir(parents=True)
    (pack / "releases" / "demo").mkdir(parents=True)
    (pack / "pack.yaml").write_text(manifest)
    (pack / "products" / "demo.yaml").write_text(PRODUCT)
    for v, d in (("1.0.0", "2026-01-01"), ("1.1.0", "2026-02-01"), ("2.0.0", "2026-03-01")):
        (pack / "releases" / "demo" / f"{v}.yaml").write_text(_release(v, d))
    return pack


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A packs root holding the demo pack, standing in for the package's."""
    root = tmp_path / "packs-root"
    write_pack(root)
    (root / "not-a-pack").mkdir()  # no pack.yaml: not listed
    monkeypatch.setattr(packs, "packs_path", lambda: str(root))
    monkeypatch.delenv(packs.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    return root


def test_names_are_the_directories_with_a_manifest(shipped: Path) -> None:
    assert packs.names() == ["demo"]


def test_the_package_ships_a_packs_directory() -> None:
    assert Path(packs.packs_path(), "__init__.py").is_file()


def test_unknown_pack_is_exit_2_naming_it_and_the_known_ones(shipped: Path) -> None:
    code, out = run("--pack", "demp", "kb", "list")
    assert code == 2
    assert "unknown pack 'demp'; the known packs are demo" in out
    assert "did you mean demo?" in out
    assert "Traceback" not in out


def test_without_the_pack_its_product_is_unknown(shipped: Path) -> None:
    code, out = run_stdout("kb", "list", "-o", "json")
    assert code == 0
    assert "demo" not in [p["id"] for p in json.loads(out)["products"]]


@pytest.mark.parametrize(
    "args",
    [("--pack", "demo", "kb", "list"), ("kb", "list", "--pack", "demo")],
    ids=["before", "after"],
)
def test_pack_flag_loads_the_pack_before_or_after_the_command(
    shipped: Path, args: tuple[str, ...]
) -> None:
    code, out = run_stdout(*args, "-o", "json")
    assert code == 0, out
    (demo,) = [p for p in json.loads(out)["products"] if p["id"] == "demo"]
    releases = demo["releases"]
    assert [r["version"] for r in releases] == ["1.0.0", "1.1.0", "2.0.0"]


def test_env_enables_packs(shipped: Path) -> None:
    code, out = run_stdout("kb", "packs", "-o", "json", env={packs.ENV: "demo"})
    assert code == 0
    (row,) = json.loads(out)["packs"]
    assert row["enabled"] is True


def test_env_unknown_pack_is_exit_2(shipped: Path) -> None:
    code, out = run("kb", "packs", env={packs.ENV: "demo, nope"})
    assert code == 2
    assert "unknown pack 'nope'" in out


def test_config_file_enables_packs(shipped: Path, tmp_path: Path) -> None:
    (tmp_path / ".upgradeplan.yaml").write_text("packs: [demo]\n")
    sub = tmp_path / "deep"
    sub.mkdir()
    code, out, _err = run_in(["kb", "packs", "-o", "json"], sub)
    assert code == 0
    assert json.loads(out)["packs"][0]["enabled"] is True


def test_config_file_packs_not_a_list_is_exit_2_with_its_line(
    shipped: Path, tmp_path: Path
) -> None:
    (tmp_path / ".upgradeplan.yaml").write_text("accept: []\npacks: {demo: 1}\n")
    code, _out, err = run_in(["kb", "packs"], tmp_path)
    assert code == 2
    assert ".upgradeplan.yaml:2" in err and "'packs' must be a list" in err


def test_kb_packs_lists_version_products_releases_and_enabled(shipped: Path) -> None:
    code, out = run_stdout("kb", "packs")
    assert code == 0
    assert out.splitlines()[0] == (
        "demo 1.0.0  not enabled  3 releases  demo (reviewed through 1.1.0)"
    )
    code, out = run_stdout("--pack", "demo", "kb", "packs", "-o", "json")
    (row,) = json.loads(out)["packs"]
    assert row == {
        "name": "demo",
        "version": "1.0.0",
        "enabled": True,
        "description": "A demo chart line for the tests.",
        "products": [{"id": "demo", "reviewed_through": "1.1.0"}],
        "releases": 3,
        "sources": ["https://example.com/demo/UPGRADE.md"],
    }


def test_kb_lint_pack_alone_is_clean(shipped: Path) -> None:
    code, out = run("kb", "lint", "--pack", "demo", "--strict")
    assert code == 0, out
    assert out == ""


def test_kb_lint_pack_reports_its_manifest(shipped: Path) -> None:
    bad = PACK_YAML.replace('reviewed_through: "1.1.0"', 'reviewed_through: "2.0.0"')
    bad = bad.replace("version: 1.0.0", "version: one")
    write_pack(shipped, "broken", bad.replace("name: demo", "name: broken"))
    code, out = run("kb", "lint", "--pack", "broken")
    assert code == 2
    assert "broken/pack.yaml:1 KB040 version 'one' is not a version" in out
    assert "reviewed_through '2.0.0' here, '1.1.0' in products/demo.yaml" in out


def test_kb_lint_pack_shows_only_the_packs_files(shipped: Path) -> None:
    (shipped / "demo" / "releases" / "demo" / "2.1.0.yaml").write_text(
        _release("2.1.0", "2026-13-01")
    )
    code, out = run("kb", "lint", "--pack", "demo")
    assert code == 2
    problems = [line for line in out.splitlines() if " KB" in line]
    assert problems and all("demo/releases/demo/2.1.0.yaml" in p for p in problems)


def test_the_manifest_is_not_read_as_knowledge(shipped: Path) -> None:
    from upgradeplan.kb.loader import load_all

    loaded = load_all([shipped / "demo"])
    kb, problems = loaded.kb, loaded.problems
    assert "demo" in kb.products
    assert not [p for p in problems if "pack.yaml" in p.location.file]


def test_a_rerun_command_repeats_the_pack_not_its_directory(shipped: Path) -> None:
    from upgradeplan.commands.judging import rerun_params
    from upgradeplan.render.summary import rerun

    obj = {
        "kb_dirs": (str(shipped / "demo"),),
        "packs": ("demo",),
        "packs_given": ("demo",),
    }
    params = rerun_params(obj, {}, ["demo=2.0.0"], [])
    assert rerun("check", params) == [
        "upgradeplan",
        "check",
        "--pack",
        "demo",
        "--to",
        "demo=2.0.0",
    ]


def test_a_config_file_with_packs_only_is_no_accept_file_error(shipped: Path) -> None:
    from upgradeplan.accept import load_file
    from upgradeplan.kb.loader import load

    (shipped.parent / ".upgradeplan.yaml").write_text("packs: [demo]\n")
    assert load_file(shipped.parent / ".upgradeplan.yaml", load()) == []
