"""The bundled knowledge base (top-level knowledge/): the entries the reference scenarios need.

These tests read the YAML files both directly (yaml.CSafeLoader) and through the loader, and
check what a user of `plan`, `explain`, `diagnose` and `patch` relies on: every documented
hazard is there with its scope and severity, its symptoms really match the log lines they
quote, its migrations exist and render.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from upgradeplan.kb.checks import walk_conditions
from upgradeplan.kb.lint import lint
from upgradeplan.kb.templating import render_migration
from upgradeplan.model import Hazard, KnowledgeBase

KNOWLEDGE = Path(__file__).resolve().parents[1] / "knowledge"

# hazard id -> (product, scope, severity)
EXPECTED_HAZARDS: dict[str, tuple[str, str, str]] = {
    "harness-handover-skipped": ("agent-platform", "skip", "blocking"),
    "harness-gap-skipping-to-481": ("agent-platform", "skip", "warning"),
    "harness-missing-on-480": ("agent-platform", "landing", "blocking"),
    "no-drift-detection-on-480": ("agent-platform", "landing", "warning"),
    "connectivity-pin-behind-479-second-owner": ("agent-platform", "landing", "blocking"),
    "kagent-crds-v1alpha2-stored": ("agent-platform", "transition", "blocking"),
    "connectivity-migrate-job-immutable": ("agent-platform", "transition", "blocking"),
    "connectivity-pin-lags-closed-schema": ("agent-platform", "landing", "warning"),
    "connectivity-pin-lags-closed-schema-441": ("agent-platform", "landing", "warning"),
    "storage-version-hook-no-egress": ("agent-platform", "transition", "warning"),
    "storage-version-hook-oom": ("agent-platform", "transition", "warning"),
    "harness-selector-lost-in-merge-patch": ("agent-platform", "transition", "blocking"),
    "cutover-pr-race": ("agent-platform", "transition", "warning"),
    "migrate-job-egress-blob-front": ("agent-platform", "transition", "warning"),
    "kagent-substrate-pins-apart": ("agent-platform", "state", "blocking"),
    "substrate-worker-apart-from-release": ("agent-platform", "state", "blocking"),
    "bom-muster-below-floor": ("agent-platform", "transition", "warning"),
    "bom-klaus-gateway-below-floor": ("agent-platform", "state", "warning"),
    "bom-kagent-below-floor": ("agent-platform", "state", "warning"),
    "klaus-gateway-crd-keys-refused": ("agent-platform", "transition", "notice"),
    "muster-drift-detection-hpa": ("agent-platform", "transition", "notice"),
    "flux-engine-with-own-flux": ("agent-platform", "transition", "blocking"),
    "snapshot-location-unset": ("agent-platform", "transition", "blocking"),
    "delegate-metadata-flag-renamed": ("harness-delegate", "transition", "blocking"),
    "delegate-version-value-not-bumped": ("harness-delegate", "transition", "warning"),
    "delegate-token-secret-type": ("harness-delegate", "state", "blocking"),
    "delegate-needs-kubernetes-128": ("harness-delegate", "landing", "blocking"),
    "delegate-istio-sidecar": ("harness-delegate", "state", "warning"),
    "delegate-missing-toleration": ("harness-delegate", "state", "warning"),
    "delegate-storage-class-standard": ("harness-delegate", "state", "warning"),
    "delegate-autopilot-surge": ("harness-delegate", "state", "warning"),
    "delegate-registry-iam": ("harness-delegate", "state", "warning"),
    "delegate-aks-network-contributor": ("harness-delegate", "state", "warning"),
    "delegate-egress-policy": ("harness-delegate", "state", "warning"),
}
# hazards that hold on every hop of their scope: no condition to evaluate
UNCONDITIONAL = {"harness-selector-lost-in-merge-patch"}

EXPECTED_PRODUCTS = {
    "agent-platform": "chart",
    "agent-platform-connectivity": "chart",
    "kagent": "chart",
    "kagent-crds": "chart",
    "harness-delegate": "agent",
    "harness-cd": "platform",
    "kubernetes": "environment",
    "flux": "environment",
}

# the releases the real UPGRADE.md / CHANGELOG.md name (docs/knowledge-sources.md)
AGENT_PLATFORM_RELEASES = (
    "3.10.0",
    "3.18.0",
    "3.23.1",
    "4.0.0",
    "4.7.12",
    "4.7.13",
    "4.7.14",
    "4.7.18",
    "4.7.19",
    "4.8.0",
    "4.8.1",
    "4.9.1",
    "4.9.2",  # CHANGELOG: "4.9.1 and 4.9.2 on the first 4.x installation" (#424)
    "4.9.3",
    "4.10.0",
    "4.10.1",
    "4.10.3",  # UPGRADE.md: the window 4.10.0–4.10.3 of the CAPZ façade defect (#436)
    "4.10.6",
    "4.11.0",
    "4.12.0",  # UPGRADE.md: "when 4.12.0 rolled the pod once" (muster-valkey)
    "4.15.2",
    "4.15.5",
    "4.16.0",  # CHANGELOG: "After prompt caching (4.16.0)"
    "4.20.0",  # CHANGELOG: "the render guard of 4.20.0" (#472)
)
# releases no source names: they must stay out of the knowledge
# (4.10.4: the release that closed the 4.10.0–4.10.3 window is not named)
INVENTED_RELEASES = ("3.9.0", "4.7.11", "4.7.15", "4.10.4", "4.10.7")


def _raw_files() -> Iterator[tuple[Path, dict[str, Any]]]:
    for path in sorted(KNOWLEDGE.rglob("*.yaml")):
        with path.open(encoding="utf-8") as fh:
            yield path, yaml.load(fh, Loader=yaml.CSafeLoader)


def _predicates(hazard: Hazard) -> list[tuple[str, dict[str, Any]]]:
    return [(c.predicate, dict(c.args)) for c in walk_conditions(hazard.when) if c.op == "pred"]


# --------------------------------------------------------------------------- whole base


def test_bundled_knowledge_lints_without_errors() -> None:
    errors = [p for p in lint() if p.severity == "error"]
    assert errors == [], "\n".join(str(p) for p in errors)


def test_every_file_is_versioned_and_names_its_kind() -> None:
    kinds = {"products": "product", "releases": "release", "hazards": "hazard"}
    kinds["migrations"] = "migration"
    for path, doc in _raw_files():
        rel = path.relative_to(KNOWLEDGE)
        assert doc["schema_version"] == 1, rel
        assert doc["kind"] == kinds[rel.parts[0]], rel
        if doc["kind"] == "release":
            assert isinstance(doc["version"], str), f"{rel}: quote the version"
            assert path.stem == doc["version"], rel
            assert all(isinstance(v, str) for v in (doc.get("bom") or {}).values()), rel
            assert all(isinstance(v, str) for v in (doc.get("requires") or {}).values()), rel
        else:
            assert path.stem == doc["id"], rel


def test_products_are_recognisable(kb: KnowledgeBase) -> None:
    assert {p: kb.products[p].kind for p in EXPECTED_PRODUCTS} == EXPECTED_PRODUCTS
    delegate = kb.products["harness-delegate"].recognise
    assert ("harness.io/name", "harness-delegate") in delegate.deployment_labels
    assert "harness/delegate" in delegate.image
    assert {"delegateVersion", "image.tag"} <= set(delegate.values_keys)
    meta = kb.products["agent-platform"]
    assert meta.upgrade_doc_title == "Upgrading agent-platform"
    assert meta.upgrade_doc_intro
    for component in ("agent-platform-connectivity", "kagent", "kagent-crds"):
        assert kb.products[component].recognise.bom_component == component


# --------------------------------------------------------------------------- releases


def test_agent_platform_releases_publish_connectivity_at_their_own_version(
    kb: KnowledgeBase,
) -> None:
    released = {r.version: r for r in kb.releases["agent-platform"] if not r.unreleased}
    assert set(AGENT_PLATFORM_RELEASES) == set(released)
    assert not set(INVENTED_RELEASES) & set(released)
    connectivity = {r.version for r in kb.releases["agent-platform-connectivity"]}
    for version, rel in released.items():
        assert rel.bom["agent-platform-connectivity"] == version
        assert version in connectivity, f"no connectivity release {version}"
        assert rel.bom.get("kagent") == rel.bom.get("kagent-crds"), version
        # the sources give no release date for any agent-platform release
        assert rel.date is None and rel.title and rel.notes and rel.verify, version


def test_bom_versions_are_known_releases(kb: KnowledgeBase) -> None:
    for releases in kb.releases.values():
        for rel in releases:
            for product, version in rel.bom.items():
                assert kb.release(product, version) is not None, f"{rel.key}: {product} {version}"


def test_481_turns_drift_detection_on_and_next_is_undated(kb: KnowledgeBase) -> None:
    r481 = kb.release("agent-platform", "4.8.1")
    assert r481 is not None
    assert r481.effects["helmrelease.kagent.drift-detection"] == "enabled"
    r4719 = kb.release("agent-platform", "4.7.19")
    assert r4719 is not None
    assert r4719.effects["object.Harness.kagent.kagent.exists"] is True
    upcoming = kb.release("agent-platform", "next")
    assert upcoming is not None and upcoming.date is None
    assert kb.releases["agent-platform"][-1].version == "next"


def test_delegate_line_changes(kb: KnowledgeBase) -> None:
    r030 = kb.release("harness-delegate", "0.30.0")
    assert r030 is not None
    assert [c.kind for c in r030.changes] == ["flag-renamed"]
    r0312 = kb.release("harness-delegate", "0.31.2")
    assert r0312 is not None
    assert r0312.requires["kubernetes"] == ">=1.28.0-0"
    assert any("delegateVersion" in n.condition for n in r0312.notes)
    cd = kb.release("harness-cd", "24.12.0")
    assert cd is not None
    assert [c.kind for c in cd.changes] == ["secret-type-changed"]
    for version in ("0.11.0-gs.6", "0.11.0-gs.9"):
        assert kb.release("kagent", version) is not None
        assert kb.release("kagent-crds", version) is not None


# --------------------------------------------------------------------------- hazards


@pytest.mark.parametrize("hazard_id", sorted(EXPECTED_HAZARDS))
def test_documented_hazard_is_complete(kb: KnowledgeBase, hazard_id: str) -> None:
    hazard = kb.hazards[hazard_id]
    assert (hazard.product, hazard.scope, hazard.severity) == EXPECTED_HAZARDS[hazard_id]
    assert (hazard.when is None) == (hazard_id in UNCONDITIONAL)
    assert hazard.consequence.strip()
    assert hazard.symptoms
    assert hazard.recover.strip() or hazard.avoid.strip()
    assert hazard.verify


@pytest.mark.parametrize("hazard_id", sorted(EXPECTED_HAZARDS))
def test_symptoms_match_their_own_examples(kb: KnowledgeBase, hazard_id: str) -> None:
    for symptom in kb.hazards[hazard_id].symptoms:
        assert symptom.example, symptom.pattern
        assert re.search(symptom.pattern, symptom.example, re.IGNORECASE), symptom.pattern


def test_migrations_named_by_hazards_exist(kb: KnowledgeBase) -> None:
    for hazard in kb.hazards.values():
        for mid in hazard.migrations:
            assert mid in kb.migrations, f"{hazard.id}: unknown migration {mid}"


def test_handover_skip_hazard_matches_scenario_one(kb: KnowledgeBase) -> None:
    hazard = kb.hazards["harness-handover-skipped"]
    assert (hazard.stop, hazard.to_range) == ("4.7.19", ">=4.8.0 <4.8.1")
    preds = _predicates(hazard)
    assert (
        "version_below",
        {"product": "agent-platform-connectivity", "version": "4.7.19"},
    ) in preds
    assert ("drift_detection", {"helmrelease": "kagent", "mode": "enabled"}) in preds
    assert any(
        name == "object_annotation" and args["key"] == "helm.sh/resource-policy"
        for name, args in preds
    )
    assert set(hazard.migrations) == {"kagent-drift-detection", "forced-reconcile-kagent"}
    gap = kb.hazards["harness-gap-skipping-to-481"]
    assert (gap.stop, gap.to_range) == ("4.7.19", ">=4.8.1")
    assert "drift_detection" not in [name for name, _ in _predicates(gap)]


def test_landing_and_transition_ranges(kb: KnowledgeBase) -> None:
    assert kb.hazards["harness-missing-on-480"].to_range == "4.8.0"
    assert kb.hazards["no-drift-detection-on-480"].to_range == "4.8.0"
    assert kb.hazards["connectivity-pin-behind-479-second-owner"].to_range == ">=4.8.0"
    crds = kb.hazards["kagent-crds-v1alpha2-stored"]
    assert (crds.from_range, crds.to_range) == ("<4.0.0-0", ">=4.0.0-0 <=4.7.12")
    job = kb.hazards["connectivity-migrate-job-immutable"]
    assert (job.from_range, job.to_range) == ("4.7.12", "4.7.13")
    flag = kb.hazards["delegate-metadata-flag-renamed"]
    assert (flag.from_range, flag.to_range) == ("<0.30.0", ">=0.30.0")
    assert _predicates(kb.hazards["delegate-version-value-not-bumped"]) == [
        (
            "fact_version_below",
            {"fact": "values.harness-delegate.delegateVersion", "version": "$to"},
        )
    ]


# --------------------------------------------------------------------------- migrations

STEP = {
    "product": "agent-platform",
    "from": "4.7.18",
    "to": "4.7.19",
    "bom": {"agent-platform-connectivity": "4.7.19"},
}


def _render(kb: KnowledgeBase, mid: str, facts: dict[str, Any], step: dict[str, Any]) -> str:
    migration = kb.migrations[mid]
    values: dict[str, Any] = {}
    for name, param in migration.params.items():
        values[name] = facts.get(param["fact"], param["placeholder"])
    values["step"] = step
    return render_migration(migration, values)


def test_forced_reconcile_quotes_the_namespace_and_sets_one_timestamp(kb: KnowledgeBase) -> None:
    out = _render(kb, "forced-reconcile-kagent", {"helmrelease.kagent.namespace": "a b"}, STEP)
    assert "kubectl -n 'a b' annotate helmrelease kagent" in out
    assert out.count("$(date") == 1
    assert 'requestedAt="$now"' in out and 'forceAt="$now"' in out
    unknown = _render(kb, "forced-reconcile-kagent", {}, STEP)
    assert "-n '<gitops-namespace>'" in unknown


def test_drift_detection_patch_and_connectivity_pin(kb: KnowledgeBase) -> None:
    patch = yaml.safe_load(
        _render(kb, "kagent-drift-detection", {"helmrelease.kagent.namespace": "flux-gs"}, STEP)
    )
    assert patch["metadata"] == {"name": "kagent", "namespace": "flux-gs"}
    assert patch["spec"]["driftDetection"]["mode"] == "enabled"
    pin = yaml.safe_load(_render(kb, "connectivity-pin-to-release", {}, STEP))
    assert pin["components"]["agent-platform-connectivity"]["versionRange"] == "4.7.19"


def test_metadata_arg_rewrite_keeps_the_value(kb: KnowledgeBase) -> None:
    args = ["--log=info", "--instance-metadata-url=https://169.254.169.254"]
    facts = {"workload.harness-delegate.args": args}
    ops = yaml.safe_load(_render(kb, "delegate-metadata-endpoint-arg", facts, STEP))
    assert ops == [
        {
            "op": "test",
            "path": "/spec/template/spec/containers/0/args/1",
            "value": "--instance-metadata-url=https://169.254.169.254",
        },
        {
            "op": "replace",
            "path": "/spec/template/spec/containers/0/args/1",
            "value": "--metadata-endpoint=https://169.254.169.254",
        },
    ]
    unknown = _render(kb, "delegate-metadata-endpoint-arg", {}, STEP)
    assert "<arg-index>" in unknown


def test_delegate_version_and_api_key_migrations(kb: KnowledgeBase) -> None:
    step = {"product": "harness-delegate", "from": "0.29.0", "to": "0.31.2", "bom": {}}
    bumped = _render(
        kb, "delegate-version-value", {"values.harness-delegate.delegateVersion": "v0.29.0"}, step
    )
    assert yaml.safe_load(bumped) == {"delegateVersion": "v0.31.2"}
    secret = yaml.safe_load(_render(kb, "delegate-api-key-secret", {}, step))
    assert secret["type"] == "Opaque"
    assert secret["metadata"]["name"] == "harness-api-key"
    assert secret["stringData"] == {"apiKey": "${HARNESS_API_KEY}"}
    env = yaml.safe_load(_render(kb, "delegate-api-key-env", {}, step))
    assert env[0]["value"]["valueFrom"]["secretKeyRef"] == {
        "name": "harness-api-key",
        "key": "apiKey",
    }


def test_toleration_and_istio_patches_fit_the_pod_template(kb: KnowledgeBase) -> None:
    step = {"product": "harness-delegate", "from": "0.31.0", "to": "0.31.2", "bom": {}}
    toleration = {"key": "cloud-provider", "operator": "Exists", "effect": "NoSchedule"}
    none_yet: dict[str, Any] = {"workload.harness-delegate.tolerations": []}
    ops = yaml.safe_load(_render(kb, "delegate-cloud-provider-toleration", none_yet, step))
    assert ops == [{"op": "add", "path": "/spec/template/spec/tolerations", "value": [toleration]}]
    some = {"workload.harness-delegate.tolerations": ["node.kubernetes.io/not-ready:Exists:"]}
    ops = yaml.safe_load(_render(kb, "delegate-cloud-provider-toleration", some, step))
    assert ops == [{"op": "add", "path": "/spec/template/spec/tolerations/-", "value": toleration}]
    annotated = {"workload.harness-delegate.pod-annotations": {"a": "b"}}
    ops = yaml.safe_load(_render(kb, "delegate-istio-no-inject", annotated, step))
    assert ops == [
        {
            "op": "add",
            "path": "/spec/template/metadata/annotations/sidecar.istio.io~1inject",
            "value": "false",
        }
    ]
