"""UPGRADE.md and runbooks: golden files (pytest --update-golden) plus the facts that matter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO

from upgradeplan import api
from upgradeplan.model import KnowledgeBase
from upgradeplan.readers import stated
from upgradeplan.render import markdown, upgrade_doc

GOLDEN = REPO / "tests" / "golden"

S1_FACTS = [
    "helmrelease.kagent.drift-detection=disabled",
    "object.Harness.kagent.kagent.exists=true",
    "object.Harness.kagent.kagent.annotations=",
    "kubernetes=1.35.0",
]
S6_FACTS = [
    "workload.harness-delegate.namespace=harness-delegate-ng",
    "workload.harness-delegate.name=harness-delegate",
    "workload.harness-delegate.args=--instance-metadata-url=https://169.254.169.254",
    "values.harness-delegate.delegateVersion=0.29.0",
    "kubernetes=1.31.0",
    "workload.harness-delegate.env-secrets=harness-api-key",
    "secret.harness-delegate-ng.harness-api-key.type=Opaque",
]


def golden(name: str, text: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} is missing; run pytest --update-golden"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs; review and --update-golden"


def _section(doc: str, version_heading: str) -> str:
    parts = re.split(r"(?m)^## ", doc)
    found = [p for p in parts if p.startswith(version_heading)]
    assert found, f"no section {version_heading!r}"
    return found[0]


def test_upgrade_md_golden(kb: KnowledgeBase, update_golden: bool) -> None:
    golden("UPGRADE-agent-platform.md", markdown.upgrade_md(kb, "agent-platform"), update_golden)


def test_upgrade_md_shape(kb: KnowledgeBase) -> None:
    doc = markdown.upgrade_md(kb, "agent-platform")
    lines = doc.splitlines()
    assert lines[0] == "# Upgrading agent-platform"
    assert lines[2] and not lines[2].startswith("#")  # the one-line purpose
    headings = [ln for ln in lines if ln.startswith("## ")]
    assert headings[0] == (
        r"## \<current\> → \<next\> (the pre-pull DaemonSet is a hook object; its selector "
        "replaces the default)"
    )
    from upgradeplan.versions import Version

    versions = [h.split(" → ")[1].split(" (")[0] for h in headings[1:] if " → " in h]
    parsed = [Version.parse(v) for v in versions]
    assert parsed == sorted(parsed, reverse=True)  # newest first
    assert doc.count("### Operator action") == len(headings)


def test_480_section_has_both_path_bullets_and_the_forced_reconcile(kb: KnowledgeBase) -> None:
    sec = _section(markdown.upgrade_md(kb, "agent-platform"), "4.7.x → 4.8.0")
    assert "- **In order, via 4.7.19** (the default path):" in sec
    assert "- **Skipping 4.7.19** (from 4.7.18 or earlier straight to 4.8.0):" in sec
    assert re.search(r"kubectl -n \S+ annotate helmrelease kagent .*forceAt=", sec)
    assert "- **Recognising it worked**:" in sec


def test_481_section_says_the_forced_reconcile_is_no_longer_needed(kb: KnowledgeBase) -> None:
    sec = _section(markdown.upgrade_md(kb, "agent-platform"), "4.8.0 → 4.8.1")
    assert "forced reconcile" in sec and "no longer needed" in " ".join(sec.split())
    assert "**Skipping 4.7.19** (from 4.7.18 or earlier straight to 4.8.1)" in sec


def test_sections_can_be_chosen(kb: KnowledgeBase) -> None:
    part = markdown.upgrade_md(kb, "agent-platform", from_version="4.7.18", to_version="4.8.1")
    assert not part.startswith("# ")
    assert [ln for ln in part.splitlines() if ln.startswith("## ")] == [
        ln
        for ln in part.splitlines()
        if ln.startswith(("## 4.8.0 → 4.8.1", "## 4.7.x → 4.8.0", "## 4.7.18 → 4.7.19"))
    ]
    assert len([ln for ln in part.splitlines() if ln.startswith("## ")]) == 3
    nxt = markdown.upgrade_md(kb, "agent-platform", next_only=True)
    assert nxt.startswith("<!-- upgradeplan:begin next -->\n" + r"## \<current\> → \<next\>")


def test_path_bullets_come_from_the_skip_hazards(kb: KnowledgeBase) -> None:
    """Without the release's own notes, the skip hazards still give both path bullets."""
    from msgspec.structs import replace

    rel = kb.release("agent-platform", "4.8.0")
    assert rel is not None
    bare = replace(rel, notes=())
    sec = upgrade_doc.section(kb, bare)
    conditions = [(b.condition, b.aside) for b in sec.bullets]
    assert ("In order, via 4.7.19", "(the default path)") in conditions
    skipping = next(b for b in sec.bullets if b.condition == "Skipping 4.7.19")
    # the hazards start at 4.0.0 (`from`): a 3.x cut-over is not exposed, and the text says so
    assert (
        skipping.aside
        == "(from 4.0.0–4.7.18 straight to 4.8.0; a start below 4.0.0 is not exposed)"
    )
    assert any("forceAt" in c for c in skipping.commands)
    assert sec.bullets[-1].condition == "Recognising it worked"


