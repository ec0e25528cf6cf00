"""Long jumps: a release's crossing prerequisites and a product's stepping rule, as a user meets
them in ``plan`` (upgradeplan/kb/crossing.py).

The agent-platform cases state an installation on 3.23.1 healthy in every other fact the
knowledge reads, so what remains is the 4.0 prerequisites (UPGRADE.md, the "3.x → 4.0" and
"<current> → 4.0" sections): listed in the step that crosses 4.0.0 although no path stops there,
and no "safe" while one is unstated. The stepping rule is tested on a knowledge fragment of our
own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli import plan, run

from upgradeplan.kb.crossing import derived_hazards
from upgradeplan.kb.loader import load

HEALTHY = (
    *("--installed", "kubernetes=1.35.0", "--installed", "substrate=0.0.30-gs.4"),
    *("--pin", "kagent=0.11.0-gs.20", "--pin", "kagent-crds=0.11.0-gs.20"),
    *("--pin", "substrate=0.0.30-gs.4", "--pin", "klaus-gateway=1.10.0"),
    "--fact",
    "object.WorkerPool.kagent.kagent-default.spec.workerImage="
    "ghcr.io/giantswarm/substrate/ateom-gvisor:0.0.30-gs.4",
    *("--fact", "values.agent-platform.kagent.harness.snapshotLocation=s3://bucket/prefix"),
    *("--fact", "values.agent-platform.muster.autoscaling.enabled=false"),
    *("--fact", "helmrelease.kagent.drift-detection=disabled"),
)
# the 4.0 prerequisites read from values, each in place
VALUES_IN_PLACE = (
    *("--fact", "values.agent-platform.kagent.controllerRoute.enabled=false"),
    *("--fact", "values.agent-platform.kagent.controllerRoute.pathPrefix=null"),
    *("--fact", "values.agent-platform.agentManager.migration.gitopsNamespaces=flux-giantswarm"),
)
# the 4.0 prerequisites no reader sees: the installation states them
STATED = ("bound-lifted", "feature-gates", "helmrelease-timeout", "database-secret-name")
STATED_ON_ENTERING = ("harness-label",)
EVERY = (
    *STATED,
    *STATED_ON_ENTERING,
    "gitops-namespaces",
    "path-prefix-removed",
    "jwks-egress",
)


def stated(*skip: str) -> tuple[str, ...]:
    out: list[str] = []
    for pid in (*STATED, *STATED_ON_ENTERING):
        if pid not in skip:
            out += ["--fact", f"prerequisite.agent-platform.{pid}=true"]
    return tuple(out)


def cutover(target: str, *facts: str) -> tuple[int, dict[str, Any]]:
    return plan(
        *("--installed", "agent-platform=3.23.1"),
        *("--pin", f"agent-platform-connectivity={target}"),
        *HEALTHY,
        *facts,
        *("--to", f"agent-platform={target}"),
    )


def crossing_step(p: dict[str, Any]) -> dict[str, Any]:
    """The step of the path that goes from below 4.0.0 to 4.0.0 or above."""
    steps = [s for s in p["steps"] if isinstance(s, dict)]
    found = [s for s in steps if s["from"].startswith("3.") and not s["to"].startswith("3.")]
    assert len(found) == 1, steps
    return found[0]


def prerequisites(step: dict[str, Any]) -> dict[str, str]:
    """Crossing prerequisite id -> status, of one step."""
    prefix = "crossing:agent-platform@4.0.0:"
    return {
        f["hazard"][len(prefix) :]: f["status"]
        for f in step["findings"]
        if f["hazard"].startswith(prefix)
    }


@pytest.mark.parametrize("target", ["4.15.5", "4.8.1"])
def test_a_long_jump_from_3x_lists_every_40_prerequisite_in_the_crossing_step(
    target: str,
) -> None:
    code, p = cutover(target, *VALUES_IN_PLACE)
    assert p["path"]["agent-platform"][0] == "3.23.1"
    assert "4.0.0" not in p["path"]["agent-platform"]
    found = prerequisites(crossing_step(p))
    assert sorted(found) == sorted(EVERY)
    unstated = {pid for pid in (*STATED, *STATED_ON_ENTERING)}
    assert {pid for pid, status in found.items() if status == "may-apply"} == unstated
    assert p["verdict"] != "safe" and code != 0


def test_a_cutover_to_4155_is_safe_only_once_every_prerequisite_is_in_place() -> None:
    code, p = cutover("4.15.5", *VALUES_IN_PLACE, *stated())
    assert (code, p["verdict"]) == (0, "safe")
    assert set(prerequisites(crossing_step(p)).values()) == {"does-not-apply"}
    for missing in (*STATED, *STATED_ON_ENTERING):
        code, p = cutover("4.15.5", *VALUES_IN_PLACE, *stated(missing))
        assert (code, p["verdict"]) == (4, "undetermined"), missing
        assert prerequisites(crossing_step(p))[missing] == "may-apply"


def test_a_prerequisite_read_from_values_applies_where_the_values_break_it() -> None:
    _, p = cutover(
        "4.15.5",
        *stated(),
        *("--fact", "values.agent-platform.kagent.controllerRoute.pathPrefix=/kagent"),
        *("--fact", "values.agent-platform.kagent.controllerRoute.enabled=true"),
        *("--fact", "values.agent-platform.gateway.jwksEgress.enabled=false"),
    )
    found = prerequisites(crossing_step(p))
    assert found["path-prefix-removed"] == "applies"
    assert found["jwks-egress"] == "applies"
    # a key no fact names is not known to be unset: the installation's values are not read
    assert found["gitops-namespaces"] == "may-apply"
    assert p["verdict"] == "blocked"


def test_a_hop_within_4x_meets_no_40_prerequisite() -> None:
    _, p = plan("--installed", "agent-platform=4.15.2", "--to", "agent-platform=4.15.5")
    for step in p["steps"]:
        assert not any(f["hazard"].startswith("crossing:") for f in step["findings"])


def test_the_bundled_40_prerequisites_cite_their_section() -> None:
    kb = load()
    rel = next(r for r in kb.releases["agent-platform"] if r.version == "4.0.0")
    assert sorted(p.id for p in rel.crossing) == sorted(EVERY)
    assert all(p.source.startswith("UPGRADE.md, ") and p.quote for p in rel.crossing)


# --------------------------------------------------------------------------- stepping rule

PRODUCT = """schema_version: 1
kind: product
id: stepper
name: stepper
type: chart
description: A chart whose sources say to move one minor at a time.
stepping:
  line: minor
  at: latest-patch
  source: "UPGRADE.md, “Upgrading”"
  quote: "Move one minor at a time, from the latest patch of each."
