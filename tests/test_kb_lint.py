"""``upgradeplan kb lint``: every deliberate mistake of tests/fixtures/kb-broken, in one run."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from upgradeplan.cli import cli
from upgradeplan.kb.lint import lint
from upgradeplan.kb.problems import CATALOGUE

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BROKEN = FIXTURES / "kb-broken"
MINI = FIXTURES / "kb-mini"

# file:line CODE — every problem kb-broken holds, and nothing else.
EXPECTED = {
    "kb-broken/hazards/amends-nothing.yaml:4 KB028",
    "kb-broken/hazards/bad-pattern.yaml:10 KB015",
    "kb-broken/hazards/bad-predicate.yaml:10 KB018",
    "kb-broken/hazards/bad-predicate.yaml:11 KB018",
    "kb-broken/hazards/bad-range.yaml:9 KB009",
    "kb-broken/hazards/no-advice.yaml:1 KB019",
    "kb-broken/hazards/no-advice.yaml:1 KB020",
    "kb-broken/hazards/no-advice.yaml:1 KB026",
    "kb-broken/hazards/range-nothing.yaml:8 KB011",
    "kb-broken/hazards/schema-bad.yaml:6 KB002",
    "kb-broken/hazards/schema-bad.yaml:8 KB002",
    "kb-broken/hazards/skip-bad-stop.yaml:9 KB010",
    "kb-broken/hazards/undeclared-field.yaml:9 KB029",
    "kb-broken/hazards/unknown-refs.yaml:5 KB005",
    "kb-broken/hazards/unknown-refs.yaml:9 KB007",
    "kb-broken/migrations/bad-syntax.yaml:10 KB014",
    "kb-broken/migrations/undefined-var.yaml:7 KB014",
    "kb-broken/migrations/bad-syntax.yaml:1 KB032",
    "kb-broken/migrations/undefined-var.yaml:1 KB032",
    "kb-broken/products/wrong-name.yaml:3 KB003",
    "kb-broken/releases/app/1.0.0.yml:1 KB004",
    "kb-broken/releases/app/1.1.0.yaml:5 KB023",
    "kb-broken/releases/app/1.1.0.yaml:8 KB006",
    "kb-broken/releases/app/1.1.0.yaml:10 KB005",
    "kb-broken/releases/app/1.2.0.yaml:6 KB012",
    "kb-broken/releases/app/1.2.0.yaml:6 KB013",
    "kb-broken/releases/app/1.3.0.yaml:6 KB013",
    "kb-broken/releases/app/1.4.0.yaml:6 KB021",
    "kb-broken/releases/app/1.4.0.yaml:7 KB017",
    "kb-broken/releases/app/1.5.0.yaml:7 KB009",
    "kb-broken/releases/app/1.6.0.yaml:4 KB002",
    "kb-broken/releases/app/1.7.0.yaml:7 KB024",
    "kb-broken/releases/app/1.7.0.yaml:8 KB022",
    "kb-broken/releases/app/1.8.0.yaml:8 KB025",
    "kb-broken/releases/app/1.8.0.yaml:9 KB027",
    "kb-broken/releases/app/2.0.0.yaml:6 KB001",
    "kb-broken/releases/app/next.yaml:5 KB016",
    "kb-broken/releases/lib/banana.yaml:4 KB008",
    "kb-broken/releases/lib/0.3.0.yaml:5 KB030",
    "kb-broken/products/lib.yaml:7 KB031",
    "kb-broken/releases/other/0.2.0.yaml:3 KB003",
    "kb-broken/stray.yaml:1 KB003",
}

INFERRED_MARK = "kb-broken/releases/app/1.8.0.yaml:8 KB025"


def run(*args: str, cwd: Path = FIXTURES) -> tuple[int, str, str]:
    """``upgradeplan *args`` in ``cwd`` (kb lint names files relative to it)."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def test_every_mistake_is_reported_at_its_line_in_one_run() -> None:
    code, out, _ = run("kb", "lint", "--no-bundled", str(BROKEN))
    assert code == 2
    lines = out.splitlines()
    found = {" ".join(line.split(" ")[:2]) for line in lines}
    assert found == EXPECTED - {INFERRED_MARK}  # listed by --inferred instead
    assert len(lines) == len(EXPECTED) - 1
    assert lines == sorted(lines, key=lambda s: (s.split(":")[0], int(s.split(":")[1].split()[0])))


