"""The hostile-input corpus: names that try to run, inject or break out, through every output
that writes them (patch text, JSON and folder; the runbook).

Each name replaces a plain one in three scenarios: S4's kagent HelmRelease namespace (a shell
command, a strategic-merge patch), S6's delegate Deployment namespace and name (a JSON 6902
patch) and S7's delegate namespace (a Secret manifest, a JSON 6902 patch "now"). Every shell
line passes ``bash -n`` and, run with a stub kubectl, runs nothing but kubectl with the name as
one argument; every patch parses to the same operations as for the plain name; in the
runbook the name appears only where Markdown renders it as text (code spans and fences that
it cannot close). Names with a control character are refused, naming the fact (exit 2).
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from support.scenarios import HARNESS_CD, S4_STATED, S6_STATED, S7_STATED

from upgradeplan.cli import cli

SENTINEL = "upgradeplan-hostile-ran"
CORPUS: dict[str, str] = {
    "subshell": f"$(touch {SENTINEL})",
    "backticks": f"`touch {SENTINEL}`",
    "quotes": "a'b\"c'\\''d",
    "separators": f"x; touch {SENTINEL} && echo | cat &",
    "yaml": "x: y # - op: remove {path: /spec}",
    "html": "</details><script>alert(1)</script><!--",
    "fence": "```sh `x` ``",
    "long": "n" * 253,
    "non-bmp": "ns-\U0001f600-\U00020000",
}
REFUSED: dict[str, str] = {"newline": "a\nb", "nul": "a\x00b", "escape": "a\x1b[31mb"}

# scenario -> (stated flags, the fact carrying the name, its plain value, --to)
SCENARIOS: dict[str, tuple[tuple[str, ...], str, str, tuple[str, ...]]] = {
    "s4": (
        S4_STATED,
        "helmrelease.kagent.namespace",
        "flux-giantswarm",
        ("--to", "agent-platform=4.8.1"),
    ),
    "s6": (
        S6_STATED,
        "workload.harness-delegate.namespace",
        "harness-delegate-ng",
        ("--to", "harness-delegate=0.31.2"),
    ),
    "s6-name": (
        S6_STATED,
        "workload.harness-delegate.name",
        "harness-delegate",
        ("--to", "harness-delegate=0.31.2"),
    ),
    "s7": (
        (*S7_STATED, *HARNESS_CD),
        "workload.harness-delegate.namespace",
        "harness-delegate-ng",
        (),
    ),
}


def _args(scenario: str, value: str) -> list[str]:
    """The scenario's flags with the name replaced (a namespace also in the keys of the
    Secrets stated in it)."""
    stated, key, plain, to = SCENARIOS[scenario]
    out = [f"{key}={value}" if a.startswith(key + "=") else a for a in stated]
    if key.endswith(".namespace"):
        out = [a.replace(f"secret.{plain}.", f"secret.{value}.") for a in out]
    return out + list(to)


def run(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


@functools.lru_cache(maxsize=32)
def _plain(scenario: str, *command: str) -> Result:
    """The run with the plain name (the same for every name it is compared with)."""
    return run([*command, *_args(scenario, SCENARIOS[scenario][2])])


def _swap(obj: Any, plain: str, name: str) -> Any:
    """``obj`` with every string equal to the plain name replaced by the other."""
    if isinstance(obj, str):
        return name if obj == plain else obj
    if isinstance(obj, dict):
        return {_swap(k, plain, name): _swap(v, plain, name) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_swap(v, plain, name) for v in obj]
    return obj


def _patches(scenario: str, value: str) -> list[dict[str, Any]]:
    plain = value == SCENARIOS[scenario][2]
    result = (
        _plain(scenario, "patch", "-o", "json")
        if plain
        else run(["patch", *_args(scenario, value), "-o", "json"])
    )
    assert result.exit_code == 0, result.output
    items: list[dict[str, Any]] = json.loads(result.stdout)["patches"]
    return items


def _stub_path(tmp_path: Path) -> tuple[dict[str, str], Path]:
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    (stubs / "kubectl").write_text(f"#!/bin/sh\nprintf '%s\\0' \"$@\" >> '{calls}'\n")
    (stubs / "kubectl").chmod(0o755)
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(tmp_path)}
    return env, calls


def _runs_nothing(script: str, name: str, tmp_path: Path) -> None:
    """``script`` parses, and running it calls only the stub kubectl, with ``name`` whole."""
    bash = shutil.which("bash")
    assert bash is not None
    path = tmp_path / "commands.sh"
    path.write_text(script, encoding="utf-8")
    assert subprocess.run([bash, "-n", str(path)], check=False).returncode == 0
    env, calls = _stub_path(tmp_path)
    done = subprocess.run(
        [bash, str(path)], cwd=tmp_path, env=env, check=False, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / SENTINEL).exists()
    args = calls.read_bytes().decode("utf-8").split("\0")
    assert name in args  # one argument, exactly the name


@pytest.mark.parametrize("scenario", ["s4", "s6-name", "s7"])
@pytest.mark.parametrize("label", sorted(CORPUS))
def test_patches_carry_the_name_as_data(scenario: str, label: str, tmp_path: Path) -> None:
    _, _, plain, _ = SCENARIOS[scenario]
    name = CORPUS[label]
    plain_items, items = _patches(scenario, plain), _patches(scenario, name)
    assert [i["kind"] for i in items] == [i["kind"] for i in plain_items]
    for got, want in zip(items, plain_items, strict=True):
        if got["kind"] in ("strategic-merge", "manifest", "json6902"):
            # the same operations, the name where the plain one was, nothing added
            assert list(yaml.safe_load_all(got["content"])) == _swap(
                list(yaml.safe_load_all(want["content"])), plain, name
            )
            assert got["target"] == _swap(want["target"], plain, name)
        elif got["kind"] == "command":
            _runs_nothing(got["content"], name, tmp_path)
    text, plain_text = run(["patch", *_args(scenario, name)]), _plain(scenario, "patch")
    assert text.exit_code == 0 and not (tmp_path / SENTINEL).exists()
    # a name never opens a line of its own: the same lines, each starting the same way
    starts = [line[:2] for line in text.stdout.splitlines()]
    assert starts == [line[:2] for line in plain_text.stdout.splitlines()]


@pytest.mark.parametrize("label", ["subshell", "separators", "non-bmp"])
def test_a_folder_of_patches_runs_nothing_but_kubectl(label: str, tmp_path: Path) -> None:
    name = CORPUS[label]
    out = tmp_path / "patches"
    result = run(["patch", *_args("s4", name), "-o", f"dir={out}"])
    assert result.exit_code == 0, result.output
    (script,) = out.rglob("commands-before.sh")
    _runs_nothing(script.read_text(encoding="utf-8"), name, tmp_path)
    for path in out.rglob("*.yaml"):
        docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        for doc in docs:
            meta = doc.get("metadata") if isinstance(doc, dict) else None
            if isinstance(meta, dict) and "namespace" in meta:
                assert meta["namespace"] == name


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _outside_code(markdown: str) -> str:
    """The Markdown text outside fenced blocks and code spans (CommonMark's rules: a fence
    closes on a line of at least as many of its characters; a code span on a backtick run of
    the same length)."""
    kept: list[str] = []
    opened = ""
    for line in markdown.splitlines():
        stripped = line.strip()
        mark = _FENCE.match(stripped)
        if opened:
            closes = mark and stripped == mark.group(1) and stripped[0] == opened[0]
            if closes and len(stripped) >= len(opened):
                opened = ""
            continue
        if mark:
            opened = mark.group(1)
            continue
        kept.append(line)
    text = "\n".join(kept)
    out, i = [], 0
    while i < len(text):
        if text[i] == "`":
            run_ = re.match(r"`+", text[i:])
            assert run_ is not None
            ticks = run_.group(0)
            close = re.compile(rf"(?<!`){ticks}(?!`)").search(text, i + len(ticks))
            if close:
                i = close.end()
                continue
            out.append(ticks)
            i += len(ticks)
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


@pytest.mark.parametrize("scenario", ["s4", "s6"])
@pytest.mark.parametrize("label", sorted(CORPUS))
def test_the_runbook_renders_the_name_as_text(scenario: str, label: str) -> None:
    name = CORPUS[label]
    plain = _plain(scenario, "plan", "-o", "markdown")
    result = run(["plan", *_args(scenario, name), "-o", "markdown"])
    assert result.exit_code == plain.exit_code, result.output
    outside = _outside_code(result.stdout)
    assert "<script" not in outside and "</details>" not in outside
    assert name not in outside or label in ("long", "non-bmp")  # only in code, or harmless
    assert outside.count("```") == _outside_code(plain.stdout).count("```")


@pytest.mark.parametrize("label", sorted(REFUSED))
@pytest.mark.parametrize("command", [["patch", "-o", "json"], ["plan", "-o", "markdown"]])
def test_a_control_character_is_refused_naming_the_fact(label: str, command: list[str]) -> None:
    result = run([*command, *_args("s6", REFUSED[label])])
    assert result.exit_code == 2, result.output
    assert "fact workload.harness-delegate.namespace holds the control character" in result.stderr
    assert REFUSED[label] not in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) <= 2  # the line and its hint


# ------------------------------------------------ a hostile path read from a GitOps tree

PATH_FACTS = [
    "--fact", "object.Harness.kagent.kagent.exists=true",
    "--fact", "object.Harness.kagent.kagent.annotations=",
]  # fmt: skip
HOSTILE_DIR = "a\n# injected ::error::x\r\n- item `"


def _hostile_tree(tmp_path: Path) -> Path:
    from conftest import fixture_path

    root = tmp_path / "repo"
    root.mkdir()
    shutil.copytree(fixture_path("gitops", "s1"), root / HOSTILE_DIR)
    return root


def _run_on(root: Path, *args: str) -> Result:
    result = CliRunner().invoke(
        cli, [*args, "--gitops", str(root), *PATH_FACTS, "--to", "agent-platform=4.8.1"]
    )
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 3, 4), result.output
    return result


def test_a_line_break_in_a_gitops_path_stays_inside_its_code_span(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)
    out = _run_on(root, "plan", "-o", "markdown").stdout
    shown = f"{root}/a\\n# injected ::error::x\\r\\n- item `/bom.yaml:9"
    assert f"``{shown}``" in out  # one span, on one line, its backtick inside
    assert not any(line.startswith(("# injected", "- item")) for line in out.splitlines())


def test_a_line_break_in_a_gitops_path_stays_inside_its_workflow_command(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)
    out = _run_on(root, "check", "-o", "github").stdout
    lines = out.splitlines()
    assert lines and all(line.startswith("::") for line in lines), out
    assert any("a%0A# injected %3A%3Aerror%3A%3Ax%0D%0A- item `" in line for line in lines)


def test_a_line_break_in_a_gitops_path_is_kept_as_data_in_sarif(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)
    doc = json.loads(_run_on(root, "check", "-o", "sarif").stdout)
    uris = [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for run in doc["runs"]
        for res in run["results"]
        for loc in res.get("locations", ())
    ]
    assert uris and all("\n" not in u and "%0A" in u for u in uris), uris


def test_userinfo_is_removed_from_every_url_in_a_message() -> None:
    from upgradeplan.redact import clean

    said = clean('cannot reach "https://bob:s3cr%40t@h:1/x?a=b" or s3+http://k@h/ (u@example)')
    assert said == 'cannot reach "https://h:1/x?a=b" or s3+http://h/ (u@example)'
