"""Each check computed from two chart archives, on charts built by the test."""

from __future__ import annotations

from typing import Any

import pytest
from support.chartrepo import chart_tgz, crd

from upgradeplan import provenance
from upgradeplan.charts.archive import read
from upgradeplan.charts.checks import APP, CRDS, KUBE, VALUES, Move, Read, findings
from upgradeplan.model import Fact, Finding, State

V1 = crd("example.com", "widgets", "Widget", {"v1": True})
V2 = crd("example.com", "widgets", "Widget", {"v1": False, "v2": True})
GADGETS = crd("example.com", "gadgets", "Gadget", {"v1": True})


def _read(version: str, **kw: Any) -> Read:
    return Read(version, f"demo-{version}.tgz", read(chart_tgz("demo", version, **kw), "demo"))


def _state(**facts: Any) -> State:
    return State(
        facts={k: Fact(k, v, provenance.in_file("release.yaml", 3)) for k, v in facts.items()}
    )


def _move(values: dict[str, Any] | None = None) -> Move:
    return Move("demo", "1.0.0", "2.0.0", "demo", values if values is not None else {}, "", None)


def _one(found: list[Finding], check: str) -> Finding:
    [f] = [f for f in found if f.hazard == check]
    return f


POLICY = "helmrelease.demo.crds"


@pytest.mark.parametrize(
    ("policy", "status", "said"),
    [
        ("Skip", "applies", "with spec.upgrade.crds Skip: widgets.example.com stays as it is"),
        ("Create", "applies", "gadgets.example.com"),
        ("CreateReplace", "does-not-apply", "spec.upgrade.crds CreateReplace applies them"),
    ],
)
def test_changed_crds_apply_unless_the_policy_replaces_them(
    policy: str, status: str, said: str
) -> None:
    old = _read("1.0.0", crds={"w.yaml": V1})
    new = _read("2.0.0", crds={"w.yaml": V2, "g.yaml": GADGETS})
    state = _state(**{POLICY: {"install": "Create", "upgrade": policy}})
    f = _one(findings(_move(), old, new, state), CRDS)
    assert (f.status, f.severity) == (status, "warning")
    assert "added gadgets.example.com" in f.reason
    assert "changed widgets.example.com (+v2, storage v1→v2)" in f.reason
    assert said in f.reason
    if policy == "Skip":
        assert "gadgets.example.com is not created" in f.reason
    if policy == "Create":
        assert "not created" not in f.reason  # Create creates it
    # the sources: both archives, and the policy read
    assert [x.source.detail for x in f.evidence[0].facts] == ["demo-1.0.0.tgz", "demo-2.0.0.tgz"]
    assert f.evidence[1].facts[0].key == POLICY


def test_crds_without_a_known_policy_may_apply_naming_the_fact() -> None:
    f = _one(
        findings(
            _move(),
            _read("1.0.0", crds={"w.yaml": V1}),
            _read("2.0.0", crds={"w.yaml": V2}),
            State(),
        ),
        CRDS,
    )
    assert f.status == "may-apply" and [m.key for m in f.missing] == [POLICY]


def test_a_removed_crd_is_said_and_never_deleted() -> None:
    f = _one(findings(_move(), _read("1.0.0", crds={"w.yaml": V1}), _read("2.0.0"), State()), CRDS)
    assert f.status == "does-not-apply"
    assert "removed widgets.example.com (never deleted by Helm or Flux)" in f.reason


def test_a_values_key_gone_from_the_chart_is_named_with_the_nearest_new_key() -> None:
    old = _read("1.0.0", values={"image": {"tag": ""}, "replicaCount": 1, "podLabels": {}})
    new = _read("2.0.0", values={"image": {"tag": ""}, "replicas": 1, "podLabels": {}})
    mine = {"replicaCount": 3, "image": {"tag": "x"}, "podLabels": {"team": "a"}, "extra": 1}
    f = _one(findings(_move(mine), old, new, State()), VALUES)
    assert (f.status, f.severity) == ("applies", "warning")
    assert (
        f.reason
        == "set by the installation, gone from demo 2.0.0: replicaCount (nearest: replicas)"
    )


