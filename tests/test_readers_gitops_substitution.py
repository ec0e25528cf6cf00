"""Flux's post-build substitution as kustomize-controller performs it (fluxcd/pkg's envsubst over
each object): ``$$`` writes one ``$`` (so ``$${VAR}`` reaches the cluster as ``${VAR}``), and a
value's line breaks are removed."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from support.cli import run_in

SYNC = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {url: https://git.example.com/fleet, ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec:
  path: ./clusters/edge
  sourceRef: {kind: GitRepository, name: flux-system}
"""
APPS = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system}
  postBuild:
    substitute:
      muster_line: "5.12.0"
    substituteFrom:
      - {kind: ConfigMap, name: versions}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: versions, namespace: flux-system}
data:
  kagent_build: |
    0.11.0-gs.16
"""


def _release(name: str, version: str) -> str:
    return textwrap.dedent(f"""\
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {{name: {name}, namespace: agents}}
        spec:
          chart:
            spec:
              chart: {name}
              version: "{version}"
              sourceRef: {{kind: HelmRepository, name: charts}}
        """)


def _tree(root: Path, releases: str) -> Path:
    for rel, text in {
        "clusters/edge/flux-system/gotk-sync.yaml": SYNC,
        "clusters/edge/apps.yaml": APPS,
        "apps/releases.yaml": releases,
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _scan(root: Path) -> tuple[int, dict[str, Any], str]:
    code, out, err = run_in(["scan", "--gitops", ".", "-o", "json"], cwd=root)
    assert code in (0, 4), err  # never bad input: both are pins Flux is given
    [result] = json.loads(out)["results"]
    return code, result["state"], err


def test_an_escaped_variable_reaches_flux_as_written_and_stays_unknown(tmp_path: Path) -> None:
    # $${muster_line} is how a file keeps a variable for a later substitution: Flux writes
    # ${muster_line} (not the value it has for it, nor "$" and the value)
    code, state, err = _scan(_tree(tmp_path, _release("muster", "$${muster_line}")))
    assert code == 4, err
    assert "pin.muster" not in state["facts"]
    assert "${muster_line}" in state["unreadable"]["pin.muster"]
    assert "$5.12.0" not in json.dumps(state)


def test_the_variable_itself_is_filled_in(tmp_path: Path) -> None:
    code, state, err = _scan(_tree(tmp_path, _release("muster", "${muster_line}")))
    assert code == 0, err
    assert state["facts"]["pin.muster"]["value"] == "5.12.0"


def test_a_value_written_as_a_block_loses_its_line_break(tmp_path: Path) -> None:
    # kustomize-controller removes the line breaks of every value (a ConfigMap's `|` block)
    code, state, err = _scan(_tree(tmp_path, _release("kagent", "${kagent_build}")))
    assert code == 0, err
    assert state["facts"]["pin.kagent"]["value"] == "0.11.0-gs.16"
    assert state["facts"]["installed.kagent"]["value"] == "0.11.0-gs.16"


def test_two_dollars_elsewhere_in_a_value_write_one(tmp_path: Path) -> None:
    doc = _release("muster", "${muster_line}") + textwrap.indent(
        "values:\n  banner: cost $$5\n", "  "
    )
    code, state, err = _scan(_tree(tmp_path, doc))
    assert code == 0, err
    assert state["facts"]["values.muster"]["value"] == {"banner": "cost $5"}
