"""app_version_matches (the chart's appVersion on a release) and a hazard's own ``defaults``
(chart defaults for a range of releases), judged through ``check`` as a user runs it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cli import check

from upgradeplan import conditions, provenance
from upgradeplan.conditions.vocabulary import ARG_CLASS
from upgradeplan.model import Condition, Fact, State, Truth

PRODUCT = """schema_version: 1
kind: product
id: app
name: app
type: chart
reviewed_through: "3.0.0"
recognise: {helmrelease: [app], chart: [app]}
"""

APP_HAZARD = """schema_version: 1
kind: hazard
id: app-operator-v2
title: The operator 2.x the chart moves to drops the v1 API
product: app
severity: blocking
scope: transition
transition: {from: "<3.0.0", to: ">=3.0.0"}
when:
  all:
    - not: {app_version_matches: {product: app, range: ">=2.0.0-0", version: $from}}
    - app_version_matches: {product: app, range: ">=2.0.0-0", version: $to}
consequence: Objects of the v1 API stop being served.
references: ["https://example.com/app/UPGRADE.md"]
verify: ["kubectl get crd"]
"""

DEFAULTS_HAZARD = """schema_version: 1
kind: hazard
id: app-job-off
title: Without the upgrade job the new CRDs are not applied
product: app
severity: warning
scope: transition
transition: {from: "<2.0.0", to: ">=2.0.0"}
when:
  not: {value_equals: {product: app, key: crds.upgradeJob.enabled, value: true}}
defaults:
  - versions: ">=1.0.0"
    values: {crds: {upgradeJob: {enabled: false}}}
consequence: The operator runs against CRDs older than it expects.
references: ["https://example.com/app/UPGRADE.md"]
verify: ["kubectl get crd"]
"""


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "products").mkdir(parents=True)
    (root / "hazards").mkdir()
    (root / "releases" / "app").mkdir(parents=True)
    (root / "products" / "app.yaml").write_text(PRODUCT)
    (root / "hazards" / "app-operator-v2.yaml").write_text(APP_HAZARD)
    (root / "hazards" / "app-job-off.yaml").write_text(DEFAULTS_HAZARD)
    apps = {"1.0.0": "v1.4.0", "2.0.0": "v1.9.0", "3.0.0": "v2.0.1", "3.1.0": ""}
    for version, app in apps.items():
        line = f'app_version: "{app}"\n' if app else ""
        (root / "releases" / "app" / f"{version}.yaml").write_text(
            f'schema_version: 1\nkind: release\nproduct: app\nversion: "{version}"\n'
            f'title: "app {version}"\n{line}'
        )
    return root


def _ids(result: dict[str, object], status: str) -> set[str]:
    findings = result["findings"]  # statuses: applies, may-apply, does-not-apply
    assert isinstance(findings, list)
    return {f["hazard"] for f in findings if f["status"] == status}


def test_app_version_crossing_its_major_applies(kb_dir: Path) -> None:
    code, result = check(
        "--kb", str(kb_dir), "--installed", "app=2.0.0", "--to", "app=3.0.0",
        "--fact", "values.app={}",
    )  # fmt: skip
    assert code == 3
    assert "app-operator-v2" in _ids(result, "applies")


def test_app_version_already_at_the_major_does_not_apply(kb_dir: Path) -> None:
    (kb_dir / "releases" / "app" / "2.0.0.yaml").write_text(
        'schema_version: 1\nkind: release\nproduct: app\nversion: "2.0.0"\n'
        'title: "app 2.0.0"\napp_version: "v2.0.0"\n'
    )
    code, result = check(
        "--kb", str(kb_dir), "--installed", "app=2.0.0", "--to", "app=3.0.0",
        "--fact", "values.app={}",
    )  # fmt: skip
    assert code == 0, result
    assert "app-operator-v2" not in _ids(result, "applies") | _ids(result, "may-apply")


def test_a_release_without_an_app_version_leaves_it_open(kb_dir: Path) -> None:
    (kb_dir / "releases" / "app" / "2.0.0.yaml").write_text(
        'schema_version: 1\nkind: release\nproduct: app\nversion: "2.0.0"\ntitle: "app 2.0.0"\n'
    )
    code, result = check(
        "--kb", str(kb_dir), "--installed", "app=2.0.0", "--to", "app=3.0.0",
        "--fact", "values.app={}",
    )  # fmt: skip
    assert "app-operator-v2" in _ids(result, "may-apply")
    assert "app 2.0.0 is recorded without an app version" in str(result)
    assert code == 4


def test_an_unset_value_is_judged_on_the_hazards_default(kb_dir: Path) -> None:
    code, result = check(
        "--kb", str(kb_dir), "--installed", "app=1.0.0", "--to", "app=2.0.0",
        "--fact", "values.app={}", "--fail-on", "warning",
    )  # fmt: skip
    assert "app-job-off" in _ids(result, "applies")
    assert code == 3
    text = str(result)
    assert "default of app@1.0.0" in text


def test_a_value_the_installation_sets_wins_over_the_default(kb_dir: Path) -> None:
    code, result = check(
        "--kb", str(kb_dir), "--installed", "app=1.0.0", "--to", "app=2.0.0",
        "--fact", "values.app.crds.upgradeJob.enabled=true", "--fail-on", "warning",
    )  # fmt: skip
    assert "app-job-off" not in _ids(result, "applies") | _ids(result, "may-apply")
    assert code == 0, result


def test_a_bad_defaults_range_is_a_lint_error(kb_dir: Path) -> None:
    from support.cli import run

    (kb_dir / "hazards" / "app-job-off.yaml").write_text(
        DEFAULTS_HAZARD.replace('versions: ">=1.0.0"', 'versions: ">=1.x.y"')
    )
    code, out = run("kb", "lint", str(kb_dir))
    assert code == 2
    assert "app-job-off.yaml:12 KB009 defaults versions" in out


# -- the class of an installed version (conditions.vocabulary.ARG_CLASS) --------------------

_VERSIONS = st.builds(
    "{}.{}.{}".format, st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)
) | st.sampled_from([None, "latest", "1.2", "2.0.0-rc.1"])
_CONDS = st.sampled_from(
    [
        ("version_below", {"product": "app", "version": "2.1.0"}),
        ("version_at_least", {"product": "app", "version": "1.3.0"}),
        ("version_matches", {"product": "app", "range": ">=1.0.0 <3.0.0"}),
        ("version_matches", {"product": "app", "range": "~2.2"}),
    ]
)


def _truth_on(name: str, args: dict[str, str], value: str | None) -> Truth:
    fact = Fact("installed.app", value, provenance.flag("--installed"))
    state = State(facts={"installed.app": fact})
    return conditions.truth(Condition(op="pred", predicate=name, args=args), state, None)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(_CONDS, _VERSIONS, _VERSIONS)
def test_installed_versions_of_one_class_have_one_truth(
    cond: tuple[str, dict[str, str]], a: str | None, b: str | None
) -> None:
    # the planner judges a version comparison again only where its class changes: two
    # installed versions of one class must give the same truth
    name, args = cond
    if ARG_CLASS[name](args, a) == ARG_CLASS[name](args, b):
        assert _truth_on(name, args, a) is _truth_on(name, args, b)


def test_installed_class_turns_where_the_comparison_turns() -> None:
    below = [ARG_CLASS["version_below"]({"version": "2.1.0"}, v) for v in ("2.0.9", "2.1.0")]
    assert below == [True, False]
    assert ARG_CLASS["version_below"]({"version": "2.1.0"}, None) == "absent"
