"""Planning across a knowledge pack's whole line: the shipped kube-prometheus-stack pack.

Loads the bundled knowledge and the pack the way ``--pack kube-prometheus-stack`` does
(:func:`upgradeplan.kb.packs.directories`, then the loader), and plans the pack's first release
to its last (1,113 releases, 49 CRD hazards with conditions on values and on the HelmRelease's
CRD policy) with the facts a GitOps read of a plain HelmRelease gives: no values set, and the
CRD policy helm-controller applies when none is written (``Create`` on install and upgrade: new
CRDs are created, existing ones left as they are). Every hazard then applies.

Each run is a fresh interpreter (``--child``): its peak resident size (``ru_maxrss``) is that
of loading and planning alone. Printed: the load, the first plan, and the median of ``--runs``
plans after it (wall-clock and CPU), the peak RSS, the steps and the verdict; then one
``upgradeplan --pack … check`` end to end, as a user runs it (``--cli``).

Run from the repository root on a plain install (``pip install .``, bytecode compiled on first
import): ``python bench/plan_pack.py [--runs N]``. Targets: a plan across the line in at most
100 ms and 150 MiB.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from plan_real import planned

PACK = "kube-prometheus-stack"
PRODUCT = "kube-prometheus-stack"


def child(runs: int) -> None:
    from upgradeplan.kb import packs
    from upgradeplan.kb.loader import load
    from upgradeplan.model import Fact, State, Target
    from upgradeplan.provenance import flag

    c0, t0 = time.process_time(), time.perf_counter()
    kb = load(packs.directories([PACK]))
    load_ms = (time.perf_counter() - t0) * 1000
    load_cpu = (time.process_time() - c0) * 1000
    line = kb.releases[PRODUCT]
    first, last = line[0].version, line[-1].version

    def fact(key: str, value: object) -> Fact:
        return Fact(key, value, flag("--fact"))

    facts = {
        f"installed.{PRODUCT}": fact(f"installed.{PRODUCT}", first),
        f"values.{PRODUCT}": fact(f"values.{PRODUCT}", {}),
        f"helmrelease.{PRODUCT}.crds": fact(
            f"helmrelease.{PRODUCT}.crds", {"install": "Create", "upgrade": "Create"}
        ),
    }
    state = State(facts=facts)
    targets = [Target(PRODUCT, last)]
    plan, (first_ms, first_cpu, med, med_cpu, rss) = planned(kb, state, targets, runs)
    print(
        f"{len(line)}\t{first}\t{last}\t{load_ms:.1f}\t{load_cpu:.1f}\t{first_ms:.1f}\t"
        f"{first_cpu:.1f}\t{med:.1f}\t{med_cpu:.1f}\t{rss:.1f}\t{len(plan.steps)}\t{plan.verdict}"
    )


def cli(first: str, last: str) -> tuple[float, int]:
    """One ``check`` across the line as a user runs it: wall ms and exit code."""
    args = [sys.executable, "-m", "upgradeplan", "--pack", PACK, "check"]
    args += ["--installed", f"{PRODUCT}={first}", "--to", f"{PRODUCT}={last}"]
    args += ["--fact", f"values.{PRODUCT}={{}}", "-o", "json"]
    args += ["--fact", f'helmrelease.{PRODUCT}.crds={{"install":"Create","upgrade":"Create"}}']
    t0 = time.perf_counter()  # run from / so the installed package is imported, not ./upgradeplan
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd="/")
    return (time.perf_counter() - t0) * 1000, done.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.runs)
        return
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--runs", str(args.runs)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    n, first, last, load, load_cpu, p1, p1_cpu, med, cpu, rss, steps, verdict = out.split("\t")
    print(
        f"{PACK} pack: {n} releases ({first} -> {last})\n"
        f"  load (bundled + pack): {float(load):7.1f} ms (cpu {float(load_cpu):6.1f})\n"
        f"  first plan:            {float(p1):7.1f} ms (cpu {float(p1_cpu):6.1f})\n"
        f"  plan, median of {args.runs}:   {float(med):7.1f} ms (cpu {float(cpu):6.1f})\n"
        f"  peak RSS:              {float(rss):7.1f} MiB\n"
        f"  steps {steps}, verdict {verdict}"
    )
    wall, code = cli(first, last)
    print(f"  upgradeplan --pack {PACK} check (end to end): {wall:.0f} ms, exit {code}")


if __name__ == "__main__":
    main()
