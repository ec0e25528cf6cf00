"""The PR gate with the checks computed from the charts: a Renovate-style bump of a chart the
knowledge does not know, its archives from a Helm repository or an OCI registry served on
127.0.0.1 by the test, or from ``--charts DIR``; every output shows the findings."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.chartrepo import Served, chart_tgz, crd, helm_repository, oci_registry
from support.cli import git
from support.sarif_schema import valid_sarif

from upgradeplan.cli import cli

V1 = crd("example.com", "widgets", "Widget", {"v1": True})
V2 = crd("example.com", "widgets", "Widget", {"v1": False, "v2": True})
OLD = chart_tgz(
    "demo", "1.0.0", app_version="1.4.0", kube_version=">=1.25.0-0",
    values={"replicaCount": 1, "image": {"tag": ""}}, crds={"w.yaml": V1},
)  # fmt: skip
NEW = chart_tgz(
    "demo", "2.0.0", app_version="2.0.1", kube_version=">=1.30.0-0",
    values={"replicas": 1, "image": {"tag": ""}}, crds={"w.yaml": V2},
)  # fmt: skip
CHARTS = {("demo", "1.0.0"): OLD, ("demo", "2.0.0"): NEW}
IDS = [
    "chart.crds-changed",
    "chart.values-key-removed",
    "chart.kube-version-raised",
    "chart.app-major-changed",
]

HELM = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {{name: demo, namespace: flux-system}}
spec:
  url: {url}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: demo, namespace: demo}}
spec:
  chart:
    spec:
      chart: demo
      version: 1.0.0
      sourceRef: {{kind: HelmRepository, name: demo, namespace: flux-system}}
  upgrade:
    crds: {policy}
  values:
    replicaCount: 3
"""

OCI = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {{name: demo, namespace: demo}}
spec:
  url: {url}
  ref:
    tag: 1.0.0
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {{name: demo, namespace: demo}}
spec:
  chartRef: {{kind: OCIRepository, name: demo}}
  values:
    replicaCount: 3
