"""JSON 6902 and strategic-merge patches applied to object dicts, as kubectl/kustomize do."""

from __future__ import annotations

from typing import Any

import pytest
from support.patchops import apply_json6902, apply_merge_patch

from upgradeplan.errors import BadInput

DEPLOY: dict[str, Any] = {
    "kind": "Deployment",
    "metadata": {"name": "harness-delegate", "namespace": "harness-delegate-ng"},
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "delegate",
                        "args": ["--instance-metadata-url=https://169.254.169.254", "--x"],
                        "env": [{"name": "A", "value": "1"}],
                    }
                ]
            }
        }
    },
}


def test_replace_keeps_the_rest_and_does_not_mutate_the_input() -> None:
    path = "/spec/template/spec/containers/0/args/0"
    out = apply_json6902(
        DEPLOY, [{"op": "replace", "path": path, "value": "--metadata-endpoint=v"}]
    )
    assert out["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "--metadata-endpoint=v",
        "--x",
    ]
    assert DEPLOY["spec"]["template"]["spec"]["containers"][0]["args"][0].startswith("--instance")


def test_add_append_remove_move_copy_test() -> None:
    base = "/spec/template/spec/containers/0"
    out = apply_json6902(
        DEPLOY,
        [
            {"op": "test", "path": f"{base}/name", "value": "delegate"},
            {"op": "add", "path": f"{base}/env/-", "value": {"name": "B", "value": "2"}},
            {"op": "remove", "path": f"{base}/args/1"},
            {"op": "copy", "from": f"{base}/name", "path": "/metadata/labels"},
            {"op": "move", "from": "/metadata/labels", "path": "/metadata/x~1y"},
        ],
    )
    c = out["spec"]["template"]["spec"]["containers"][0]
    assert [e["name"] for e in c["env"]] == ["A", "B"]
    assert c["args"] == ["--instance-metadata-url=https://169.254.169.254"]
    assert out["metadata"]["x/y"] == "delegate"
    assert "labels" not in out["metadata"]


@pytest.mark.parametrize(
    "op",
    [
        {"op": "replace", "path": "/spec/nope/x", "value": 1},
        {"op": "remove", "path": "/spec/template/spec/containers/3"},
        {"op": "test", "path": "/metadata/name", "value": "other"},
        {"op": "frobnicate", "path": "/metadata"},
        {"op": "add", "path": "metadata"},
    ],
)
def test_bad_operations_are_refused_with_a_message(op: dict[str, object]) -> None:
    with pytest.raises(BadInput):
        apply_json6902(DEPLOY, [op])


def test_merge_patch_merges_maps_deletes_nulls_and_merges_named_lists() -> None:
    hr = {
        "kind": "HelmRelease",
        "metadata": {"name": "kagent", "namespace": "flux-giantswarm", "labels": {"a": "1"}},
        "spec": {"interval": "10m", "driftDetection": {"mode": "disabled"}},
    }
    out = apply_merge_patch(
        hr, {"metadata": {"labels": None}, "spec": {"driftDetection": {"mode": "enabled"}}}
    )
    assert out["spec"] == {"interval": "10m", "driftDetection": {"mode": "enabled"}}
    assert "labels" not in out["metadata"]
    env_patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "delegate", "env": [{"name": "A", "value": "9"}, {"name": "C"}]}
                    ]
                }
            }
        }
    }
    merged = apply_merge_patch(DEPLOY, env_patch)
    c = merged["spec"]["template"]["spec"]["containers"][0]
    assert c["args"][1] == "--x"  # untouched
    assert c["env"] == [{"name": "A", "value": "9"}, {"name": "C"}]
