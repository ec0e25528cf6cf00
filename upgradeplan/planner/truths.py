"""Truths of hazard conditions during the search, each predicate evaluated once per facts read.

Many hazards share predicates (the same drift-detection or pin test, the same plain fact), and
along a window of releases most facts keep their value from one state to the next. So the
truth of a predicate is cached by its content (name and arguments) and the values (scalars;
else the identity) of the facts it reads (``conditions.facts_read``), and a condition tree is
combined from those truths with Kleene logic. The combination does not depend on the order
of the children (``all`` is FALSE when one child is, else UNKNOWN when one is, else TRUE;
``any`` alike), so the children whose truth is already known are looked at first: one
deciding child spares the others.

Only conditions without ``$from`` / ``$to`` and without templated fact keys are evaluated here
(the caller checks); the result is the one ``conditions.truth`` gives.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from upgradeplan import conditions
from upgradeplan.conditions.vocabulary import VALUE_CLASS
from upgradeplan.model import Condition, KnowledgeBase, State, Truth
from upgradeplan.versions import parse_version

if TYPE_CHECKING:
    from upgradeplan.planner.search import Search

_Pred = tuple[Any, tuple[str, ...]]  # (content key, fact keys read)

# per predicate node (by identity, the node kept so its id is not reused): its _Pred
_PREDS: dict[int, tuple[Condition, _Pred]] = {}


def _pred_of(cond: Condition) -> _Pred:
    hit = _PREDS.get(id(cond))
    if hit is None or hit[0] is not cond:
        if len(_PREDS) > 200_000:
            _PREDS.clear()
        content = (cond.predicate, repr(sorted(cond.args.items())))
        hit = _PREDS[id(cond)] = (cond, (content, tuple(conditions.facts_read(cond))))
    return hit[1]


_SCALARS = frozenset({str, bool, int, float})

# Kleene truths as integers inside the sweep: all = min, any = max, not = 2 - x
_RANK = {Truth.FALSE: 0, Truth.UNKNOWN: 1, Truth.TRUE: 2}
_TRUTH = (Truth.FALSE, Truth.UNKNOWN, Truth.TRUE)


def _key(content: Any, read: Sequence[Any]) -> tuple[Any, ...]:
    """The cache key of a predicate on the facts it read: per fact the class of its value
    where the predicate's truth depends on that alone (``vocabulary.VALUE_CLASS``: a pin moved
    from one exact version to another is not judged again), else its value where that is a
    scalar (a predicate's truth is a function of the values it reads), else the fact's
    identity; None: not set."""
    out: list[Any] = [content]
    classify = VALUE_CLASS.get(content[0])
    for f in read:
        if f is None:
            out.append(None)
        elif classify is not None:
            out.append(("class", classify(f.value)))
        else:
            v = f.value
            out.append((type(v), v) if v is None or type(v) in _SCALARS else id(f))
    return tuple(out)


class Truths:
    """Kleene truth of conditions on states, predicates cached by content and the values (or
    the identity) of the facts read."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        # (content, *per fact read: its value or id) -> (truth, the facts read: kept alive so
        # an id is never reused)
        self._cache: dict[tuple[Any, ...], tuple[Truth, tuple[Any, ...]]] = {}
        self._ranks: dict[tuple[Any, ...], int] = {}  # the same keys: the truth as an integer

    def _pred(self, cond: Condition) -> _Pred:
        return _pred_of(cond)

    def known(self, cond: Condition, state: State) -> Truth | None:
        """The cached truth of a predicate (or its negation) on ``state`` (None: not known)."""
        if cond.op == "not":
            inner = self.known(cond.children[0], state)
            return None if inner is None else ~inner
        if cond.op != "pred":
            return None
        content, keys = self._pred(cond)
        facts = state.facts
        hit = self._cache.get(_key(content, [facts.get(k) for k in keys]))
        return None if hit is None else hit[0]

    def rank(self, cond: Condition, content: Any, keys: Sequence[str], state: State) -> int:
        """The truth of predicate ``cond`` (content key and fact keys given) on ``state`` as
        an integer of _RANK (FALSE 0, UNKNOWN 1, TRUE 2)."""
        read = tuple(map(state.facts.get, keys))
        ck = _key(content, read)
        hit = self._ranks.get(ck)
        if hit is None:
            found = self._cache.get(ck)
            if found is None:
                found = self._cache[ck] = (conditions.truth(cond, state, self.kb), read)
            hit = self._ranks[ck] = _RANK[found[0]]
        return hit

    def of(self, cond: Condition, state: State) -> Truth:
        """The truth of ``cond`` on ``state`` (what ``conditions.truth`` gives)."""
        if cond.op == "pred":
            content, keys = self._pred(cond)
            read = tuple(state.facts.get(k) for k in keys)
            ck = _key(content, read)
            hit = self._cache.get(ck)
            if hit is None:
                hit = self._cache[ck] = (conditions.truth(cond, state, self.kb), read)
            return hit[0]
        if cond.op == "not":
            return ~self.of(cond.children[0], state)
        return self._combine(cond, state)

    def _combine(self, cond: Condition, state: State) -> Truth:
        stop = Truth.FALSE if cond.op == "all" else Truth.TRUE
        rest: list[Condition] = []
        unknown = False
        for child in cond.children:  # first the predicates already known
            t = self.known(child, state)
            if t is None:
                rest.append(child)
            elif t is stop:
                return stop
            else:
                unknown = unknown or t is Truth.UNKNOWN
        for child in rest:
            t = self.of(child, state)
            if t is stop:
                return stop
            unknown = unknown or t is Truth.UNKNOWN
        if unknown:
            return Truth.UNKNOWN
        return Truth.TRUE if cond.op == "all" else Truth.FALSE


# predicates whose truth on a version fact only moves one way as the version rises
# (``version_below``: TRUE below the bound, then FALSE; ``version_at_least``: the reverse)
MONOTONE = frozenset({"version_below", "version_at_least"})


class Sweep:
    """Truths of hazards on each state of a window, found by sweeping the window once.

    ``states[i]`` is ``states[i - 1]`` with the facts of ``changed[i - 1]`` set. A predicate's
    truth can only change where one of the facts it reads is set, and a hazard's only where
    one of its predicates' truths changes; so each predicate is evaluated again only where a
    fact it reads is set, and each hazard only where one of its predicates changed. A
    predicate of MONOTONE over a fact whose versions rise strictly through the window changes
    at most once: that release is found by bisection. ``truth(i, hid)`` is a hazard's truth on
    ``states[i]``: ``first`` holds every hazard's truth on the first state, and a hazard whose
    truth changes somewhere keeps the states where it changes and its truth from each on (a
    copy of every truth at every state where one changed was a third of a 400-release plan's
    memory, for a few hundred changes).

    Inside the sweep truths are the integers of ``_RANK`` (FALSE 0, UNKNOWN 1, TRUE 2), so
    Kleene ``all`` is ``min``, ``any`` is ``max`` and ``not`` is ``2 - x``, and each hazard's
    condition is folded by a function compiled once per condition node (``_fold_of``).
    """

    def __init__(
        self,
        truths: Truths,
        states: list[State],
        changed: list[frozenset[str]],
        hazards: list[tuple[str, Condition]],
    ) -> None:
        self.t, self.states = truths, states
        self.first: dict[str, Truth] = {}  # every hazard's truth on states[0]
        # per hazard whose truth changes: the states where it does, ascending, and its truth
        # on each of them (and on the states up to the next)
        self._flips: dict[str, tuple[list[int], list[Truth]]] = {}
        # per state after the first: the hazards whose truth may differ from the state before
        # (every hazard whose truth changed there is in it); touched[0] is empty
        self.touched: list[frozenset[str]] = []
        self._rises: dict[str, bool] = {}
        self._marks: dict[str, tuple[list[int], list[Any]]] = {}
        preds: dict[Any, tuple[Condition, tuple[str, ...]]] = {}
        users: dict[Any, list[str]] = {}
        folds: dict[str, Callable[[dict[Any, int]], int]] = {}
        for hid, cond in hazards:
            contents, fold = _fold_of(cond)
            folds[hid] = fold
            for p, content in contents:
                if content not in preds:
                    preds[content] = (p, _pred_of(p)[1])
                    users[content] = [hid]
                else:
                    users[content].append(hid)
        self._folds = folds
        self._sweep(preds, users, changed)

    def _sweep(
        self,
        preds: dict[Any, tuple[Condition, tuple[str, ...]]],
        users: dict[Any, list[str]],
        changed: list[frozenset[str]],
    ) -> None:
        states, folds, rank = self.states, self._folds, self.t.rank
        first = states[0]
        now: dict[Any, int] = {}
        events: dict[int, list[tuple[Any, int | None]]] = {}  # None: evaluate there
        readers: dict[str, list[Any]] = {}
        # per fact key: the readers whose truth depends on the class of its value alone
        # (``vocabulary.VALUE_CLASS``), with that class function; looked at again only where
        # the class changes (their cache key, ``_key``, is the same otherwise)
        classed: dict[str, list[tuple[Any, Callable[[Any], Any]]]] = {}
        for c, (p, keys) in preds.items():
            direct = self._direct(p, keys)
            if direct is not None:
                at, now[c], then = direct
                if at > 0:
                    events.setdefault(at, []).append((c, then))
                continue
            now[c] = rank(p, c, keys, first)
            turn = self._turn(p, keys)
            if turn is not None:
                if turn > 0:
                    events.setdefault(turn, []).append((c, None))
                continue
            classify = VALUE_CLASS.get(c[0])
            for key in keys:
                if classify is None:
                    readers.setdefault(key, []).append(c)
                else:
                    classed.setdefault(key, []).append((c, classify))
        self.first = {hid: _TRUTH[fold(now)] for hid, fold in folds.items()}
        here = dict(self.first)  # the truths on the state the sweep has reached
        flips = self._flips
        self.touched.append(frozenset())
        none: frozenset[str] = frozenset()
        for i in range(1, len(states)):
            flipped: list[Any] = []
            state = states[i]
            for c, known in events.get(i, ()):
                if known is None:
                    known = rank(preds[c][0], c, preds[c][1], state)
                if known != now[c]:
                    now[c] = known
                    flipped.append(c)
            before, after = states[i - 1].facts, state.facts
            moved = {
                c
                for key in changed[i - 1]
                if key in readers and not _same(before.get(key), after.get(key))
                for c in readers[key]
            }
            for key in classed.keys() & changed[i - 1]:
                a, b = before.get(key), after.get(key)
                if a is b:
                    continue
                for c, classify in classed[key]:
                    if a is None or b is None or classify(a.value) != classify(b.value):
                        moved.add(c)
            for c in moved:
                t = rank(preds[c][0], c, preds[c][1], state)
                if t != now[c]:
                    now[c] = t
                    flipped.append(c)
            hids = none
            if flipped:
                hids = frozenset(h for c in flipped for h in users[c])
                for hid in hids:
                    found = _TRUTH[folds[hid](now)]
                    if found is not here[hid]:
                        here[hid] = found
                        marks = flips.get(hid)
                        if marks is None:
                            flips[hid] = ([i], [found])
                        else:
                            marks[0].append(i)
                            marks[1].append(found)
            self.touched.append(hids)

    def truth(self, i: int, hid: str) -> Truth | None:
        """The truth of hazard ``hid`` on ``states[i]`` (None: not a hazard of the sweep)."""
        flips = self._flips.get(hid)
        if flips is None:
            return self.first.get(hid)
        at, truths = flips
        k = bisect.bisect_right(at, i)
        return truths[k - 1] if k else self.first[hid]

    def _direct(self, p: Condition, keys: tuple[str, ...]) -> tuple[int, int, int] | None:
        """For a MONOTONE predicate over a version that every state holds, strictly rising,
        and a bound that is a version: (the first state where the truth is that of the last
        state, 0 when it never changes; the truth on the first state; on the last), found
        by bisection over the versions (the predicate compares the installed version with
        the bound: TRUE or FALSE, never UNKNOWN, on such states); None: not such a one."""
        if p.predicate not in MONOTONE or len(keys) != 1 or not self._rising(keys[0]):
            return None
        bound = _version_arg(p)
        if bound is None:
            return None
        marks, versions = self._marks[keys[0]]
        below = p.predicate == "version_below"
        # the first version at or above the bound (by the sort keys versions compare by)
        k = bisect.bisect_left(versions, bound._key)
        start, end = 2 * (below == (k > 0)), 2 * (below == (k == len(versions)))
        return (marks[k] if start != end else 0), start, end

    def _turn(self, p: Condition, keys: tuple[str, ...]) -> int | None:
        """For a MONOTONE predicate over a rising version: the first state where its truth is
        that of the last state (0: it never changes); None: not such a predicate."""
        if p.predicate not in MONOTONE or len(keys) != 1 or not self._rising(keys[0]):
            return None
        states = self.states
        last = self.t.of(p, states[-1])
        if self.t.of(p, states[0]) is last:
            return 0 if last is not Truth.UNKNOWN else None
        lo, hi = 0, len(states) - 1  # truth(lo) differs from last, truth(hi) is last
        while hi - lo > 1:
            mid = (lo + hi) // 2
            t = self.t.of(p, states[mid])
            if t is Truth.UNKNOWN:
                return None
            lo, hi = (mid, hi) if t is not last else (lo, mid)
        return hi

    def _rising(self, key: str) -> bool:
        hit = self._rises.get(key)
        if hit is None:
            hit = self._rises[key] = self._rises_through(key)
        return hit

    def _rises_through(self, key: str) -> bool:
        """Whether ``key`` holds a version on every state, strictly rising where it is set
        (then ``_marks[key]`` holds the states where it is set and the sort keys of the
        parsed versions)."""
        seen: Any = None
        last: Any = object()
        marks: list[int] = []
        versions: list[Any] = []
        for i, st in enumerate(self.states):
            fact = st.facts.get(key)
            if fact is last:
                continue
            last = fact
            if fact is None or not isinstance(fact.value, str):
                return False
            try:
                v = parse_version(fact.value)
            except Exception:  # not a version: not rising
                return False
            if seen is not None and not v > seen:
                return False
            seen = v
            marks.append(i)
            versions.append(v._key)
        self._marks[key] = (marks, versions)
        return True


def _same(a: Any, b: Any) -> bool:
    """Whether two facts read alike for every predicate's cache key (``_key``): the same
    fact, or equal values of one scalar type (or both None)."""
    if a is b:
        return True
    if a is None or b is None:
        return False
    v, w = a.value, b.value
    return type(v) is type(w) and (v is None or type(v) in _SCALARS) and v == w


def window_sweep(s: Search) -> Sweep | None:
    """The sweep of the product's and its moving lockstep components' hazards over ``s``'s
    window, where that is exact (planner/prune.py ``prunable``); None: truths are found one
    by one."""
    from upgradeplan.planner.fanout import moves
    from upgradeplan.planner.prune import prunable

    comps = s.comps()
    if len(s.nodes) <= 2 or not prunable(s, comps):
        return None
    # a lockstep component no landing of the window moves has no hop in it, so its hazards
    # never weigh (their truths, where asked, are found one by one: Search._truth)
    hazards = [
        (h.id, h.when)
        for mover in (s.product, *(c for c in comps if moves(s, c)))
        for h in s.idx.by_product.get(mover, ())
        if h.when is not None
    ]
    n = len(s.nodes)
    states = [s.state_at(i) for i in range(n)]
    changed = [frozenset(f.key for f in s._landing_facts(i)) for i in range(1, n)]
    return Sweep(s.truths, states, changed, hazards)


def _version_arg(p: Condition) -> Any:
    """The parsed ``version`` argument of a MONOTONE predicate (None: not a version; the
    predicate itself then says so)."""
    text = p.args.get("version")
    if not isinstance(text, str):
        return None
    try:
        return parse_version(text)
    except Exception:
        return None


def _preds(cond: Condition) -> list[Condition]:
    if cond.op == "pred":
        return [cond]
    return [p for child in cond.children for p in _preds(child)]


_Fold = Callable[[dict[Any, int]], int]
_Contents = tuple[tuple[Condition, Any], ...]  # (predicate node, its content key) per node

# per hazard condition (by identity, the node kept so its id is not reused): its predicates
# with their content keys and its fold over their integer truths
_FOLDS: dict[int, tuple[Condition, _Contents, _Fold]] = {}


def _fold_of(cond: Condition) -> tuple[_Contents, _Fold]:
    hit = _FOLDS.get(id(cond))
    if hit is None or hit[0] is not cond:
        if len(_FOLDS) > 100_000:
            _FOLDS.clear()
        contents = tuple((p, _pred_of(p)[0]) for p in _preds(cond))
        hit = _FOLDS[id(cond)] = (cond, contents, _compile(cond))
    return hit[1], hit[2]


def _compile(cond: Condition) -> _Fold:
    """``cond``'s Kleene truth (an integer of _RANK) from its predicates' integer truths."""
    if cond.op == "pred":
        return operator.itemgetter(_pred_of(cond)[0])
    if cond.op == "not":
        inner = _compile(cond.children[0])
        return lambda now: 2 - inner(now)
    pos = tuple(_pred_of(c)[0] for c in cond.children if c.op == "pred")
    neg = tuple(
        _pred_of(c.children[0])[0]
        for c in cond.children
        if c.op == "not" and c.children[0].op == "pred"
    )
    subs = tuple(
        _compile(c)
        for c in cond.children
        if c.op != "pred" and not (c.op == "not" and c.children[0].op == "pred")
    )
    if cond.op == "all":

        def all_of(now: dict[Any, int]) -> int:
            t = min(map(now.__getitem__, pos), default=2)
            if neg and t:
                t = min(t, 2 - max(map(now.__getitem__, neg)))
            for sub in subs:
                if not t:
                    break
                t = min(t, sub(now))
            return t

        return all_of

    def any_of(now: dict[Any, int]) -> int:
        t = max(map(now.__getitem__, pos), default=0)
        if neg and t < 2:
            t = max(t, 2 - min(map(now.__getitem__, neg)))
        for sub in subs:
            if t == 2:
                break
            t = max(t, sub(now))
        return t

    return any_of


__all__ = ["MONOTONE", "Sweep", "Truths", "window_sweep"]