def test_the_broken_fixture_covers_at_least_fifteen_codes() -> None:
    codes = {entry.split()[1] for entry in EXPECTED}
    assert len(codes) >= 15
    # KB040 is a pack manifest's (kb lint --pack): tests/test_kb_packs.py covers it
    assert codes == {c.code for c in CATALOGUE} - {"KB040"}


@pytest.mark.parametrize(
    ("fragment", "message"),
    [
        (
            "bad-predicate.yaml:10 KB018",
            "unknown predicate 'version_belo'; did you mean 'version_below'?",
        ),
        ("bad-predicate.yaml:11 KB018", "missing argument 'product'"),
        ("1.6.0.yaml:4 KB002", "1.6 is not a string; quote it"),
        ("1.5.0.yaml:7 KB009", "'>=>1'"),
        ("banana.yaml:4 KB008", "'banana'"),
        ("1.0.0.yml:1 KB004", "here and at kb-broken/releases/app/1.0.0.yaml:1"),
        ("skip-bad-stop.yaml:9 KB010", "'1.5.0' is not below '1.1.0'"),
        ("undefined-var.yaml:7 KB014", "'namespace' is undefined"),
        ("1.7.0.yaml:8 KB022", "'title' is written twice"),
        ("no-advice.yaml:1 KB019", "warning: "),
        (
            "2.0.0.yaml:6 KB001",
            "flow sequence: did not find expected ',' or ']' (it started on line 5)",
        ),
    ],
)
def test_messages_name_the_input(fragment: str, message: str) -> None:
    _, out, _ = run("kb", "lint", "--no-bundled", str(BROKEN))
    line = next(line for line in out.splitlines() if fragment in line)
    assert message in line


def test_json_output_lists_problems_with_severity() -> None:
    code, out, _ = run("kb", "lint", "--no-bundled", "-o", "json", str(BROKEN))
    assert code == 2
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    # KB025 (a field marked inferred) is listed by --inferred only; KB032 twice
    assert doc["warnings"] == 5
    assert doc["errors"] == len(EXPECTED) - 6
    first = doc["problems"][0]
    assert set(first) == {"file", "line", "code", "severity", "message"}


def test_a_clean_knowledge_base_prints_nothing_and_exits_0() -> None:
    code, out, err = run("kb", "lint", "--no-bundled", str(MINI))
    assert (code, out, err) == (0, "", "")


