"""Judging many local snapshot files in several processes.

Reading a snapshot (YAML parsing above all) costs more than judging it, and one Python
process uses one core. The workers are forked from the process that has already loaded the
knowledge, so they share it without loading it again; they only read: each file's states come
back to this process, which judges them with its one cache of judgements by state (so an
installation in a state some other worker read is not planned again). Files are handed out in
order (``imap``) in small chunks and each state is judged and dropped as it arrives, so memory
stays flat however large the fleet. Where ``fork`` is not available the files are judged in
this process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence

from upgradeplan.fleet.judge import Installation, Judge
from upgradeplan.fleet.members import Member
from upgradeplan.model import KnowledgeBase

CHUNK = 8

_KB: KnowledgeBase | None = None  # set in the parent just before the workers are forked


def _read_task(path: str) -> list[Member]:
    from upgradeplan.fleet.members import task_members

    assert _KB is not None
    return list(task_members(path, _KB))


def judge_tasks(judge: Judge, tasks: Sequence[str], workers: int) -> tuple[list[Installation], int]:
    """Rows for every task (file or subdirectory), in order, and how many judgements the
    workers computed (the others were shared)."""
    global _KB
    before = judge.computed
    if "fork" not in multiprocessing.get_all_start_methods():
        rows: list[Installation] = []
        for path in tasks:
            rows.extend(_judge_one(judge, path))
        return rows, judge.computed - before
    import gc

    _KB = judge.kb
    gc.freeze()  # the workers' collector leaves the inherited objects (and their pages) alone
    try:
        context = multiprocessing.get_context("fork")
        out: list[Installation] = []
        with context.Pool(processes=workers) as pool:
            for members in pool.imap(_read_task, tasks, chunksize=CHUNK):
                out.extend(judge.judge(m) for m in members)
        return out, judge.computed - before
    finally:
        _KB = None
        gc.unfreeze()


def _judge_one(judge: Judge, path: str) -> list[Installation]:
    from upgradeplan.fleet.members import task_members

    return [judge.judge(m) for m in task_members(path, judge.kb)]
