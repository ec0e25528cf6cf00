"""What could not be read changes the verdict only when it could hold a needed fact.

The trees are small home-ops-shaped repositories written here: a cluster Kustomization
(``kubernetes/flux/cluster/ks.yaml``) applying ``kubernetes/apps``, each app a ``ks.yaml``
and an ``app/`` directory, as the public home-ops repositories lay them out.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.cli import git

from upgradeplan.cli import cli
from upgradeplan.readers.gitops.facts import OTHER_SOURCE, REMOTE
from upgradeplan.readers.gitops.relevance import NOT_NEEDED, judged_products, needed
from upgradeplan.unreadable import PARSE_ERROR, Unreadable

S1 = Path(__file__).resolve().parent / "fixtures" / "gitops" / "s1"

CLUSTER_KS = """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cluster-apps
  namespace: flux-system
spec:
  interval: 1h
  path: ./kubernetes/apps
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
"""


def _app_ks(name: str, extra: str = "") -> str:
    return f"""\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: flux-system
spec:
  interval: 1h
  path: ./kubernetes/apps/{name}/app
  targetNamespace: {name}
  sourceRef:
    kind: GitRepository
    name: flux-system
{extra}"""


def _helmrelease(chart: str, version: str) -> str:
    return f"""\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {chart}
spec:
  interval: 1h
  chart:
    spec:
      chart: {chart}
      version: {version}
      sourceRef:
        kind: HelmRepository
        name: {chart}
