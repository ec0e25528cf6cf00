"""Plan latency: median of repeated in-process ``planner.plan`` runs.

Cases: reference scenarios 1 and 6 on the bundled knowledge, and a generated knowledge base
(bench/genkb.py: 50 products x 100 releases, 1,000 hazards) planned from its first release to
its last for a few products. The knowledge is loaded once per case (loading is not timed);
"first" is the first plan on a freshly loaded knowledge base (it builds the planner's
per-knowledge index), "median" the median of the following runs.

Run from the repository root against an installed package: ``python bench/plan.py [--runs
N]``; ``--growth`` runs only 5 products x 100 and x 400 releases and prints both worst medians
and the growth exponent, in wall-clock and in CPU time (the steadier figure on a shared
machine). The growth cases are planned alternately, round after round (both knowledge bases
loaded, the order reversed every other round), so that a change in the machine's speed falls
on both sizes alike, as the other benchmarks alternate the commands they compare;
``--sequential`` times each case's runs one after another instead. ``--only PRODUCT`` plans
only that generated product (no bundled scenarios) once and then ``--runs`` times: under
``valgrind --tool=callgrind``, half the difference of the instruction counts of ``--runs 3``
and ``--runs 1`` is one plan's (the steadiest figure on a shared machine). ``--bom-every K``
(with ``--only``, or with ``--growth``: prod-00 at 5 x 100 and 5 x 400) lists the product's
second BOM component at every K-th release only, so the path-aware search runs
(planner/paths.py), and prints whether it finished or stopped at its bound; ``--exhaustive``
lifts the bound. Targets: < 100 ms per plan on the generated base; at 5 x 400 at most 100 ms,
with an exponent of at most 1.3 from 100 to 400.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.builders import sometimes_listed  # type: ignore[import-not-found,unused-ignore]
from support.builders import state as make_state  # type: ignore[import-not-found,unused-ignore]

from upgradeplan import planner
from upgradeplan.kb.loader import load
from upgradeplan.model import FactValue, KnowledgeBase, Plan, State, Target
from upgradeplan.planner import paths


def scenario1() -> tuple[State, list[Target]]:
    return (
        make_state(
            {"agent-platform": "4.7.18"},
            {"agent-platform-connectivity": "4.7.18"},
            {
                "helmrelease.kagent.drift-detection": "disabled",
                "object.Harness.kagent.kagent.exists": True,
                "object.Harness.kagent.kagent.annotations": {},
            },
        ),
        [Target("agent-platform", "4.8.0")],
    )


def scenario6() -> tuple[State, list[Target]]:
    return (
        make_state(
            {"harness-delegate": "0.29.0", "harness-cd": "24.12.0", "kubernetes": "1.31.0"},
            {},
            {
                "workload.harness-delegate.namespace": "harness-delegate-ng",
                "workload.harness-delegate.name": "harness-delegate",
                "workload.harness-delegate.args": [
                    "--instance-metadata-url=https://169.254.169.254"
                ],
                "values.harness-delegate.delegateVersion": "0.29.0",
                "workload.harness-delegate.env-secrets": ["harness-api-key"],
                "secret.harness-delegate-ng.harness-api-key.type": "Opaque",
            },
        ),
        [Target("harness-delegate", "0.31.2")],
    )


def generated_case(kb: KnowledgeBase, product: str) -> tuple[State, list[Target]]:
    rels = [r.version for r in kb.releases[product]]
    others = {p: kb.releases[p][0].version for p in sorted(kb.products) if p != product}
    installed = {product: rels[0], **others}
    pins = dict(list(others.items())[:10])  # some exact pins move in lockstep
    facts: dict[str, FactValue] = {f"helmrelease.{product}.drift-detection": "disabled"}
    return make_state(installed, pins, facts), [Target(product, rels[-1])]


CPU: list[float] = []  # the CPU-time medians of the cases reported, in order
BUDGET = paths.HOP_BUDGET  # the path-aware search's bound (--exhaustive: 0, none)


def timed(kb: KnowledgeBase, state: State, targets: list[Target]) -> tuple[float, float, Plan]:
    """One plan: (wall-clock ms, CPU ms, the plan)."""
    c0, t0 = time.process_time(), time.perf_counter()
    p = planner.plan(kb, state, targets, budget=BUDGET)
    return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000, p


def measure(
    kb: KnowledgeBase, state: State, targets: list[Target], runs: int
) -> tuple[float, float, Plan]:
    """(first plan, median of ``runs`` more, the plan) in wall-clock ms; the CPU-time median
    of the same runs goes to CPU (on a shared machine it is the steadier figure)."""
    first, _cpu, plan = timed(kb, state, targets)
    times = [timed(kb, state, targets) for _ in range(runs)]
    CPU.append(statistics.median(t[1] for t in times))
    return first, statistics.median(t[0] for t in times), plan


_Case = tuple[KnowledgeBase, State, list[Target]]


def alternating(cases: list[_Case], runs: int) -> list[tuple[float, float, float, Plan]]:
    """(first plan, wall-clock median, CPU median, the plan) of every case: each case's first
    plan, then ``runs`` rounds planning every case once, the order reversed every other round
    (a slower or faster spell of the machine falls on every case alike)."""
    firsts = [timed(*case) for case in cases]
    times: list[list[tuple[float, float, Plan]]] = [[] for _ in cases]
    order = list(range(len(cases)))
    for r in range(runs):
        for k in order if r % 2 == 0 else order[::-1]:
            times[k].append(timed(*cases[k]))
    return [
        (
            first[0],
            statistics.median(t[0] for t in ts),
            statistics.median(t[1] for t in ts),
            first[2],
        )
        for first, ts in zip(firsts, times, strict=True)
    ]


def report(name: str, first: float, median: float, plan: Plan, cpu: float | None = None) -> None:
    """One case's line (``cpu``: its CPU-time median; default CPU[-1])."""
    path = "; ".join(" -> ".join(vs) for vs in plan.path.values())
    print(
        f"{name:<44} first {first:8.1f} ms  median {median:8.1f} ms  "
        f"cpu {CPU[-1] if cpu is None else cpu:8.1f} ms  "
        f"steps {len(plan.steps):3d}  verdict {plan.verdict}  path {path[:60]}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--products", type=int, default=50)
    ap.add_argument("--releases", type=int, default=100)
    ap.add_argument("--hazards", type=int, default=1000)
    ap.add_argument(
        "--growth",
        action="store_true",
        help="only the growth case: 5 products x 100 and x 400 releases (hazards = releases); "
        "prints both worst medians and the growth exponent",
    )
    ap.add_argument(
        "--sequential",
        action="store_true",
        help="with --growth: time each case's runs one after another, not alternately",
    )
    ap.add_argument("--only", metavar="PRODUCT", help="plan only this generated product")
    ap.add_argument(
        "--bom-every",
        type=int,
        metavar="K",
        help="with --only (or --growth: prod-00 only): the product's BOMs list their second "
        "component at every K-th release only (its installed version then depends on the "
        "path: planner/paths.py)",
    )
    ap.add_argument(
        "--exhaustive",
        action="store_true",
        help="with --bom-every: the path-aware search without its bound (planner.plan "
        "budget=0; may not finish)",
    )
    args = ap.parse_args()
    if args.exhaustive:
        global BUDGET
        BUDGET = 0
    if args.growth and args.bom_every:
        bom_growth(args.runs, args.bom_every, args.sequential)
        return
    if args.growth:
        growth(args.runs, args.sequential)
        return
    if args.only:
        only(args.only, args.products, args.releases, args.hazards, args.runs, args.bom_every)
        return

    bundled = load()
    cases: list[tuple[str, Callable[[], tuple[State, list[Target]]]]] = [
        ("bundled: scenario 1 (4.7.18 -> 4.8.0)", scenario1),
        ("bundled: scenario 6 (0.29.0 -> 0.31.2)", scenario6),
    ]
    for name, make in cases:
        state, targets = make()
        report(name, *measure(bundled, state, targets, args.runs))

    from genkb import generate

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        generate(tmp, args.products, args.releases, args.hazards)
        t1 = time.perf_counter()
        kb = load([tmp], bundled=False)
        t2 = time.perf_counter()
        n_rel = sum(len(r) for r in kb.releases.values())
        print(
            f"generated: {len(kb.products)} products, {n_rel} releases, {len(kb.hazards)} "
            f"hazards (write {1000 * (t1 - t0):.0f} ms, load {1000 * (t2 - t1):.0f} ms)"
        )
        worst = worst_median(kb, args.runs)
        verdict = "OK" if worst < 100 else "OVER TARGET"
        print(f"generated: worst median {worst:.1f} ms per plan (target < 100 ms): {verdict}")


