"""The one Kubernetes-object recogniser (readers/recognise.py): the same objects give the same
product and the same facts whether they are read from a live cluster (the fake API server), a
kubectl dump given as --snapshot, or GitOps files. Only where a fact was read differs (``cluster
t: HelmRelease ns/name field``, ``file:line``). Each object kind the readers share is checked: a
Deployment (a digest-pinned image, its env, tolerations and strategy), HelmReleases (chart
version; ``chartRef`` to an OCIRepository and to a HelmChart; values), a Namespace with labels,
a Secret (its type, never its data).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import yaml
from support.fakeapi import FakeAPIFactory, fake_api

from upgradeplan import api
from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers import gitops
from upgradeplan.readers.kube.objects import state_from_objects
from upgradeplan.readers.recognise import Recogniser, workload_facts

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

# ---------------------------------------------------------- a cluster read and GitOps files

DELEGATE_YAML = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: delegate
  namespace: harness-delegate-ng
spec:
  strategy:
    rollingUpdate:
      maxSurge: 1
  template:
    metadata:
      annotations:
        sidecar.istio.io/inject: "false"
    spec:
      initContainers:
        - name: init
          image: busybox:1.36
          envFrom:
            - secretRef:
                name: delegate-proxy
      containers:
        - name: delegate
          image: registry.example.org/harness/delegate:25.01.84800@sha256:0123abcd
          args: [--metadata-endpoint=https://169.254.169.254]
          env:
            - name: ACCOUNT_ID
              value: abc
            - name: DELEGATE_TOKEN
              valueFrom:
                secretKeyRef: {name: delegate-token, key: token}
      tolerations:
        - key: dedicated
          operator: Equal
          value: ci
          effect: NoSchedule
        - operator: Exists
"""


def _workload(state: State) -> dict[str, Any]:
    return {f.key: f.value for f in state if f.key.startswith("workload.")}


