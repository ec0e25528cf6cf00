"""Which objects a kustomize patch ``target`` selects by labels, the way ``kubectl kustomize``
selects them: equality and set-based requirements (``in``, ``notin``, ``!key``), and the
labels and annotations ``generatorOptions`` give a generated ConfigMap."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from upgradeplan.readers.gitops.render import Renderer
from upgradeplan.readers.gitops.trees import WorkTree

KUBECTL = shutil.which("kubectl")
LABELS = {
    "plain": {},
    "opted-out": {"subst.example.org/off": "true"},
    "opted-in": {"subst.example.org/off": "false", "tier": "edge"},
    "edge": {"tier": "edge"},
}
SELECTORS = [
    "subst.example.org/off notin (true)",
    "subst.example.org/off in (true, false)",
    "!subst.example.org/off",
    "subst.example.org/off",
    "tier=edge,subst.example.org/off!=true",
    "tier==edge, subst.example.org/off notin (false)",
]


def _tree(root: Path, selector: str) -> None:
    objs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "labels": lab}}
        for n, lab in LABELS.items()
    ]
    (root / "objects.yaml").write_text(yaml.safe_dump_all(objs))
    patch = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: _, annotations: {hit: 'yes'}}\n"
    kust = {
        "resources": ["objects.yaml"],
        "patches": [{"patch": patch, "target": {"kind": "ConfigMap", "labelSelector": selector}}],
    }
    (root / "kustomization.yaml").write_text(yaml.safe_dump(kust))


def _ours(root: Path) -> set[str]:
    objs = Renderer(WorkTree(root), lambda rel: rel).build("")
    return {
        str(d.get("metadata", "name"))
        for d in objs
        if (d.get("metadata", "annotations") or {}).get("hit") == "yes"
    }


@pytest.mark.parametrize("selector", SELECTORS)
def test_a_label_selector_selects_what_kustomize_selects(tmp_path: Path, selector: str) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed (.ci/run requires it)")
    _tree(tmp_path, selector)
    proc = subprocess.run(
        [KUBECTL, "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    theirs = {
        d["metadata"]["name"]
        for d in yaml.safe_load_all(proc.stdout)
        if (d["metadata"].get("annotations") or {}).get("hit") == "yes"
    }
    assert _ours(tmp_path) == theirs


def test_a_selector_that_does_not_parse_selects_nothing(tmp_path: Path) -> None:
    _tree(tmp_path, "tier in edge")
    assert _ours(tmp_path) == set()


def test_generator_options_label_and_annotate_the_generated_config_map(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text('echo "${#names[@]}"\n')
    (tmp_path / "kustomization.yaml").write_text(
        textwrap.dedent("""\
            configMapGenerator:
              - name: scripts
                files: [run.sh]
                options: {labels: {team: ledger}}
            generatorOptions:
              disableNameSuffixHash: true
              labels: {team: platform, tier: edge}
              annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}
            """)
    )
    [cm] = Renderer(WorkTree(tmp_path), lambda rel: rel).build("")
    assert cm.get("metadata", "labels") == {"team": "ledger", "tier": "edge"}
    assert cm.get("metadata", "annotations") == {
        "kustomize.toolkit.fluxcd.io/substitute": "disabled"
    }
