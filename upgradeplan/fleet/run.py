"""A whole fleet run: every source (local files, ``s3://`` prefixes, kubeconfig contexts,
GitOps trees) judged by one :class:`~upgradeplan.fleet.judge.Judge` and rolled up."""

from __future__ import annotations

from collections.abc import Sequence

from upgradeplan.fleet import members as found
from upgradeplan.fleet import parallel, s3
from upgradeplan.fleet.judge import Fleet, Installation, Judge, resolve_to, roll_up
from upgradeplan.model import KnowledgeBase, State

PARALLEL_MIN = 64  # local files below which one process is faster than starting workers


def judge_sources(
    kb: KnowledgeBase,
    sources: Sequence[str] = (),
    to: Sequence[str] = (),
    *,
    kubeconfig: str | None = None,
    contexts: Sequence[str] = (),
    gitops: Sequence[str] = (),
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
    stated: State | None = None,
    hazard: str | None = None,
    workers: int = 1,
) -> Fleet:
    """The whole run: local snapshot files (in ``workers`` processes when there are many),
    then ``s3://`` prefixes, kubeconfig contexts and GitOps trees, judged by one Judge."""
    to = resolve_to(kb, to, hazard)
    judge = Judge(
        kb, to=to, holds=tuple(holds), fail_on=fail_on, stated=stated, asked=hazard is not None
    )
    remote = [s for s in sources if s.startswith("s3://")]
    if remote:
        s3.require()  # exit 2 naming the extra before anything is read
    tasks = found.local_tasks([s for s in sources if not s.startswith("s3://")])
    rows: list[Installation] = []
    computed = 0
    if workers > 1 and len(tasks) >= PARALLEL_MIN:
        rows, computed = parallel.judge_tasks(judge, tasks, workers)
    else:
        for task in tasks:
            rows.extend(judge.judge(m) for m in found.task_members(task, kb))
    for url in remote:
        rows.extend(judge.judge(m) for m in s3.members(url, kb))
    contexts = list(contexts)
    if kubeconfig is not None or contexts:
        rows.extend(judge.judge(m) for m in found.context_members(kb, kubeconfig, contexts))
    rows.extend(judge.judge(m) for m in found.gitops_members(kb, gitops))
    return roll_up(
        kb,
        rows,
        to=to,
        fail_on=fail_on,
        hazard=hazard,
        judged_states=judge.computed + computed,
    )
