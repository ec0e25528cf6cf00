"""Golden text of ``check`` and ``plan`` on the reference scenarios: the first screen by
default, everything (as before the first-screen layout) with ``-v``.

Regenerate after a deliberate change: ``UPDATE_GOLDEN=1 python -m pytest -q
tests/test_render_text_golden.py`` and read the diff.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest
from support.cli import run_stdout
from support.scenarios import CASES, Case

GOLDEN = Path(__file__).parent / "golden" / "text"
ENV = {"NO_COLOR": "1"}  # not a terminal: whole lines (tests/test_render_firstscreen.py wraps)

# The 3.x cut-over with nothing stated but the installed version: every fact is missing.
CUTOVER = ("--installed", "agent-platform=3.9.0", "--to", "agent-platform=4.15.5")


def _explained(lines: list[str]) -> list[str]:
    """The keys the "To decide, supply" block explains, each time it explains one."""
    start = next(i for i, line in enumerate(lines) if line.startswith("To decide, supply"))
    entries: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("  $ "):
            break
        if line.startswith("      "):
            entries[-1] += " " + line.strip()
        else:
            entries.append(line.strip())
    keys: list[str] = []
    for entry in entries:
        named = re.split(r": (?:shown by|stated only)", entry, maxsplit=1)[0]
        braced = re.fullmatch(r"(.*?)\{(.*)\}", named)
        if braced:
            keys += [braced.group(1) + k for k in braced.group(2).split(", ")]
        else:
            keys += named.split(", ")
    return sorted(keys)


def _args(case: Case) -> list[str]:
    return [case.command, *case.stated, *case.args]


def _compare(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_first_screen_of_reference_scenarios(case: Case) -> None:
    code, out = run_stdout(*_args(case), env=ENV)
    assert code == case.exit_code
    _compare(f"{case.id}.txt", out)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_verbose_shows_everything_shown_before(case: Case) -> None:
    code, out = run_stdout("-v", *_args(case), env=ENV)
    assert code == case.exit_code
    _compare(f"{case.id}-v.txt", out)


def test_cutover_with_nothing_stated_fits_the_first_screen() -> None:
    """3.9.0 → 4.15.5 with nothing stated: verdict, path, the blocking findings by name and one
    command that states every missing fact, in the first 25 lines; no fact explained twice."""
    code, out = run_stdout("plan", *CUTOVER, env=ENV)
    assert code == 4
    _compare("cutover-3.9.0-4.15.5.txt", out)
    lines = out.splitlines()
    first = "\n".join(lines[:25])
    assert lines[0] == "plan agent-platform 3.9.0 → 4.15.5 [stated]: undetermined"
    assert "Path: agent-platform 3.9.0 → 4.15.5" in first
    _, doc = run_stdout("plan", *CUTOVER, "-o", "json", env=ENV)
    result = json.loads(doc)["results"][0]
    findings = [f for step in result["plan"]["steps"] for f in step["findings"]]
    blocking = {f["hazard"] for f in findings if f["severity"] == "blocking"}
    blocking -= {f["hazard"] for f in findings if f["status"] == "does-not-apply"}
    # the prerequisites of one crossed release are named together on that release's line
    named = {
        f"crossing:{line.split('crossing:', 1)[1].split()[0]}:{name}"
        for line in lines[:25]
        if "crossing:" in line and "prerequisites:" in line
        for name in line.split("prerequisites:", 1)[1].replace(",", " ").split()
    }
    assert any(h.startswith("crossing:") for h in blocking)
    assert blocking and all(
        h in named or re.search(rf"\b{re.escape(h)}\b", first) for h in blocking
    )
    missing = {m["key"] for f in findings if f["status"] == "may-apply" for m in f["missing"]}
    assert {n["key"] for n in result["to_decide"]} == missing
    # one command, the last of the 25 lines, states every missing fact
    commands = [line for line in lines if line.startswith("  $ upgradeplan ")]
    assert len(commands) == 1 and commands[0] in first
    assert lines.index(commands[0]) == len(lines) - 1
    words = shlex.split(commands[0][4:])
    stated = {words[i + 1].split("=", 1)[0] for i, w in enumerate(words) if w == "--fact"}
    stated |= {"pin." + words[i + 1].split("=")[0] for i, w in enumerate(words) if w == "--pin"}
    stated |= {
        "installed." + words[i + 1].split("=")[0] for i, w in enumerate(words) if w == "--installed"
    }
    assert missing <= stated
    # each missing fact is explained once, in the block before the command
    assert _explained(lines) == sorted(missing)
    assert "observed " not in out and "if ignored" not in out and "not in scope" not in out


def test_cutover_verbose_shows_everything_shown_before() -> None:
    code, out = run_stdout("-v", "plan", *CUTOVER, env=ENV)
    assert code == 4
    _compare("cutover-3.9.0-4.15.5-v.txt", out)


def test_the_same_command_states_every_fact_it_asks_for() -> None:
    """Filling the suggested command's placeholders and running it settles the missing facts."""
    _, out = run_stdout(
        "check", "--installed", "agent-platform=4.7.18", "--to", "agent-platform=4.8.0", env=ENV
    )
    command = out.splitlines()[-1]
    assert command.startswith("  $ upgradeplan check --installed agent-platform=4.7.18")
    import shlex

    filled = {  # what S1 states, and false for the values
        "helmrelease.kagent.drift-detection": "disabled",
        "installed.agent-platform-connectivity": "4.7.18",
        "installed.kubernetes": "1.35.0",
        "object.Harness.kagent.kagent.annotations": "",
        "object.Harness.kagent.kagent.exists": "true",
        "pin.agent-platform-connectivity": "4.7.18",
    }
    words = shlex.split(command[4:])[2:]
    for i, word in enumerate(words):
        key, _, value = word.partition("=")
        if value in ("VERSION", "CONSTRAINT", "VALUE"):
            prefix = {"--installed": "installed.", "--pin": "pin."}.get(words[i - 1], "")
            words[i] = f"{key}={filled.get(prefix + key, 'false')}"
    code, again = run_stdout("check", *words, env=ENV)
    assert "To decide, supply" not in again, again
    assert code in (0, 3)


def test_json_carries_the_stops_and_the_facts_to_decide() -> None:
    import json

    s1 = next(c for c in CASES if c.id == "S1-plan")
    _, out = run_stdout(*_args(s1), "-o", "json", env=ENV)
    result = json.loads(out)["results"][0]
    assert result["plan"]["stops"] == [
        {
            "product": "agent-platform",
            "version": "4.7.19",
            "reason": "a jump past it hits harness-handover-skipped (applies)",
        },
        {"product": "agent-platform", "version": "4.8.0", "reason": "the target"},
    ]
    keys = [n["key"] for n in result["to_decide"]]
    assert keys == sorted(set(keys)) and "values.agent-platform.muster.autoscaling.enabled" in keys
    s1_check = next(c for c in CASES if c.id == "S1-check")
    _, out = run_stdout(*_args(s1_check), "-o", "json", env=ENV)
    check = json.loads(out)["results"][0]
    assert check["recommended"]["stops"][0]["version"] == "4.7.19"
    assert [n["key"] for n in check["to_decide"]] == keys