"""


def _repo(root: Path, text: str) -> Path:
    """A git repository whose HEAD pins demo 1.0.0, and whose working tree moves it to 2.0.0."""
    repo = root / "repo"
    (repo / "apps").mkdir(parents=True)
    git(repo, "init", "-q")
    release = repo / "apps" / "demo.yaml"
    release.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "demo 1.0.0")
    release.write_text(text.replace("1.0.0", "2.0.0"))
    return repo


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("UPGRADEPLAN_CHART_CHECKS", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def helm(cache: Path) -> Iterator[Served]:
    with helm_repository(CHARTS) as served:
        yield served


def _gate(repo: Path, *args: str) -> tuple[int, str]:
    old = Path.cwd()
    os.chdir(repo)
    try:
        result = CliRunner().invoke(cli, ["check", "--gitops", ".", "--base", "HEAD", *args])
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout


def _findings(out: str) -> dict[str, dict[str, Any]]:
    [one] = json.loads(out)["results"]
    return {f["hazard"]: f for f in one["findings"] if f["hazard"].startswith("chart.")}


def test_a_bump_from_a_helm_repository_gets_every_check(tmp_path: Path, helm: Served) -> None:
    repo = _repo(tmp_path, HELM.format(url=helm.url, policy="Create"))
    code, out = _gate(repo, "--fact", "kubernetes=1.29.2", "-o", "json")
    found = _findings(out)
    assert sorted(found) == sorted(IDS)
    assert {k: (f["status"], f["severity"]) for k, f in found.items()} == {
        "chart.crds-changed": ("applies", "warning"),
        "chart.values-key-removed": ("applies", "warning"),
        "chart.kube-version-raised": ("applies", "blocking"),
        "chart.app-major-changed": ("applies", "notice"),
    }
    assert code == 3  # Helm would refuse the upgrade on Kubernetes 1.29
    crds = found["chart.crds-changed"]
    assert "with spec.upgrade.crds Create: widgets.example.com stays as it is" in crds["reason"]
    assert crds["location"] == "apps/demo.yaml:14"  # the pin's line
    sources = [o["source"] for o in crds["evidence"][0]["observed"]]
    assert sources == [f"{helm.url}/charts/demo-1.0.0.tgz", f"{helm.url}/charts/demo-2.0.0.tgz"]
    assert "replicaCount (nearest: replicas)" in found["chart.values-key-removed"]["reason"]
    # a Kubernetes that satisfies the target, and a policy that replaces the CRDs
    repo2 = _repo(tmp_path / "2", HELM.format(url=helm.url, policy="CreateReplace"))
    code, out = _gate(repo2, "--fact", "kubernetes=1.31.0", "-o", "json")
    assert code == 0
    found = _findings(out)
    assert found["chart.crds-changed"]["status"] == "does-not-apply"
    assert found["chart.kube-version-raised"]["status"] == "does-not-apply"


def test_a_second_run_reads_the_cache_and_makes_no_request(tmp_path: Path, helm: Served) -> None:
    repo = _repo(tmp_path, HELM.format(url=helm.url, policy="Skip"))
    first = _gate(repo, "--fact", "kubernetes=1.31.0", "-o", "json")
    asked = list(helm.requests)
    assert asked == ["/index.yaml", "/charts/demo-1.0.0.tgz", "/charts/demo-2.0.0.tgz"]
    second = _gate(repo, "--fact", "kubernetes=1.31.0", "-o", "json")
    assert helm.requests == asked
    assert _findings(first[1]).keys() == _findings(second[1]).keys()


def test_a_bump_of_an_oci_repository_reads_the_registry(tmp_path: Path, cache: Path) -> None:
    with oci_registry(CHARTS) as served:
        ref = "oci://" + served.url.removeprefix("http://") + "/charts/demo"
        repo = _repo(tmp_path, OCI.format(url=ref))
        code, out = _gate(repo, "--fact", "kubernetes=1.31.0", "-o", "json")
        assert "/token" in served.requests
    found = _findings(out)
    assert sorted(found) == sorted(IDS)
    # an OCIRepository's HelmRelease: its values and (unset) CRD policy
    assert "replicaCount (nearest: replicas)" in found["chart.values-key-removed"]["reason"]
    assert "spec.upgrade.crds Create: widgets" in found["chart.crds-changed"]["reason"]
    sources = [o["source"] for o in found["chart.crds-changed"]["evidence"][0]["observed"]]
    assert sources == [f"{ref}:1.0.0", f"{ref}:2.0.0"]
    assert code == 0


def test_charts_from_a_folder_need_no_network(tmp_path: Path, cache: Path) -> None:
    folder = tmp_path / "charts"
    folder.mkdir()
    for (name, version), data in CHARTS.items():
        (folder / f"{name}-{version}.tgz").write_bytes(data)
    # the repository URL points nowhere: the folder is read instead
    repo = _repo(tmp_path, HELM.format(url="http://127.0.0.1:9/none", policy="Create"))
    code, out = _gate(repo, "--charts", str(folder), "--fact", "kubernetes=1.31.0", "-o", "json")
    found = _findings(out)
    assert found["chart.crds-changed"]["status"] == "applies"
    assert found["chart.crds-changed"]["evidence"][0]["observed"][1]["source"] == str(
        folder / "demo-2.0.0.tgz"
    )
    assert code == 0
    # a chart the knowledge does not know, judged by the checks computed from its charts
    [moved] = json.loads(out)["results"][0]["moved"]
    assert (moved["product"], moved["judged"]) == (None, True)


def test_an_unreadable_archive_is_named_and_gates_only_when_asked_for(
    tmp_path: Path, helm: Served
) -> None:
    helm.fail.add("/charts/demo-2.0.0.tgz")
    repo = _repo(tmp_path, HELM.format(url=helm.url, policy="Create"))
    code, out = _gate(repo, "--fact", "kubernetes=1.31.0", "-o", "json")
    found = _findings(out)
    assert sorted(found) == sorted(IDS)
    for f in found.values():
        assert (f["status"], f["severity"]) == ("may-apply", "notice")
        assert f["reason"] == (
            "the chart archive could not be read: demo 2.0.0: "
            f"{helm.url}/charts/demo-2.0.0.tgz: HTTP 500"
        )
    assert code == 0  # the default: reported, never gating
    [moved] = json.loads(out)["results"][0]["moved"]
    assert moved["judged"] is False  # its archives could not be read: nothing judged it
    code, out = _gate(
        repo, "--chart-checks", "require", "--fact", "kubernetes=1.31.0", "-o", "json"
    )
    assert code == 4
    # each check at its own severity: the kubeVersion one is blocking, so it may apply: 4
    assert {k: f["severity"] for k, f in _findings(out).items()} == {
        "chart.crds-changed": "warning",
        "chart.values-key-removed": "warning",
        "chart.kube-version-raised": "blocking",
        "chart.app-major-changed": "notice",
    }
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = _gate(repo, "--charts", str(empty), "--fact", "kubernetes=1.31.0", "-o", "json")
    assert code == 4
    assert "demo-1.0.0.tgz: no such file" in _findings(out)["chart.crds-changed"]["reason"]


def test_the_text_says_why_an_archive_was_not_read_once(tmp_path: Path, helm: Served) -> None:
    helm.fail.add("/charts/demo-2.0.0.tgz")
    repo = _repo(tmp_path, HELM.format(url=helm.url, policy="Create"))
    code, out = _gate(repo, "--fact", "kubernetes=1.31.0")
    assert code == 0, out
    why = f"demo 2.0.0: {helm.url}/charts/demo-2.0.0.tgz: HTTP 500"
    assert out.count(why) == 1, out  # one numbered note, however many findings need it
    assert "checks computed from the charts may apply: archive not read [1]" in out
    assert f"  [1] the chart archive could not be read: {why}" in out


def test_no_chart_checks_reads_nothing(tmp_path: Path, helm: Served) -> None:
    repo = _repo(tmp_path, HELM.format(url=helm.url, policy="Create"))
    for off in (["--no-chart-checks"], ["--chart-checks", "off"]):
        code, out = _gate(repo, *off, "-o", "json")
        assert code == 0 and _findings(out) == {}
    assert helm.requests == []


@pytest.mark.parametrize("output", ["text", "github", "sarif", "markdown", "yaml"])
def test_every_output_shows_the_computed_findings(
    tmp_path: Path, helm: Served, output: str
) -> None:
    repo = _repo(tmp_path, HELM.format(url=helm.url, policy="Create"))
    code, out = _gate(repo, "--fact", "kubernetes=1.31.0", "-o", output)
    assert code == 0
    for check in ("chart.crds-changed", "chart.values-key-removed", "chart.app-major-changed"):
        assert check in out, (output, check)
    if output == "text":
        verbose = _gate(repo, "--fact", "kubernetes=1.31.0", "-v")[1]
        assert "demo-2.0.0.tgz" in verbose
    if output == "sarif":  # valid SARIF 2.1.0, a result at the pin's line
        [run] = valid_sarif(out)["runs"]
        [crds] = [r for r in run["results"] if r["ruleId"].endswith("chart.crds-changed")]
        region = crds["locations"][0]["physicalLocation"]
        assert (region["artifactLocation"]["uri"], region["region"]["startLine"]) == (
            "apps/demo.yaml",
            14,
        )
    if output == "github":  # an annotation at the pin's line
        line = next(x for x in out.splitlines() if "chart.values-key-removed" in x)
        assert line.startswith("::warning file=apps/demo.yaml,line=14")


def test_a_computed_finding_can_be_accepted_like_a_hazard(tmp_path: Path, helm: Served) -> None:
    repo = _repo(tmp_path, HELM.format(url=helm.url, policy="Create"))
    args = ("--fact", "kubernetes=1.29.2", "-o", "json")
    assert _gate(repo, *args)[0] == 3
    code, out = _gate(repo, "--accept", "chart.kube-version-raised", *args)
    assert code == 0
    [one] = json.loads(out)["results"]
    assert "chart.kube-version-raised" not in _findings(out)
    assert one["verdict"] == "safe-with-actions"
