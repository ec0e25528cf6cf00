"""Judging many local snapshot files in several processes.

Reading a snapshot (YAML parsing above all) costs more than judging it, and one Python
process uses one core. The workers are forked from the process that has already loaded the
knowledge, so they share it without loading it again; each keeps its own cache of judgements
by state. Files are handed out in order (``imap``) in small chunks and only the rows come
back, so memory stays flat however large the fleet. Where ``fork`` is not available the files
are judged in this process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence

from upgradeplan.fleet.judge import Installation, Judge

CHUNK = 8

_JUDGE: Judge | None = None  # set in the parent just before the workers are forked


def _judge_task(path: str) -> tuple[list[Installation], int]:
    from upgradeplan.fleet.members import task_members

    judge = _JUDGE
    assert judge is not None
    before = judge.computed
    rows = [judge.judge(m) for m in task_members(path, judge.kb)]
    return rows, judge.computed - before


def judge_tasks(judge: Judge, tasks: Sequence[str], workers: int) -> tuple[list[Installation], int]:
    """Rows for every task (file or subdirectory), in order, and how many judgements the
    workers computed (the others were shared)."""
    global _JUDGE
    if "fork" not in multiprocessing.get_all_start_methods():
        rows: list[Installation] = []
        before = judge.computed
        for path in tasks:
            rows.extend(_judge_one(judge, path))
        return rows, judge.computed - before
    _JUDGE = judge
    try:
        context = multiprocessing.get_context("fork")
        out: list[Installation] = []
        computed = 0
        with context.Pool(processes=workers) as pool:
            for rows, n in pool.imap(_judge_task, tasks, chunksize=CHUNK):
                out.extend(rows)
                computed += n
        return out, computed
    finally:
        _JUDGE = None


def _judge_one(judge: Judge, path: str) -> list[Installation]:
    from upgradeplan.fleet.members import task_members

    return [judge.judge(m) for m in task_members(path, judge.kb)]