"""


def home_ops(root: Path, *, crd_url: bool = True, flux_oci: bool = True) -> Path:
    """A one-cluster tree with cert-manager v1.16.0, a remote CRD URL in cloudnative-pg's
    kustomization and Flux's own controllers from the ``flux-manifests`` OCIRepository."""
    files: dict[str, str] = {
        "kubernetes/flux/cluster/ks.yaml": CLUSTER_KS,
        "kubernetes/apps/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            "  - ./cert-manager/ks.yaml\n  - ./cloudnative-pg/ks.yaml\n  - ./flux/ks.yaml\n"
        ),
        "kubernetes/apps/cert-manager/ks.yaml": _app_ks("cert-manager"),
        "kubernetes/apps/cert-manager/app/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            "resources:\n  - ./helmrelease.yaml\n"
        ),
        "kubernetes/apps/cert-manager/app/helmrelease.yaml": _helmrelease(
            "cert-manager", "v1.16.0"
        ),
        "kubernetes/apps/cloudnative-pg/ks.yaml": _app_ks("cloudnative-pg"),
        "kubernetes/apps/cloudnative-pg/app/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            + (
                "  - https://github.com/cloudnative-pg/cloudnative-pg/releases/download/"
                "v1.25.0/cnpg-crds.yaml\n"
                if crd_url
                else ""
            )
            + "  - ./helmrelease.yaml\n"
        ),
        "kubernetes/apps/cloudnative-pg/app/helmrelease.yaml": _helmrelease(
            "cloudnative-pg", "0.23.0"
        ),
        "kubernetes/apps/flux/ks.yaml": (
            """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-controllers
  namespace: flux-system
spec:
  interval: 1h
  path: ./
  sourceRef:
    kind: OCIRepository
    name: flux-manifests
"""
            if flux_oci
            else "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n"
        ),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _commit(root: Path, message: str = "base") -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def _bump(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def run(root: Path, *args: str) -> tuple[int, str]:
    old = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(cli, ["check", "--gitops", ".", *args])
    finally:
        os.chdir(old)
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.stdout


def _json(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out = run(root, *args, "-o", "json")
    return code, json.loads(out)


CERT = "kubernetes/apps/cert-manager/app/helmrelease.yaml"


# --------------------------------------------------------------------------- the rule


def _rec(source: str, cause: str, detail: str = "") -> Unreadable:
    return Unreadable(source, cause, kind="file", detail=detail, keys=(f"source {source}",))


def test_a_source_is_needed_only_when_it_could_hold_a_judged_products_fact() -> None:
    crds = _rec("https://example.com/crds/v1/all.yaml", REMOTE)
    flux = _rec("OCIRepository flux-manifests", OTHER_SOURCE)
    other = _rec("GitRepository apps", OTHER_SOURCE)
    project = _rec(
        "https://github.com/cloudnative-pg/plugin/releases/download/v1/manifest.yaml", REMOTE
    )
    broken = _rec("kubernetes/apps/x.yaml", PARSE_ERROR)
    base = _rec("https://github.com/org/fleet//clusters/base?ref=main", REMOTE)
    # nothing judged: no source is needed, but a file of the repository always is
    assert [needed(r, set()) for r in (crds, flux, other, project)] == [False] * 4
    assert needed(broken, set())
    judged = {"agent-platform", "kubernetes"}
    assert not needed(crds, judged)  # CRDs hold no HelmRelease, no values
    assert not needed(flux, judged)  # Flux's controllers: not a judged product here
    assert not needed(project, judged)  # only cloudnative-pg's own objects
    assert needed(other, judged)  # another repository could hold anything
    assert needed(base, judged)  # so could a remote kustomize base
    assert needed(flux, {*judged, "flux"})
    assert needed(crds, {"kagent-crds"})


def test_judged_products_follow_components_metas_and_requirements() -> None:
    from upgradeplan import api

    kb = api.load_kb(())
    judged = judged_products(kb, {"agent-platform-connectivity"})
    assert {"agent-platform", "agent-platform-connectivity", "kubernetes"} <= judged
    assert judged_products(kb, set()) == set()


# --------------------------------------------------------------------------- the gate


def test_a_bump_of_an_unknown_chart_beside_unread_sources_is_green_naming_the_pin(
    tmp_path: Path,
) -> None:
    root = home_ops(tmp_path)
    _commit(root)
    _bump(root, CERT, "version: v1.16.0", "version: v1.16.1")
    code, out = run(root, "--base", "HEAD")
    assert code == 0, out
    moved_at = out.index("cert-manager v1.16.0 → v1.16.1")
    assert moved_at < out.index("nothing to judge")  # named before "nothing to judge"
    assert f"({CERT}:10): not in the knowledge, no known hazards" in out
    assert out.count(NOT_NEEDED) == 2  # the CRD URL and flux-manifests, once each
    code, doc = _json(root, "--base", "HEAD")
    [result] = doc["results"]
    assert (code, doc["exit_code"], result["exit_code"]) == (0, 0, 0)
    [moved] = result["moved"]
    assert moved == {
        "name": "cert-manager",
        "object": "HelmRelease cert-manager/cert-manager",
        "before": "v1.16.0",
        "after": "v1.16.1",
        "source": f"{CERT}:10",
        "product": None,
        "judged": False,
    }
    assert result["unreadable"] == []
    # the same exit code and the same moved pin in every output
    code, github = run(root, "--base", "HEAD", "-o", "github")
    assert code == 0
    assert f"::notice file={CERT},line=10,title=upgradeplan [cluster] pin moved::" in github
    assert "pins moved: cert-manager v1.16.0 → v1.16.1" in github
    code, markdown = run(root, "--base", "HEAD", "-o", "markdown")
    assert code == 0 and "(exit 0)" in markdown
    assert "- cert-manager v1.16.0 → v1.16.1" in markdown
    code, sarif = run(root, "--base", "HEAD", "-o", "sarif")
    [sarif_run] = json.loads(sarif)["runs"]
    assert (code, sarif_run["properties"]["exitCode"]) == (0, 0)
    [note] = [r for r in sarif_run["results"] if r["ruleId"] == "pin-moved"]
    assert note["level"] == "none"
    assert "cert-manager v1.16.0 → v1.16.1: not in the knowledge" in note["message"]["text"]
    physical = note["locations"][0]["physicalLocation"]
    assert (physical["artifactLocation"]["uri"], physical["region"]["startLine"]) == (CERT, 10)


def test_unread_sources_still_count_without_a_change(tmp_path: Path) -> None:
    # as it is, any product could be in another repository: the as-is check stays careful
    root = home_ops(tmp_path)
    code, out = run(root)
    # the knowledge knows Flux: its controllers' source is needed; cloudnative-pg's CRD URL
    # holds only cloudnative-pg's objects, and is set aside
    assert code == 4, out
    assert "could not be read: kubernetes/apps/flux/ks.yaml:10" in out
    assert f"{NOT_NEEDED}: https://github.com/cloudnative-pg" in out
    code, out = run(home_ops(tmp_path / "no-flux", flux_oci=False))
    assert code == 0, out
    bigger = home_ops(tmp_path / "other")
    _bump(
        bigger,
        "kubernetes/apps/flux/ks.yaml",
        "kind: OCIRepository\n    name: flux-manifests",
        "kind: GitRepository\n    name: team-apps",
    )
    code, out = run(bigger)
    assert code == 4, out
    assert "GitRepository team-apps" in out


def _with_agent_platform(root: Path) -> None:
    """agent-platform 4.7.18 (the S1 files) as one more app of the cluster."""
    shutil.copytree(S1, root / "kubernetes/apps/agent-platform/app")
    (root / "kubernetes/apps/agent-platform/ks.yaml").write_text(
        _app_ks("agent-platform").replace(
            "  targetNamespace: agent-platform\n", "  targetNamespace: flux-giantswarm\n"
        )
    )
    index = root / "kubernetes/apps/kustomization.yaml"
    index.write_text(index.read_text() + "  - ./agent-platform/ks.yaml\n")


def test_an_unread_repository_beside_a_judged_product_keeps_the_change_undetermined(
    tmp_path: Path,
) -> None:
    root = home_ops(tmp_path)
    _with_agent_platform(root)
    _bump(
        root,
        "kubernetes/apps/flux/ks.yaml",
        "kind: OCIRepository\n    name: flux-manifests",
        "kind: GitRepository\n    name: team-apps",
    )
    _commit(root)
    _bump(
        root,
        "kubernetes/apps/agent-platform/app/agent-platform/ocirepository.yaml",
        'semver: "4.7.18"',
        'semver: "4.7.19"',
    )
    code, doc = _json(root, "--base", "HEAD")
    [result] = doc["results"]
    assert code == 4, result
    assert any("team-apps" in u["source"] for u in result["unreadable"])
    [moved] = result["moved"]
    assert (moved["name"], moved["product"], moved["after"]) == (
        "agent-platform",
        "agent-platform",
        "4.7.19",
    )
    # a BOM's versionRange is a pin too: moved with the meta chart, it is named as well
    _bump(
        root,
        "kubernetes/apps/agent-platform/app/bom.yaml",
        'versionRange: "4.7.18"',
        'versionRange: "4.7.19"',
    )
    code, doc = _json(root, "--base", "HEAD")
    moves = [(m["name"], m["before"], m["after"]) for m in doc["results"][0]["moved"]]
    assert moves == [
        ("agent-platform", "4.7.18", "4.7.19"),
        ("agent-platform-connectivity", "4.7.18", "4.7.19"),
    ]


# --------------------------------------------------------------------------- own OCI artifact


def own_artifact(root: Path) -> Path:
    """A cluster that syncs from an OCI artifact the repository's own CI pushes from
    ``kubernetes/`` (a workflow step ``flux push artifact --path=./kubernetes``), its apps
    copied into per-app ExternalArtifacts by an ArtifactGenerator at the same paths."""
    files = {
        ".github/workflows/oci.yaml": (
            "on: push\njobs:\n  push:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - run: |\n"
            '          flux push artifact "$REPO:$(git rev-parse --short HEAD)" \\\n'
            '            --path="./kubernetes" \\\n            --source="$URL"\n'
        ),
        "kubernetes/clusters/main/ks.yaml": """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cluster
  namespace: flux-system
spec:
  interval: 1h
  path: ./apps/overlays/main
  sourceRef:
    kind: OCIRepository
    name: flux-system
""",
        "kubernetes/apps/overlays/main/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
            "  - ../../base/flux-system/generator.yaml\n  - ../../base/tools/cert-manager/ks.yaml\n"
        ),
        "kubernetes/apps/base/flux-system/generator.yaml": """\
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: apps
  namespace: flux-system
spec:
  sources:
    - alias: repo
      kind: OCIRepository
      name: flux-system
  artifacts:
    - name: cert-manager
      originRevision: "@repo"
      copy:
        - from: "@repo/apps/base/tools/cert-manager/app/"
          to: "@artifact/apps/base/tools/cert-manager/app/"
""",
        "kubernetes/apps/base/tools/cert-manager/ks.yaml": """\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cert-manager
  namespace: flux-system
spec:
  interval: 1h
  path: ./apps/base/tools/cert-manager/app
  sourceRef:
    kind: ExternalArtifact
    name: cert-manager
""",
        "kubernetes/apps/base/tools/cert-manager/app/kustomization.yaml": (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            "resources:\n  - ./helmrelease.yaml\n"
        ),
        "kubernetes/apps/base/tools/cert-manager/app/helmrelease.yaml": _helmrelease(
            "cert-manager", "v1.16.0"
        ),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_an_artifact_the_repository_pushes_itself_is_read_from_its_directory(
    tmp_path: Path,
) -> None:
    from upgradeplan import api
    from upgradeplan.readers import gitops

    root = own_artifact(tmp_path)
    [read] = gitops.read_pins(api.load_kb(()), str(root))
    assert read.state.name == "main"
    assert [p.version for p in read.pins.values()] == ["v1.16.0"]
    assert read.state.unread == ()
    # without the workflow the artifact is another source: not read, and said so
    (root / ".github/workflows/oci.yaml").unlink()
    [read] = gitops.read_pins(api.load_kb(()), str(root))
    assert read.pins == {}
    assert [r.source for r in read.state.unread] == ["OCIRepository flux-system"]


def test_a_bump_inside_the_pushed_artifact_is_named(tmp_path: Path) -> None:
    root = own_artifact(tmp_path)
    _commit(root)
    _bump(
        root, "kubernetes/apps/base/tools/cert-manager/app/helmrelease.yaml", "v1.16.0", "v1.16.1"
    )
    code, doc = _json(root, "--base", "HEAD")
    [result] = doc["results"]
    assert code == 0, result
    assert [(m["name"], m["before"], m["after"]) for m in result["moved"]] == [
        ("cert-manager", "v1.16.0", "v1.16.1")
    ]


def test_an_artifact_no_workflow_pushes_is_mapped_by_the_option(tmp_path: Path) -> None:
    root = own_artifact(tmp_path)
    (root / ".github/workflows/oci.yaml").unlink()
    _commit(root)
    _bump(
        root, "kubernetes/apps/base/tools/cert-manager/app/helmrelease.yaml", "v1.16.0", "v1.16.1"
    )
    code, doc = _json(root, "--base", "HEAD")
    assert doc["results"][0].get("moved") is None  # the artifact is not read: nothing seen
    code, doc = _json(root, "--base", "HEAD", "--gitops-artifact", "flux-system=kubernetes")
    [result] = doc["results"]
    assert code == 0, result
    assert [m["after"] for m in result["moved"]] == ["v1.16.1"]
    result = CliRunner().invoke(
        cli, ["check", "--gitops", str(root), "--gitops-artifact", "flux-system"]
    )
    assert result.exit_code == 2 and "expected NAME=DIR" in result.stderr


def test_a_configmap_file_no_yaml_reader_takes_does_not_stop_the_gate(tmp_path: Path) -> None:
    # szinn/k8s-homelab's homepage config: "{{HOMEPAGE_VAR_LATITUDE}}" is a mapping used as a
    # key; kustomize puts the file in a ConfigMap as text, and no HelmRelease reads it as values
    root = home_ops(tmp_path, crd_url=False, flux_oci=False)
    app = root / "kubernetes/apps/cert-manager/app"
    (app / "widgets.yaml").write_text("- weather:\n    latitude: {{HOMEPAGE_VAR_LAT}}\n")
    (app / "kustomization.yaml").write_text(
        (app / "kustomization.yaml").read_text()
        + "configMapGenerator:\n  - name: homepage\n    files:\n      - widgets.yaml\n"
    )
    _commit(root)
    _bump(root, CERT, "version: v1.16.0", "version: v1.16.1")
    code, out = run(root, "--base", "HEAD")
    assert code == 0, out
    assert f"{NOT_NEEDED}: " in out and "widgets.yaml" in out