def worst_median(kb: KnowledgeBase, runs: int) -> float:
    """The worst median of planning first -> last release of the first five products (the
    worst CPU-time median is CPU[-1] afterwards)."""
    medians: list[float] = []
    cpu: list[float] = []
    for product in sorted(kb.products)[:5]:
        state, targets = generated_case(kb, product)
        first, median, plan = measure(kb, state, targets, runs)
        medians.append(median)
        cpu.append(CPU[-1])
        report(f"generated: {product} first -> last release", first, median, plan)
    CPU.append(max(cpu))
    return max(medians)


def only(
    product: str, products: int, releases: int, hazards: int, runs: int, every: int | None
) -> None:
    """Plan first -> last release of one generated product ``runs`` times after a first."""
    from genkb import generate

    with tempfile.TemporaryDirectory() as tmp:
        generate(tmp, products, releases, hazards)
        kb = load([tmp], bundled=False)
        if product not in kb.products:
            sys.exit(
                f"--only {product}: not a generated product (prod-00 ... prod-{products - 1:02d})"
            )
        if every:
            kb = sometimes_listed(kb, product, every)
        state, targets = generated_case(kb, product)
        first, median, plan = measure(kb, state, targets, runs)
        report(f"generated: {product} first -> last release", first, median, plan)
        if every:
            print(f"path-aware search: {bounded(plan)}")