"""
VERSIONS = ("1.0.0", "1.0.1", "1.0.2", "1.1.0", "1.1.1", "1.2.0", "1.2.1", "2.0.0")


def fragment(root: Path, product: str = PRODUCT) -> Path:
    (root / "products").mkdir(parents=True)
    (root / "products" / "stepper.yaml").write_text(product)
    rels = root / "releases" / "stepper"
    rels.mkdir(parents=True)
    for v in VERSIONS:
        rels.joinpath(f"{v}.yaml").write_text(
            f'schema_version: 1\nkind: release\nproduct: stepper\nversion: "{v}"\n'
            f"title: release {v}\n"
        )
    return root


def test_the_stepping_rule_lands_on_the_latest_patch_of_every_minor(tmp_path: Path) -> None:
    kb = fragment(tmp_path / "kb")
    code, p = plan(
        *("--kb", str(kb), "--installed", "stepper=1.0.0", "--to", "stepper=2.0.0"),
    )
    assert p["path"] == {"stepper": ["1.0.0", "1.0.2", "1.1.1", "1.2.1", "2.0.0"]}
    assert (code, p["verdict"]) == (0, "safe")
    # the direct jump skips each required stop, and says so
    skipped = {f["hazard"] for f in p["direct"]["findings"] if f["status"] == "applies"}
    assert skipped == {"stepping:stepper@1.0.2", "stepping:stepper@1.1.1", "stepping:stepper@1.2.1"}


def test_without_a_stepping_rule_the_same_line_is_one_hop(tmp_path: Path) -> None:
    kb = fragment(tmp_path / "kb", PRODUCT.split("stepping:")[0])
    _, p = plan("--kb", str(kb), "--installed", "stepper=1.0.0", "--to", "stepper=2.0.0")
    assert p["path"] == {"stepper": ["1.0.0", "2.0.0"]}


def test_a_stepping_rule_by_major_from_any_release_requires_each_major(tmp_path: Path) -> None:
    rule = "stepping:\n  line: major\n  at: any\n"
    kb = load([fragment(tmp_path / "kb", PRODUCT.split("stepping:")[0] + rule)], bundled=False)
    stops = sorted(h.stop or "" for h in derived_hazards(kb.products, kb.releases).values())
    assert stops == ["1.0.0"]


def test_a_misspelt_stepping_rule_is_a_lint_error_naming_the_key(tmp_path: Path) -> None:
    kb = fragment(tmp_path / "kb", PRODUCT.replace("line: minor", "line: minr"))
    code, out = run("kb", "lint", "--kb", str(kb))
    assert code != 0
    assert "stepper.yaml" in out and "minr" in out


def test_a_stepping_rule_with_references_lints_clean_and_its_hazards_cite_them(
    tmp_path: Path,
) -> None:
    page = "https://example.org/docs/upgrade/"
    kb = fragment(tmp_path / "kb", PRODUCT + f'  references: ["{page}"]\n')
    code, out = run("kb", "lint", "--kb", str(kb))
    assert code == 0, out
    assert "KB026" not in out
    hazards = load([kb], bundled=False).hazards
    assert hazards["stepping:stepper@1.0.2"].references == (page,)


def test_a_stepping_rule_without_references_is_a_lint_error_on_its_hazards(
    tmp_path: Path,
) -> None:
    code, out = run("kb", "lint", "--kb", str(fragment(tmp_path / "kb")))
    assert code == 2
    assert "KB026 hazard 'stepping:stepper@1.0.2' has no reference" in out


# --------------------------------------------------------------------------- crossing notes

NOTES = """crossing_notes:
  - id: store-renamed
    shipped: "1.1.1"
    title: "the store is renamed"
    text: "Nothing to do; the pod rolls once."
    source: UPGRADE.md
    section: "<current> → <next> (the store is renamed)"
    quote: "The store is renamed and the pod rolls once."
  - id: probe-longer
    shipped: ">1.0.2 <=1.1.1"
    title: "the probe waits longer"
    text: "Nothing to do."
    source: UPGRADE.md
    section: "<current> → <next> (the probe waits longer)"
    quote: "The probe waits thirty seconds now."
    inferred: "the section names no release; it sits between those of 1.0.2 and 1.1.1"