def test_a_deployment_gives_the_same_facts_from_a_cluster_and_from_files(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    obj = yaml.safe_load(DELEGATE_YAML)
    cluster = state_from_objects(kb, [obj], source_prefix="cluster prod")
    (tmp_path / "delegate.yaml").write_text(DELEGATE_YAML)
    files = gitops.read(kb, str(tmp_path))
    read = _workload(files)
    assert read == _workload(cluster)
    assert read["workload.harness-delegate.env-secrets"] == ["delegate-proxy", "delegate-token"]
    assert read["workload.harness-delegate.tolerations"] == [
        "dedicated:Equal:NoSchedule",
        ":Exists:",
    ]
    assert read["workload.harness-delegate.max-surge"] == "1"
    # the same fact, located each reader's way
    key = "workload.harness-delegate.env-secret-refs"
    assert (
        str(files.facts[key].source) == f"{tmp_path}/delegate.yaml:28"
    )  # the env entry that reads it
    assert str(cluster.facts[key].source).startswith("cluster prod")


def test_the_product_of_an_object_is_found_once_for_every_reader(kb: KnowledgeBase) -> None:
    shared = Recogniser(kb)
    obj = yaml.safe_load(DELEGATE_YAML)
    assert shared.workload(obj) == "harness-delegate"  # by its image repository
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = "example.org/other:1.0"
    assert shared.workload(obj) is None
    assert shared.release("agent-platform") == "agent-platform"
    assert shared.release("my-kagent", ["kagent"]) == "kagent"
    name = {f.key: f for f in workload_facts("p", {"metadata": {"name": "x"}})}["workload.p.name"]
    assert (name.key, name.value, name.path) == ("workload.p.name", "x", ("metadata", "name"))


RELEASE = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: agent-platform
  namespace: flux-giantswarm
spec:
  url: oci://gsoci.azurecr.io/charts/giantswarm/agent-platform
  ref:
    semver: "4.7.18"
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: agent-platform
  namespace: flux-giantswarm
spec:
  chartRef:
    kind: OCIRepository
    name: agent-platform
  driftDetection:
    mode: warn
"""


def test_a_helmrelease_and_its_oci_repository_give_the_same_facts_everywhere(
    tmp_path: Path, kb: KnowledgeBase
) -> None:
    objs = list(yaml.safe_load_all(RELEASE))
    cluster = state_from_objects(kb, objs, source_prefix="cluster prod")
    (tmp_path / "release.yaml").write_text(RELEASE)
    files = gitops.read(kb, str(tmp_path))
    keys = [f"helmrelease.agent-platform.{k}" for k in ("namespace", "drift-detection")]
    keys.append("pin.agent-platform")
    assert {k: files.value(k) for k in keys} == {k: cluster.value(k) for k in keys}
    assert files.value("pin.agent-platform") == "4.7.18"
    assert files.value("helmrelease.agent-platform.drift-detection") == "warn"
    # a digest pins a version neither reader can see
    digest = RELEASE.replace('semver: "4.7.18"', "digest: sha256:" + "a" * 64)
    (tmp_path / "release.yaml").write_text(digest)
    for state in (
        gitops.read(kb, str(tmp_path)),
        state_from_objects(kb, list(yaml.safe_load_all(digest)), source_prefix="cluster prod"),
    ):
        assert "pin.agent-platform" not in state
        assert "spec.ref.digest pins sha256:" in state.unreadable["pin.agent-platform"]


# --------------------------------------------- a cluster, a kubectl dump and GitOps files

IMAGE = "harness/delegate:0.31.2@sha256:" + "ab" * 32
DIGEST_DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "harness-delegate", "namespace": "harness"},
    "spec": {"template": {"spec": {"containers": [{"name": "delegate", "image": IMAGE}]}}},
}

# Our own objects, one of each kind the readers share. The release named "ai" is kagent's
# only through the OCIRepository its chartRef names; muster's chart comes from a HelmChart.
OBJECTS = """\
apiVersion: v1
kind: Namespace
metadata:
  name: kagent
  labels:
    team: ai
    pod-security.kubernetes.io/enforce: baseline
---
apiVersion: v1
kind: Secret
metadata: {name: delegate-token, namespace: harness}
type: harness.io/token
data: {token: bm90LWEtcmVhbC10b2tlbg==}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: harness-delegate, namespace: harness}
spec:
  template:
    spec:
      containers:
        - name: delegate
          image: harness/delegate
          env:
            - name: TOKEN
              valueFrom: {secretKeyRef: {name: delegate-token, key: token}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: agent-platform, namespace: flux-giantswarm}
spec:
  chart:
    spec:
      chart: agent-platform
      version: "4.7.18"
      sourceRef: {kind: HelmRepository, name: giantswarm}
  driftDetection: {mode: warn}
  upgrade: {crds: CreateReplace}
  values:
    muster:
      autoscaling:
        enabled: true
    networkPolicy: {flavor: cilium}
    replicas: 3
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ai, namespace: kagent}
spec:
  chartRef: {kind: OCIRepository, name: kagent}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: kagent, namespace: kagent}
spec:
  url: oci://gsoci.azurecr.io/charts/giantswarm/kagent
  ref: {tag: "0.6.3"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: muster, namespace: muster}
spec:
  chartRef: {kind: HelmChart, name: muster-chart}
  values: {}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: muster-chart, namespace: muster}
spec:
  chart: muster
  version: "1.2.3"
  sourceRef: {kind: HelmRepository, name: giantswarm}