def test_unknown_product_is_a_clear_error(kb: KnowledgeBase) -> None:
    from upgradeplan.errors import UnknownName

    with pytest.raises(UnknownName, match="agent-platfrom"):
        markdown.upgrade_md(kb, "agent-platfrom")


def _runbook(
    kb: KnowledgeBase, installed: list[str], pins: list[str], facts: list[str], to: str
) -> str:
    state = stated.from_flags(kb, installed, pins, facts)
    result = api.plan(kb, state, [to])
    assert result.plan is not None
    return markdown.runbook(result.plan, kb, state, now=api.now_actions(kb, result.plan, state))


def test_runbook_s1_installation_to_481_golden(kb: KnowledgeBase, update_golden: bool) -> None:
    text = _runbook(
        kb,
        ["agent-platform=4.7.18"],
        ["agent-platform-connectivity=4.7.18"],
        S1_FACTS,
        "agent-platform=4.8.1",
    )
    golden("runbook-s1-4.7.18-to-4.8.1.md", text, update_golden)
    assert "## Step 1 of 2: agent-platform 4.7.18 → 4.7.19" in text
    assert "## Step 2 of 2: agent-platform 4.7.19 → 4.8.1" in text
    assert "```mermaid" in text and "harness-gap-skipping-to-481" in text


def test_runbook_s6_delegate_golden(kb: KnowledgeBase, update_golden: bool) -> None:
    text = _runbook(
        kb,
        ["harness-delegate=0.29.0", "harness-cd=24.12.0"],
        [],
        S6_FACTS,
        "harness-delegate=0.31.2",
    )
    golden("runbook-s6-delegate-0.29.0-to-0.31.2.md", text, update_golden)
    assert "--metadata-endpoint" in text
    assert "https://169.254.169.254" in text
    assert "delegateVersion" in text
    assert "harness-delegate-ng" in text


def test_runbook_uses_the_installation_names(kb: KnowledgeBase) -> None:
    text = _runbook(
        kb,
        ["agent-platform=4.8.0"],
        ["agent-platform-connectivity=4.8.0"],
        [
            "helmrelease.kagent.drift-detection=disabled",
            "helmrelease.kagent.namespace=flux-giantswarm",
            "object.Harness.kagent.kagent.exists=false",
        ],
        "agent-platform=4.8.1",
    )
    assert "kubectl -n flux-giantswarm annotate helmrelease kagent" in text
    assert "<gitops-namespace>" not in text


def test_templates_are_strict(kb: KnowledgeBase) -> None:
    """A field the template names and the view lacks fails instead of rendering blank."""
    import jinja2

    tpl = markdown.make_env().from_string("{{ doc.nope }}")
    with pytest.raises(jinja2.UndefinedError):
        tpl.render(doc=upgrade_doc.document(kb, "agent-platform", []))


def test_golden_folder_exists() -> None:
    assert Path(GOLDEN).parent.is_dir()


def test_later_releases_in_a_skip_window_do_not_repeat_the_hazard(kb: KnowledgeBase) -> None:
    rel = kb.release("agent-platform", "4.11.0")
    assert rel is not None
    sec = upgrade_doc.section(kb, rel)
    assert not any(b.condition in ("Skipping 4.7.19", "In order, via 4.7.19") for b in sec.bullets)


def test_every_hazard_scope_renders_once_in_the_section_of_its_first_release(
    kb: KnowledgeBase,
) -> None:
    doc = markdown.upgrade_md(kb, "agent-platform")
    sections = re.split(r"(?m)^## ", doc)[1:]
    for hazard in kb.hazards_for("agent-platform"):
        mark = f"`{hazard.id}`"
        holders = [s.splitlines()[0] for s in sections if mark in s]
        assert len(holders) == 1, (hazard.id, holders)
        if hazard.scope != "skip":
            assert doc.count(f"(`{hazard.id}`)") == 1, hazard.id
    scopes = {h.scope for h in kb.hazards_for("agent-platform")}
    assert scopes == {"skip", "landing", "transition", "state"}
    # a hazard that reaches every release goes to the section of the crossing note naming it
    # (else the newest section), still saying it is judged whatever the version
    [home] = [s for s in sections if "(`klaus-gateway-crd-keys-refused`)" in s]
    assert home.startswith("4.16.0 → 4.20.0 ")
    assert "(whatever the version)" in home


