"""Did you mean: the nearest names by edit distance (standard library only, no imports)."""

from __future__ import annotations

from collections.abc import Iterable


def distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): a swap of two letters is one."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def nearest(word: str, candidates: Iterable[str], *, limit: int = 3) -> list[str]:
    """The candidates at the smallest edit distance from ``word``, when it is close enough.

    Close enough: at most a third of the word's length (at least 1, at most 3) edits, or a
    candidate that starts with the word (``--kube`` -> ``--kubeconfig``). Only the ones at
    the best distance are returned, in the order given, so ``--too`` gives ``--to`` alone.
    """
    word_key = word.lstrip("-").lower()
    budget = max(1, min(3, len(word_key) // 3))
    scored: list[tuple[int, str]] = []
    for cand in dict.fromkeys(candidates):
        key = cand.lstrip("-").lower()
        d = distance(word_key, key)
        if d <= budget or (len(word_key) >= 3 and key.startswith(word_key)):
            scored.append((d, cand))
    if not scored:
        return []
    best = min(d for d, _ in scored)
    return [c for d, c in scored if d == best][:limit]
