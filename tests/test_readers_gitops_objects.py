"""Objects of the kinds the knowledge declares, read from GitOps files: core kinds (an Ingress,
a Service) as a hazard's input, each field at its file:line, never the complete list."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import check, run_stdout

PRODUCT = """schema_version: 1
kind: product
id: web
name: web
type: chart
reviewed_through: "2.0.0"
recognise: {helmrelease: [web], chart: [web]}
objects:
  Ingress: {apiVersion: networking.k8s.io/v1, plural: ingresses, fields: [spec.ingressClassName]}
  Service: {apiVersion: v1, plural: services, fields: [spec.type]}
"""

HAZARD = """schema_version: 1
kind: hazard
id: web-ingress-class-required
title: From 2.0.0 an Ingress without ingressClassName is no longer served
product: web
severity: blocking
scope: transition
transition: {from: "<2.0.0", to: ">=2.0.0"}
when:
  any_object: {kind: Ingress, field: spec.ingressClassName, empty: true}
consequence: The site is unreachable.
references: ["https://example.com/web/UPGRADE.md"]
verify: ["kubectl get ingress -A"]
"""

FILES = {
    "web/helmrelease.yaml": """apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: web}
spec:
  interval: 1h
  chart:
    spec:
      chart: web
      version: 1.0.0
      sourceRef: {kind: HelmRepository, name: web}
""",
    "web/ingress.yaml": """apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: site
  namespace: web
spec:
  rules: [{host: example.com}]
""",
    "web/service.yaml": """apiVersion: v1
kind: Service
metadata:
  name: site
  namespace: web
spec:
  type: LoadBalancer
""",
}


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    for sub in ("products", "hazards", "releases/web"):
        (root / sub).mkdir(parents=True)
    (root / "products" / "web.yaml").write_text(PRODUCT)
    (root / "hazards" / "web-ingress-class-required.yaml").write_text(HAZARD)
    for v in ("1.0.0", "2.0.0"):
        (root / "releases" / "web" / f"{v}.yaml").write_text(
            f'schema_version: 1\nkind: release\nproduct: web\nversion: "{v}"\ntitle: "web {v}"\n'
        )
    return root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "gitops"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_declared_core_kinds_are_read_with_their_lines(kb_dir: Path, tree: Path) -> None:
    code, out = run_stdout("--kb", str(kb_dir), "scan", "--gitops", str(tree))
    assert code == 0, out
    assert "object.Ingress.web.site.exists = true" in out
    assert "object.Ingress.web.site.spec.ingressClassName = null" in out
    assert "object.Service.web.site.spec.type = LoadBalancer" in out
    assert "web/service.yaml:7" in out
    assert "object.Ingress = " not in out  # the files are not the whole cluster's list


def test_a_hazard_on_a_core_kind_applies_from_the_files(kb_dir: Path, tree: Path) -> None:
    code, result = check("--kb", str(kb_dir), "--gitops", str(tree), "--to", "web=2.0.0")
    assert code == 3
    (f,) = [f for f in result["findings"] if f["hazard"] == "web-ingress-class-required"]
    assert f["status"] == "applies"


def test_with_the_class_set_it_stays_open_without_the_cluster(kb_dir: Path, tree: Path) -> None:
    ingress = tree / "web" / "ingress.yaml"
    ingress.write_text(ingress.read_text().replace("spec:\n", "spec:\n  ingressClassName: nginx\n"))
    code, result = check("--kb", str(kb_dir), "--gitops", str(tree), "--to", "web=2.0.0")
    (f,) = [f for f in result["findings"] if f["hazard"] == "web-ingress-class-required"]
    assert f["status"] == "may-apply"  # another Ingress may exist outside the files
    assert code == 4
