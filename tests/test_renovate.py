"""upgradeplan renovate: packageRules that group a meta chart with its BOM's pins and stop a
bump at the next required stop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import REPO
from support.cli import invoke

from upgradeplan.model import KnowledgeBase

S1 = str(REPO / "tests" / "fixtures" / "gitops" / "s1")


def _rules(path: str = S1) -> dict[str, Any]:
    result = invoke("renovate", "--gitops", path)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert isinstance(doc, dict)
    return doc


def test_s1_groups_the_meta_chart_with_its_connectivity_pin() -> None:
    doc = _rules()
    groups = [r for r in doc["packageRules"] if "groupName" in r]
    [group] = [g for g in groups if "agent-platform" in g["matchDepNames"]]
    assert "agent-platform-connectivity" in group["matchDepNames"]
    assert group["groupName"] == "agent-platform"


def test_s1_limits_the_next_bump_to_the_required_stop() -> None:
    doc = _rules()
    limits = {
        name: r["allowedVersions"]
        for r in doc["packageRules"]
        if "allowedVersions" in r
        for name in r["matchDepNames"]
    }
    assert limits["agent-platform"] == "<=4.7.19"
    assert limits["agent-platform-connectivity"] == "<=4.7.19"
    # the OCIRepository's repository, as Renovate's Flux manager names the dependency
    assert limits["gsoci.azurecr.io/charts/giantswarm/agent-platform"] == "<=4.7.19"
    # the file with the pin is one the Flux manager reads
    assert doc["flux"]["managerFilePatterns"] == ["/(^|/)ocirepository\\.yaml$/"]


def test_bom_pins_get_a_custom_manager_for_their_version_range() -> None:
    import re

    doc = _rules()
    managers = {m["depNameTemplate"]: m for m in doc["customManagers"]}
    connectivity = managers["agent-platform-connectivity"]
    bom = (REPO / "tests" / "fixtures" / "gitops" / "s1" / "bom.yaml").read_text()
    pattern = connectivity["matchStrings"][0].replace("(?<currentValue>", "(?P<currentValue>")
    found = re.search(pattern, bom)
    assert found is not None and found.group("currentValue") == "4.7.18"


def test_a_tree_at_the_newest_release_gets_groups_but_no_limits(
    tmp_path: Any, kb: KnowledgeBase
) -> None:
    import shutil

    from upgradeplan import api

    latest = api.latest_version(kb, "agent-platform")
    assert latest is not None
    tree = tmp_path / "prod"
    shutil.copytree(S1, tree)
    for rel in ("agent-platform/ocirepository.yaml", "bom.yaml"):
        path = tree / rel
        path.write_text(path.read_text().replace('"4.7.18"', f'"{latest}"'))
    doc = _rules(str(tree))
    assert not [r for r in doc["packageRules"] if "allowedVersions" in r]
    assert [r["groupName"] for r in doc["packageRules"] if "groupName" in r] == ["agent-platform"]


def test_renovate_needs_a_gitops_tree() -> None:
    result = invoke("renovate")
    assert result.exit_code == 2


def test_a_semver_pinned_meta_chart_gets_its_own_regex_manager() -> None:
    import re

    doc = _rules()
    [meta] = [m for m in doc["customManagers"] if m["depNameTemplate"] == "agent-platform"]
    assert meta["packageNameTemplate"] == "gsoci.azurecr.io/charts/giantswarm/agent-platform"
    assert (meta["datasourceTemplate"], meta["versioningTemplate"]) == ("docker", "semver")
    text = (Path(S1) / "agent-platform" / "ocirepository.yaml").read_text(encoding="utf-8")
    pattern = meta["matchStrings"][0].replace("(?<", "(?P<")  # Python spells named groups so
    found = re.search(pattern, text)
    assert found is not None and found.group("currentValue") == "4.7.18"


def test_components_the_next_stop_does_not_publish_are_held() -> None:
    doc = _rules()
    limits = {
        name: r["allowedVersions"]
        for r in doc["packageRules"]
        if "allowedVersions" in r
        for name in r["matchDepNames"]
    }
    assert limits["kagent"] == "<=0.11.0-gs.6"  # pinned now; 4.7.19's BOM names no kagent
    assert limits["kagent-crds"] == "<=0.11.0-gs.6"


def test_a_tree_without_a_known_product_gets_empty_rules_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    for tree in (tmp_path, tmp_path / "empty"):
        tree.mkdir(exist_ok=True)
        result = invoke("renovate", "--gitops", str(tree))
        assert result.exit_code == 0  # nothing to hold back is not an error, as check says
        assert json.loads(result.stdout)["packageRules"] == []
        assert f"--gitops {tree}: no pin of a product the knowledge base knows" in result.stderr