"""

# facts only a cluster has (its version, its CRDs and storage classes, what it lists)
CLUSTER_ONLY = ("installed.kubernetes", "nodes.", "cluster.", "crd.", "object.", "storageclass.")


def _one(kb: KnowledgeBase, inputs: api.Inputs) -> State:
    [gathered] = api.gather(kb, inputs)
    assert gathered.state is not None, gathered.error
    return gathered.state


def _three(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp: Path, text: str
) -> tuple[State, State, State]:
    """The objects of ``text`` read from a cluster, from a kubectl dump, and from GitOps
    files (``text`` itself, so its lines are the files' lines)."""
    objects = list(yaml.safe_load_all(text))
    server = fake_api.start(objects)
    live = _one(kb, api.Inputs(kubeconfig=fake_api.kubeconfig({"t": server}), contexts=("t",)))
    dump = tmp / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    snapshot = _one(kb, api.Inputs(state_files=(str(dump),)))
    tree = tmp / "tree"
    tree.mkdir()
    (tree / "objects.yaml").write_text(text)
    return live, snapshot, _one(kb, api.Inputs(gitops=str(tree)))


def _facts(state: State, *prefixes: str) -> dict[str, object]:
    return {
        f.key: f.value
        for f in state
        if f.key.startswith(prefixes) and not f.key.startswith(CLUSTER_ONLY)
    }


def _shared(kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp: Path) -> tuple[State, ...]:
    return _three(kb, fake_api, tmp, OBJECTS)


def _line(text: str, needle: str) -> int:
    """The line of ``text`` that holds ``needle`` (the first one)."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_digest_pinned_image_gives_the_same_facts_from_all_three_readers(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    live, snapshot, gitops = _three(kb, fake_api, tmp_path, json.dumps(DIGEST_DEPLOYMENT))
    image = "workload.harness-delegate.image"
    assert live.value(image) == snapshot.value(image) == gitops.value(image) == IMAGE
    # what runs (cluster, dump) and what the files pin (GitOps): the tag, not the digest
    assert live.value("installed.harness-delegate") == "0.31.2"
    assert snapshot.value("installed.harness-delegate") == "0.31.2"
    assert gitops.value("pin.harness-delegate") == "0.31.2"
    assert _workload(snapshot) == _workload(live)


def test_every_workload_fact_is_the_same_from_gitops_files(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    live, _, gitops = _three(kb, fake_api, tmp_path, json.dumps(DIGEST_DEPLOYMENT))
    assert _workload(gitops) == _workload(live)


def test_every_fact_of_the_shared_kinds_is_the_same_from_all_three_readers(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    live, snapshot, gitops = _shared(kb, fake_api, tmp_path)
    everything = _facts(live, "")
    assert everything == _facts(snapshot, "") == _facts(gitops, "")
    kinds = ("helmrelease.", "pin.", "values.", "namespace.", "secret.", "workload.")
    assert {k.split(".", 1)[0] + "." for k in everything} >= set(kinds)


def test_a_helmrelease_chart_version_and_values_are_the_same_everywhere(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    states = _shared(kb, fake_api, tmp_path)
    for state in states:
        assert _facts(state, "helmrelease.agent-platform.", "pin.agent-platform") == {
            "helmrelease.agent-platform.namespace": "flux-giantswarm",
            "helmrelease.agent-platform.drift-detection": "warn",
            "helmrelease.agent-platform.crds": {"install": "Create", "upgrade": "CreateReplace"},
            "pin.agent-platform": "4.7.18",
        }
        # a boolean value as YAML and Helm write it ("true"; the cluster once said "True")
        assert _facts(state, "values.agent-platform.") == {
            "values.agent-platform.muster.autoscaling.enabled": "true",
            "values.agent-platform.networkPolicy.flavor": "cilium",
        }
        assert state.value("values.agent-platform") == {
            "muster": {"autoscaling": {"enabled": True}},
            "networkPolicy": {"flavor": "cilium"},
            "replicas": 3,
        }
    live, _, gitops = states
    key = "values.agent-platform.networkPolicy.flavor"
    assert str(live.facts[key].source) == (
        "cluster t: HelmRelease flux-giantswarm/agent-platform spec.values.networkPolicy.flavor"
    )
    assert str(gitops.facts[key].source).endswith(f"objects.yaml:{_line(OBJECTS, 'flavor')}")


def test_the_crd_policy_is_read_where_written_and_helm_controllers_default_where_not(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    live, snapshot, gitops = _shared(kb, fake_api, tmp_path)
    key = "helmrelease.agent-platform.crds"
    assert str(live.facts[key].source) == (
        "cluster t: HelmRelease flux-giantswarm/agent-platform"
        " spec.install.crds (unset: Create), spec.upgrade.crds CreateReplace"
    )
    assert str(gitops.facts[key].source).endswith(f"objects.yaml:{_line(OBJECTS, 'crds:')}")
    # a release that writes neither: Create on both (helm-controller's DefaultCRDPolicy)
    for state in (live, snapshot, gitops):
        assert state.value("helmrelease.muster.crds") == {"install": "Create", "upgrade": "Create"}
    assert "spec.upgrade.crds (unset: Create)" in str(live.facts["helmrelease.muster.crds"].source)


def test_a_chart_ref_pins_through_the_oci_repository_or_helm_chart_it_names(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """The GitOps reader once left a chartRef to a HelmChart unpinned (it read only
    OCIRepositories); the cluster reader once did not recognise a release by the
    OCIRepository its chartRef names (no values.kagent for the release "ai")."""
    live, snapshot, gitops = _shared(kb, fake_api, tmp_path)
    for state in (live, snapshot, gitops):
        assert state.value("pin.kagent") == "0.6.3"
        assert state.value("values.kagent") == {}
        assert state.value("pin.muster") == "1.2.3"
    assert (
        str(live.facts["pin.muster"].source)
        == "cluster t: HelmChart muster/muster-chart spec.version"
    )
    line = _line(OBJECTS, 'version: "1.2.3"')
    assert str(gitops.facts["pin.muster"].source).endswith(f"objects.yaml:{line}")


def test_a_digest_pinned_chart_source_is_unread_alike_everywhere(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """A chartRef to an OCIRepository pinned by digest: the version is not written, and every
    reader says so for the release's product (GitOps once said nothing when the
    OCIRepository's own name was not a product's)."""
    text = OBJECTS.replace('ref: {tag: "0.6.3"}', "ref: {digest: 'sha256:" + "c" * 64 + "'}")
    text = text.replace("name: kagent}", "name: kagent-chart}")  # the chartRef
    text = text.replace(
        "{name: kagent, namespace: kagent}", "{name: kagent-chart, namespace: kagent}"
    )
    text = text.replace("{name: ai,", "{name: kagent,")  # the release: kagent by its own name
    for state in _three(kb, fake_api, tmp_path, text):
        assert "pin.kagent" not in state
        assert "spec.ref.digest pins sha256:" in state.unreadable["pin.kagent"]


EDGES = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: agent-platform, namespace: flux-giantswarm}
spec:
  chart:
    spec: {chart: agent-platform, version: "*"}
  valuesFrom: []
  values:
    muster: {autoscaling: {enabled: false}}
    networkPolicy: {flavor: 1.10}
"""