def test_a_key_the_target_schema_still_has_is_not_gone() -> None:
    old = _read("1.0.0", values={"a": {"b": 1}})
    schema = {"properties": {"a": {"properties": {"b": {"type": "integer"}}}}}
    new = _read("2.0.0", values={}, schema=schema)
    f = _one(findings(_move({"a": {"b": 2}}), old, new, State()), VALUES)
    assert f.status == "does-not-apply"


def test_values_that_could_not_be_read_may_apply() -> None:
    move = Move("demo", "1.0.0", "2.0.0", "demo", None, "Secret demo/values: never read", None)
    f = _one(findings(move, _read("1.0.0"), _read("2.0.0"), State()), VALUES)
    assert f.status == "may-apply" and "Secret demo/values: never read" in f.reason


@pytest.mark.parametrize(
    ("kube", "status"),
    [("1.29.4", "applies"), ("v1.30.1", "does-not-apply"), (None, "may-apply")],
)
def test_a_raised_kube_version_is_judged_against_the_clusters(
    kube: str | None, status: str
) -> None:
    old = _read("1.0.0", kube_version=">=1.25.0-0")
    new = _read("2.0.0", kube_version=">=1.30.0-0")
    state = _state(**{"installed.kubernetes": kube}) if kube else State()
    f = _one(findings(_move(), old, new, state), KUBE)
    assert (f.status, f.severity) == (status, "blocking")
    assert "kubeVersion >=1.25.0-0 → >=1.30.0-0 (lowest 1.30)" in f.reason
    if kube is None:
        assert [m.key for m in f.missing] == ["installed.kubernetes"]


def test_a_kube_version_that_is_not_raised_does_not_apply() -> None:
    old = _read("1.0.0", kube_version=">=1.25.0-0")
    new = _read("2.0.0", kube_version=">=1.24.0-0")
    f = _one(findings(_move(), old, new, State()), KUBE)
    assert f.status == "does-not-apply"


@pytest.mark.parametrize(
    ("before", "after", "status"),
    [
        ("v1.16.3", "v2.0.0", "applies"),
        ("1.2.0", "1.9.0", "does-not-apply"),
        ("", "2", "does-not-apply"),
    ],
)
def test_an_app_version_major_change(before: str, after: str, status: str) -> None:
    f = _one(
        findings(
            _move(), _read("1.0.0", app_version=before), _read("2.0.0", app_version=after), State()
        ),
        APP,
    )
    assert (f.status, f.severity) == (status, "notice")


def test_an_unreadable_archive_makes_every_check_may_apply_naming_it() -> None:
    bad = Read("2.0.0", "not read", problem="https://x/demo-2.0.0.tgz: HTTP 404: not found")
    found = findings(_move(), _read("1.0.0"), bad, State())
    assert sorted(f.hazard for f in found) == sorted([APP, CRDS, KUBE, VALUES])
    for f in found:
        assert f.status == "may-apply"
        assert f.reason == (
            "the chart archive could not be read: demo 2.0.0: https://x/demo-2.0.0.tgz: "
            "HTTP 404: not found"
        )


def test_a_crd_file_that_does_not_parse_is_named_and_leaves_the_check_open() -> None:
    broken = {"demo/crds/bad.yaml": b"kind: CustomResourceDefinition\nspec: [unclosed\n"}
    old = _read("1.0.0", crds={"w.yaml": V1})
    new = Read(
        "2.0.0", "x", read(chart_tgz("demo", "2.0.0", crds={"w.yaml": V1}, extra=broken), "d")
    )
    f = _one(findings(_move(), old, new, State()), CRDS)
    assert f.status == "may-apply"
    assert "2.0.0: crds/bad.yaml is not YAML" in f.reason and "(not compared)" in f.reason