def test_runbook_without_a_target_gives_the_fixes_for_the_installation(
    kb: KnowledgeBase,
) -> None:
    """Scenario 7: what runs now is in trouble; the runbook carries the fixes, named."""
    state = stated.from_flags(
        kb,
        ["harness-delegate=0.31.2", "harness-cd=24.12.0"],
        [],
        [
            "kubernetes=1.31.0",
            "workload.harness-delegate.namespace=team-delegates",
            "workload.harness-delegate.name=harness-delegate",
            "workload.harness-delegate.env-secrets=harness-delegate-token",
            "secret.team-delegates.harness-delegate-token.type=harness.io/token",
        ],
    )
    result = api.check(kb, state, [])
    assert result.plan is not None
    text = markdown.runbook(result.plan, kb, state, now=api.now_actions(kb, result.plan, state))
    assert text.startswith("# Runbook: the installation as it is\n")
    assert "## The path" not in text
    assert "## Fix the installation as it is" in text
    fix = text.split("## Fix the installation as it is", 1)[1]
    assert "kind: Secret" in fix and "type: Opaque" in fix
    assert "team-delegates" in fix
    assert "HARNESS_API_KEY" in fix


def test_structured_changes_without_a_note_become_bullets(kb: KnowledgeBase) -> None:
    from msgspec.structs import replace

    from upgradeplan.model import Change

    rel = kb.release("agent-platform", "4.8.1")
    assert rel is not None
    bare = replace(
        rel,
        notes=(),
        changes=(
            Change("values-key-removed", "It is gone.", {"key": "gitops.legacy"}),
            Change("flag-renamed", "Renamed.", {"from": "--old", "to": "--new"}),
            Change(
                "requirement-raised",
                "Needs 1.36.",
                {"product": "kubernetes", "constraint": ">=1.36.0-0"},
            ),
        ),
    )
    conditions = [b.condition for b in upgrade_doc.section(kb, bare).bullets]
    assert "`gitops.legacy` set in your values" in conditions
    assert "`--old` in your container args" in conditions
    assert "`kubernetes` does not satisfy `>=1.36.0-0`" in conditions


def test_raw_angle_brackets_are_escaped_outside_code() -> None:
    """GitHub's sanitiser drops what looks like an HTML tag: prose escapes it."""
    from upgradeplan.render.markdown import escape_md, wrap_md

    assert escape_md("a value in <gitops-namespace> was not known") == (
        "a value in \\<gitops-namespace> was not known"
    )
    assert escape_md("run `kubectl -n <ns> get hr` and a < b") == (
        "run `kubectl -n <ns> get hr` and a < b"
    )
    assert escape_md(r"\<current\> stays") == r"\<current\> stays"
    assert "\\<angle brackets>" in wrap_md("a value in <angle brackets> was not known")


def test_a_missing_facts_kubectl_command_is_a_code_span_and_a_name_cannot_close_it() -> None:
    from upgradeplan.conditions import missing_fact_hint
    from upgradeplan.model import MissingFact
    from upgradeplan.render.markdown import _how

    key = "object.Harness.kagent.kagent.exists"
    shown = _how(MissingFact(key, missing_fact_hint(key)))
    assert "shown by `kubectl get harness kagent -n kagent -o yaml`" in shown
    assert "\\`" not in shown
    hostile = "object.Harness.kagent.a`b.exists"
    said = _how(MissingFact(hostile, missing_fact_hint(hostile)))
    assert "``kubectl get harness a`b -n kagent -o yaml``" in said


def test_a_hazard_of_a_crossing_note_prints_in_the_notes_section_not_the_newest() -> None:
    # klaus-gateway-crd-keys-refused and muster-drift-detection-hpa reach every release, and
    # used to print under the unrelated unreleased section; their crossing notes place them
    # where the UPGRADE.md sections they come from sit (4.20.0, 4.9.3)
    doc = (GOLDEN / "UPGRADE-agent-platform.md").read_text(encoding="utf-8")
    holders = {}
    for hazard in ("klaus-gateway-crd-keys-refused", "muster-drift-detection-hpa"):
        holders[hazard] = [
            part.split("\n", 1)[0] for part in doc.split("\n## ") if f"(`{hazard}`)" in part
        ]
    assert holders == {
        "klaus-gateway-crd-keys-refused": [
            "4.16.0 → 4.20.0 (the Substrate worker pool gets a PodDisruptionBudget; a spread "
            "value is refused until the Substrate line carries it)"
        ],
        "muster-drift-detection-hpa": [
            "4.9.2 → 4.9.3 (the last release that removes the kagent chart's Harness selector "
            "key with a null)"
        ],
    }
