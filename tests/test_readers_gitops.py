"""The GitOps reader: facts from HelmRelease / OCIRepository / BOM / values / manifests.

Reader tests use a small knowledge base built here (so they do not move when the bundled
knowledge grows); the scenario and --base tests further down run the real CLI with the
bundled knowledge.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import sources
from support.cli import git as _git
from support.cli import s1_repo
from support.fakeapi import FakeAPIFactory, fake_api
from support.scenarios import (
    CASES,
    CLUSTER_FIXTURES,
    K8S_135,
    Case,
    check_mismatches,
    statuses_of,
)

from upgradeplan.cli import cli
from upgradeplan.errors import BadInput
from upgradeplan.model import (
    NEXT,
    KnowledgeBase,
    Product,
    Recognise,
    Release,
    State,
    Target,
)
from upgradeplan.planner.judge import relocate
from upgradeplan.provenance import in_file
from upgradeplan.readers import gitops
from upgradeplan.readers.gather import moved_pins
from upgradeplan.readers.gitops.gate import pin_changes

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gitops"


def _kb() -> KnowledgeBase:
    def product(pid: str, kind: str = "chart", **rec: object) -> Product:
        return Product(pid, pid, kind, "", Recognise(**rec))  # type: ignore[arg-type]

    meta = "agent-platform"
    conn = "agent-platform-connectivity"
    products = {
        meta: product(meta, helmrelease=(meta,), chart=(meta,)),
        conn: product(conn, helmrelease=(conn,), chart=(conn,), bom_component=conn),
        "kagent": product(
            "kagent", helmrelease=("kagent",), chart=("kagent",), bom_component="kagent"
        ),
        "harness-delegate": product(
            "harness-delegate",
            "agent",
            helmrelease=("harness-delegate",),
            chart=("harness-delegate",),
            deployment_labels=(("harness.io/name", "harness-delegate"),),
            image=("harness/delegate",),
            values_keys=("delegateVersion", "image.tag"),
        ),
    }
    metas = []
    for v in ("4.7.18", "4.7.19", "4.8.0", "4.8.1"):
        effects = {"helmrelease.kagent.drift-detection": "enabled"} if v == "4.8.1" else {}
        metas.append(Release(meta, v, v, bom={conn: v, "kagent": "0.11.0-gs.6"}, effects=effects))
    metas.append(Release(meta, NEXT, "next"))
    releases = {
        meta: tuple(metas),
        conn: tuple(Release(conn, v, v) for v in ("4.7.18", "4.7.19", "4.8.0", "4.8.1")),
        "kagent": (Release("kagent", "0.11.0-gs.6", "gs.6"),),
        "harness-delegate": tuple(
            Release("harness-delegate", v, v) for v in ("0.29.0", "0.30.0", "0.31.2")
        ),
    }
    return KnowledgeBase(products=products, releases=releases, hazards={}, migrations={})


KB = _kb()


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return root


def _facts(state: State) -> dict[str, tuple[object, str]]:
    return {f.key: (f.value, str(f.source)) for f in state}


# --------------------------------------------------------------------------- reader


def test_bom_overlay_and_meta_chart_give_pins_at_the_line_of_each_value() -> None:
    facts = _facts(gitops.read(KB, str(FIXTURES / "s1")))
    root = str(FIXTURES / "s1")
    assert facts["pin.agent-platform"] == ("4.7.18", f"{root}/agent-platform/ocirepository.yaml:13")
    assert facts["pin.agent-platform-connectivity"] == ("4.7.18", f"{root}/bom.yaml:9")
    assert facts["pin.kagent"] == ("0.11.0-gs.6", f"{root}/bom.yaml:11")
    assert facts["helmrelease.kagent.namespace"] == ("flux-giantswarm", f"{root}/bom.yaml:4")
    # installed.* is the planner's derivation from exact pins, not the reader's
    assert not any(key.startswith("installed.") for key in facts)


def test_sources_are_relative_when_the_path_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    facts = _facts(gitops.read(KB, "s1/"))
    assert facts["pin.agent-platform-connectivity"][1] == "s1/bom.yaml:9"
    single = _facts(gitops.read(KB, "s1/bom.yaml"))
    assert single["pin.agent-platform-connectivity"][1] == "s1/bom.yaml:9"


def test_kagent_drift_detection_defaults_from_the_meta_charts_release(tmp_path: Path) -> None:
    # 4.7.18 leaves the kagent HelmRelease without drift detection ...
    old = _facts(gitops.read(KB, str(FIXTURES / "s1")))
    value, source = old["helmrelease.kagent.drift-detection"]
    assert value == "disabled"
    assert source.startswith("derived: ") and "agent-platform 4.7.18" in source
    # ... 4.8.1 turns it on (its release effects), unless the BOM says otherwise.
    _write(
        tmp_path,
        {
            "oci.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata: {name: agent-platform, namespace: flux-giantswarm}
                spec:
                  ref: {semver: "4.8.1"}
            """,
            "bom.yaml": """
                components:
                  kagent: {versionRange: "0.11.0-gs.6"}
                  agent-platform-connectivity:
                    versionRange: "4.8.1"
                    driftDetection:
                      mode: warn
            """,
        },
    )
    new = _facts(gitops.read(KB, str(tmp_path)))
    assert new["helmrelease.kagent.drift-detection"][0] == "enabled"
    assert new["helmrelease.agent-platform-connectivity.drift-detection"] == (
        "warn",
        f"{tmp_path}/bom.yaml:6",
    )


