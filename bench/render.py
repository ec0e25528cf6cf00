"""Rendering latency: median of repeated in-process renders on the bundled knowledge.

Cases: the whole agent-platform UPGRADE.md; the runbook, SARIF and patch set of reference
scenario 1's installation planned to 4.8.1. Planning and loading are not timed
(bench/plan.py and bench/kb_load.py time those).

Run: ``python bench/render.py [--runs N]``. Target: each render well under
50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from upgradeplan import api
from upgradeplan.patches import build as patches
from upgradeplan.readers import stated
from upgradeplan.render import markdown, sarif

S1 = [
    "helmrelease.kagent.drift-detection=disabled",
    "object.Harness.kagent.kagent.exists=true",
    "object.Harness.kagent.kagent.annotations=",
]


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm (template compilation, caches)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    kb = api.load_kb()
    state = stated.from_flags(
        kb, ["agent-platform=4.7.18"], ["agent-platform-connectivity=4.7.18"], S1
    )
    plan = api.plan(kb, state, ["agent-platform=4.8.1"]).plan
    checked = api.check(kb, state, ["agent-platform=4.8.1"])
    assert plan is not None
    cases: list[tuple[str, Callable[[], object]]] = [
        ("UPGRADE.md agent-platform (whole)", lambda: markdown.upgrade_md(kb, "agent-platform")),
        (
            "runbook S1 -> 4.8.1",
            lambda: markdown.runbook(plan, kb, state, now=api.now_actions(kb, plan, state)),
        ),
        ("SARIF S1 -> 4.8.1", lambda: sarif.dumps(sarif.log([checked], kb))),
        ("patch set S1 -> 4.8.1", lambda: patches.build(plan, state, kb=kb)),
    ]
    for label, fn in cases:
        print(f"{label:40s} {median_ms(fn, args.runs):8.2f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()
