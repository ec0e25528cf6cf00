"""A small inline knowledge base mirroring the bundled hazards (for planner tests, no files)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from upgradeplan.model import (
    Condition,
    Fact,
    Hazard,
    KnowledgeBase,
    Location,
    Migration,
    Product,
    Recognise,
    Release,
    State,
    Target,
)
from upgradeplan.provenance import flag, in_file

AP, CONN, DEL, K8S, CD = (
    "agent-platform",
    "agent-platform-connectivity",
    "harness-delegate",
    "kubernetes",
    "harness-cd",
)


def p(name: str, /, **args: Any) -> Condition:
    return Condition("pred", predicate=name, args=args)


def all_(*c: Condition) -> Condition:
    return Condition("all", c)


def not_(c: Condition) -> Condition:
    return Condition("not", (c,))


NO_DRIFT = not_(p("drift_detection", helmrelease="kagent", mode="enabled"))
NO_KEEP = not_(
    p(
        "object_annotation",
        kind="Harness",
        namespace="kagent",
        name="kagent",
        key="helm.sh/resource-policy",
        value="keep",
    )
)
HANDOVER_WHEN = all_(p("version_below", product=CONN, version="4.7.19"), NO_DRIFT, NO_KEEP)


def hz(id: str, product: str, severity: str, scope: str, **kw: Any) -> Hazard:
    return Hazard(
        id=id,
        title=id.replace("-", " "),
        product=product,
        severity=severity,  # type: ignore[arg-type]
        scope=scope,  # type: ignore[arg-type]
        consequence=f"{id} happens",
        location=Location(f"hazards/{id}.yaml", 1),
        **kw,
    )


HAZARDS = [
    hz("harness-handover-skipped", AP, "blocking", "skip", stop="4.7.19",
       to_range=">=4.8.0 <4.8.1", when=HANDOVER_WHEN,
       migrations=("kagent-drift-detection", "forced-reconcile-kagent")),
    hz("harness-gap-skipping-to-481", AP, "warning", "skip", stop="4.7.19", to_range=">=4.8.1",
       when=HANDOVER_WHEN),
    hz("harness-missing-on-480", AP, "blocking", "landing", to_range="4.8.0",
       when=all_(p("version_matches", product=AP, range="4.8.0"), NO_DRIFT,
                 not_(p("object_exists", kind="Harness", namespace="kagent", name="kagent"))),
       migrations=("forced-reconcile-kagent", "kagent-drift-detection")),
    hz("no-drift-detection-on-480", AP, "warning", "landing", to_range="4.8.0", when=NO_DRIFT,
       migrations=("kagent-drift-detection",)),
    hz("no-drift-detection-on-482", AP, "warning", "landing", to_range="4.8.2", when=NO_DRIFT),
    hz("connectivity-pin-behind-479-second-owner", AP, "blocking", "landing",
       to_range=">=4.8.0", when=p("pin_resolves_below", product=CONN, version="4.7.19"),
       migrations=("connectivity-pin-to-release",)),
    hz("delegate-metadata-flag-renamed", DEL, "blocking", "transition", from_range="<0.30.0",
       to_range=">=0.30.0", when=p("container_arg", product=DEL, arg="--instance-metadata-url"),
       migrations=("delegate-metadata-endpoint-arg",)),
    hz("delegate-version-value-not-bumped", DEL, "warning", "transition",
       from_range="<0.31.2", to_range=">=0.31.2",
       when=p("fact_version_below", fact=f"values.{DEL}.delegateVersion", version="$to"),
       migrations=("delegate-version-value",)),
    hz("delegate-token-secret-type", DEL, "blocking", "state",
       when=all_(p("version_at_least", product=CD, version="24.12.0"),
                 p("secret_type", product=DEL, type="harness.io/token")),
       migrations=("delegate-api-key-secret", "delegate-api-key-env")),
    hz("delegate-needs-kubernetes-128", DEL, "blocking", "landing", to_range=">=0.28.0",
       when=p("version_below", product=K8S, version="1.28.0-0")),
]  # fmt: skip


def mig(id: str, kind: str, template: str, **kw: Any) -> Migration:
    return Migration(
        id=id,
        title=id.replace("-", " "),
        kind=kind,  # type: ignore[arg-type]
        product=kw.pop("product", AP),
        template=template,
        location=Location(f"migrations/{id}.yaml", 1),
        **kw,
    )


NS_PARAM = {"namespace": {"fact": "helmrelease.kagent.namespace", "placeholder": "<gitops-ns>"}}
DEL_PARAMS = {
    "namespace": {"fact": f"workload.{DEL}.namespace", "placeholder": "<namespace>"},
    "args": {"fact": f"workload.{DEL}.args", "placeholder": "<args>"},
}
MIGRATIONS = [
    mig("forced-reconcile-kagent", "command",
        "kubectl -n {{ namespace | shq }} annotate helmrelease kagent "
        "reconcile.fluxcd.io/requestedAt=\"$now\" reconcile.fluxcd.io/forceAt=\"$now\" --overwrite",
        params=NS_PARAM),
    mig("kagent-drift-detection", "helmrelease-patch",
        "kind: HelmRelease\nmetadata: {name: kagent, namespace: {{ namespace }}}\n"
        "spec: {driftDetection: {mode: enabled}}\n", params=NS_PARAM),
    mig("connectivity-pin-to-release", "bom-pin",
        "components: {" + CONN + ": {versionRange: \"{{ step.bom['" + CONN + "'] }}\"}}",
        target={"component": CONN}),
    mig("delegate-metadata-endpoint-arg", "json6902",
        "{% for a in args %}{% if a.startswith('--instance-metadata-url=') %}"
        "- op: replace\n  value: --metadata-endpoint={{ a.split('=', 1)[1] }}\n"
        "{% endif %}{% endfor %}", params=DEL_PARAMS, product=DEL),
    mig("delegate-version-value", "values-edit", "delegateVersion: \"{{ step.to }}\"",
        product=DEL),
    mig("delegate-api-key-secret", "manifest",
        "kind: Secret\nmetadata: {name: harness-api-key, namespace: {{ namespace }}}\n"
        "type: Opaque\nstringData: {apiKey: <api-key>}\n", params=DEL_PARAMS, product=DEL),
    mig("delegate-api-key-env", "json6902",
        "- op: add\n  value: {name: HARNESS_API_KEY, valueFrom: {secretKeyRef: "
        "{name: harness-api-key, key: apiKey}}}\n", params=DEL_PARAMS, product=DEL),
]  # fmt: skip


def product(pid: str, kind: str = "chart") -> Product:
    return Product(pid, pid, kind, "", Recognise())  # type: ignore[arg-type]


def bare_kb(
    *products: str, releases: Mapping[str, Sequence[Release]] | None = None
) -> KnowledgeBase:
    """Charts with these releases (and the other products named), and nothing else: no
    hazards, no migrations."""
    rels = {p: tuple(r) for p, r in (releases or {}).items()}
    ids = [*rels, *(p for p in products if p not in rels)]
    return KnowledgeBase(
        products={p: product(p) for p in ids}, releases=rels, hazards={}, migrations={}
    )


def releases(
    pid: str, versions: Sequence[str], per: Mapping[str, Mapping[str, Any]] | None = None
) -> tuple[Release, ...]:
    """Releases of ``pid``; agent-platform ones publish the connectivity chart in their BOM."""
    out = []
    for v in versions:
        extra = dict((per or {}).get(v, {}))
        bom = {CONN: v} if pid == AP else {}
        out.append(Release(pid, v, f"{pid} {v}", bom=bom, **extra))
    return tuple(out)


AP_VERSIONS = ("4.7.18", "4.7.19", "4.8.0", "4.8.1", "4.8.2")


def make_kb(**overrides: Any) -> KnowledgeBase:
    rels = {
        AP: releases(
            AP,
            AP_VERSIONS,
            {
                "4.8.0": {"effects": {"object.Harness.kagent.kagent.exists": True}},
                "4.8.1": {
                    "effects": {"helmrelease.kagent.drift-detection": "enabled"},
                    "verify": ("kubectl get helmrelease kagent",),
                },
            },
        ),
        CONN: releases(CONN, AP_VERSIONS),
        DEL: releases(DEL, ("0.29.0", "0.30.0", "0.31.2")),
        K8S: releases(K8S, ("1.27.3", "1.28.0", "1.31.0")),
        CD: releases(CD, ("24.11.0", "24.12.0")),
    }
    rels.update(overrides.pop("releases", {}))
    return KnowledgeBase(
        products={pid: product(pid) for pid in (AP, CONN, DEL, K8S, CD)},
        releases=rels,
        hazards={h.id: h for h in [*HAZARDS, *overrides.pop("hazards", [])]},
        migrations={m.id: m for m in MIGRATIONS},
    )


KB = make_kb()


def state(
    installed: Mapping[str, str] = {},
    pins: Mapping[str, str | None] = {},
    facts: Mapping[str, Any] = {},
) -> State:
    out: dict[str, Fact] = {}
    for k, v in installed.items():
        out[f"installed.{k}"] = Fact(f"installed.{k}", v, flag("--installed"))
    for k, pin in pins.items():
        out[f"pin.{k}"] = Fact(f"pin.{k}", pin, in_file("clusters/prod/bom.yaml", 12))
    for k, val in facts.items():
        out[k] = Fact(k, val, flag("--fact"))
    return State(facts=out)


def to(pid: str, version: str) -> list[Target]:
    return [Target(pid, version)]


S1_FACTS = {
    "helmrelease.kagent.drift-detection": "disabled",
    "object.Harness.kagent.kagent.exists": True,
    "object.Harness.kagent.kagent.annotations": {},
}
S6_FACTS = {
    f"workload.{DEL}.namespace": "harness-delegate-ng",
    f"workload.{DEL}.name": "harness-delegate",
    f"workload.{DEL}.args": ["--instance-metadata-url=https://169.254.169.254"],
    f"values.{DEL}.delegateVersion": "0.29.0",
    f"workload.{DEL}.env-secrets": ["harness-api-key"],
    "secret.harness-delegate-ng.harness-api-key.type": "Opaque",
}


def sometimes_listed(kb: KnowledgeBase, product: str, every: int) -> KnowledgeBase:
    """``kb`` with the second BOM component of ``product``'s releases listed at every
    ``every``-th release only (for the planner's tests and bench/plan.py)."""
    out = []
    for k, rel in enumerate(kb.releases[product]):
        bom = dict(rel.bom)
        if k % every and len(bom) > 1:
            del bom[sorted(bom)[1]]
        out.append(msgspec.structs.replace(rel, bom=bom))
    return msgspec.structs.replace(kb, releases={**kb.releases, product: tuple(out)})
