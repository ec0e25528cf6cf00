"""docs/rbac.yaml grants exactly what the cluster reader asks for (checked against request logs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from support.fakeapi import FakeAPIFactory, Request, fake_api
from support.scenarios import CLUSTER_FIXTURES

from upgradeplan.model import KnowledgeBase
from upgradeplan.readers.kube import cluster

__all__ = ["fake_api"]

RBAC = Path(__file__).resolve().parents[1] / "docs" / "rbac.yaml"


def rules() -> list[dict[str, Any]]:
    docs = list(yaml.safe_load_all(RBAC.read_text(encoding="utf-8")))
    return [r for d in docs if d["kind"] == "ClusterRole" for r in d["rules"]]


def attributes(req: Request) -> tuple[str, ...]:
    """(group, resource, verb, name) of a resource request, or ("url", path) otherwise."""
    parts = [p for p in req.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) > 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) > 3:
        group, rest = parts[1], parts[3:]
    else:
        return ("url", req.path)
    if rest[0] == "namespaces" and len(rest) > 2:
        rest = rest[2:]
    return (group, rest[0], "get" if len(rest) > 1 else "list", rest[1] if len(rest) > 1 else "")


def allowed(attrs: tuple[str, ...]) -> dict[str, Any] | None:
    for rule in rules():
        if attrs[0] == "url":
            if attrs[1] in rule.get("nonResourceURLs", []):
                return rule
            continue
        group, resource, verb, name = attrs
        if (
            group in rule.get("apiGroups", [])
            and resource in rule.get("resources", [])
            and verb in rule.get("verbs", [])
            and (not rule.get("resourceNames") or name in rule["resourceNames"])
        ):
            return rule
    return None


def test_every_request_is_allowed_and_every_rule_is_used(
    fake_api: FakeAPIFactory, kb: KnowledgeBase
) -> None:
    used: list[int] = []
    all_rules = rules()
    for fixture in ("s1", "s6", "s8"):
        server = fake_api.start(CLUSTER_FIXTURES / fixture)
        kubeconfig = fake_api.kubeconfig({fixture: server}, name=f"kc-{fixture}")
        [res] = cluster.read_contexts(kb, kubeconfig, [], False)
        assert res.state is not None
        for req in server.requests:
            rule = allowed(attributes(req))
            assert rule is not None, f"{req.path} is not granted by docs/rbac.yaml"
            used.append(all_rules.index(rule))
    assert sorted(set(used)) == list(range(len(all_rules))), (
        "docs/rbac.yaml grants more than is used"
    )


def test_the_rbac_is_read_only() -> None:
    verbs = {v for r in rules() for v in r["verbs"]}
    assert verbs <= {"get", "list"}
    secrets = [r for r in rules() if "secrets" in r.get("resources", [])]
    assert [r["verbs"] for r in secrets] == [["get"]]  # by name only, never list
