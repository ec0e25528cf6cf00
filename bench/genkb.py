"""Generate a large, lint-clean knowledge base for benchmarks.

``generate(dir, products=50, releases_per_product=100, hazards=1000)`` writes
``dir/products``, ``dir/releases/<product>``, ``dir/hazards`` and ``dir/migrations`` in the
format of docs/knowledge-format.md: releases with BOMs, requirements, changes, effects, notes
and verify commands; hazards of all four scopes with nested conditions and symptoms; one
migration per ten hazards. The result is deterministic (no randomness) and loads without
errors, so the planner benchmark can reuse it.

Run as a script to write one: ``python bench/genkb.py DIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

SCOPES = ("skip", "landing", "transition", "state")
SEVERITIES = ("blocking", "warning", "notice")


def product_id(i: int) -> str:
    return f"prod-{i:02d}"


def versions(n: int) -> list[str]:
    """``n`` ascending, distinct chart versions (1.0.0, 1.0.1, … 1.0.4, 1.1.0, …)."""
    return [f"{1 + j // 25}.{(j // 5) % 5}.{j % 5}" for j in range(n)]


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _product(i: int, n_products: int) -> str:
    pid = product_id(i)
    return f"""schema_version: 1
kind: product
id: {pid}
name: {pid}
type: {"chart" if i % 5 else "agent"}
description: Generated product {i} of {n_products}.
recognise:
  helmrelease: [{pid}]
  chart: [{pid}]
  bom_component: {pid}
  image: [example/{pid}]
upgrade_doc:
  title: Upgrading {pid}
  intro: Generated for benchmarks.
"""


def _release(i: int, j: int, vs: list[str], n_products: int) -> str:
    pid = product_id(i)
    v = vs[j]
    a, b = product_id((i + 1) % n_products), product_id((i + 2) % n_products)
    upgrade_from = f'upgrade_from: ">={vs[j - 5]} <{v}"\n' if j >= 5 and j % 10 == 0 else ""
    return f"""schema_version: 1
kind: release
product: {pid}
version: {_q(v)}
date: "2026-{1 + j % 12:02d}-{1 + j % 28:02d}"
title: release {v} of {pid}
summary: |
  Release {v} moves {a} and {b} along and changes one values key.
  The second line of the summary says what an operator notices.
references: ["example/{pid}#{100 + j}", "https://example.invalid/{pid}/{v}"]
bom:
  {a}: {_q(v)}
  {b}: {_q(v)}
requires:
  {a}: ">={vs[max(0, j - 3)]}"
{upgrade_from}changes:
  - kind: values-key-added
    summary: A new values key for {pid}.
    details: {{key: feature{j}.enabled}}
  - kind: fix
    summary: A fix in {pid} {v}.
effects:
  helmrelease.{pid}.drift-detection: enabled
notes:
  - condition: "None."
    text: "The {pid} pods roll once."
    commands: ["kubectl -n {pid} rollout status deploy/{pid}"]
verify:
  - kubectl -n {pid} get deploy {pid} -o jsonpath='{{.spec.template.spec.containers[0].image}}'
"""


def _hazard(h: int, vs: list[str], n_products: int, n_migrations: int) -> str:
    i = h % n_products
    pid = product_id(i)
    other = product_id((i + 1) % n_products)
    scope = SCOPES[h % 4]
    k = 1 + (h * 7) % (len(vs) - 4)
    if scope == "skip":
        params = f'skip: {{stop: {_q(vs[k])}, to: ">={vs[k + 1]}"}}'
    elif scope == "landing":
        params = f"landing: {{range: {_q(vs[k])}}}"
    elif scope == "transition":
        params = f'transition: {{from: "<{vs[k]}", to: ">={vs[k + 2]}"}}'
    else:
        params = f'state: {{range: ">={vs[k]}"}}'
    mig = f"mig-{h % n_migrations:03d}" if n_migrations else ""
    migrations = f"migrations: [{mig}]\n" if mig else ""
    return f"""schema_version: 1
kind: hazard
id: hz-{h:04d}
title: Generated hazard {h} on {pid}
product: {pid}
severity: {SEVERITIES[h % 3]}
scope: {scope}
{params}
when:
  all:
    - version_below: {{product: {other}, version: {_q(vs[k])}}}
    - not: {{drift_detection: {{helmrelease: {pid}, mode: enabled}}}}
    - any:
        - pin_exact: {{product: {other}}}
        - object_annotation: {{kind: Harness, namespace: ns-{i}, name: h{h}, key: keep}}
        - fact_equals: {{fact: cluster.autopilot, value: true}}
consequence: |
  Generated consequence {h}: something breaks until it is fixed.
symptoms:
  - pattern: "hazard {h} (happened|occurred)"
    where: logs
    example: "hazard {h} happened"
  - pattern: "object h{h} not found"
    where: events
avoid: Stop at the release before.
recover: Re-apply the object.
recover_commands: ["kubectl -n ns-{i} annotate harness h{h} keep=true"]
{migrations}verify: ["kubectl -n ns-{i} get harness h{h}"]
references: ["example/{pid}#{h}"]
"""


def _migration(m: int, n_products: int) -> str:
    pid = product_id(m % n_products)
    return f"""schema_version: 1
kind: migration
id: mig-{m:03d}
title: Generated migration {m}
type: {"helmrelease-patch" if m % 2 else "command"}
product: {pid}
when: before
target: {{kind: HelmRelease, name: {pid}}}
params:
  namespace: {{fact: helmrelease.{pid}.namespace, placeholder: "<gitops-namespace>"}}
template: |
  # {{{{ step.product }}}} {{{{ step.from }}}} -> {{{{ step.to }}}}
  flux -n {{{{ namespace | shq }}}} reconcile helmrelease {pid} --force
"""


def generate(
    dir: str | Path,
    products: int = 50,
    releases_per_product: int = 100,
    hazards: int = 1000,
) -> Path:
    """Write a knowledge base into ``dir`` (created if needed); returns its path."""
    root = Path(dir)
    vs = versions(releases_per_product)
    n_migrations = max(1, hazards // 10) if hazards else 0
    (root / "products").mkdir(parents=True, exist_ok=True)
    (root / "hazards").mkdir(exist_ok=True)
    (root / "migrations").mkdir(exist_ok=True)
    for i in range(products):
        pid = product_id(i)
        (root / "products" / f"{pid}.yaml").write_text(_product(i, products))
        rdir = root / "releases" / pid
        rdir.mkdir(parents=True, exist_ok=True)
        for j in range(releases_per_product):
            (rdir / f"{vs[j]}.yaml").write_text(_release(i, j, vs, products))
    for h in range(hazards):
        (root / "hazards" / f"hz-{h:04d}.yaml").write_text(_hazard(h, vs, products, n_migrations))
    for m in range(n_migrations):
        (root / "migrations" / f"mig-{m:03d}.yaml").write_text(_migration(m, products))
    return root


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: python bench/genkb.py DIR  (writes a generated 5 x 400 base into DIR)")
    print(generate(sys.argv[1]))