"""
PLAIN = PRODUCT.split("stepping:")[0]


def step_notes(p: dict[str, Any]) -> list[list[str]]:
    return [s.get("notes", []) for s in p["steps"] if isinstance(s, dict)]


BOTH_NOTES = [
    "crosses: the store is renamed: Nothing to do; the pod rolls once. "
    "(UPGRADE.md, “<current> → <next> (the store is renamed)”)",
    "may cross (shipped in >1.0.2 <=1.1.1): the probe waits longer: Nothing to do. "
    "(UPGRADE.md, “<current> → <next> (the probe waits longer)”)",
]


def test_a_step_that_crosses_a_notes_release_carries_the_note(tmp_path: Path) -> None:
    kb = fragment(tmp_path / "kb", PLAIN + NOTES)
    code, p = plan("--kb", str(kb), "--installed", "stepper=1.0.0", "--to", "stepper=2.0.0")
    assert p["path"] == {"stepper": ["1.0.0", "2.0.0"]}
    [notes] = step_notes(p)
    assert notes == BOTH_NOTES
    # a note never changes the verdict or the path
    plain_code, plain_p = plan(
        "--kb", str(fragment(tmp_path / "plain", PLAIN)), "--installed", "stepper=1.0.0",
        "--to", "stepper=2.0.0",
    )  # fmt: skip
    assert (code, p["verdict"], p["path"]) == (plain_code, plain_p["verdict"], plain_p["path"])


def test_a_step_that_may_cross_says_so_and_one_that_does_not_shows_nothing(tmp_path: Path) -> None:
    kb = str(fragment(tmp_path / "kb", PLAIN + NOTES))
    _, p = plan("--kb", kb, "--installed", "stepper=1.1.0", "--to", "stepper=1.2.0")
    [notes] = step_notes(p)
    assert notes == BOTH_NOTES
    _, above = plan("--kb", kb, "--installed", "stepper=1.1.1", "--to", "stepper=2.0.0")
    assert step_notes(above) == [[]]
    _, below = plan("--kb", kb, "--installed", "stepper=1.0.0", "--to", "stepper=1.0.2")
    assert step_notes(below) == [[]]


def test_the_notes_print_in_the_step_of_the_text_plan(tmp_path: Path) -> None:
    kb = str(fragment(tmp_path / "kb", PLAIN + NOTES))
    args = ("plan", "--kb", kb, "--installed", "stepper=1.0.0", "--to", "stepper=1.1.1")
    _, verbose = run("-v", *args)
    assert "  notes from the sources:\n    crosses: the store is renamed: " in verbose
    _, first = run(*args)
    assert "  2 notes from the sources (-v shows them)" in first


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ('shipped: "1.1.1"', 'shipped: "3.0.0"', "admits no release of stepper"),
        ('shipped: "1.1.1"', 'shipped: "1..1"', "shipped:"),
        ('    quote: "The store is renamed and the pod rolls once."\n', "", "needs source"),
        ("id: probe-longer", "id: store-renamed", "given twice"),
        ("    inferred: ", "    hazards: [no-such-hazard]\n    inferred: ", "unknown hazard"),
    ],
)
def test_a_crossing_note_that_cannot_be_placed_or_cites_nothing_is_kb031(
    tmp_path: Path, old: str, new: str, said: str
) -> None:
    kb = fragment(tmp_path / "kb", PLAIN + NOTES.replace(old, new))
    code, out = run("kb", "lint", "--kb", str(kb))
    assert code != 0
    assert "KB031" in out and said in out and "stepper.yaml" in out


def test_upgrade_md_puts_a_note_in_the_section_of_the_newest_release_it_admits(
    tmp_path: Path,
) -> None:
    kb = str(fragment(tmp_path / "kb", PLAIN + NOTES))
    code, out = run("docs", "upgrade-md", "--kb", kb, "--product", "stepper")
    assert code == 0
    sections = out.split("<!-- upgradeplan:begin ")
    [home] = [s for s in sections if s.startswith("1.1.1 -->")]
    assert "- **the store is renamed**: Nothing to do; the pod rolls once." in home
    assert "- **the probe waits longer** (shipped in `>1.0.2 <=1.1.1`): Nothing to do." in home
    assert out.count("**the probe waits longer**") == 1
