"""The knowledge-format features a real release history needs, each on a fragment of our own.

tests/fixtures/kb-format is a small line (fmeta, its components fcomp and fbase);
tests/fixtures/kb-format-team is a second directory that amends it. Each feature is shown
through the CLI with stated facts: the hazard fires where it should, is quiet where it should
not, and "may apply" naming the missing fact where that fact is unknown.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from upgradeplan.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FORMAT = FIXTURES / "kb-format"
TEAM = FIXTURES / "kb-format-team"
ENGINE = "values.fmeta.engine.enabled"
# fmeta 3.0.0 requires Kubernetes >= 1.30 only with the engine on: off, it needs no cluster version
NO_ENGINE = ("--fact", f"{ENGINE}=false")


def run(*args: str, kb: tuple[Path, ...] = (FORMAT,)) -> tuple[int, str, str]:
    flags = [a for d in kb for a in ("--kb", str(d))]
    result = CliRunner().invoke(cli, [*flags, *args])
    return result.exit_code, result.stdout, result.stderr


def check_json(*args: str, kb: tuple[Path, ...] = (FORMAT,)) -> tuple[int, dict[str, object]]:
    code, out, err = run("check", *args, "-o", "json", kb=kb)
    assert code in (0, 3, 4), err
    doc: dict[str, object] = json.loads(out)
    return code, doc


def findings(doc: dict[str, object], hazard: str) -> list[dict[str, object]]:
    """Every finding of ``hazard`` anywhere in a JSON result."""
    found: list[dict[str, object]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("hazard") == hazard and "status" in node:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    return found


def status_of(doc: dict[str, object], hazard: str) -> str:
    statuses = {str(f["status"]) for f in findings(doc, hazard)}
    for status in ("applies", "may-apply", "does-not-apply"):
        if status in statuses:
            return status
    return "absent"


# --------------------------------------------------------------------------- the fragments


def test_the_fragments_lint_clean_with_only_the_inferred_warning() -> None:
    for dirs in ((FORMAT,), (FORMAT, TEAM)):
        assert run("kb", "lint", *map(str, dirs)) == (0, "", "")
        code, out, _ = run("kb", "lint", "--inferred", *map(str, dirs))
        assert code == 0
        assert {line.split()[1] for line in out.splitlines()} <= {"KB025"}


# --------------------------------------------------------------------------- 4: skip `from`


def test_a_skip_hazard_with_from_is_quiet_for_hops_that_start_below_it() -> None:
    code, doc = check_json("--installed", "fmeta=1.0.0", "--to", "fmeta=3.0.0", *NO_ENGINE)
    assert code == 0
    assert status_of(doc, "fmeta-handover-skipped") in ("does-not-apply", "absent")


def test_a_skip_hazard_with_from_may_apply_naming_the_fact_inside_it() -> None:
    code, out, _ = run(
        "-v", "check", "--installed", "fmeta=2.0.0", "--to", "fmeta=3.0.0", *NO_ENGINE
    )
    assert code == 4
    assert "may-apply      blocking fmeta-handover-skipped" in out
    assert "missing object.Widget.fmeta.shared.exists" in out


def test_a_skip_hazard_with_from_fires_and_stays_quiet_on_the_fact() -> None:
    base = ("--installed", "fmeta=2.0.0", "--to", "fmeta=3.0.0", *NO_ENGINE)
    fact = "object.Widget.fmeta.shared.exists"
    code, doc = check_json(*base, "--fact", f"{fact}=false")
    assert (code, status_of(doc, "fmeta-handover-skipped")) == (3, "applies")
    code, doc = check_json(*base, "--fact", f"{fact}=true")
    assert (code, status_of(doc, "fmeta-handover-skipped")) == (0, "does-not-apply")


def test_upgrade_md_says_where_a_skip_with_from_starts() -> None:
    code, out, _ = run("docs", "upgrade-md", "--product", "fmeta")
    assert code == 0
    assert (
        "- **Skipping 2.1.0** (from 2.0.0 straight to 3.0.0; a start below 2.0.0 is not exposed)"
    ) in out
    assert "or earlier straight to 3.0.0" not in out  # 1.0.0 → 3.0.0 is not exposed


# --------------------------------------------------------------------------- 7: inferred


def test_lint_warns_on_each_inferred_field_with_its_reason_and_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(FIXTURES)  # kb lint names files relative to the working directory
    _, out, _ = run("kb", "lint", "--inferred", str(FORMAT))
    lines = out.splitlines()
    assert (
        "kb-format/hazards/fmeta-handover-skipped.yaml:17 KB025 warning: severity is inferred: "
        "the issue says the object is lost; that this blocks is our judgement"
    ) in lines
    assert any(line.startswith("kb-format/releases/fmeta/3.1.0.yaml:9 KB025") for line in lines)


def test_upgrade_md_marks_inferred_fields_visibly() -> None:
    code, out, _ = run("docs", "upgrade-md", "--product", "fmeta", "--from", "3.0.0")
    assert code == 0
    section = out.split("## 3.0.0 → 3.1.0", 1)[1].split("\n## ", 1)[0]
    assert (
        "> *Inferred, not from a source: date (the changelog entry is undated; "
        "the tag is from that day).*"
    ) in section


def test_an_inferred_path_that_names_no_field_is_an_error(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(FORMAT, kb)
    path = kb / "releases" / "fmeta" / "2.1.0.yaml"
    path.write_text(path.read_text() + 'inferred: {"bom.fcomp": "guessed"}\n')
    code, out, _ = run("kb", "lint", "--no-bundled", str(kb))
    assert code == 2
    assert "kb/releases/fmeta/2.1.0.yaml:7 KB027 inferred: 'bom.fcomp' names no field" in out


# --------------------------------------------------------------------------- 6: overlays


def test_an_overlay_amends_a_hazard_with_a_recorded_override() -> None:
    base = ("--installed", "fmeta=2.0.0", "--to", "fmeta=3.0.0", *NO_ENGINE)
    code, doc = check_json(*base, "--fact", "object.Widget.fmeta.shared.exists=false")
    assert code == 3
    code, doc = check_json(
        *base, "--fact", "object.Widget.fmeta.shared.exists=false", kb=(FORMAT, TEAM)
    )
    (finding, *_) = [f for f in findings(doc, "fmeta-handover-skipped") if f["status"] == "applies"]
    assert finding["severity"] == "warning"
    assert code == 0  # a warning does not fail at --fail-on blocking


def test_an_overlay_adds_a_hazard_and_a_release_to_an_earlier_product() -> None:
    kb = (FORMAT, TEAM)
    fact = "values.fmeta.proxy.enabled"
    code, out, _ = run("-v", "check", "--installed", "fmeta=3.2.0", kb=kb)
    assert code == 4
    assert "may-apply      blocking team-proxy-on-320" in out and f"missing {fact}" in out
    code, doc = check_json("--installed", "fmeta=3.2.0", "--fact", f"{fact}=true", kb=kb)
    assert (code, status_of(doc, "team-proxy-on-320")) == (3, "applies")
    code, doc = check_json("--installed", "fmeta=3.2.0", "--fact", f"{fact}=false", kb=kb)
    assert (code, status_of(doc, "team-proxy-on-320")) == (0, "does-not-apply")
    code, doc = check_json("--installed", "fmeta=3.1.0", "--fact", f"{fact}=true", kb=kb)
    assert status_of(doc, "team-proxy-on-320") in ("does-not-apply", "absent")


def test_an_overlay_adds_a_note_to_an_earlier_release() -> None:
    code, out, _ = run(
        "docs", "upgrade-md", "--product", "fmeta", "--from", "2.0.0", "--to", "2.1.0",
        kb=(FORMAT, TEAM),
    )  # fmt: skip
    assert code == 0
    assert "## 2.0.0 → 2.1.0 (fmeta 2.1.0, the stop where our egress exception goes in)" in out
    assert "**If the fleet denies egress by default**" in out


def test_kb_list_shows_what_came_from_where() -> None:
    code, out, _ = run("kb", "list", "--product", "fmeta", kb=(FORMAT, TEAM))
    assert code == 0
    assert (
        "[amended by kb-format-team/releases/fmeta/2.1.0.yaml: Our fleet needs an extra step at "
        "this stop; overrides title: we name the stop after what our fleet must do there]"
    ) in out
    assert "[from kb-format-team/releases/fmeta/3.2.0.yaml]" in out
    assert "  hazard team-proxy-on-320 [from kb-format-team/hazards/team-proxy-on-320.yaml]" in out
    _, out, _ = run("kb", "list", "--product", "fmeta", "-o", "json", kb=(FORMAT, TEAM))
    (row,) = json.loads(out)["products"]
    (stop,) = [r for r in row["releases"] if r["version"] == "2.1.0"]
    assert stop["file"] == "kb-format/releases/fmeta/2.1.0.yaml"
    assert stop["amendments"][0]["overrides"] == {
        "title": "we name the stop after what our fleet must do there"
    }


def test_a_bundled_release_and_product_can_be_amended(tmp_path: Path) -> None:
    kb = tmp_path / "team"
    (kb / "releases" / "kubernetes").mkdir(parents=True)
    (kb / "hazards").mkdir()
    (kb / "releases" / "kubernetes" / "1.31.0.yaml").write_text(
        "schema_version: 1\nkind: release\nproduct: kubernetes\nversion: '1.31.0'\n"
        "amend: {reason: our clusters need the audit policy re-applied}\n"
        "notes:\n  - condition: If the audit policy is ours\n    text: Re-apply it.\n"
    )
    (kb / "hazards" / "team-k8s-131.yaml").write_text(
        "schema_version: 1\nkind: hazard\nid: team-k8s-131\ntitle: Our admission webhook\n"
        "product: kubernetes\nseverity: warning\nscope: landing\nlanding: {range: '>=1.31.0'}\n"
        "consequence: The webhook rejects pods.\nreferences: ['example/team#10']\n"
    )
    code, out, err = run("kb", "lint", str(kb), kb=())
    assert code == 0, out + err
    _, out, _ = run("kb", "list", "--product", "kubernetes", kb=(kb,))
    assert "[amended by team/releases/kubernetes/1.31.0.yaml: our clusters need" in out
    assert "hazard team-k8s-131 [from team/hazards/team-k8s-131.yaml]" in out


def test_a_true_duplicate_is_still_kb004_and_a_silent_change_is_kb028(tmp_path: Path) -> None:
    dup = tmp_path / "dup"
    (dup / "releases" / "fmeta").mkdir(parents=True)
    shutil.copy(FORMAT / "releases" / "fmeta" / "1.0.0.yaml", dup / "releases" / "fmeta")
    code, out, _ = run("kb", "lint", str(FORMAT), str(dup))
    assert code == 2 and "dup/releases/fmeta/1.0.0.yaml:1 KB004" in out
    change = tmp_path / "change"
    (change / "releases" / "fmeta").mkdir(parents=True)
    (change / "releases" / "fmeta" / "1.0.0.yaml").write_text(
        "schema_version: 1\nkind: release\nproduct: fmeta\nversion: '1.0.0'\n"
        "amend: {reason: retitle it}\ntitle: another title\n"
    )
    code, out, _ = run("kb", "lint", str(FORMAT), str(change))
    assert code == 2
    assert "change/releases/fmeta/1.0.0.yaml:6 KB028 title differs from" in out
    assert "add 'title' to amend.overrides with the reason" in out


# ---------------------------------------------------------------- 4: conditional requires


def test_a_conditional_requirement_holds_only_where_its_condition_is_true() -> None:
    base = ("--installed", "fmeta=3.0.0", "--fact", "kubernetes=1.29.0")
    code, doc = check_json(*base, "--fact", f"{ENGINE}=true")
    assert (code, status_of(doc, "requires:fmeta@3.0.0")) == (3, "applies")
    code, doc = check_json(*base, "--fact", f"{ENGINE}=false")
    assert (code, status_of(doc, "requires:fmeta@3.0.0")) == (0, "absent")
    code, out, _ = run("-v", "check", *base)
    assert code == 4
    assert "may-apply      blocking requires:fmeta@3.0.0" in out and f"missing {ENGINE}" in out
    # the title says the condition, not only the requirement
    assert f"fmeta 3.0.0 requires kubernetes >=1.30.0-0 when {ENGINE} is true" in out
    code, doc = check_json(
        "--installed", "fmeta=3.0.0", "--fact", "kubernetes=1.31.0", "--fact", f"{ENGINE}=true"
    )
    assert (code, status_of(doc, "requires:fmeta@3.0.0")) == (0, "does-not-apply")


# --------------------------------------------------------------------------- 1: component ranges

FCOMP_130 = """\
schema_version: 1
kind: release
product: fcomp
version: "1.3.0"
date: "2026-02-15"
title: fcomp 1.3.0 renames its config key
built_against: {fbase: "0.2.0"}
"""
BREAKING = """\
schema_version: 1
kind: hazard
id: fcomp-130-config-key-renamed
title: fcomp 1.3.0 renames its config key; the old one is ignored
product: fcomp
severity: blocking
scope: transition
transition: {from: "<1.3.0", to: ">=1.3.0"}
consequence: fcomp starts with its defaults and drops the installation's settings.
symptoms: [{pattern: "unknown key"}]
verify: ["kubectl -n fmeta get cm fcomp -o yaml"]
references: ["example/fcomp#3"]
"""
FOLLOWS = ("--installed", "fmeta=1.0.0", "--installed", "fcomp=1.2.0")


def _with_fcomp_130(tmp_path: Path) -> Path:
    kb = tmp_path / "kb-format"
    shutil.copytree(FORMAT, kb)
    (kb / "releases" / "fcomp" / "1.3.0.yaml").write_text(FCOMP_130)
    (kb / "hazards" / "fcomp-130-config-key-renamed.yaml").write_text(BREAKING)
    return kb


def test_a_new_component_release_inside_the_published_range_is_reported(tmp_path: Path) -> None:
    meta = FORMAT / "releases" / "fmeta" / "1.0.0.yaml"
    assert 'fcomp: {versionRange: ">=1.2.0 <2.0.0"}' in meta.read_text()
    code, doc = check_json(*FOLLOWS)
    assert (code, status_of(doc, "fmeta-range-admits-foreign-build")) == (0, "does-not-apply")
    kb = _with_fcomp_130(tmp_path)
    assert (kb / "releases" / "fmeta" / "1.0.0.yaml").read_bytes() == meta.read_bytes()
    code, out, err = run("kb", "lint", str(kb), kb=())
    assert code == 0, out + err
    code, out, _ = run("-v", "check", *FOLLOWS, kb=(kb,))
    assert code == 3
    assert "applies        blocking fcomp-130-config-key-renamed [fcomp 1.2.0 → 1.3.0]" in out
    assert (
        "the pin >=1.2.0 <2.0.0 (default of fmeta@1.0.0 (components.fcomp.versionRange)) "
        "admits fcomp 1.3.0"
    ) in out


def test_a_range_that_admits_a_build_against_another_base_is_reported(tmp_path: Path) -> None:
    kb = _with_fcomp_130(tmp_path)
    code, doc = check_json(*FOLLOWS, kb=(kb,))
    (finding, *_) = findings(doc, "fmeta-range-admits-foreign-build")
    assert (code, finding["status"]) == (3, "applies")
    assert "admits fcomp 1.3.0, built against fbase 0.2.0; fmeta 1.0.0 publishes fbase 0.1.0" in (
        str(finding["reason"])
    )
    _, out, _ = run("check", "--installed", "fcomp=1.2.0", "--pin", "fcomp=1.2.0", kb=(kb,))
    assert "fmeta-range-admits-foreign-build" not in out  # out of its state scope: not running


def test_a_component_release_without_built_against_leaves_it_may_apply(tmp_path: Path) -> None:
    kb = _with_fcomp_130(tmp_path)
    path = kb / "releases" / "fcomp" / "1.3.0.yaml"
    path.write_text(path.read_text().replace('built_against: {fbase: "0.2.0"}\n', ""))
    _, doc = check_json(*FOLLOWS, "--pin", "fcomp=1.2.0", kb=(kb,))
    (finding, *_) = findings(doc, "fmeta-range-admits-foreign-build")
    assert finding["status"] == "may-apply"
    assert "does not say what fbase they were built against" in str(finding["reason"])


def test_a_pin_the_installation_sets_itself_is_not_replaced_by_the_range(tmp_path: Path) -> None:
    kb = _with_fcomp_130(tmp_path)
    _, doc = check_json(*FOLLOWS, "--pin", "fcomp=1.2.0", kb=(kb,))
    assert status_of(doc, "fcomp-130-config-key-renamed") == "absent"


# --------------------------------------------------------------------------- 2: chart defaults

CACHE = "fmeta-prompt-cache-shared"
HELMRELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: fmeta, namespace: fmeta}
spec:
  interval: 10m
  chart:
    spec: {chart: fmeta, version: "2.0.0", sourceRef: {kind: HelmRepository, name: fmeta}}
  values:
"""


