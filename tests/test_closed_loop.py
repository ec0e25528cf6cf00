"""Closed loop: apply the generated patches, re-read the installation, re-run the check.

For reference scenarios 4, 5, 6 and 7 the patches `upgradeplan patch` generates are applied
the way kubectl/kustomize would apply them — strategic-merge and JSON 6902 patches to the
object dicts of the cluster fixtures (tests/fixtures/cluster/sN), new manifests added, file
edits written to a copy of the GitOps fixtures (tests/fixtures/gitops/sN) — and the
installation is read again from the result. The hazards the patches fix must then not apply.
Shell commands (the forced reconcile) act on a live cluster and are not simulated.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO, fixture_path
from support.patchops import apply_json6902, apply_merge_patch, same_object

from upgradeplan import api, planner
from upgradeplan.model import Finding, KnowledgeBase, Plan, State
from upgradeplan.patches.patchset import PatchSet

CLUSTER = REPO / "tests" / "fixtures" / "cluster"
GITOPS = REPO / "tests" / "fixtures" / "gitops"


def build_patches(kb: KnowledgeBase, state: State, to: list[str]) -> tuple[Any, Plan | None]:
    """The patch set and plan of ``api.patch`` (the Python form of the ``patch`` verb)."""
    result = api.patch(kb, state, to)
    return result.patchset, result.plan


def _objects(scenario: str) -> list[dict[str, Any]]:
    path = fixture_path("cluster", scenario, "objects.yaml")
    doc = yaml.safe_load(path.read_text())
    return [dict(i) for i in doc["items"]]


def _state_of_objects(
    kb: KnowledgeBase, objects: Sequence[dict[str, Any]], tmp: Path, facts: Sequence[str]
) -> State:
    path = tmp / f"objects-{len(list(tmp.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": list(objects)}))
    gathered = api.gather(kb, api.Inputs(state_files=(str(path),), facts=tuple(facts)))
    assert gathered[0].state is not None
    return gathered[0].state


def _apply_to_objects(patches: PatchSet, objects: list[dict[str, Any]]) -> list[str]:
    """Apply every Kubernetes patch and manifest; return the kinds of the items applied."""
    out = [dict(o) for o in objects]
    applied: list[str] = []
    for item in patches.items:
        if item.kind == "manifest":
            out.extend(d for d in yaml.safe_load_all(item.content) if d)
        elif item.kind in ("strategic-merge", "json6902"):
            body = yaml.safe_load(item.content)
            hits = [i for i, o in enumerate(out) if same_object(o, item.target)]
            assert hits, f"{item.migration}: target {dict(item.target)} matches no object"
            for i in hits:
                if item.kind == "json6902":
                    out[i] = apply_json6902(out[i], body)
                else:
                    out[i] = apply_merge_patch(out[i], body)
        else:
            continue
        applied.append(item.kind)
    objects[:] = out
    return applied


def _status(findings: Sequence[Finding], hazard: str) -> str:
    found = [f.status for f in findings if f.hazard == hazard]
    assert found, f"{hazard} was not evaluated"
    return found[0]


def _check(kb: KnowledgeBase, state: State, to: Sequence[str] = ()) -> tuple[Finding, ...]:
    result = api.check(kb, state, to)
    return result.findings


def _work_on_a_copy(fixture: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copy the GitOps fixture into tmp_path and work there (a missing one fails)."""
    src = fixture_path("gitops", fixture)
    work = tmp_path / "repo"
    shutil.copytree(src, work)
    monkeypatch.chdir(work)


def _gathered(kb: KnowledgeBase, inputs: api.Inputs) -> State:
    state = api.gather(kb, inputs)[0].state
    assert state is not None
    return state