def test_any_version_no_values_from_and_a_number_read_alike_everywhere(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """``version: "*"`` is no pin (GitOps once pinned ``*``); an empty ``valuesFrom`` merges
    nothing (the cluster once left ``values.<product>`` unknown); an unquoted ``1.10`` is the
    number the chart is given, ``1.1`` (GitOps once read it as written)."""
    states = _three(kb, fake_api, tmp_path, EDGES)
    for state in states:
        assert state.value("pin.agent-platform", "unread") is None
        assert _facts(state, "values.agent-platform.") == {
            "values.agent-platform.muster.autoscaling.enabled": "false",
            "values.agent-platform.networkPolicy.flavor": "1.1",
        }
        assert state.value("values.agent-platform", "unread") == {
            "muster": {"autoscaling": {"enabled": False}},
            "networkPolicy": {"flavor": 1.1},
        }
    assert _facts(states[0], "") == _facts(states[1], "") == _facts(states[2], "")
    said = "HelmRelease flux-giantswarm/agent-platform spec.chart.spec.version (any version)"
    assert str(states[0].facts["pin.agent-platform"].source) == f"cluster t: {said}"
    line = _line(EDGES, "version")
    assert str(states[2].facts["pin.agent-platform"].source).endswith(f"objects.yaml:{line}")


UPSTREAM = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: kagent, namespace: kagent}
spec:
  url: oci://registry.example.org/upstream/charts/kagent
  ref: {tag: "0.9.4"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kagent, namespace: kagent}
