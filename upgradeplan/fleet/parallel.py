"""Judging many local snapshot files in several processes.

Reading a snapshot (YAML parsing above all) costs more than judging it, and one Python
process uses one core. The workers are forked from the process that has already loaded the
knowledge, so they share it without loading it again. Installations in the same state share
one judgement across the workers too: a worker looks a state's digest up in a dictionary
served by a manager process before judging it, and adds what it judged. Files are handed out
in order (``imap``) in small chunks, and what comes back is small: per installation its name,
source and digest, and each judgement once per worker. Memory stays flat however large the
fleet. Where ``fork`` is not available the files are judged in this process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, MutableMapping, Sequence

from upgradeplan.fleet.judge import Installation, Judge, Judgement, row_of
from upgradeplan.fleet.members import Member, task_members

CHUNK = 8

Rows = list[tuple[str, str, bytes]]  # name, source, digest of its judgement

_JUDGE: Judge | None = None  # set in the parent just before the workers are forked
_SENT: set[bytes] = set()  # in a worker: the digests whose judgement it has sent


def _judge_task(path: str) -> tuple[Rows, dict[bytes, Judgement], int]:
    """One file's (or subdirectory's) rows, the judgements this worker has not sent yet,
    and how many judgements it computed for them."""

    judge = _JUDGE
    assert judge is not None
    before = judge.computed
    rows: Rows = []
    new: dict[bytes, Judgement] = {}
    for member in task_members(path, judge.kb):
        digest, judged = judge.judgement(member)
        rows.append((member.name, member.source, digest))
        if digest not in _SENT:
            _SENT.add(digest)
            new[digest] = judged
    return rows, new, judge.computed - before


def judge_tasks(judge: Judge, tasks: Sequence[str], workers: int) -> tuple[list[Installation], int]:
    """Rows for every task (file or subdirectory), in order, and how many judgements the
    workers computed (the others were shared)."""
    global _JUDGE
    if "fork" not in multiprocessing.get_all_start_methods():
        before = judge.computed
        return [judge.judge(m) for path in tasks for m in _members(judge, path)], (
            judge.computed - before
        )
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager:
        shared: MutableMapping[bytes, Judgement] = manager.dict()
        _JUDGE = Judge(
            judge.kb,
            to=judge.to,
            holds=judge.holds,
            fail_on=judge.fail_on,
            stated=judge.stated,
            cache_size=judge.cache_size,
            shared=shared,
            asked=judge.asked,
        )
        try:
            return _collect(context, tasks, workers)
        finally:
            _JUDGE = None


def _collect(
    context: multiprocessing.context.ForkContext, tasks: Sequence[str], workers: int
) -> tuple[list[Installation], int]:
    out: list[Installation] = []
    judged: dict[bytes, Judgement] = {}
    computed = 0
    with context.Pool(processes=workers) as pool:
        for rows, new, n in pool.imap(_judge_task, tasks, chunksize=CHUNK):
            judged.update(new)
            out.extend(row_of(name, source, judged[digest]) for name, source, digest in rows)
            computed += n
    return out, computed


def _members(judge: Judge, path: str) -> Iterator[Member]:
    return task_members(path, judge.kb)
