"""A Flux Kustomization's post-build substitution as the GitOps reader applies it: the pin it
gives where Flux's substitution gives one, unknown (with the reason and file:line) where the
files cannot say, and the whole Kustomization recorded where Flux's build would fail."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_in

from upgradeplan.errors import BadInput
from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers import gitops

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
  path: ./clusters/north
  sourceRef: {kind: GitRepository, name: flux-system}
"""


def _ks(post: str) -> str:
    head = textwrap.dedent("""\
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: workloads, namespace: flux-system}
        spec:
          path: ./workloads
          sourceRef: {kind: GitRepository, name: flux-system}
        """)
    return head + textwrap.indent(textwrap.dedent(post), "  ")


def _release(version: str, *, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata:
          name: muster
          namespace: agents{extra}
        spec:
          chart:
            spec:
              chart: muster
              version: {version}
              sourceRef: {{kind: HelmRepository, name: charts}}
        """)


def _read(kb: KnowledgeBase, root: Path, post: str, release: str, **more: str) -> State:
    files = {
        "clusters/north/flux-system/gotk-sync.yaml": SYNC,
        "clusters/north/workloads.yaml": _ks(post),
        "workloads/muster.yaml": release,
        **more,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return gitops.read(kb, str(root))


def _pin(state: State) -> Any:
    fact = state.get("pin.muster")
    return fact.value if fact is not None else None


VARS = """\
postBuild:
  substitute:
    muster_tag: "v5.12.0"
    empty: ""
"""


@pytest.mark.parametrize(
    ("written", "pin"),
    [
        ("${muster_tag#v}", "5.12.0"),
        ("${muster_tag/v/}", "5.12.0"),
        ("${muster_tag:1}", "5.12.0"),
        ("${empty:-5.13.0}", "5.13.0"),  # an empty value takes the default
        ("${unset_line:=5.14.0}", "5.14.0"),
        ("'${muster_tag#v}'", "5.12.0"),  # the quotes in the file do not reach Flux's text
    ],
)
def test_a_pin_resolved_by_an_expression_flux_computes(
    kb: KnowledgeBase, tmp_path: Path, written: str, pin: str
) -> None:
    state = _read(kb, tmp_path, VARS, _release(written))
    assert _pin(state) == pin
    assert "pin.muster" not in state.unreadable


def test_dollar_name_without_braces_is_not_substituted(kb: KnowledgeBase, tmp_path: Path) -> None:
    # Flux substitutes ${muster_tag} only: $muster_tag reaches helm-controller as written,
    # a constraint it refuses
    with pytest.raises(BadInput) as err:
        _read(kb, tmp_path, VARS, _release("$muster_tag"))
    assert "'$muster_tag'" in str(err.value)
    assert "never $VAR" in (err.value.hint or "")
    assert err.value.location.endswith("workloads/muster.yaml:10")


def test_an_expression_read_without_certainty_leaves_the_pin_unknown(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    state = _read(kb, tmp_path, VARS, _release("${muster_tag#[v]}"))
    assert _pin(state) is None
    why = state.unreadable["pin.muster"]
    assert "workloads/muster.yaml:10" in why and "character class" in why
    [rec] = [r for r in state.unread if "pin.muster" in r.keys]
    assert rec.cause == "unresolved substitution"


def test_undetermined_not_safe_through_the_cli(tmp_path: Path) -> None:
    post = VARS.replace('muster_tag: "v5.12.0"', 'muster_tag: "v5.12.0"\n    kagent_v: "0.11"')
    files = {
        "clusters/north/flux-system/gotk-sync.yaml": SYNC,
        "clusters/north/workloads.yaml": _ks(post),
        "workloads/muster.yaml": _release("${muster_tag#[v]}"),
        "workloads/kagent.yaml": _release("${kagent_v}").replace("muster", "kagent"),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    code, out, err = run_in(["scan", "--gitops", ".", "-o", "json"], cwd=tmp_path)
    assert code == 4, err
    [result] = json.loads(out)["results"]
    unread = result["state"]["unreadable"]
    assert "character class" in unread["pin.muster"]
    # 0.11 is a number once Flux reads its substituted text again, not the text 0.11
    assert "reads as float 0.11" in unread["pin.kagent"]


def test_an_escaped_variable_is_text_and_no_version(kb: KnowledgeBase, tmp_path: Path) -> None:
    state = _read(kb, tmp_path, VARS, _release("$${muster_tag}"))
    why = state.unreadable["pin.muster"]
    assert "'${muster_tag}' is no version" in why
    assert "Flux's escape" in why and "filled in" not in why
    assert state.get("pin.muster") is None


def test_without_any_variable_flux_substitutes_nothing(kb: KnowledgeBase, tmp_path: Path) -> None:
    # an empty ConfigMap gives no variable: the default is never taken (WithVariables)
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: none, namespace: flux-system}\n"
    post = "postBuild:\n  substituteFrom:\n    - {kind: ConfigMap, name: none}\n"
    files = {"clusters/north/none.yaml": cm}
    state = _read(kb, tmp_path, post, _release("${line:=5.12.0}"), **files)
    assert _pin(state) is None
    assert "substitutes nothing" in state.unreadable["pin.muster"]
    always = post + "  substituteStrategy: Always\n"
    state = _read(kb, tmp_path, always, _release("${line:=5.12.0}"), **files)
    assert _pin(state) == "5.12.0"


def test_a_variable_a_secret_may_hold_is_unknown_even_with_a_default(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    post = VARS + "  substituteFrom:\n    - {kind: Secret, name: cluster-vars}\n"
    state = _read(kb, tmp_path, post, _release("${line:=5.12.0}"))
    assert _pin(state) is None
    assert "Secret cluster-vars" in state.unreadable["pin.muster"]


def test_a_disabled_object_keeps_its_text(kb: KnowledgeBase, tmp_path: Path) -> None:
    label = "\n  labels: {kustomize.toolkit.fluxcd.io/substitute: disabled}"
    state = _read(kb, tmp_path, VARS, _release("${muster_tag#v}", extra=label))
    assert _pin(state) is None  # Flux leaves ${muster_tag#v} as written


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("${muster_tag-5.12.0}", "missing closing brace"),  # no colon: envsubst cannot parse it
        ("${}", "no variable name"),
    ],
)
def test_a_build_flux_cannot_substitute_applies_nothing(
    kb: KnowledgeBase, tmp_path: Path, written: str, says: str
) -> None:
    state = _read(kb, tmp_path, VARS, _release(written))
    assert _pin(state) is None
    key = "source Kustomization flux-system/workloads"
    assert says in state.unreadable[key]
    assert "clusters/north/workloads.yaml:7" in state.unreadable[key]
    [rec] = [r for r in state.unread if key in r.keys]
    assert rec.cause == "post-build substitution fails"


def test_an_invalid_variable_name_fails_the_build(kb: KnowledgeBase, tmp_path: Path) -> None:
    post = VARS.replace("empty:", "chart-line:")
    state = _read(kb, tmp_path, post, _release("${muster_tag#v}"))
    assert _pin(state) is None
    why = state.unreadable["source Kustomization flux-system/workloads"]
    assert "'chart-line' is invalid" in why


def test_a_variable_nobody_sets_may_fail_the_whole_build(kb: KnowledgeBase, tmp_path: Path) -> None:
    state = _read(kb, tmp_path, VARS, _release("${muster_line}"))
    assert _pin(state) is None
    assert "strict substitution" in state.unreadable["pin.muster"]
    why = state.unreadable["source Kustomization flux-system/workloads"]
    assert "sets no muster_line" in why and "v1.9.0" in why


def test_a_quote_variable_keeps_a_number_text(kb: KnowledgeBase, tmp_path: Path) -> None:
    # Flux's own advice for numbers: ${quote}${v}${quote} with quote = '"'
    post = VARS + "    quote: '\"'\n    line: '5.12'\n"
    state = _read(kb, tmp_path, post, _release("${quote}${line}${quote}"))
    assert _pin(state) == "5.12"


def test_a_script_generated_with_substitution_disabled_does_not_fail_the_build(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    # ${#ids[@]} is no expression envsubst parses; generatorOptions keep Flux away from it
    kust = textwrap.dedent("""\
        resources: [muster.yaml]
        configMapGenerator:
          - {name: hooks, files: [hook.sh]}
        generatorOptions:
          disableNameSuffixHash: true
          annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}
        """)
    files = {"workloads/kustomization.yaml": kust, "workloads/hook.sh": 'echo "${#ids[@]}"\n'}
    state = _read(kb, tmp_path, VARS, _release("${muster_tag#v}"), **files)
    assert _pin(state) == "5.12.0"
    assert not [k for k in state.unreadable if k.startswith("source ")]


def test_a_parent_patch_selected_by_a_set_based_selector_gives_the_variables(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    # home-ops style: the parent injects substituteFrom into every child that does not opt out
    cm = textwrap.dedent("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: cluster-settings, namespace: flux-system}
        data: {MUSTER_LINE: "5.12.0"}
        """)
    patch = textwrap.dedent("""\
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata: {name: _}
        spec:
          postBuild:
            substituteFrom:
              - {kind: ConfigMap, name: cluster-settings}
        """)
    sync = SYNC.replace(
        "  sourceRef: {kind: GitRepository, name: flux-system}\n",
        "  sourceRef: {kind: GitRepository, name: flux-system}\n"
        "  patches:\n"
        "    - target: {kind: Kustomization, labelSelector: subst.example.org/off notin (true)}\n"
        "      patch: |\n" + textwrap.indent(patch, "        "),
    )
    files = {"clusters/north/flux-system/gotk-sync.yaml": sync, "clusters/north/cm.yaml": cm}
    state = _read(kb, tmp_path, "", _release("${MUSTER_LINE}"), **files)
    assert _pin(state) == "5.12.0"