def bounded(plan: Plan) -> str:
    """Whether the path-aware search stopped at its bound (planner/paths.py), from the plan."""
    for step in plan.steps[:1]:
        for f in step.findings:
            if f.hazard.startswith(paths.BOUND_PREFIX):
                return f"STOPPED at its bound: {f.reason.removeprefix('may apply: ')}"
    budget = f"{BUDGET} hops" if BUDGET else "none"
    return f"finished (exact; bound {budget})"


def bom_growth(runs: int, every: int, sequential: bool = False) -> None:
    """prod-00 first -> last at 5 x 100 and 5 x 400 releases (as many hazards), its BOMs
    listing their second component at every ``every``-th release only: the CPU-time medians,
    the exponent, and whether the path-aware search finished or stopped at its bound."""
    import math

    with tempfile.TemporaryDirectory() as small, tempfile.TemporaryDirectory() as large:
        cases: list[_Case] = []
        for releases, tmp in ((100, small), (400, large)):
            kb = sometimes_listed(generated(tmp, releases), "prod-00", every)
            cases.append((kb, *generated_case(kb, "prod-00")))
        results = timings(cases, runs, sequential)
    cpu: dict[int, float] = {}
    for releases, (first, median, cpu_median, plan) in zip((100, 400), results, strict=True):
        cpu[releases] = cpu_median
        report(f"bom-every {every}: prod-00 at 5 x {releases}", first, median, plan, cpu_median)
        print(f"  path-aware search: {bounded(plan)}")
    exponent = math.log(cpu[400] / cpu[100]) / math.log(4)
    print(
        f"bom-every {every}, CPU time: median {cpu[100]:.1f} ms at 100 releases, "
        f"{cpu[400]:.1f} ms at 400; exponent {exponent:.2f}"
    )


def generated(tmp: str, releases: int) -> KnowledgeBase:
    """The generated 5-product knowledge base with ``releases`` releases and as many hazards,
    written into ``tmp`` and loaded."""
    from genkb import generate

    generate(tmp, 5, releases, releases)
    return load([tmp], bundled=False)


def timings(
    cases: list[_Case], runs: int, sequential: bool
) -> list[tuple[float, float, float, Plan]]:
    """``alternating``, or with ``sequential`` each case measured on its own in turn."""
    if not sequential:
        return alternating(cases, runs)
    out = []
    for case in cases:
        first, median, plan = measure(*case, runs)
        out.append((first, median, CPU[-1], plan))
    return out


def growth(runs: int, sequential: bool = False) -> None:
    """5 products x 100 and x 400 releases (as many hazards), each product first -> last:
    the worst medians at each size and the exponent, planned alternately (``alternating``)."""
    import math

    sizes = (100, 400)
    with tempfile.TemporaryDirectory() as small, tempfile.TemporaryDirectory() as large:
        names: list[tuple[int, str]] = []
        cases: list[_Case] = []
        for releases, tmp in zip(sizes, (small, large), strict=True):
            kb = generated(tmp, releases)
            for product in sorted(kb.products)[:5]:
                names.append((releases, product))
                cases.append((kb, *generated_case(kb, product)))
        results = timings(cases, runs, sequential)
    worst = dict.fromkeys(sizes, 0.0)
    cpu = dict.fromkeys(sizes, 0.0)
    for (releases, product), (first, median, cpu_median, plan) in zip(names, results, strict=True):
        report(f"5 x {releases}: {product} first -> last release", first, median, plan, cpu_median)
        worst[releases] = max(worst[releases], median)
        cpu[releases] = max(cpu[releases], cpu_median)
    how = "one case after another" if sequential else f"alternately, {runs} rounds"
    exponent = math.log(worst[400] / worst[100]) / math.log(4)
    print(
        f"growth ({how}): worst median {worst[100]:.1f} ms at 100 releases, "
        f"{worst[400]:.1f} ms at 400 (target <= 100 ms); exponent {exponent:.2f} "
        "(target <= 1.3)"
    )
    cpu_exponent = math.log(cpu[400] / cpu[100]) / math.log(4)
    print(
        f"growth, CPU time: worst median {cpu[100]:.1f} ms at 100 releases, {cpu[400]:.1f} ms "
        f"at 400; exponent {cpu_exponent:.2f}"
    )


if __name__ == "__main__":
    main()