def test_warnings_alone_exit_0_unless_strict(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    shutil.copytree(MINI, root)
    hazard = root / "hazards" / "landing-120.yaml"
    text = hazard.read_text()
    hazard.write_text(
        "\n".join(line for line in text.splitlines() if not line.startswith("verify"))
    )
    code, out, _ = run("kb", "lint", "--no-bundled", str(root), cwd=tmp_path)
    assert code == 0
    expected = "kb/hazards/landing-120.yaml:1 KB020 warning: hazard 'landing-120' has no verify"
    assert out.strip() == expected + " commands"
    code, _, _ = run("kb", "lint", "--no-bundled", "--strict", str(root))
    assert code == 2


def test_list_checks_prints_the_catalogue() -> None:
    code, out, _ = run("kb", "lint", "--list-checks")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(CATALOGUE) >= 12
    assert lines[0].split()[:2] == ["KB001", "error"]
    codes = [c.code for c in CATALOGUE]
    assert codes == sorted(set(codes))
    code, out, _ = run("kb", "lint", "--list-checks", "-o", "json")
    assert [c["code"] for c in json.loads(out)["checks"]] == codes


def test_kb_dirs_from_the_global_option_are_linted_with_the_bundled_knowledge() -> None:
    code, out, _ = run("--kb", str(BROKEN), "kb", "lint")
    assert code == 2
    assert "kb-broken/stray.yaml:1 KB003" in out


def test_lint_api_returns_problems_sorted() -> None:
    problems = lint([BROKEN], bundled=False)
    assert problems == sorted(problems)
    assert {f"{p.location} {p.code}" for p in problems} == EXPECTED


def test_bundled_knowledge_is_lint_clean() -> None:
    assert run("kb", "lint") == (0, "", "")


def test_inferred_fields_are_listed_by_their_own_option_with_reasons() -> None:
    code, out, _ = run("kb", "lint", "--inferred")
    assert code == 0
    lines = out.splitlines()
    assert lines, "the bundled knowledge marks some fields inferred"
    for line in lines:
        assert " KB025 warning: " in line and " is inferred: " in line, line
        assert line.split(" is inferred: ", 1)[1].strip(), line
    code, out, _ = run("kb", "lint", "--no-bundled", "--inferred", str(BROKEN))
    assert (code, out.split(" ", 2)[:2]) == (0, ["kb-broken/releases/app/1.8.0.yaml:8", "KB025"])


def test_a_kb_fragment_shows_its_own_findings_only_unless_asked(tmp_path: Path) -> None:
    """Linting a team's directory with the bundled knowledge merged in shows the findings of
    the team's files only; --all shows every directory's."""
    root = tmp_path / "team"
    (root / "hazards").mkdir(parents=True)
    (root / "hazards" / "landing-120.yaml").write_text(
        (MINI / "hazards" / "landing-120.yaml")
        .read_text()
        .replace("product: alpha", "product: agent-platform")
        .replace('range: "1.2.0"', 'range: "4.8.0"')
        .replace('verify: ["kubectl -n ns logs deploy/alpha"]\n', "")
    )
    code, out, _ = run("kb", "lint", str(root), cwd=tmp_path)
    assert code == 0
    assert out.splitlines() == [
        "team/hazards/landing-120.yaml:1 KB020 warning: hazard 'landing-120' has no verify commands"
    ]
    code, out, _ = run("--kb", str(root), "kb", "lint", cwd=tmp_path)
    assert out.splitlines() == [
        "team/hazards/landing-120.yaml:1 KB020 warning: hazard 'landing-120' has no verify commands"
    ]
    code, out, _ = run("kb", "lint", "--all", "--inferred", str(root), cwd=tmp_path)
    assert any("/knowledge/" in ln and " KB025 " in ln for ln in out.splitlines())


def test_the_contributing_examples_are_lint_clean(tmp_path: Path) -> None:
    """CONTRIBUTING.md's annotated release, hazard and migration lint clean together."""
    import re

    text = (Path(__file__).resolve().parents[1] / "CONTRIBUTING.md").read_text()
    root = tmp_path / "contrib"
    written = []
    for block in re.findall(
        r"Create\s+`knowledge/([^`]+)`:\n\n```yaml\n(.*?)```", text, flags=re.S
    ):
        path = root / block[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block[1])
        written.append(block[0])
    assert [w.split("/")[0] for w in written] == ["releases", "hazards", "migrations"]
    assert run("kb", "lint", str(root)) == (0, "", "")


def test_paths_open_from_the_working_directory(tmp_path: Path) -> None:
    code, out, _ = run("kb", "lint", "--no-bundled", str(BROKEN), cwd=FIXTURES.parent)
    assert code == 2
    first = out.splitlines()[0]
    path = first.split(":", 1)[0]
    assert path.startswith("fixtures/kb-broken/")
    assert (FIXTURES.parent / path).is_file()
    assert "here and at fixtures/kb-broken/releases/app/1.0.0.yaml:1" in out
    code, out, _ = run("kb", "lint", "--no-bundled", str(BROKEN), cwd=tmp_path)
    assert out.splitlines()[0].startswith(str(BROKEN) + "/")  # outside it: absolute


def test_github_output_annotates_each_problem_on_its_line() -> None:
    code, out, _ = run("kb", "lint", "--no-bundled", "-o", "github", str(BROKEN))
    assert code == 2
    lines = out.splitlines()
    assert len(lines) == len(EXPECTED) - 1  # without the inferred mark
    assert (
        "::error file=kb-broken/hazards/bad-pattern.yaml,line=10,title=KB015::symptom pattern"
        in out
    )
    assert any(
        ln.startswith("::warning file=kb-broken/hazards/no-advice.yaml,line=1,") for ln in lines
    )
