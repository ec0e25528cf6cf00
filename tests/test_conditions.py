"""The predicate vocabulary: each predicate true / false / unknown, with evidence; Kleene logic."""

from __future__ import annotations

from typing import Any

import pytest
from support.builders import bare_kb

from upgradeplan import conditions, errors
from upgradeplan.conditions import PREDICATES, evaluate, evaluate_full, facts_read
from upgradeplan.model import (
    Condition,
    Fact,
    KnowledgeBase,
    Release,
    State,
    Truth,
    Withdrawn,
)
from upgradeplan.provenance import in_file, text
from upgradeplan.state.derive import derive

T, F, U = Truth.TRUE, Truth.FALSE, Truth.UNKNOWN


def kb_with(product: str = "conn", versions: tuple[str, ...] = ()) -> KnowledgeBase:
    rels = tuple(Release(product, v, f"release {v}") for v in versions)
    return bare_kb(releases={product: rels})


KB = kb_with()


def S(facts: dict[str, Any]) -> State:
    return State(
        facts={
            k: Fact(k, v, in_file("clusters/prod/bom.yaml", i + 1))
            for i, (k, v) in enumerate(facts.items())
        }
    )


def pred(predicate: str, /, **args: Any) -> Condition:
    return Condition("pred", predicate=predicate, args=args)


def run(
    cond: Condition, facts: dict[str, Any], kb: KnowledgeBase = KB, hop: Any = (None, None)
) -> Truth:
    truth, _ = evaluate(cond, S(facts), kb, hop=hop)
    return truth


# --------------------------------------------------------------------------- vocabulary


def test_vocabulary_matches_the_documented_table() -> None:
    from upgradeplan.kb.schema import predicate_specs

    assert set(PREDICATES) == set(predicate_specs())
    for name, spec in predicate_specs().items():
        assert (set(PREDICATES[name].required), set(PREDICATES[name].optional)) == (
            set(spec.required),
            set(spec.optional),
        ), name
    assert set(PREDICATES) >= {
        "version_below",
        "version_at_least",
        "version_matches",
        "pin_exact",
        "pin_kind",
        "pin_resolves_below",
        "drift_detection",
        "object_exists",
        "object_annotation",
        "object_label",
        "container_arg",
        "secret_type",
        "namespace_label",
        "node_taint",
        "tolerates",
        "crd_stored_version",
        "storage_class_exists",
        "fact_equals",
        "fact_in",
        "fact_contains",
        "fact_version_below",
    }
    assert PREDICATES["object_annotation"].optional == ("value",)
    assert PREDICATES["namespace_label"].required == ("key",)


def test_vocabulary_agrees_with_the_hazard_schema() -> None:
    from upgradeplan.kb.schema import predicate_specs

    specs = predicate_specs()
    assert set(specs) == set(PREDICATES)
    for name, spec in specs.items():
        assert set(spec.required) == set(PREDICATES[name].required), name
        assert set(spec.optional) == set(PREDICATES[name].optional), name


def test_unknown_predicate_is_a_typed_error_naming_the_vocabulary() -> None:
    with pytest.raises(errors.UnknownName) as exc:
        evaluate(pred("version_bellow", product="x", version="1.0.0"), State(), KB)
    assert "version_below" in str(exc.value)


# --------------------------------------------------------------------------- each predicate

HARNESS: dict[str, Any] = {"kind": "Harness", "namespace": "kagent", "name": "kagent"}
KEEP = pred("object_annotation", **HARNESS, key="helm.sh/resource-policy", value="keep")