spec:
  chartRef: {kind: OCIRepository, name: kagent}
  driftDetection: {mode: enabled}
  values: {replicas: 2}
"""


def test_a_release_at_an_unknown_place_may_be_the_product_from_any_reader(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """A release named kagent whose chart comes from a place the kagent product does not list
    is not dismissed as another chart: its version is unknown (so kagent's findings may
    apply), and every reader names the object and the place."""
    states = _three(kb, fake_api, tmp_path, UPSTREAM)
    for state in states:
        assert not _facts(state, "pin.kagent", "installed.kagent", "values.kagent")
        assert not _facts(state, "helmrelease.kagent.")  # kept apart, under its source
        kept = "helmrelease.kagent@oci://registry.example.org/upstream/charts/kagent"
        assert state.value(kept + ".drift-detection") == "enabled"
        why = state.unreadable["pin.kagent"]
        assert "oci://registry.example.org/upstream/charts/kagent" in why
        assert "may be kagent" in why and "another chart" not in why
        assert "oci://ghcr.io/giantswarm/kagent/helm/kagent" in why  # what it does list
        assert "installed.kagent" in state.unreadable
    assert _facts(states[0], "") == _facts(states[1], "") == _facts(states[2], "")


REAL_KAGENT = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: kagent, namespace: flux-giantswarm}
spec:
  url: oci://ghcr.io/giantswarm/kagent/helm/kagent
  ref: {semver: "0.11.0-gs.14"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kagent, namespace: flux-giantswarm}
spec:
  chartRef: {kind: OCIRepository, name: kagent}
  targetNamespace: kagent
status:
  history:
    - {chartName: kagent, chartVersion: "0.11.0-gs.14", status: deployed}
"""