def test_a_range_pin_on_the_meta_chart_derives_no_default(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "oci.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1beta2
                kind: OCIRepository
                metadata: {name: agent-platform}
                spec: {ref: {semver: ">=4.7.0 <5.0.0", tag: "4.7.18"}}
            """,
            "bom.yaml": "components: {kagent: {versionRange: 0.11.0-gs.6}}\n",
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["pin.agent-platform"][0] == ">=4.7.0 <5.0.0"  # semver wins over tag
    assert "helmrelease.kagent.drift-detection" not in facts


def test_helmrelease_fields_and_flux_api_versions(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "releases.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2beta1
                kind: HelmRelease
                metadata:
                  name: kagent
                  namespace: flux-giantswarm
                spec:
                  chart:
                    spec:
                      chart: kagent
                      version: 0.11.0-gs.6
                ---
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata:
                  name: connectivity-release
                  namespace: platform
                spec:
                  driftDetection:
                    mode: enabled
                  chartRef:
                    kind: OCIRepository
                    name: conn-source
                ---
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata:
                  name: conn-source
                  namespace: platform
                spec:
                  ref:
                    tag: "4.7.19"
            """,
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    src = f"{tmp_path}/releases.yaml"
    assert facts["helmrelease.kagent.namespace"] == ("flux-giantswarm", f"{src}:5")
    assert facts["helmrelease.kagent.drift-detection"] == ("disabled", f"{src}:4")
    assert facts["pin.kagent"] == ("0.11.0-gs.6", f"{src}:10")
    assert facts["helmrelease.connectivity-release.drift-detection"] == ("enabled", f"{src}:19")
    # the chartRef leads to the OCIRepository, whose name is not a product name
    assert "pin.agent-platform-connectivity" not in facts


def test_chart_ref_resolves_the_pin_of_a_recognised_release(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "a.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: agent-platform, namespace: gs}
                spec:
                  chartRef: {kind: OCIRepository, name: meta-chart}
            """,
            "b.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata: {name: meta-chart, namespace: gs}
                spec:
                  ref:
                    semver: 4.7.19
            """,
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["pin.agent-platform"] == ("4.7.19", f"{tmp_path}/b.yaml:6")


def test_digest_pins_and_unpinned_charts(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "oci.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata: {name: agent-platform}
                spec: {ref: {digest: "sha256:abc", semver: "4.7.18"}}
            """,
            "hr.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: kagent}
                spec: {chart: {spec: {chart: kagent}}}
            """,
        },
    )
    state = gitops.read(KB, str(tmp_path))
    assert "pin.agent-platform" not in state
    assert "digest" in state.unreadable["pin.agent-platform"]
    assert state.value("pin.kagent", "unknown") is None  # known to be unpinned


def test_versions_keep_their_spelling(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {"bom.yaml": "components:\n  agent-platform-connectivity:\n    versionRange: 4.10\n"},
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["pin.agent-platform-connectivity"][0] == "4.10"


def test_disabled_and_unknown_components(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "bom.yaml": """
                components:
                  kagent: {enabled: false, versionRange: "0.11.0-gs.6"}
                  muster:
                    versionRange: "1.2.3"
                    driftDetection: {mode: enabled}
            """
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert "pin.kagent" not in facts
    assert facts["helmrelease.muster.drift-detection"][0] == "enabled"
    assert not any(k.startswith("pin.") for k in facts)


def test_delegate_values_deployment_secret_and_namespace() -> None:
    root = str(FIXTURES / "s6")
    facts = _facts(gitops.read(KB, root))
    assert facts["pin.harness-delegate"] == (
        "0.29.0",
        f"{root}/harness-delegate/helmrelease.yaml:12",
    )
    assert facts["values.harness-delegate.delegateVersion"] == (
        "0.29.0",
        f"{root}/harness-delegate/values.yaml:5",
    )
    assert facts["workload.harness-delegate.args"] == (
        ["--instance-metadata-url=https://169.254.169.254"],
        f"{root}/harness-delegate/values.yaml:7",
    )
    assert facts["workload.harness-delegate.namespace"][0] == "harness-delegate-ng"
    assert facts["workload.harness-delegate.name"][0] == "harness-delegate"
    assert facts["workload.harness-delegate.env-secrets"] == (
        ["harness-api-key"],
        f"{root}/rendered/deployment.yaml:28",
    )
    assert facts["secret.harness-delegate-ng.harness-api-key.type"] == (
        "Opaque",
        f"{root}/rendered/secret.yaml:7",
    )
    assert facts["namespace.harness-delegate-ng.labels"][0] == {
        "kubernetes.io/metadata.name": "harness-delegate-ng"
    }


def test_env_secret_refs_of_a_deployment_manifest(tmp_path: Path) -> None:
    """Where each env entry that reads a Secret sits, as the cluster reader gives it."""
    _write(
        tmp_path,
        {
            "deploy.yaml": """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: delegate, namespace: hd}
                spec:
                  template:
                    spec:
                      containers:
                        - name: sidecar
                          image: busybox:1.36
                        - name: delegate
                          image: harness/delegate:0.31.2
                          envFrom:
                            - secretRef: {name: delegate-env}
                          env:
                            - name: PLAIN
                              value: x
                            - name: DELEGATE_TOKEN
                              valueFrom:
                                secretKeyRef: {name: old-token, key: token}
            """,
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["workload.harness-delegate.env-secret-refs"] == (
        {"/spec/template/spec/containers/1/env/1": "DELEGATE_TOKEN=old-token"},
        f"{tmp_path}/deploy.yaml:17",
    )


def test_env_secret_refs_empty_without_secret_env(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "deploy.yaml": """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: delegate, namespace: hd}
                spec:
                  template:
                    spec:
                      containers:
                        - {name: delegate, image: "harness/delegate:0.31.2"}
            """,
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["workload.harness-delegate.env-secret-refs"][0] == {}


def test_immutable_delegate_pins_by_image_tag_and_reads_tolerations(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "deploy.yaml": """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: delegate, namespace: hd}
                spec:
                  strategy: {rollingUpdate: {maxSurge: 0}}
                  template:
                    metadata:
                      annotations: {sidecar.istio.io/inject: false}
                    spec:
                      tolerations:
                        - {key: cloud-provider, operator: Exists, effect: NoSchedule}
                        - {operator: Exists}
                      containers:
                        - name: sidecar
                          image: busybox:1.36
                        - name: delegate
                          image: registry.example.com/harness/delegate:v0.31.2
                          envFrom:
                            - secretRef: {name: delegate-env}
            """,
            "secret.yaml": """
                apiVersion: v1
                kind: Secret
                metadata: {name: delegate-env, namespace: hd}
                data: {token: c2VjcmV0}
                stringData: {other: plain-secret-text}
            """,
        },
    )
    state = gitops.read(KB, str(tmp_path))
    facts = _facts(state)
    assert facts["pin.harness-delegate"] == ("0.31.2", f"{tmp_path}/deploy.yaml:17")
    assert facts["workload.harness-delegate.image"][0] == "busybox:1.36"
    assert facts["workload.harness-delegate.tolerations"][0] == [
        "cloud-provider:Exists:NoSchedule",
        ":Exists:",
    ]
    assert facts["workload.harness-delegate.pod-annotations"][0] == {
        "sidecar.istio.io/inject": "false"
    }
    assert facts["workload.harness-delegate.max-surge"][0] == "0"
    assert facts["workload.harness-delegate.env-secrets"][0] == ["delegate-env"]
    assert facts["secret.hd.delegate-env.type"][0] == "Opaque"  # the Kubernetes default
    everything = repr([(f.value, f.source) for f in state])
    assert "c2VjcmV0" not in everything and "plain-secret-text" not in everything


def test_kustomization_resources_generators_and_namespace(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "kustomization.yaml": """
                namespace: flux-giantswarm
                resources:
                  - apps
                  - ../outside
                  - https://github.com/example/repo//base
                configMapGenerator:
                  - name: values
                    files: [values.yaml=bom.yaml]
            """,
            "apps/kustomization.yaml": "resources: [release.yaml]\n",
            "apps/release.yaml": """
                apiVersion: helm.toolkit.fluxcd.io/v2
                kind: HelmRelease
                metadata: {name: kagent}
                spec: {chart: {spec: {chart: kagent, version: "0.11.0-gs.6"}}}
            """,
            "apps/not-listed.yaml": """
                components:
                  agent-platform-connectivity: {versionRange: 9.9.9}
            """,
            "bom.yaml": "components: {agent-platform-connectivity: {versionRange: '4.7.18'}}\n",
        },
    )
    state = gitops.read(KB, str(tmp_path))
    facts = _facts(state)
    assert facts["helmrelease.kagent.namespace"][0] == "flux-giantswarm"
    assert facts["pin.agent-platform-connectivity"][0] == "4.7.18"  # not-listed.yaml unread
    assert "outside the --gitops PATH" in state.unreadable["file ../outside"]
    assert "remote" in state.unreadable["file https://github.com/example/repo//base"]


def test_bad_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    _write(tmp_path, {"ok.yaml": "a: 1\n", "broken.yaml": "a: 1\nb: [1, 2\nc: 3\n"})
    state = gitops.read(KB, str(tmp_path))
    (key,) = [k for k in state.unreadable if "broken.yaml" in k]
    assert key.startswith(f"file {tmp_path}/broken.yaml:")
    assert "YAML syntax error" in state.unreadable[key]


def test_missing_path_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file or directory"):
        gitops.read(KB, str(tmp_path / "nope"))


def test_a_device_or_fifo_is_named_for_what_it_is(tmp_path: Path) -> None:
    """/dev/zero exists: "no such file" would send the user looking for a typo."""
    with pytest.raises(BadInput, match="is a character device, not a directory"):
        gitops.read(KB, "/dev/zero")
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(BadInput, match=r"is a FIFO \(named pipe\), not a directory"):
        gitops.read(KB, str(tmp_path / "pipe"))


# --------------------------------------------------------------------------- pin changes


def _state(**pins: tuple[str, str]) -> State:
    from upgradeplan.model import Fact

    facts = {}
    for name, (value, source) in pins.items():
        key = "pin." + name.replace("_", "-")
        facts[key] = Fact(key, value, sources.at(source))
    return State(facts=facts)


def test_pin_changes_follow_the_meta_chart_and_hold_what_stays() -> None:
    base = _state(
        agent_platform=("4.7.18", "oci.yaml:9"),
        agent_platform_connectivity=("4.7.18", "bom.yaml:5"),
        kagent=("0.11.0-gs.6", "bom.yaml:7"),
    )
    head = _state(
        agent_platform=("4.8.0", "oci.yaml:10"),
        agent_platform_connectivity=("4.8.0", "bom.yaml:5"),
        kagent=("0.11.0-gs.6", "bom.yaml:7"),
    )
    change = pin_changes(KB, base, head)
    # connectivity moves with the meta chart's 4.8.0 release: no target of its own
    assert change.targets == (Target("agent-platform", "4.8.0"),)
    assert change.holds == ("kagent",)
    assert change.locations["agent-platform"] == in_file("oci.yaml", 10)
    assert gitops.gitops_targets(KB, base, head) == [Target("agent-platform", "4.8.0")]


def test_a_pin_left_behind_is_held_and_a_range_resolves_like_flux() -> None:
    base = _state(
        agent_platform=("4.7.18", "a:1"),
        agent_platform_connectivity=("4.7.18", "b:2"),
    )
    head = _state(
        agent_platform=(">=4.8.0 <4.9.0", "a:1"),
        agent_platform_connectivity=("4.7.18", "b:2"),
    )
    change = pin_changes(KB, base, head)
    assert change.targets == (Target("agent-platform", "4.8.1"),)
    assert change.holds == ("agent-platform-connectivity",)


def test_unchanged_selection_and_unknown_selection() -> None:
    same = pin_changes(
        KB,
        _state(harness_delegate=(">=0.31.0", "v:1")),
        _state(harness_delegate=("0.31.2", "v:1")),
    )
    assert same.targets == ()
    with pytest.raises(BadInput) as err:
        pin_changes(
            KB,
            _state(harness_delegate=("0.29.0", "v:1")),
            _state(harness_delegate=(">=1.0.0", "values.yaml:4")),
        )
    assert err.value.location == "values.yaml:4"


# --------------------------------------------------------------------------- scenarios via CLI
#
# Each reference case of tests/support/scenarios.py (shared with the stated, snapshot and
# cluster tests) answered from the same installation written as GitOps files
# (tests/fixtures/gitops/<dir>). Facts a GitOps repository cannot hold are stated with --fact,
# exactly as the scenario lists them: whether the Harness object exists in the cluster and its
# annotations, the Kubernetes version, the Harness CD platform version, and the version a
# range-pinned chart actually runs. Everything else (pins, the kagent release's drift
# detection and namespace, the delegate's args, values, Secrets) comes from the files.

HARNESS_UNPROTECTED = [
    "--fact",
    "object.Harness.kagent.kagent.exists=true",
    "--fact",
    "object.Harness.kagent.kagent.annotations=",
]
HARNESS_KEPT = [
    "--fact",
    "object.Harness.kagent.kagent.exists=true",
    "--fact",
    "object.Harness.kagent.kagent.annotations=helm.sh/resource-policy=keep",
    *K8S_135,
]


def _fx(name: str) -> list[str]:
    return ["--gitops", str(FIXTURES / name)]


# case id prefix -> the GitOps form: fixture directory and the facts git cannot hold
GITOPS_FORMS: dict[str, list[str]] = {
    "S1": [*_fx("s1"), *HARNESS_UNPROTECTED, *K8S_135],
    "S2": [*_fx("s2"), *HARNESS_UNPROTECTED, *K8S_135],
    "S3": [
        *_fx("s3"),
        *K8S_135,
        "--installed",
        "agent-platform-connectivity=4.7.19",
        "--fact",
        "object.Harness.kagent.kagent.exists=true",
    ],
    "S4": [*_fx("s4"), "--fact", "object.Harness.kagent.kagent.exists=false", *K8S_135],
    "S5": [*_fx("s5"), *HARNESS_UNPROTECTED, *K8S_135],
    "S5-state": [*_fx("s5-state"), *K8S_135],
    "S6": [*_fx("s6"), "--fact", "kubernetes=1.31.0", "--installed", "harness-cd=24.12.0"],
    "S7": [*_fx("s7"), "--installed", "harness-cd=24.12.0"],
    "S8": [*_fx("s8"), "--fact", "kubernetes=1.27.3"],
}


def _gitops_form(case: Case) -> list[str]:
    return GITOPS_FORMS.get(case.id) or GITOPS_FORMS[case.id.split("-")[0]]


def _run(args: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    if cwd is None:
        result = runner.invoke(cli, args)
    else:
        old = Path.cwd()
        os.chdir(cwd)
        try:
            result = runner.invoke(cli, args)
        finally:
            os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def _json(command: str, args: list[str]) -> tuple[int, dict[str, Any]]:
    code, out, err = _run([command, *args, "-o", "json"])
    assert code in (0, 3, 4), err
    return code, json.loads(out)


def _direct(command: str, doc: dict[str, Any]) -> dict[str, str]:
    [result] = doc["results"]
    findings = result["findings"] if command == "check" else result["plan"]["direct"]["findings"]
    return statuses_of(findings)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gitops_files_give_the_scenarios_answer(case: Case) -> None:
    code, doc = _json(case.command, [*_gitops_form(case), *case.args])
    assert check_mismatches(case, doc, code) == []
    # The files may settle what the stated form leaves open (a pod's annotations are in the
    # Deployment manifest), never contradict what both know.
    stated_code, stated = _json(case.command, [*case.stated, *case.args])
    assert stated_code == code
    settled = {h: s for h, s in _direct(case.command, stated).items() if s != "may-apply"}
    from_files = _direct(case.command, doc)
    assert {h: from_files.get(h) for h in settled} == settled


def test_s3_harness_kept_from_files_settles_the_handover() -> None:
    args = [*_fx("s1"), *HARNESS_KEPT, "--to", "agent-platform=4.8.0"]
    code, doc = _json("check", args)
    assert statuses_of(doc["results"][0]["findings"])["harness-handover-skipped"] == (
        "does-not-apply"
    )
    assert code == 0


def test_s3_unsettled_from_files_names_the_facts_git_cannot_hold() -> None:
    code, out, _ = _run(["-v", "check", *_fx("s3-unsettled"), "--to", "agent-platform=4.8.0"])
    assert code == 4
    for key in (
        "installed.agent-platform-connectivity",
        "object.Harness.kagent.kagent.annotations",
    ):
        assert key in out


def test_s4_actions_use_the_gitops_namespace_from_the_bom() -> None:
    args = [*_fx("s4"), "--fact", "object.Harness.kagent.kagent.exists=false", *K8S_135]
    code, out, err = _run(["plan", *args, "--to", "agent-platform=4.8.1", "-o", "json"])
    assert code == 0, err
    plan = json.loads(out)["results"][0]["plan"]
    assert plan["path"] == {"agent-platform": ["4.8.0", "4.8.1"]}
    contents = [a["content"] for s in plan["steps"] for a in s["actions"]]
    assert any("-n flux-giantswarm" in c for c in contents)
    assert any("driftDetection" in c for c in contents)


# --------------------------------------------------------------------------- the PR gate (--base)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose HEAD holds S1 (4.7.18 pins) under clusters/prod."""
    return s1_repo(tmp_path)


def _bump(repo: Path, *, extra_comment: bool = False) -> None:
    oci = repo / "clusters/prod/agent-platform/ocirepository.yaml"
    oci.write_text(oci.read_text().replace('semver: "4.7.18"', 'semver: "4.8.0"'))
    bom = repo / "clusters/prod/bom.yaml"
    text = bom.read_text().replace('versionRange: "4.7.18"', 'versionRange: "4.8.0"', 1)
    if extra_comment:
        text = text.replace("components:\n", "components:\n  # moved with the meta chart\n", 1)
    bom.write_text(text)


GATE = ["check", "--gitops", "clusters/prod", "--base", "HEAD", *HARNESS_UNPROTECTED, *K8S_135]


def test_base_gate_catches_the_skip_at_the_pins_line(repo: Path) -> None:
    _bump(repo)
    code, out, err = _run(["-v", *GATE], cwd=repo)
    assert code == 3, err
    assert "harness-handover-skipped" in out
    assert "clusters/prod/bom.yaml:9" in out  # the connectivity pin that makes it apply
    code, out, _ = _run([*GATE, "-o", "json"], cwd=repo)
    result = json.loads(out)["results"][0]
    assert (code, result["verdict"]) == (3, "blocked")
    assert result["targets"] == [{"product": "agent-platform", "version": "4.8.0"}]
    skipped = {f["hazard"]: f for f in result["findings"]}["harness-handover-skipped"]
    assert (skipped["status"], skipped["location"]) == ("applies", "clusters/prod/bom.yaml:9")


def test_base_gate_points_at_the_new_line_when_lines_moved(repo: Path) -> None:
    _bump(repo, extra_comment=True)
    code, out, _ = _run([*GATE, "-o", "json"], cwd=repo)
    assert code == 3
    findings = {f["hazard"]: f for f in json.loads(out)["results"][0]["findings"]}
    assert findings["harness-handover-skipped"]["location"] == "clusters/prod/bom.yaml:10"


def test_base_gate_keeps_its_targets_when_a_cluster_is_read_too(
    repo: Path, fake_api: FakeAPIFactory
) -> None:
    # the cluster supplies what files cannot (the Harness); the diff still says what moves
    server = fake_api.start(CLUSTER_FIXTURES / "s1")
    kubeconfig = fake_api.kubeconfig({"s1": server})
    _bump(repo)
    gate = ["check", "--gitops", "clusters/prod", "--base", "HEAD", "--kubeconfig", kubeconfig]
    code, out, err = _run([*gate, "-o", "json"], cwd=repo)
    result = json.loads(out)["results"][0]
    assert (code, result["verdict"]) == (3, "blocked"), err
    assert result["targets"] == [{"product": "agent-platform", "version": "4.8.0"}]
    assert {f["hazard"]: f["status"] for f in result["findings"]}[
        "harness-handover-skipped"
    ] == "applies"


def test_base_gate_in_order_bump_passes(repo: Path) -> None:
    for rel in ("agent-platform/ocirepository.yaml", "bom.yaml"):
        path = repo / "clusters/prod" / rel
        path.write_text(path.read_text().replace('"4.7.18"', '"4.7.19"'))
    code, out, err = _run([*GATE, "-o", "json"], cwd=repo)
    assert code == 0, err
    assert json.loads(out)["results"][0]["targets"] == [
        {"product": "agent-platform", "version": "4.7.19"}
    ]


def test_base_reader_reads_the_committed_files(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _bump(repo)
    monkeypatch.chdir(repo)
    at_base = _facts(gitops.read(KB, "clusters/prod", ref="HEAD"))
    head = _facts(gitops.read(KB, "clusters/prod"))
    assert at_base["pin.agent-platform"] == (
        "4.7.18",
        "clusters/prod/agent-platform/ocirepository.yaml:13",
    )
    assert head["pin.agent-platform"][0] == "4.8.0"
    single = _facts(gitops.read(KB, "clusters/prod/bom.yaml", ref="HEAD"))
    assert single["pin.agent-platform-connectivity"] == ("4.7.18", "clusters/prod/bom.yaml:9")


def test_base_gate_with_a_missing_ref_or_path_is_bad_input(repo: Path) -> None:
    code, _, err = _run(["check", "--gitops", "clusters/prod", "--base", "origin/nope"], cwd=repo)
    assert code == 2
    assert "origin/nope" in err and "git fetch" in err
    (repo / "clusters/new").mkdir()
    code, _, err = _run(["check", "--gitops", "clusters/new", "--base", "HEAD"], cwd=repo)
    assert code == 2
    assert "does not exist at HEAD" in err


def test_base_gate_outside_a_repository_is_bad_input(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "s1", tmp_path / "prod")
    code, _, err = _run(["check", "--gitops", "prod", "--base", "HEAD"], cwd=tmp_path)
    assert code == 2
    assert "not inside a git repository" in err


def test_bad_yaml_is_named_at_its_line_and_never_exit_2(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "s1", tmp_path / "prod")
    (tmp_path / "prod/bom.yaml").write_text("components:\n  kagent: {versionRange: [\n")
    code, out, err = _run(["check", "--gitops", "prod", "-o", "json"], cwd=tmp_path)
    assert code == 4, err  # the pins it held are unknown: undetermined, never safe
    assert "Traceback" not in err + out
    code, out, err = _run(["scan", "--gitops", "prod"], cwd=tmp_path)
    assert code == 4  # read, except the file named on stderr
    assert "prod/bom.yaml:3" in out
    assert "could not read prod/bom.yaml" in err


def test_values_inside_a_configmap_keep_their_lines(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "cm.yaml": """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: agent-platform-bom, namespace: flux-giantswarm}
                data:
                  values.yaml: |
                    gitops:
                      namespace: flux-giantswarm
                    components:
                      agent-platform-connectivity:
                        versionRange: "4.7.18"
                  other.yaml: "components: {kagent: {versionRange: 0.11.0-gs.6}}"
                  broken.yaml: "a: [1"
                  README: "components: {kagent: {versionRange: 9.9.9}}"
            """
        },
    )
    state = gitops.read(KB, str(tmp_path))
    facts = _facts(state)
    assert facts["pin.agent-platform-connectivity"] == ("4.7.18", f"{tmp_path}/cm.yaml:10")
    assert facts["helmrelease.agent-platform-connectivity.namespace"] == (
        "flux-giantswarm",
        f"{tmp_path}/cm.yaml:7",
    )
    assert facts["pin.kagent"] == ("0.11.0-gs.6", f"{tmp_path}/cm.yaml:11")
    assert any("broken.yaml" in key for key in state.unreadable)


def test_chart_sources_and_tool_directories_are_not_read(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "bom.yaml": "components: {kagent: {versionRange: 0.11.0-gs.6}}\n",
            "charts/local/Chart.yaml": "name: local\nversion: 1.0.0\n",
            "charts/local/templates/deploy.yaml": "{{ if .Values.x }}\nkind: Deployment\n",
            ".github/workflows/ci.yaml": "on: [push]\njobs: {}\n",
        },
    )
    state = gitops.read(KB, str(tmp_path))
    assert state.value("pin.kagent") == "0.11.0-gs.6"
    assert [k for k, why in state.unreadable.items() if "Helm chart" in why] == [
        f"file {tmp_path}/charts/local"
    ]


def test_relocate_moves_findings_to_the_new_pin_line() -> None:
    from upgradeplan.model import Finding, Status

    base = _state(
        agent_platform=("4.7.18", "oci.yaml:9"),
        agent_platform_connectivity=("4.7.18", "bom.yaml:9"),
    )
    head = _state(
        agent_platform=("4.8.0", "oci.yaml:9"),
        agent_platform_connectivity=("4.8.0", "bom.yaml:10"),
    )
    change = pin_changes(KB, base, head)

    def finding(status: Status, location: str) -> Finding:
        return Finding(
            "h", "t", "blocking", "skip", status, "agent-platform", "4.7.18", "4.8.0",
            location=sources.at(location) if location else None,
        )  # fmt: skip

    def at(f: Finding) -> str:
        return str(f.location) if f.location is not None else ""

    # what check does (readers.gather.moved_pins, planner.judge.relocate): a finding located
    # at a pin the change moved points at the pin's new line; nothing else moves
    moved = moved_pins(base, change.locations)
    found = [finding(*f) for f in (("applies", "bom.yaml:9"), ("may-apply", ""))]
    found.append(finding("applies", "other.yaml:3"))
    assert [at(f) for f in relocate(found, moved)] == ["bom.yaml:10", "", "other.yaml:3"]


def test_only_the_products_own_values_files_are_recognised(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "nginx.yaml": "image: {repository: nginx, tag: 1.25.3}\nargs: [--x]\n",
            "other.yaml": "image: {tag: 2.0.0}\n",
            "delegate.yaml": "delegateVersion: 0.31.2\nimage: {tag: 0.31.2}\n",
        },
    )
    facts = _facts(gitops.read(KB, str(tmp_path)))
    assert facts["pin.harness-delegate"] == ("0.31.2", f"{tmp_path}/delegate.yaml:2")
    assert facts["values.harness-delegate.delegateVersion"][0] == "0.31.2"
    assert "workload.harness-delegate.args" not in facts


def test_a_pin_on_an_unknown_release_is_bad_input_at_its_line() -> None:
    # between the releases the hand-written knowledge lists (4.7.19, 4.8.0): maybe a typo
    with pytest.raises(BadInput) as err:
        pin_changes(
            KB,
            _state(agent_platform=("4.7.18", "oci.yaml:9")),
            _state(agent_platform=("4.7.25", "oci.yaml:9")),
        )
    assert err.value.location == "oci.yaml:9"
    assert "4.7.25" in str(err.value)


def test_a_pin_newer_than_the_knowledge_is_a_target_not_bad_input() -> None:
    # released after the knowledge was written: judged ("no known hazards"), not refused
    change = pin_changes(
        KB,
        _state(agent_platform=("4.7.18", "oci.yaml:9")),
        _state(agent_platform=("9.9.9", "oci.yaml:9")),
    )
    assert [(t.product, t.version) for t in change.targets] == [("agent-platform", "9.9.9")]


OVERLAY = {
    "base/kustomization.yaml": "resources: [platform.yaml, delegate.yaml]\n",
    "base/platform.yaml": """
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: OCIRepository
        metadata: {name: agent-platform, namespace: flux-giantswarm}
        spec:
          ref:
            semver: "4.7.18"
        ---
        apiVersion: helm.toolkit.fluxcd.io/v2
        kind: HelmRelease
        metadata: {name: kagent, namespace: flux-giantswarm}
        spec:
          driftDetection:
            mode: enabled
          chart:
            spec: {chart: kagent, version: "0.11.0-gs.6"}
    """,
    "base/delegate.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: harness-delegate, namespace: harness-delegate-ng}
        spec:
          template:
            metadata:
              labels: {harness.io/name: harness-delegate}
              annotations: {a: "1"}
            spec:
              containers:
                - name: delegate
                  image: harness/delegate:0.29.0
                  args: [--instance-metadata-url=https://169.254.169.254]
    """,
    "clusters/prod/kustomization.yaml": """
        resources:
          - ../../base
        patches:
          - path: platform-version.yaml
          - target: {kind: HelmRelease, name: kagent}
            patch: |-
              - op: replace
                path: /spec/chart/spec/version
                value: 0.11.0-gs.16
        patchesStrategicMerge:
          - |-
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: harness-delegate}
            spec:
              template:
                metadata:
                  annotations: {sidecar.istio.io/inject: "false"}
                spec:
                  containers:
                    - name: delegate
                      args: [--metadata-endpoint=https://169.254.169.254]
    """,
    "clusters/prod/platform-version.yaml": """
        apiVersion: source.toolkit.fluxcd.io/v1
        kind: OCIRepository
        metadata: {name: agent-platform, namespace: flux-giantswarm}
        spec:
          ref:
            semver: "4.7.19"
    """,
}


def _overlay_facts(state: State) -> dict[str, tuple[object, str]]:
    facts = _facts(state)
    return {
        k: facts[k]
        for k in (
            "pin.agent-platform",
            "pin.kagent",
            "helmrelease.kagent.drift-detection",
            "workload.harness-delegate.args",
            "workload.harness-delegate.pod-annotations",
            "pin.harness-delegate",
        )
    }


def test_an_overlay_reads_its_base_and_applies_its_patches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _write(tmp_path, OVERLAY)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "overlay")
    monkeypatch.chdir(tmp_path)
    state = gitops.read(KB, "clusters/prod")
    facts = _overlay_facts(state)
    assert facts == {
        "pin.agent-platform": ("4.7.19", "clusters/prod/platform-version.yaml:6"),
        "pin.kagent": ("0.11.0-gs.16", "clusters/prod/kustomization.yaml:9"),
        # the patches leave drift detection alone: the base's value stands
        "helmrelease.kagent.drift-detection": ("enabled", "base/platform.yaml:13"),
        "workload.harness-delegate.args": (
            ["--metadata-endpoint=https://169.254.169.254"],
            "clusters/prod/kustomization.yaml:22",
        ),
        "workload.harness-delegate.pod-annotations": (
            {"a": "1", "sidecar.istio.io/inject": "false"},
            "clusters/prod/kustomization.yaml:18",
        ),
        "pin.harness-delegate": ("0.29.0", "base/delegate.yaml:12"),
    }
    # the same files at a git ref give the same facts
    assert _overlay_facts(gitops.read(KB, "clusters/prod", ref="HEAD")) == facts


def test_outside_a_repository_an_overlay_base_is_not_read(tmp_path: Path) -> None:
    _write(tmp_path / "plain", OVERLAY)
    state = gitops.read(KB, str(tmp_path / "plain" / "clusters" / "prod"))
    assert "outside the --gitops PATH" in state.unreadable["file ../../base"]
    # kustomize-controller could not build it: the patches have nothing to patch, and the
    # pin they would change is not read from them
    assert "pin.agent-platform" not in state


def test_substituted_and_invalid_pins(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "bom.yaml": """
                components:
                  agent-platform-connectivity:
                    versionRange: "${connectivity_version}"
            """,
            "oci.yaml": """
                apiVersion: source.toolkit.fluxcd.io/v1
                kind: OCIRepository
                metadata: {name: agent-platform}
                spec: {ref: {tag: latest}}
            """,
        },
    )
    state = gitops.read(KB, str(tmp_path))
    assert "pin.agent-platform-connectivity" not in state
    assert "post-build substitution" in state.unreadable["pin.agent-platform-connectivity"]
    assert "not a version" in state.unreadable["pin.agent-platform"]
    (tmp_path / "bom.yaml").write_text("components:\n  kagent:\n    versionRange: '>=0.11 <<1'\n")
    with pytest.raises(BadInput) as err:
        gitops.read(KB, str(tmp_path))
    assert err.value.location == f"{tmp_path}/bom.yaml:3"


def test_a_digest_pinned_image_gives_the_same_version_from_gitops_and_a_cluster(
    tmp_path: Path,
) -> None:
    from upgradeplan.readers.kube.objects import state_from_objects

    image = "harness/delegate:0.31.2@sha256:" + "ab" * 32
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "harness-delegate", "namespace": "harness"},
        "spec": {"template": {"spec": {"containers": [{"name": "delegate", "image": image}]}}},
    }
    (tmp_path / "delegate.yaml").write_text(json.dumps(deployment))
    from_files = gitops.read(KB, str(tmp_path))
    from_cluster = state_from_objects(KB, [deployment], source_prefix="cluster t")
    assert from_files.value("pin.harness-delegate") == "0.31.2"
    assert from_cluster.value("installed.harness-delegate") == "0.31.2"
    assert from_files.value("workload.harness-delegate.image") == image
    assert from_cluster.value("workload.harness-delegate.image") == image


def test_a_namespace_object_is_named_after_the_namespace_kustomize_sets(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    """kustomize's ``namespace:`` (and Flux's ``targetNamespace``, which sets it) names a
    Namespace object after it: a component's placeholder ``_`` is the app's namespace."""
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [ns.yaml]\n"
    )
    (tmp_path / "common" / "ns.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: _\n  labels: {tier: apps}\n"
    )
    app = tmp_path / "app"
    app.mkdir()
    (app / "kustomization.yaml").write_text("namespace: media\ncomponents: [../common]\n")
    (tmp_path / "kustomization.yaml").write_text("resources: [app]\n")
    state = gitops.read(kb, str(tmp_path))
    assert state.value("namespace.media.labels") == {"tier": "apps"}
    assert "namespace._.labels" not in state
    assert str(state.facts["namespace.media.labels"].source) == f"{tmp_path}/common/ns.yaml:5"
    kubectl = shutil.which("kubectl")
    if kubectl is not None:  # kustomize itself agrees (kubectl is in CI)
        import subprocess

        built = subprocess.run(
            [kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(app)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        assert "  name: media\n" in built and "name: _" not in built


def test_int_spellings_read_as_yaml_reads_them() -> None:
    """0755 is octal and 0x1f hex to YAML 1.1, as keys as well as values (a file mode map)."""
    import yaml

    from upgradeplan.readers.gitops import yamldocs

    text = "modes: {0755: a, 0x1f: b, 1_000: c, 10: d}\nvalues: [0755, 0x1f, 1_000, 10, 08]\n"
    (doc,) = yamldocs.parse(text, "modes.yaml")
    assert doc.data == yaml.load(text, Loader=yaml.CSafeLoader)
    assert doc.data["modes"] == {493: "a", 31: "b", 1000: "c", 10: "d"}
