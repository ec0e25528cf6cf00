"""Planning on a real chart line: the kube-prometheus-stack release history.

The data file ``bench/data/kube-prometheus-stack.tsv`` lists every chart tag of
prometheus-community/helm-charts (``kube-prometheus-stack-*``: version and tag date) and, for
each section of the chart's UPGRADE.md that asks for the Prometheus Operator CRDs to be applied
by hand before the upgrade, a one-line summary in our own words with the section it comes from.
The bench writes a knowledge directory from it: one release file per tag, one transition
hazard per CRD section (``<N.0.0`` -> ``>=N.0.0``) whose condition reads the chart's values
(it applies unless ``crds.upgradeJob.enabled`` is true), and plans the first release to the
last of the line and of its prefixes, with the values stated (the job off: every hazard
applies).

Each size is planned in a fresh interpreter (``--child``), so the peak resident size it reports
(``ru_maxrss``) is that of loading and planning that line alone; the times are the first plan
after loading (it builds the planner's per-knowledge hazard index as well) and the median of
``--runs`` plans after it, in wall-clock and in CPU time (the steadier figure on a shared
machine). The growth exponent is log(t_full / t_100) / log(n_full / 100), of the first plan
and of the median; linear growth is 1.0.

Run from the repository root: ``python bench/plan_real.py [--runs N]``. ``--derive CLONE``
rewrites the data file from a clone of prometheus-community/helm-charts (``git for-each-ref``
on its tags and ``git show HEAD:charts/kube-prometheus-stack/UPGRADE.md``). Targets: the full
line in at most 100 ms and 150 MiB, the first plan included, growing no faster than linearly
from 100 releases.
"""

from __future__ import annotations

import argparse
import math
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from upgradeplan.model import KnowledgeBase, Plan, State, Target

DATA = Path(__file__).resolve().parent / "data" / "kube-prometheus-stack.tsv"
PRODUCT = "kube-prometheus-stack"
UPGRADE_MD = "charts/kube-prometheus-stack/UPGRADE.md"
_SECTION = re.compile(r"^## From (\d+)\.x to (\d+)\.x\s*$")
_OPERATOR = re.compile(r"Prometheus-Operator to (v[0-9.]+)")