def test_the_real_4x_kagent_location_is_kagent_from_any_reader(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """UPGRADE.md's 3.x → 4.0 section: the 4.x kagent chart comes from
    oci://ghcr.io/giantswarm/kagent/helm; an OCIRepository there is kagent (it was once
    dismissed as another chart, and every kagent hazard went quiet)."""
    live, snapshot, gitops = _three(kb, fake_api, tmp_path, REAL_KAGENT)
    for state in (live, snapshot, gitops):
        assert state.value("pin.kagent") == "0.11.0-gs.14"
        assert "pin.kagent" not in state.unreadable
    assert live.value("installed.kagent") == snapshot.value("installed.kagent") == "0.11.0-gs.14"


def test_the_0x_wrapper_location_is_kagent_too(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """The 3.x meta chart took the 0.x wrapper from gsoci: the same product, another era."""
    text = REAL_KAGENT.replace(
        "oci://ghcr.io/giantswarm/kagent/helm/kagent",
        "oci://gsoci.azurecr.io/charts/giantswarm/kagent",
    ).replace("0.11.0-gs.14", "0.1.33")
    for state in _three(kb, fake_api, tmp_path, text):
        assert state.value("pin.kagent") == "0.1.33"


def test_a_namespace_and_a_secret_give_the_same_facts_and_no_secret_data(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    for state in _shared(kb, fake_api, tmp_path):
        assert _facts(state, "namespace.", "secret.") == {
            "namespace.kagent.labels": {
                "pod-security.kubernetes.io/enforce": "baseline",
                "team": "ai",
            },
            "secret.harness.delegate-token.type": "harness.io/token",
        }
        shown = json.dumps({f.key: [f.value, str(f.source)] for f in state})
        assert "bm90LWEtcmVhbC10b2tlbg" not in shown and "not-a-real-token" not in shown


# Fields of an object the recogniser derives facts from: the GitOps reader reads them only
# through readers/recognise (it resolves references between objects, merges valuesFrom and
# renders kustomize, but derives no fact of an object itself).
DERIVED_FIELDS = (
    ("spec", "chart", "spec", "version"),
    ("spec", "chartRef"),
    ("spec", "driftDetection"),
    ("spec", "install", "crds"),
    ("spec", "upgrade", "crds"),
    ("spec", "ref"),
    ("spec", "version"),
    ("spec", "strategy"),
    ("spec", "volumeClaimTemplates"),
    ("spec", "template", "metadata"),
    ("spec", "template", "spec", "containers"),
    ("spec", "template", "spec", "initContainers"),
    ("spec", "template", "spec", "tolerations"),
    ("spec", "template", "spec", "volumes"),
    ("metadata", "labels"),
    ("status",),
    ("type",),
)


def _field_reads(source: str) -> list[tuple[int, tuple[str, ...]]]:
    """(line, path) of every call whose leading arguments are a path of string constants
    (``v.text("spec", "chart", "spec", "version")``, ``_get(obj, "spec", "chartRef")``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        args = list(node.args)
        if args and not isinstance(args[0], ast.Constant):
            args = args[1:]  # a helper's object argument: _get(obj, "spec", …)
        path: list[str] = []
        for arg in args:
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                break
            path.append(arg.value)
        if path:
            out.append((node.lineno, tuple(path)))
    return out


def _derivations(package: Path) -> list[str]:
    found = []
    for module in sorted(package.glob("*.py")):
        for line, path in _field_reads(module.read_text(encoding="utf-8")):
            if any(path[: len(field)] == field for field in DERIVED_FIELDS):
                found.append(f"{module.name}:{line} reads {'.'.join(path)}")
    return found


def test_the_gitops_reader_derives_no_object_fact_of_its_own() -> None:
    gitops = Path(__file__).resolve().parent.parent / "upgradeplan" / "readers" / "gitops"
    assert _derivations(gitops) == []
    # the check sees such a read (what the GitOps reader once had)
    sample = 'def f(v):\n    return v.text("spec", "chart", "spec", "version")\n'
    assert _field_reads(sample) == [(2, ("spec", "chart", "spec", "version"))]


PINS_APART = (
    REAL_KAGENT
    + """\
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: substrate, namespace: flux-giantswarm}
spec:
  url: oci://ghcr.io/giantswarm/substrate/helm/substrate
  ref: {semver: "0.0.27-gs.9"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: agent-platform, namespace: flux-giantswarm}
spec:
  chart:
    spec: {chart: agent-platform, version: "4.15.5"}
status:
  history:
    - {chartName: agent-platform, chartVersion: "4.15.5", status: deployed}
"""
)


def _status(kb: KnowledgeBase, state: State, hazard: str) -> str:
    res = api.check(kb, state)
    return next(f.status for f in res.findings if f.hazard == hazard)


def test_a_real_location_kagent_pin_lets_the_kagent_hazards_fire_from_any_reader(
    kb: KnowledgeBase, fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    """kagent pinned at 0.11.0-gs.14 (built against Substrate 0.0.30) from its real place, under
    a Substrate pin of 0.0.27-gs.9 (UPGRADE.md, the Substrate worker section): the hazard
    applies whether the objects are read from a cluster, a dump or GitOps files; from an
    unknown place it may apply, never silently not."""
    (tmp_path / "real").mkdir()
    (tmp_path / "elsewhere").mkdir()
    for state in _three(kb, fake_api, tmp_path / "real", PINS_APART):
        assert _status(kb, state, "kagent-substrate-pins-apart") == "applies"
    elsewhere = PINS_APART.replace(
        "oci://ghcr.io/giantswarm/kagent/helm/kagent", "oci://mirror.example.org/kagent"
    )
    for state in _three(kb, fake_api, tmp_path / "elsewhere", elsewhere):
        assert _status(kb, state, "kagent-substrate-pins-apart") == "may-apply"