def _tree(tmp_path: Path, values: str) -> Path:
    root = tmp_path / "gitops"
    root.mkdir()
    (root / "fmeta.yaml").write_text(HELMRELEASE + values)
    return root


def test_a_default_turns_the_feature_on_where_the_installation_does_not_set_it(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path, "    replicas: 2\n")
    code, doc = check_json("--gitops", str(root), *NO_ENGINE)
    (finding, *_) = findings(doc, CACHE)
    assert (code, finding["status"]) == (3, "applies")
    assert "promptCaching.enabled = true, default of fmeta@2.0.0" in str(finding["reason"])
    code, out, _ = run("-v", "check", "--gitops", str(root), *NO_ENGINE)
    assert "observed values.fmeta.promptCaching.enabled = true (from default of fmeta@2.0.0)" in out


def test_a_feature_the_installation_turns_off_is_judged_off(tmp_path: Path) -> None:
    root = _tree(tmp_path, "    promptCaching:\n      enabled: false\n")
    code, doc = check_json("--gitops", str(root), *NO_ENGINE)
    (finding, *_) = findings(doc, CACHE)
    assert (code, finding["status"]) == (0, "does-not-apply")
    assert "promptCaching.enabled = false, set by the installation" in str(finding["reason"])


def test_a_default_from_a_snapshot_of_the_cluster(tmp_path: Path) -> None:
    snap = tmp_path / "snap.yaml"
    snap.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "  - apiVersion: helm.toolkit.fluxcd.io/v2\n    kind: HelmRelease\n"
        "    metadata: {name: fmeta, namespace: fmeta}\n"
        "    spec: {chart: {spec: {chart: fmeta}}, values: {replicas: 2}}\n"
        "    status: {history: [{chartName: fmeta, chartVersion: '2.0.0', status: deployed}]}\n"
    )
    code, doc = check_json("--snapshot", str(snap))
    assert (code, status_of(doc, CACHE)) == (3, "applies")