def derive(clone: Path) -> str:
    """The data file's text from a clone of prometheus-community/helm-charts."""
    tags = subprocess.run(
        [
            "git",
            "-C",
            str(clone),
            "for-each-ref",
            "--sort=creatordate",
            "--format=%(refname:short) %(creatordate:short)",
            f"refs/tags/{PRODUCT}-*",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    rows = []
    for line in tags:
        if line.strip():
            tag, date = line.split()
            rows.append((tag[len(PRODUCT) + 1 :], date))
    rows.sort(key=lambda r: tuple(int(p) for p in r[0].split(".")))
    doc = subprocess.run(
        ["git", "-C", str(clone), "show", f"HEAD:{UPGRADE_MD}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    out = ["# kube-prometheus-stack: chart tags of prometheus-community/helm-charts and the"]
    out.append("# UPGRADE.md sections that ask for the CRDs to be applied before upgrading.")
    out += [f"release\t{v}\t{d}" for v, d in rows]
    sections: list[tuple[int, int, list[str]]] = []
    for n, line in enumerate(doc, 1):
        m = _SECTION.match(line)
        if m:
            sections.append((n, int(m.group(2)), []))
        elif sections:
            sections[-1][2].append(line)
    for n, major, body in sections:
        text = "\n".join(body)
        if "monitoring.coreos.com_" not in text:
            continue
        op = _OPERATOR.search(text)
        what = f"the Prometheus Operator {op.group(1)} CRDs" if op else "the chart's new CRDs"
        summary = f"Apply {what} by hand before moving to {major}.x; Helm does not upgrade CRDs."
        where = f"UPGRADE.md:{n} From {major - 1}.x to {major}.x"
        out.append(f"hazard\t{major}.0.0\t{where}\t{summary}")
    return "\n".join(out) + "\n"


def read_data() -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """(releases as (version, date), hazards as (crossed version, section, summary))."""
    releases, hazards = [], []
    for line in DATA.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        kind, *cols = line.split("\t")
        if kind == "release":
            releases.append((cols[0], cols[1]))
        else:
            hazards.append((cols[0], cols[1], cols[2]))
    return releases, hazards


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_kb(root: Path, size: int) -> list[str]:
    """A knowledge directory of the first ``size`` releases and the hazards they cross;
    returns the versions written."""
    releases, hazards = read_data()
    releases = releases[:size]
    (root / "products").mkdir(parents=True)
    (root / "hazards").mkdir()
    (root / "releases" / PRODUCT).mkdir(parents=True)
    (root / "products" / f"{PRODUCT}.yaml").write_text(
        f"""schema_version: 1
kind: product
id: {PRODUCT}
name: {PRODUCT}
type: chart
description: The kube-prometheus-stack chart (bench data).
recognise:
  helmrelease: [{PRODUCT}]
  chart: [{PRODUCT}]
"""
    )
    for v, d in releases:
        (root / "releases" / PRODUCT / f"{v}.yaml").write_text(
            f"schema_version: 1\nkind: release\nproduct: {PRODUCT}\nversion: {_q(v)}\n"
            f"date: {_q(d)}\ntitle: {PRODUCT} {v}\n"
        )
    last = tuple(int(p) for p in releases[-1][0].split("."))
    for crossed, where, summary in hazards:
        if tuple(int(p) for p in crossed.split(".")) > last:
            continue
        hid = f"kps-crds-{crossed.split('.')[0]}"
        (root / "hazards" / f"{hid}.yaml").write_text(
            f"""schema_version: 1
kind: hazard
id: {hid}
title: {_q(summary)}
product: {PRODUCT}
severity: warning
scope: transition
transition: {{from: "<{crossed}", to: ">={crossed}"}}
when:
  not: {{value_equals: {{product: {PRODUCT}, key: crds.upgradeJob.enabled, value: true}}}}
description: {_q(summary + " (" + where + ")")}
consequence: The operator runs against CRDs older than it expects.
references: ["https://github.com/prometheus-community/helm-charts/blob/main/{UPGRADE_MD}"]
"""
        )
    return [v for v, _ in releases]


def child(size: int, runs: int) -> None:
    """Plan the first ``size`` releases' first -> last in this interpreter and print one line:
    size, first ms and its CPU ms, median ms and its CPU ms, peak RSS MiB, steps, verdict."""
    from upgradeplan.kb.loader import load
    from upgradeplan.model import Fact, State, Target
    from upgradeplan.provenance import flag

    with tempfile.TemporaryDirectory() as tmp:
        versions = write_kb(Path(tmp) / "kb", size)
        kb = load([Path(tmp) / "kb"], bundled=False)
    facts = {
        f"installed.{PRODUCT}": Fact(f"installed.{PRODUCT}", versions[0], flag("--installed")),
        f"values.{PRODUCT}.crds.upgradeJob.enabled": Fact(
            f"values.{PRODUCT}.crds.upgradeJob.enabled", False, flag("--fact")
        ),
    }
    state = State(facts=facts)
    targets = [Target(PRODUCT, versions[-1])]
    plan, (first, first_cpu, med, med_cpu, rss) = planned(kb, state, targets, runs)
    print(
        f"{size}\t{first:.1f}\t{first_cpu:.1f}\t{med:.1f}\t{med_cpu:.1f}\t{rss:.1f}\t"
        f"{len(plan.steps)}\t"
        f"{plan.verdict}"
    )


def planned(
    kb: KnowledgeBase, state: State, targets: list[Target], runs: int
) -> tuple[Plan, tuple[float, float, float, float, float]]:
    """Plan ``runs`` + 1 times in this interpreter: the plan, and the first plan's ms and CPU
    ms, the median ms and CPU ms of the runs after it (the first's when ``runs`` is 0), and the
    peak RSS in MiB (bench/plan_pack.py times its pack the same way)."""
    from upgradeplan import planner

    times, cpu, plan = [], [], None
    for _ in range(runs + 1):
        c0, t0 = time.process_time(), time.perf_counter()
        plan = planner.plan(kb, state, targets)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    assert plan is not None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    med = statistics.median(times[1:]) if runs else times[0]
    med_cpu = statistics.median(cpu[1:]) if runs else cpu[0]
    return plan, (times[0], cpu[0], med, med_cpu, rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="100,200,400,800,0", help="0: the whole line")
    ap.add_argument("--derive", type=Path, metavar="CLONE")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.derive:
        DATA.write_text(derive(args.derive))
        print(DATA)
        return
    if args.child is not None:
        child(args.child, args.runs)
        return
    n_all = len(read_data()[0])
    results = []
    for size in (int(s) or n_all for s in args.sizes.split(",")):
        line = subprocess.run(
            [sys.executable, __file__, "--child", str(size), "--runs", str(args.runs)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split("\t")
        n, first, first_cpu, med, cpu, rss, steps, verdict = line
        results.append((int(n), float(med), float(cpu), float(first_cpu)))
        print(
            f"{PRODUCT} first {n:>5} releases: first {float(first):7.1f} ms (cpu "
            f"{float(first_cpu):6.1f})  median {float(med):7.1f} ms (cpu {float(cpu):6.1f})  "
            f"peak RSS {float(rss):6.1f} MiB  "
            f"steps {steps}  verdict {verdict.strip()}"
        )
    (n0, t0, c0, f0), (n1, t1, c1, f1) = results[0], results[-1]
    if n1 > n0 and t0 > 0 and c0 > 0 and f0 > 0:
        grow = math.log(n1 / n0)
        print(
            f"growth exponent {n0} -> {n1}: wall-clock {math.log(t1 / t0) / grow:.2f}, "
            f"CPU {math.log(c1 / c0) / grow:.2f}, first plan's CPU {math.log(f1 / f0) / grow:.2f}"
        )


if __name__ == "__main__":
    main()