CASES: list[tuple[str, Condition, dict[str, Any], Truth]] = [
    (
        "below-true",
        pred("version_below", product="conn", version="4.7.19"),
        {"installed.conn": "4.7.18"},
        T,
    ),
    (
        "below-false",
        pred("version_below", product="conn", version="4.7.19"),
        {"installed.conn": "4.7.19"},
        F,
    ),
    ("below-unknown", pred("version_below", product="conn", version="4.7.19"), {}, U),
    (
        "below-prerelease",
        pred("version_below", product="k", version="0.11.0"),
        {"installed.k": "0.11.0-gs.6"},
        T,
    ),
    (
        "atleast-true",
        pred("version_at_least", product="cd", version="24.12.0"),
        {"installed.cd": "24.12.3"},
        T,
    ),
    (
        "atleast-false",
        pred("version_at_least", product="cd", version="24.12.0"),
        {"installed.cd": "24.11.0"},
        F,
    ),
    ("atleast-unknown", pred("version_at_least", product="cd", version="24.12.0"), {}, U),
    (
        "matches-true",
        pred("version_matches", product="ap", range="4.8.0"),
        {"installed.ap": "4.8.0"},
        T,
    ),
    (
        "matches-false",
        pred("version_matches", product="ap", range="4.8.0"),
        {"installed.ap": "4.8.1"},
        F,
    ),
    ("matches-unknown", pred("version_matches", product="ap", range="4.8.0"), {}, U),
    ("pin-exact-true", pred("pin_exact", product="conn"), {"pin.conn": "4.7.18"}, T),
    ("pin-exact-range", pred("pin_exact", product="conn"), {"pin.conn": ">=4.7.0 <5.0.0"}, F),
    ("pin-exact-none", pred("pin_exact", product="conn"), {"pin.conn": None}, F),
    ("pin-exact-unknown", pred("pin_exact", product="conn"), {}, U),
    ("pin-kind-range", pred("pin_kind", product="conn", kind="range"), {"pin.conn": "4.x"}, T),
    ("pin-kind-none", pred("pin_kind", product="conn", kind="none"), {"pin.conn": None}, T),
    ("pin-kind-exact-no", pred("pin_kind", product="conn", kind="exact"), {"pin.conn": "~4.7"}, F),
    ("pin-kind-unknown", pred("pin_kind", product="conn", kind="exact"), {}, U),
    (
        "drift-true",
        pred("drift_detection", helmrelease="kagent", mode="enabled"),
        {"helmrelease.kagent.drift-detection": "enabled"},
        T,
    ),
    (
        "drift-false",
        pred("drift_detection", helmrelease="kagent", mode="enabled"),
        {"helmrelease.kagent.drift-detection": "disabled"},
        F,
    ),
    ("drift-unknown", pred("drift_detection", helmrelease="kagent", mode="enabled"), {}, U),
    (
        "crds-upgrade-replace",
        pred("crd_policy", helmrelease="kps", action="upgrade", policy="CreateReplace"),
        {"helmrelease.kps.crds": {"install": "Create", "upgrade": "CreateReplace"}},
        T,
    ),
    (
        "crds-upgrade-default",
        pred("crd_policy", helmrelease="kps", action="upgrade", policy=["CreateReplace"]),
        {"helmrelease.kps.crds": {"install": "Create", "upgrade": "Create"}},
        F,
    ),
    (
        "crds-install-either",
        pred("crd_policy", helmrelease="kps", action="install", policy=["Skip", "Create"]),
        {"helmrelease.kps.crds": {"install": "Create", "upgrade": "Skip"}},
        T,
    ),
    (
        "crds-not-a-map",
        pred("crd_policy", helmrelease="kps", action="upgrade", policy="Skip"),
        {"helmrelease.kps.crds": "Skip"},
        U,
    ),
    ("crds-unknown", pred("crd_policy", helmrelease="kps", action="upgrade", policy="Skip"), {}, U),
    (
        "exists-true",
        pred("object_exists", **HARNESS),
        {"object.Harness.kagent.kagent.exists": True},
        T,
    ),
    (
        "exists-false",
        pred("object_exists", **HARNESS),
        {"object.Harness.kagent.kagent.exists": False},
        F,
    ),
    (
        "exists-unknown",
        pred("object_exists", **HARNESS),
        {},
        U,
    ),
    (
        "annotation-true",
        KEEP,
        {
            "object.Harness.kagent.kagent.exists": True,
            "object.Harness.kagent.kagent.annotations": {"helm.sh/resource-policy": "keep"},
        },
        T,
    ),
    (
        "annotation-other-value",
        KEEP,
        {
            "object.Harness.kagent.kagent.exists": True,
            "object.Harness.kagent.kagent.annotations": {"helm.sh/resource-policy": "delete"},
        },
        F,
    ),
    (
        "annotation-any-value",
        pred("object_annotation", **HARNESS, key="helm.sh/resource-policy"),
        {
            "object.Harness.kagent.kagent.exists": True,
            "object.Harness.kagent.kagent.annotations": {"helm.sh/resource-policy": "delete"},
        },
        T,
    ),
    (
        "annotation-empty-map",
        pred("object_annotation", **HARNESS, key="k"),
        {
            "object.Harness.kagent.kagent.exists": True,
            "object.Harness.kagent.kagent.annotations": {},
        },
        F,
    ),
    (
        "annotation-object-missing",
        pred("object_annotation", **HARNESS, key="k"),
        {"object.Harness.kagent.kagent.exists": False},
        F,
    ),
    (
        "annotation-unknown",
        pred("object_annotation", **HARNESS, key="k"),
        {"object.Harness.kagent.kagent.exists": True},
        U,
    ),
    (
        "label-true",
        pred("object_label", kind="Secret", namespace="ns", name="s", key="app", value="d"),
        {"object.Secret.ns.s.exists": True, "object.Secret.ns.s.labels": {"app": "d"}},
        T,
    ),
    (
        "label-unknown",
        pred("object_label", kind="Secret", namespace="ns", name="s", key="app"),
        {},
        U,
    ),
    (
        "arg-true",
        pred("container_arg", product="d", arg="--instance-metadata-url"),
        {"workload.d.args": ["--x", "--instance-metadata-url=https://169.254.169.254"]},
        T,
    ),
    (
        "arg-prefix-only",
        pred("container_arg", product="d", arg="--instance-metadata-url"),
        {"workload.d.args": ["--instance-metadata-url-extra=1"]},
        F,
    ),
    (
        "arg-false",
        pred("container_arg", product="d", arg="--instance-metadata-url"),
        {"workload.d.args": ["--metadata-endpoint=x"]},
        F,
    ),
    ("arg-unknown", pred("container_arg", product="d", arg="--instance-metadata-url"), {}, U),
    (
        "secret-true",
        pred("secret_type", product="d", type="harness.io/token"),
        {
            "workload.d.namespace": "ns",
            "workload.d.env-secrets": ["tok"],
            "secret.ns.tok.type": "harness.io/token",
        },
        T,
    ),
    (
        "secret-false",
        pred("secret_type", product="d", type="harness.io/token"),
        {
            "workload.d.namespace": "ns",
            "workload.d.env-secrets": ["tok"],
            "secret.ns.tok.type": "Opaque",
        },
        F,
    ),
    (
        "secret-none-referenced",
        pred("secret_type", product="d", type="harness.io/token"),
        {"workload.d.env-secrets": []},
        F,
    ),
    (
        "secret-type-unknown",
        pred("secret_type", product="d", type="harness.io/token"),
        {"workload.d.namespace": "ns", "workload.d.env-secrets": ["tok"]},
        U,
    ),
    ("secret-unknown", pred("secret_type", product="d", type="harness.io/token"), {}, U),
    (
        "nslabel-true",
        pred("namespace_label", namespace="d-ng", key="istio-injection", value="enabled"),
        {"namespace.d-ng.labels": {"istio-injection": "enabled"}},
        T,
    ),
    (
        "nslabel-via-product",
        pred("namespace_label", product="d", key="istio-injection"),
        {"workload.d.namespace": "d-ng", "namespace.d-ng.labels": {"istio-injection": "enabled"}},
        T,
    ),
    (
        "nslabel-false",
        pred("namespace_label", namespace="d-ng", key="istio-injection"),
        {"namespace.d-ng.labels": {}},
        F,
    ),
    ("nslabel-unknown", pred("namespace_label", product="d", key="istio-injection"), {}, U),
    (
        "taint-true",
        pred("node_taint", key="cloud-provider", effect="NoSchedule"),
        {"nodes.taints": ["cloud-provider=aws:NoSchedule"]},
        T,
    ),
    (
        "taint-other-effect",
        pred("node_taint", key="cloud-provider", effect="NoExecute"),
        {"nodes.taints": ["cloud-provider=aws:NoSchedule"]},
        F,
    ),
    ("taint-unknown", pred("node_taint", key="cloud-provider"), {}, U),
    (
        "tolerates-true",
        pred("tolerates", product="d", key="cloud-provider"),
        {"workload.d.tolerations": ["cloud-provider:Exists:NoSchedule"]},
        T,
    ),
    (
        "tolerates-wildcard",
        pred("tolerates", product="d", key="cloud-provider"),
        {"workload.d.tolerations": [":Exists:"]},
        T,
    ),
    (
        "tolerates-false",
        pred("tolerates", product="d", key="cloud-provider"),
        {"workload.d.tolerations": []},
        F,
    ),
    ("tolerates-unknown", pred("tolerates", product="d", key="cloud-provider"), {}, U),
    (
        "crd-true",
        pred("crd_stored_version", crd="m.kagent.dev", version="v1alpha2"),
        {"crd.m.kagent.dev.stored-versions": ["v1alpha2", "v1alpha3"]},
        T,
    ),
    (
        "crd-false",
        pred("crd_stored_version", crd="m.kagent.dev", version="v1alpha2"),
        {"crd.m.kagent.dev.stored-versions": ["v1alpha3"]},
        F,
    ),
    ("crd-unknown", pred("crd_stored_version", crd="m.kagent.dev", version="v1alpha2"), {}, U),
    (
        "sc-true",
        pred("storage_class_exists", name="standard"),
        {"storageclass.standard.exists": True},
        T,
    ),
    (
        "sc-false",
        pred("storage_class_exists", name="standard"),
        {"storageclass.standard.exists": False},
        F,
    ),
    ("sc-unknown", pred("storage_class_exists", name="standard"), {}, U),
    (
        "equals-true",
        pred("fact_equals", fact="nodes.provider", value="aks"),
        {"nodes.provider": "aks"},
        T,
    ),
    (
        "equals-bool",
        pred("fact_equals", fact="cluster.autopilot", value=True),
        {"cluster.autopilot": "true"},
        T,
    ),
    (
        "equals-false",
        pred("fact_equals", fact="nodes.provider", value="aks"),
        {"nodes.provider": "eks"},
        F,
    ),
    ("equals-unknown", pred("fact_equals", fact="nodes.provider", value="aks"), {}, U),
    (
        "in-true",
        pred("fact_in", fact="nodes.provider", values=["aks", "eks"]),
        {"nodes.provider": "eks"},
        T,
    ),
    (
        "in-false",
        pred("fact_in", fact="nodes.provider", values=["aks", "eks"]),
        {"nodes.provider": "gke"},
        F,
    ),
    ("in-unknown", pred("fact_in", fact="nodes.provider", values=["aks"]), {}, U),
    (
        "contains-list",
        pred("fact_contains", fact="workload.d.env-secrets", value="tok"),
        {"workload.d.env-secrets": ["a", "tok"]},
        T,
    ),
    (
        "contains-map-key",
        pred("fact_contains", fact="namespace.x.labels", value="team"),
        {"namespace.x.labels": {"team": "a"}},
        T,
    ),
    (
        "contains-false",
        pred("fact_contains", fact="workload.d.env-secrets", value="tok"),
        {"workload.d.env-secrets": ["a"]},
        F,
    ),
    ("contains-unknown", pred("fact_contains", fact="workload.d.env-secrets", value="tok"), {}, U),
    (
        "fvb-true",
        pred("fact_version_below", fact="values.d.delegateVersion", version="0.31.2"),
        {"values.d.delegateVersion": "0.29.0"},
        T,
    ),
    (
        "fvb-false",
        pred("fact_version_below", fact="values.d.delegateVersion", version="0.31.2"),
        {"values.d.delegateVersion": "0.31.2"},
        F,
    ),
    (
        "fvb-not-a-version",
        pred("fact_version_below", fact="values.d.delegateVersion", version="0.31.2"),
        {"values.d.delegateVersion": "latest"},
        U,
    ),
    (
        "fvb-unknown",
        pred("fact_version_below", fact="values.d.delegateVersion", version="0.31.2"),
        {},
        U,
    ),
    # structured values: a key inside the whole values, a dotted key escaped with \.
    (
        "set-nested",
        pred("value_set", product="d", key="nodeSelector.kagent\\.dev/harness"),
        {"values.d": {"nodeSelector": {"kagent.dev/harness": "yes"}}},
        T,
    ),
    ("set-absent", pred("value_set", product="d", key="nodeSelector"), {"values.d": {}}, F),
    ("set-unknown", pred("value_set", product="d", key="nodeSelector"), {}, U),
    (
        "set-below-a-subtree-fact",
        pred("value_set", product="d", key="cache.enabled"),
        {"values.d.cache": {"enabled": False}},
        T,
    ),
    (
        "equals-set",
        pred("value_equals", product="d", key="cache.enabled", value=False),
        {"values.d": {"cache": {"enabled": False}}},
        T,
    ),
    (
        "equals-unset-no-default",
        pred("value_equals", product="d", key="cache.enabled", value=True),
        {"values.d": {}},
        U,
    ),
    (
        "in-true",
        pred("value_in", product="d", key="mode", values=["a", "b"]),
        {"values.d.mode": "b"},
        T,
    ),
    (
        "contains-list",
        pred("value_contains", product="d", key="allowed", value="x"),
        {"values.d": {"allowed": ["y", "x"]}},
        T,
    ),
    (
        "contains-map-false",
        pred("value_contains", product="d", key="labels", value="x"),
        {"values.d": {"labels": {"y": "1"}}},
        F,
    ),
    (
        "matches-true",
        pred("fact_matches", fact="workload.d.image", pattern=r":v?1\.3\."),
        {"workload.d.image": "reg/d:1.3.2"},
        T,
    ),
    (
        "matches-false",
        pred("fact_matches", fact="workload.d.image", pattern=r":v?1\.3\."),
        {"workload.d.image": "reg/d:1.4.0"},
        F,
    ),
    ("matches-unknown", pred("fact_matches", fact="workload.d.image", pattern="x"), {}, U),
    # two facts compared: the atelet image and the worker image name the same version
    (
        "same-version-true",
        pred("facts_same_version", fact="workload.a.image", other="values.k.worker\\.image"),
        {"workload.a.image": "reg/atelet:0.0.30-gs.4", "values.k.worker\\.image": "0.0.30-gs.4"},
        T,
    ),
    (
        "same-version-false",
        pred("facts_same_version", fact="workload.a.image", other="workload.w.image"),
        {"workload.a.image": "reg/a:1.2.0", "workload.w.image": "reg/w:1.3.0@sha256:ab"},
        F,
    ),
    (
        "same-version-no-tag",
        pred("facts_same_version", fact="workload.a.image", other="workload.w.image"),
        {"workload.a.image": "reg/a:latest", "workload.w.image": "reg/w:1.3.0"},
        U,
    ),
    (
        "same-version-unknown",
        pred("facts_same_version", fact="workload.a.image", other="workload.w.image"),
        {"workload.a.image": "reg/a:1.2.0"},
        U,
    ),
    # every object of a kind: a complete list settles both ways, objects known one by one
    # only make any_object true / all_objects false
    (
        "any-object-true",
        pred("any_object", kind="T", namespace="n", field="status.h", empty=True),
        {"object.T": ["n/a", "n/b"], "object.T.n.a.status.h": ["x"], "object.T.n.b.status.h": []},
        T,
    ),
    (
        "any-object-false",
        pred("any_object", kind="T", namespace="n", field="status.h", empty=True),
        {"object.T": ["n/a", "m/b"], "object.T.n.a.status.h": ["x"], "object.T.m.b.status.h": []},
        F,
    ),
    (
        "any-object-unlisted",
        pred("any_object", kind="T", field="status.h", empty=True),
        {"object.T.n.a.exists": True, "object.T.n.a.status.h": ["x"]},
        U,
    ),
    (
        "any-object-unlisted-hit",
        pred("any_object", kind="T", field="status.h", equals="x"),
        {"object.T.n.a.exists": True, "object.T.n.a.status.h": "x"},
        T,
    ),
    (
        "all-objects-none",
        pred("all_objects", kind="T", field="spec.x", matches="."),
        {"object.T": []},
        T,
    ),
    (
        "all-objects-false",
        pred("all_objects", kind="T", field="spec.x", matches="^v"),
        {"object.T": ["n/a"], "object.T.n.a.spec.x": "w1"},
        F,
    ),
    (
        "all-objects-field-unknown",
        pred("all_objects", kind="T", field="spec.x", matches="^v"),
        {"object.T": ["n/a"]},
        U,
    ),
    ("change-moved", pred("change_moves", product="a"), {"change.a": "moved"}, T),
    ("change-kept", pred("change_moves", product="a"), {"change.a": "kept"}, F),
    ("change-unknown", pred("change_moves", product="a"), {}, U),
    (
        "equal-true",
        pred("facts_equal", fact="values.k.mode", other="values.g.mode"),
        {"values.k.mode": "x", "values.g.mode": "x"},
        T,
    ),
    (
        "equal-false",
        pred("facts_equal", fact="values.k.mode", other="values.g.mode"),
        {"values.k.mode": "x", "values.g.mode": "y"},
        F,
    ),
]