def test_s4_drift_detection_patch_clears_the_480_landing_hazards(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    objects = _objects("s4")
    # a kubectl List cannot show that an object is absent: the scenario states it
    facts = ["kubernetes=1.35.0", "object.Harness.kagent.kagent.exists=false"]
    state = _state_of_objects(kb, objects, tmp_path, facts)
    before = planner.current_findings(kb, state)
    assert _status(before, "harness-missing-on-480") == "applies"
    assert _status(before, "no-drift-detection-on-480") == "applies"

    patches, plan = build_patches(kb, state, ["agent-platform=4.8.1"])
    assert plan is not None and plan.verdict == "safe-with-actions"
    commands = [i for i in patches.items if i.kind == "command"]
    assert any("-n flux-giantswarm" in c.content for c in commands)
    assert "strategic-merge" in _apply_to_objects(patches, objects)

    after = planner.current_findings(kb, _state_of_objects(kb, objects, tmp_path, facts))
    assert _status(after, "harness-missing-on-480") == "does-not-apply"
    assert _status(after, "no-drift-detection-on-480") == "does-not-apply"


def test_s5_bom_pin_edit_clears_the_second_owner(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _work_on_a_copy("s5-state", tmp_path, monkeypatch)
    state = _gathered(kb, api.Inputs(gitops="."))
    assert _status(_check(kb, state), "connectivity-pin-behind-479-second-owner") == "applies"

    patches, _plan = build_patches(kb, state, [])
    assert any(i.migration == "connectivity-pin-to-release" for i in patches.items)
    for change in patches.file_changes(len(patches.steps) or 1):
        Path(change.path).write_text(change.result)

    again = _gathered(kb, api.Inputs(gitops="."))
    status = _status(_check(kb, again), "connectivity-pin-behind-479-second-owner")
    assert status == "does-not-apply"


def test_s6_arg_rewrite_and_values_edit_clear_the_delegate_hazards(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    objects = _objects("s6")
    facts = ["kubernetes=1.31.0", "installed.harness-cd=24.12.0"]
    to = ["harness-delegate=0.31.2"]
    state = _state_of_objects(kb, objects, tmp_path, facts)
    before = _check(kb, state, to)
    assert _status(before, "delegate-metadata-flag-renamed") == "applies"
    assert _status(before, "delegate-version-value-not-bumped") == "applies"

    patches, plan = build_patches(kb, state, to)
    assert plan is not None
    kinds = _apply_to_objects(patches, objects)
    assert "json6902" in kinds and "strategic-merge" in kinds

    patched = _state_of_objects(kb, objects, tmp_path, facts)
    args = patched.value("workload.harness-delegate.args")
    assert "--metadata-endpoint=https://169.254.169.254" in args  # the value is kept
    after = _check(kb, patched, to)
    assert _status(after, "delegate-metadata-flag-renamed") == "does-not-apply"
    assert _status(after, "delegate-version-value-not-bumped") == "does-not-apply"


def test_s7_api_key_secret_and_env_clear_the_token_type_hazard(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    objects = _objects("s7")
    facts = ["kubernetes=1.31.0", "installed.harness-cd=24.12.0"]
    state = _state_of_objects(kb, objects, tmp_path, facts)
    assert _status(_check(kb, state), "delegate-token-secret-type") == "applies"

    patches, _plan = build_patches(kb, state, [])
    manifests = [i for i in patches.items if i.kind == "manifest"]
    assert manifests, "no Secret manifest generated"
    secret = yaml.safe_load(manifests[0].content)
    assert secret["type"] == "Opaque" and "apiKey" in secret["stringData"]
    assert "c3VwZXI" not in manifests[0].content  # never real data
    _apply_to_objects(patches, objects)

    after = _check(kb, _state_of_objects(kb, objects, tmp_path, facts))
    assert _status(after, "delegate-token-secret-type") == "does-not-apply"


def test_s6_from_gitops_files_the_values_file_edits_clear_the_hazards(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same scenario read from GitOps files: the fixes become edits of the values file."""
    from upgradeplan.patches.yamledit import set_scalars

    _work_on_a_copy("s6", tmp_path, monkeypatch)
    inputs = api.Inputs(gitops=".", facts=("kubernetes=1.31.0",), installed=("harness-cd=24.12.0",))
    to = ["harness-delegate=0.31.2"]
    state = _gathered(kb, inputs)
    assert _status(_check(kb, state, to), "delegate-metadata-flag-renamed") == "applies"

    patches, _plan = build_patches(kb, state, to)
    fixes = [i for i in patches.items if i.kind == "file-edit" and i.migration != "pin-move"]
    assert {i.migration for i in fixes} == {
        "delegate-metadata-endpoint-arg",
        "delegate-version-value",
    }
    for item in fixes:  # the fixes only, not the version move itself
        path = Path(item.file)
        path.write_text(set_scalars(path.read_text(), item.edits, where=item.file))

    again = _gathered(kb, inputs)
    after = _check(kb, again, to)
    assert _status(after, "delegate-metadata-flag-renamed") == "does-not-apply"
    assert _status(after, "delegate-version-value-not-bumped") == "does-not-apply"


def test_s7_from_gitops_files_the_env_rewrite_clears_the_token_type_hazard(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S7 read from GitOps files: the env entry reading the old token is rewritten in place."""
    _work_on_a_copy("s7", tmp_path, monkeypatch)
    inputs = api.Inputs(gitops=".", installed=("harness-cd=24.12.0",))
    state = _gathered(kb, inputs)
    assert _status(_check(kb, state), "delegate-token-secret-type") == "applies"

    patches, _plan = build_patches(kb, state, [])
    env = [i for i in patches.items if i.migration == "delegate-api-key-env"]
    assert len(env) == 1 and env[0].kind == "json6902"
    ops = yaml.safe_load(env[0].content)
    assert [o["op"] for o in ops] == ["test", "replace"]  # in place, not a new entry
    manifests = [i for i in patches.items if i.kind == "manifest"]
    assert manifests, "no Secret manifest generated"
    Path("api-key-secret.yaml").write_text(manifests[0].content)
    docs = list(yaml.safe_load_all(Path("delegate.yaml").read_text()))
    hits = [i for i, d in enumerate(docs) if same_object(d, env[0].target)]
    assert len(hits) == 1
    docs[hits[0]] = apply_json6902(docs[hits[0]], ops)
    Path("delegate.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))

    again = _gathered(kb, inputs)
    assert again.value("workload.harness-delegate.env-secrets") == ["harness-api-key"]
    assert _status(_check(kb, again), "delegate-token-secret-type") == "does-not-apply"


def test_s4_from_gitops_files_the_bom_edit_clears_the_480_landing_hazards(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """S4 read from GitOps files: the meta chart renders the kagent HelmRelease from the BOM,
    so turning drift detection on is an edit of the BOM, and only the new lines differ."""
    import difflib

    from upgradeplan.patches.yamledit import set_keys

    _work_on_a_copy("s4", tmp_path, monkeypatch)
    inputs = api.Inputs(gitops=".", facts=("object.Harness.kagent.kagent.exists=false",))
    state = _gathered(kb, inputs)
    before = _check(kb, state)
    assert _status(before, "harness-missing-on-480") == "applies"
    assert _status(before, "no-drift-detection-on-480") == "applies"

    patches, _plan = build_patches(kb, state, ["agent-platform=4.8.1"])
    drift = [i for i in patches.items if i.migration == "kagent-drift-detection"]
    assert len(drift) == 1 and drift[0].kind == "file-edit" and drift[0].file == "bom.yaml"
    assert not any(i.kind == "strategic-merge" for i in patches.items)
    original = Path("bom.yaml").read_text()
    edited = set_keys(original, drift[0].keys, where="bom.yaml")
    opcodes = difflib.SequenceMatcher(
        a=original.splitlines(keepends=True), b=edited.splitlines(keepends=True)
    ).get_opcodes()
    assert [op[0] for op in opcodes if op[0] != "equal"] == ["insert"]
    (_tag, _i1, _i2, j1, j2) = next(op for op in opcodes if op[0] == "insert")
    assert edited.splitlines()[j1:j2] == ["    driftDetection:", "      mode: enabled"]
    Path("bom.yaml").write_text(edited)

    again = _gathered(kb, inputs)
    assert again.value("helmrelease.kagent.drift-detection") == "enabled"
    after = _check(kb, again)
    assert _status(after, "harness-missing-on-480") == "does-not-apply"
    assert _status(after, "no-drift-detection-on-480") == "does-not-apply"