def test_stated_values_settle_or_leave_the_feature_unknown() -> None:
    code, out, _ = run("-v", "check", "--installed", "fmeta=2.0.0")
    assert code == 4
    assert f"may-apply      blocking {CACHE}" in out
    assert "missing values.fmeta.promptCaching.enabled" in out
    code, doc = check_json("--installed", "fmeta=2.0.0", "--fact", "values.fmeta={}")
    assert (code, status_of(doc, CACHE)) == (3, "applies")  # sets nothing: the default holds
    code, doc = check_json(
        "--installed", "fmeta=2.0.0", "--fact", "values.fmeta.promptCaching.enabled=false"
    )
    assert (code, status_of(doc, CACHE)) == (0, "does-not-apply")
    code, doc = check_json("--installed", "fmeta=3.0.0", "--fact", "values.fmeta={}", *NO_ENGINE)
    assert status_of(doc, CACHE) in ("does-not-apply", "absent")  # out of its landing range


def test_lint_fails_on_a_hazard_without_any_reference(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(FORMAT, kb)
    path = kb / "hazards" / "fmeta-prompt-cache-shared.yaml"
    path.write_text(path.read_text().replace('references: ["example/fmeta#40"]\n', ""))
    code, out, _ = run("kb", "lint", "--no-bundled", str(kb))
    assert code == 2
    assert (
        "kb/hazards/fmeta-prompt-cache-shared.yaml:1 KB026 hazard 'fmeta-prompt-cache-shared' "
        "has no reference"
    ) in out
    # the fragment as shipped is clean beside the bundled knowledge it builds on (its fmeta 3.0.0
    # requires the bundled kubernetes product, so it is not linted on its own)
    code, _, _ = run("kb", "lint", str(FORMAT))
    assert code == 0


# --------------------------------------------------------------------------- 3: comparing facts

MISMATCH = "fcomp-worker-image-mismatch"


def test_two_image_facts_compared_by_version() -> None:
    base = ("--installed", "fcomp=1.2.0", "--pin", "fcomp=1.2.0", "--fail-on", "warning")
    same = ("--fact", "workload.fcomp.image=reg/fcomp:1.2.0", "--fact", "workload.fbase.image")
    code, doc = check_json(*base, *same[:3], f"{same[3]}=reg/fbase:1.2.0")
    assert (code, status_of(doc, MISMATCH)) == (0, "does-not-apply")
    code, doc = check_json(*base, *same[:3], f"{same[3]}=reg/fbase:1.3.0")
    assert (code, status_of(doc, MISMATCH)) == (3, "applies")
    code, out, _ = run("-v", "check", *base, *same[:2])
    assert code == 4
    assert f"may-apply      warning  {MISMATCH}" in out and "missing workload.fbase.image" in out


# ------------------------------------------------- 4: a hop of one product, conditioned on another

FLOATS = "fmeta-cutover-while-fcomp-floats"


def test_a_hop_of_fmeta_conditioned_on_the_pin_and_version_of_fcomp() -> None:
    hop = ("--installed", "fmeta=2.1.0", "--to", "fmeta=3.0.0", *NO_ENGINE, "--fail-on", "warning")
    code, doc = check_json(*hop, "--installed", "fcomp=1.2.0", "--pin", "fcomp=>=1.2.0 <2.0.0")
    assert (code, status_of(doc, FLOATS)) == (3, "applies")
    code, doc = check_json(*hop, "--installed", "fcomp=1.2.0", "--pin", "fcomp=1.2.0")
    assert status_of(doc, FLOATS) == "does-not-apply"
    code, out, _ = run("-v", "check", *hop, "--installed", "fcomp=1.2.0")
    assert code == 4
    assert f"may-apply      warning  {FLOATS}" in out and "missing pin.fcomp" in out