@pytest.mark.parametrize(
    ("cond", "facts", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_predicate(cond: Condition, facts: dict[str, Any], expected: Truth) -> None:
    truth, evidence = evaluate(cond, S(facts), KB)
    assert truth is expected
    assert conditions.truth(cond, S(facts), KB) is expected
    (ev,) = evidence
    assert ev.predicate == cond.predicate and ev.result is expected
    assert ev.description  # a sentence for explain / findings
    if expected is Truth.UNKNOWN:
        assert ev.missing, "an unknown predicate names the facts it missed"
    else:
        assert ev.facts, "a settled predicate names the facts it read"
        assert all(f.source.file == "clusters/prod/bom.yaml" for f in ev.facts)


def test_every_predicate_has_a_case() -> None:
    # pin_resolves_below: tested below; the knowledge-reading ones in test_kb_format_features
    # app_version_matches: tests/test_conditions_versions.py
    covered = {c[1].predicate for c in CASES} | {"pin_resolves_below", "component_range_admits"}
    covered |= {"app_version_matches"}
    assert covered == set(PREDICATES)


def test_evidence_sentence_says_what_was_observed() -> None:
    _, (ev,) = evaluate(
        pred("version_below", product="conn", version="4.7.19"), S({"installed.conn": "4.7.18"}), KB
    )
    assert "conn" in ev.description and "4.7.19" in ev.description and "4.7.18" in ev.description
    _, (ev,) = evaluate(pred("drift_detection", helmrelease="kagent", mode="enabled"), State(), KB)
    assert ev.missing == ("helmrelease.kagent.drift-detection",)


# --------------------------------------------------------------------------- pin resolution


def test_pin_resolves_below_uses_the_known_releases() -> None:
    kb = kb_with("conn", ("4.7.18", "4.7.19", "4.8.0"))
    cond = pred("pin_resolves_below", product="conn", version="4.7.19")
    assert run(cond, {"pin.conn": ">=4.7.0 <5.0.0"}, kb) is F  # selects 4.8.0
    assert run(cond, {"pin.conn": "<4.7.19"}, kb) is T  # selects 4.7.18
    assert run(cond, {"pin.conn": "4.7.18"}, kb) is T  # exact pin: itself
    assert run(cond, {"pin.conn": "4.7.5"}, kb) is T  # exact, unknown to the kb: itself
    assert run(cond, {"pin.conn": None}, kb) is F
    assert run(cond, {}, kb) is U
    assert run(cond, {"pin.conn": ">=9.0.0"}, kb) is U  # selects nothing known


def test_pin_resolution_skips_withdrawn_and_unreleased() -> None:
    kb = kb_with("conn", ("4.7.18",))
    rels = (
        *kb.releases["conn"],
        Release("conn", "4.8.0", "bad", withdrawn=Withdrawn("2026-01-01", "broken")),
        Release("conn", "next", "unreleased"),
    )
    kb = bare_kb(releases={"conn": rels})
    assert conditions.resolve_pin(kb, "conn", ">=4.0.0") == "4.7.18"


# --------------------------------------------------------------------------- Kleene logic

TRUTHS = (T, F, U)
P_T = pred("fact_equals", fact="a", value="1")  # true on FACTS
P_F = pred("fact_equals", fact="b", value="1")  # false on FACTS
P_U = pred("fact_equals", fact="c", value="1")  # unknown on FACTS
FACTS = {"a": "1", "b": "2"}
OF = {T: P_T, F: P_F, U: P_U}


@pytest.mark.parametrize("x", TRUTHS)
@pytest.mark.parametrize("y", TRUTHS)
def test_kleene_and_or(x: Truth, y: Truth) -> None:
    both = (OF[x], OF[y])
    all_ = run(Condition("all", both), FACTS)
    any_ = run(Condition("any", both), FACTS)
    for cond, got in ((Condition("all", both), all_), (Condition("any", both), any_)):
        assert conditions.truth(cond, S(FACTS), KB) is got  # the short-circuit evaluator agrees
    assert all_ is (F if F in (x, y) else U if U in (x, y) else T)
    assert any_ is (T if T in (x, y) else U if U in (x, y) else F)


@pytest.mark.parametrize("x", TRUTHS)
def test_kleene_not(x: Truth) -> None:
    assert run(Condition("not", (OF[x],)), FACTS) is {T: F, F: T, U: U}[x]


def test_negation_is_recorded_in_evidence() -> None:
    res = evaluate_full(Condition("not", (Condition("not", (P_T,)),)), S(FACTS), KB)
    assert res.truth is T
    assert [e.negated for e in res.evidence] == [False]
    res = evaluate_full(Condition("all", (P_T, Condition("not", (P_F,)))), S(FACTS), KB)
    assert [e.negated for e in res.evidence] == [False, True]


def test_missing_lists_only_facts_that_could_change_the_outcome() -> None:
    # all(unknown, false) is false: the unknown fact does not matter
    assert evaluate_full(Condition("all", (P_U, P_F)), S(FACTS), KB).missing == ()
    # any(unknown, true) is true
    assert evaluate_full(Condition("any", (P_U, P_T)), S(FACTS), KB).missing == ()
    # all(unknown, true) is unknown: c would settle it
    assert evaluate_full(Condition("all", (P_U, P_T)), S(FACTS), KB).missing == ("c",)


# --------------------------------------------------------------------------- $from / $to


def test_to_and_from_bind_version_arguments() -> None:
    cond = pred("fact_version_below", fact="values.d.delegateVersion", version="$to")
    facts = {"values.d.delegateVersion": "0.29.0"}
    assert run(cond, facts, hop=("0.29.0", "0.31.2")) is T
    assert run(cond, facts, hop=("0.28.0", "0.29.0")) is F
    cond_from = pred("version_at_least", product="d", version="$from")
    assert run(cond_from, {"installed.d": "0.30.0"}, hop=("0.29.0", "0.31.2")) is T


def test_unbound_hop_variable_is_unknown_not_an_error() -> None:
    cond = pred("fact_version_below", fact="values.d.delegateVersion", version="$to")
    truth, (ev,) = evaluate(cond, S({"values.d.delegateVersion": "0.29.0"}), KB)
    assert truth is U and "$to" in ev.description


def test_facts_read_lists_keys_with_bound_hop() -> None:
    cond = Condition(
        "all",
        (
            pred("version_below", product="conn", version="$to"),
            Condition("not", (pred("drift_detection", helmrelease="kagent", mode="enabled"),)),
            pred("object_annotation", **HARNESS, key="k"),
        ),
    )
    assert facts_read(cond, (None, "4.8.0")) == [
        "installed.conn",
        "helmrelease.kagent.drift-detection",
        "object.Harness.kagent.kagent.exists",
        "object.Harness.kagent.kagent.annotations",
    ]
    assert conditions.hop_refs(cond) == {"$to"}


# --------------------------------------------------------------------------- hints, derived facts


def test_missing_fact_hints() -> None:
    assert conditions.missing_fact_hint("installed.kubernetes").startswith(
        "--installed kubernetes=VERSION"
    )
    assert conditions.missing_fact_hint("pin.conn").startswith("--pin conn=CONSTRAINT")
    hint = conditions.missing_fact_hint("helmrelease.kagent.drift-detection")
    assert hint.startswith("--fact helmrelease.kagent.drift-detection=VALUE")
    assert "--kubeconfig" in hint and "--snapshot" in hint and "--gitops" in hint


def test_derive_installed_from_an_exact_pin() -> None:
    st = State(
        facts={"pin.conn": Fact("pin.conn", "4.7.18", in_file("clusters/prod/bom.yaml", 12))}
    )
    out = derive(st, KB)
    fact = out.get("installed.conn")
    assert fact is not None and fact.value == "4.7.18"
    assert str(fact.source) == "derived: exact pin (clusters/prod/bom.yaml:12)"


def test_derive_nothing_from_a_range_or_over_a_known_version() -> None:
    ranged = State(facts={"pin.conn": Fact("pin.conn", ">=4.7.0 <5.0.0", text("x"))})
    assert derive(ranged, KB).get("installed.conn") is None
    known = State(
        facts={
            "pin.conn": Fact("pin.conn", "4.7.18", text("x")),
            "installed.conn": Fact("installed.conn", "4.7.19", text("cluster")),
        }
    )
    assert derive(known, KB).value("installed.conn") == "4.7.19"
