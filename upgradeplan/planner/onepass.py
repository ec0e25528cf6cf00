"""The cheapest path in one pass over the window's releases in version order.

Every hop rises, so the window is a DAG in version order and the cheapest path to release
``j`` is the cheapest of ``dist(i) + w(i, j)`` over the releases ``i`` below it that may hop to
it. Trying every pair is quadratic; this pass is linear in the releases times the number of
distinct *start classes*, because a hop's weight splits into what its start and its end bring:

    w(i, j) = HOP_COST + sum over movers m of P_m(class_m(i), ends_m(j)) + E_m(j) + R(j)

The movers are the product and every exactly pinned component with hazards that a landing of
the window moves (lockstep: a release's BOM moves its pin). ``P_m`` sums the skip and
transition hazards of ``m`` the start can meet and the end completes, each judged on the state
at the start; ``E_m`` the landing and state hazards at the end, judged on the state at the
end; ``R`` what the release's requirements add, judged on the state at the end. A start
class is the set of those start hazards with their truth at that start; releases between two
hazard boundaries share one.
Each predicate of a hazard's condition is evaluated once per distinct value of the facts it
reads (``Truths``), and a condition is decided by the predicates already known where they
decide it; a hazard decided by facts no landing sets is judged once for the whole window.
Along the window a hazard is judged again only after it turns (planner/turns.py), and the
start classes an end weighs are tried cheapest first, stopping where none can be cheaper.

The split is exact where no weight reads a path-dependent fact (planner/paths.py: then the
state a hop lands on reads like the state at its end whatever the start) and no hazard refers
to ``$from``/``$to`` (``applies``). An end where it does not hold for every start is weighed
start by start (``w`` in full from the same terms): a release with an ``upgrade_from`` (only
the starts it admits), requirements that may apply (they do not count where the start already
had them) or carry a ``when``, and a component that some starts already run at the version
the end brings (the hop does not move it).

Ties are broken as Dijkstra over every release breaks them (it pops releases by cost, then by
index, and keeps the first predecessor reaching the cheapest cost), so the path is the one the
hop-by-hop search (``Search.dijkstra``) finds.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from upgradeplan import conditions
from upgradeplan.model import Condition, Fact, Hazard, KnowledgeBase, Release, State, Truth
from upgradeplan.planner.costs import HOP_COST
from upgradeplan.planner.scopes import Ordered
from upgradeplan.planner.turns import CLASSED, SCALARS, VALUE_PREDICATES, Turns, class_of
from upgradeplan.planner.window import Window
from upgradeplan.versions import parse_constraint, parse_version

_Key = tuple[Any, ...]
_ALL = "\0all"  # the evaluation iterated the facts: it may have read any of them


class _Reads(Mapping[str, Fact]):
    """A state's facts that note which keys are read."""

    def __init__(self, facts: Mapping[str, Fact]) -> None:
        self.facts = facts
        self.read: list[str] = []

    def __getitem__(self, key: str) -> Fact:
        self.read.append(key)
        return self.facts[key]

    def get(self, key: str, default: object = None) -> Fact | None:  # type: ignore[override]
        self.read.append(key)
        found = self.facts.get(key)
        return found if found is not None else default  # type: ignore[return-value]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.append(key)
        return key in self.facts

    def __iter__(self) -> Iterator[str]:
        self.read.append(_ALL)
        return iter(self.facts)

    def __len__(self) -> int:
        self.read.append(_ALL)
        return len(self.facts)


class Truths:
    """Hazard truths over one window's states, each predicate evaluated once per distinct
    value of the facts it reads.

    A predicate's evaluation notes the fact keys it reads; its truth is kept by its content
    (name and arguments) and, per key read, the fact's value (scalars; else the fact itself)
    and the kind of its source, or the class of the value where the predicate read only that
    key (``conditions.vocabulary.VALUE_CLASS``: a pin moved from one exact version to another
    is not judged again; ``ARG_CLASS``: a version comparison is judged again only where it
    turns along the window). Any later state with the same values under those keys takes the
    truth found. A condition tree is combined with Kleene logic, whose answer does not depend
    on the order of the children, so the children already known are looked at first: one
    deciding child spares the others. A hazard whose truth was decided by predicates reading
    no key a landing of the window sets (``moving``) has that truth on every state of the
    window (``fixed``)."""

    def __init__(self, kb: KnowledgeBase, moving: frozenset[str]) -> None:
        self.kb = kb
        self.moving = moving
        self.fixed: dict[str, Truth] = {}  # hazard id -> its truth on every window state
        # per predicate node (kept, so that its id is not reused): its content
        self._contents: dict[int, tuple[Condition, _Key]] = {}
        # per content: per tuple of keys an evaluation read, whether one is moving and the
        # truths by what the facts under them hold
        self._known: dict[_Key, dict[tuple[str, ...], tuple[bool, dict[_Key, Truth]]]] = {}
        self._kept: list[State] = []  # states whose facts key answers by identity
        self._moved = False  # the evaluation under way read a moving key
        self._unkeyed: set[_Key] = set()  # contents whose evaluation read every fact
        # per hazard: its predicates' contents, and its truths by what they see (``_seen``)
        self._hazards: dict[str, tuple[list[tuple[Condition, _Key]], dict[_Key, Truth]]] = {}

    def of(self, h: Hazard, state: State) -> Truth:
        """The truth of ``h``'s condition on ``state`` (what ``conditions.truth`` gives)."""
        hit = self.fixed.get(h.id)
        if hit is not None:
            return hit
        if h.when is None:
            self.fixed[h.id] = Truth.TRUE
            return Truth.TRUE
        memo = self._hazards.get(h.id)
        if memo is not None:
            seen = self._seen(memo[0], state)
            if seen is not None:
                hit = memo[1].get(seen)
                if hit is not None:
                    return hit
        self._moved = False
        truth = self._eval(h.when, state)
        if not self._moved:
            self.fixed[h.id] = truth
            return truth
        if memo is None:
            preds = [(c, self._content(c)) for c in _predicates(h.when)]
            memo = self._hazards[h.id] = (preds, {})
        seen = self._seen(memo[0], state)
        if seen is not None:
            memo[1][seen] = truth
        return truth

    def _seen(self, preds: list[tuple[Condition, _Key]], state: State) -> _Key | None:
        """What a hazard's predicates see of ``state``, as their truths are kept by (None:
        a predicate's truths are kept under more than one set of keys, or it read every
        fact). A predicate not yet evaluated sees nothing: where it is still not evaluated
        after the condition was, the other predicates decided it. Two states a hazard's
        predicates see alike give it one truth."""
        out: list[Any] = []
        for cond, content in preds:
            known = self._known.get(content)
            if not known:
                if content in self._unkeyed:
                    return None
                out.append(None)
                continue
            if len(known) != 1:
                return None
            keys = next(iter(known))
            if len(keys) == 1 and cond.predicate in CLASSED:
                out.append(("class", class_of(cond, state.facts.get(keys[0]))))
            else:
                out.append(self._values(keys, state, cond))
        return tuple(out)

    def _content(self, cond: Condition) -> _Key:
        hit = self._contents.get(id(cond))
        if hit is None or hit[0] is not cond:
            content = (cond.predicate, repr(sorted(cond.args.items())))
            hit = self._contents[id(cond)] = (cond, content)
        return hit[1]

    def _values(self, keys: tuple[str, ...], state: State, cond: Condition) -> _Key:
        """What the facts under ``keys`` hold, as ``cond``'s truths are kept by: a value
        predicate reads the installed version only for that release's chart defaults, so
        versions whose releases share one ``defaults`` mapping answer alike (a pack's line of
        a thousand releases shares one)."""
        out: list[Any] = []
        facts = state.facts
        own = f"installed.{cond.args.get('product')}"
        for k in keys:
            fact = facts.get(k)
            if fact is None:
                out.append(None)
                continue
            if k == own and cond.predicate in VALUE_PREDICATES and isinstance(fact.value, str):
                rel = self.kb.release(k[len("installed.") :], fact.value)
                if rel is not None:
                    out.append(("defaults", id(rel.defaults)))
                    continue
            value: Any = fact.value
            if not isinstance(value, SCALARS):
                value = ("fact", id(fact))
                self._kept.append(state)
            out.append((value, fact.source.kind))
        return tuple(out)

    def _lookup(self, cond: Condition, state: State) -> Truth | None:
        """A predicate's truth on ``state`` from what is known (None: not known)."""
        known = self._known.get(self._content(cond))
        if not known:
            return None
        for keys, (moving, answers) in known.items():
            if len(keys) == 1 and cond.predicate in CLASSED:
                hit = answers.get(("class", class_of(cond, state.facts.get(keys[0]))))
            else:
                hit = answers.get(self._values(keys, state, cond))
            if hit is not None:
                self._moved = self._moved or moving
                return hit
        return None

    def _pred(self, cond: Condition, state: State) -> Truth:
        hit = self._lookup(cond, state)
        if hit is not None:
            return hit
        reads = _Reads(state.facts)
        probe = State(facts=reads, name=state.name, unreadable=state.unreadable)
        truth = conditions.truth(cond, probe, self.kb)
        keys = tuple(dict.fromkeys(reads.read))
        if _ALL in keys:
            self._moved = True
            self._unkeyed.add(self._content(cond))
            return truth
        moving = any(k in self.moving for k in keys)
        self._moved = self._moved or moving
        known = self._known.setdefault(self._content(cond), {})
        answers = known.setdefault(keys, (moving, {}))[1]
        if len(keys) == 1 and cond.predicate in CLASSED:
            answers[("class", class_of(cond, state.facts.get(keys[0])))] = truth
        else:
            answers[self._values(keys, state, cond)] = truth
        return truth

    def _cached(self, cond: Condition, state: State) -> Truth | None:
        """The truth of ``cond`` from what is known alone (None: not known)."""
        if cond.op == "pred":
            return self._lookup(cond, state)
        if cond.op == "not":
            inner = self._cached(cond.children[0], state)
            return None if inner is None else ~inner
        return None

    def _eval(self, cond: Condition, state: State) -> Truth:
        if cond.op == "pred":
            return self._pred(cond, state)
        if cond.op == "not":
            return ~self._eval(cond.children[0], state)
        pending: list[Condition] = []  # the children already known are read first

        def known() -> Iterator[Truth]:
            for child in cond.children:
                t = self._cached(child, state)
                if t is None:
                    pending.append(child)
                else:
                    yield t

        evaluated = (self._eval(child, state) for child in pending)  # sees what known() adds
        return conditions.kleene(cond.op, itertools.chain(known(), evaluated))


def _predicates(cond: Condition) -> Iterator[Condition]:
    """The predicate nodes of ``cond``'s tree."""
    if cond.op == "pred":
        yield cond
    for child in cond.children:
        yield from _predicates(child)


def applies(s: Window, dependent: tuple[str, ...]) -> bool:
    """Whether the pass finds the path ``Search.dijkstra`` finds: every hop rises, no weight
    reads a path-dependent key (``dependent``: planner/paths.py ``dependent_keys``) and no
    hazard of a mover refers to ``$from``/``$to``. With path-dependent keys the pass still
    finds a path, weighed on ``state_at`` (the search's path where the path-aware search
    stopped at its budget)."""
    nodes = s.nodes
    if dependent or len(nodes) < 3:
        return False
    if any(n.release is None for n in nodes[1:]):
        return False
    if any(b.parsed <= a.parsed for a, b in itertools.pairwise(nodes)):
        return False
    refs = s.idx.refs
    for product in (s.product, *s.comps):
        s.idx.product(product)  # fills idx.refs
        if any(refs.get(h.id) for h in s.idx.by_product.get(product, ())):
            return False
    return True


_Class = tuple[tuple[str, int], ...]  # a mover's start hazards that are not FALSE: (id, weight)


class _Mover:
    """One product a hop moves: where each release of the window runs it, and its terms.

    Between two turns (planner/turns.py) of its start hazards, starts that meet the same set
    of them share one class; between two turns of its landing and state hazards, ends that
    land in the same set add the same: neither is judged again there."""

    def __init__(self, s: Window, product: str, truths: Truths, turns: Turns) -> None:
        self.s, self.product, self.truths, self.turns = s, product, truths, turns
        nodes = s.nodes
        if product == s.product:
            self.at: list[str | None] = [n.version for n in nodes]
        else:
            self.at = [s.state_at(i).installed(product) for i in range(len(nodes))]
        self.classes: dict[_Class, int] = {}
        self.members: list[_Class] = []
        self._weights: list[dict[str, int]] = []  # per class: its members' weights by id
        self._completes: dict[tuple[int, int], tuple[frozenset[str], int]] = {}
        self._by_set: dict[int, int] = {}  # id of a start's hazard set -> class, truths fixed
        self.seen: dict[str | None, int] = {}  # version -> how many starts so far run it
        self._counts: dict[bool, list[int]] = {}  # start hazards (True) or end ones: turns
        self._last_start: tuple[int, frozenset[str], int] | None = None  # (release, set, class)
        self._last_end: tuple[int, frozenset[str], int] | None = None  # (release, set, adds)
        self._known: dict[str, tuple[int, Truth]] = {}  # hazard -> (release, its truth there)

    def _turns(self, pre: bool) -> list[int]:
        """Per release: how many turns of the start (``pre``) or the end hazards lie at or
        before it (``Turns.counts``, found on first need)."""
        hit = self._counts.get(pre)
        if hit is None:
            pidx = self.s.idx.product(self.product)
            scopes = (*pidx.skip, *pidx.transition) if pre else (*pidx.landing, *pidx.state)
            hit = self._counts[pre] = self.turns.counts(x.hazard for x in scopes)
        return hit

    def truth(self, h: Hazard, i: int) -> Truth:
        """The truth of ``h`` on the state at release ``i``: where it was last judged, unless
        it turned since."""
        hit = self._known.get(h.id)
        if hit is not None and not self.turns.turned(h, hit[0], i):
            return hit[1]
        found = self.truths.of(h, self.s.state_at(i))
        self._known[h.id] = (i, found)
        return found

    def start(self, i: int) -> int:
        """The class of release ``i`` as a start (-1: the product is not installed there)."""
        version = self.at[i]
        self.seen[version] = self.seen.get(version, 0) + 1
        if version is None:
            return -1
        s, idx = self.s, self.s.idx
        sides = idx.sides(self.product, version, _parsed(self.s, self.product, i, version))
        ids, _ = idx.started(sides)
        c = self._by_set.get(id(ids))
        if c is not None:
            return c
        last = self._last_start
        if last is not None and last[1] is ids:
            turns = self._turns(True)
            if turns[last[0]] == turns[i]:
                return last[2]  # the same hazards, none turned since
        hazards = (*sides.skip_pre, *sides.trans_pre)
        met = [(h, self.truth(h, i)) for h in hazards]
        key = tuple((h.id, s.weigh(h, t)) for h, t in met if t is not Truth.FALSE)
        c = self.classes.get(key)
        if c is None:
            c = self.classes[key] = len(self.members)
            self.members.append(key)
            self._weights.append(dict(key))
        if all(h.id in self.truths.fixed for h in hazards):
            self._by_set[id(ids)] = c  # the index keeps ``ids``: its id stays valid
        self._last_start = (i, ids, c)
        return c

    def end(self, j: int, starts: int) -> tuple[frozenset[str] | None, int, bool]:
        """Release ``j`` as the end of hops from the ``starts`` releases below it: the skip and
        transition hazards it completes (None: no hop moves the product), what its landing
        and state hazards add, and whether some starts move the product and others not."""
        version = self.at[j]
        if version is None or self.seen.get(version, 0) == starts:
            return None, 0, False  # no start moves it
        mixed = bool(self.seen.get(version) or self.seen.get(None))
        s, idx = self.s, self.s.idx
        sides = idx.sides(self.product, version, _parsed(s, self.product, j, version))
        landed = 0
        if sides.landed:
            ids, last = idx.landed_ids(sides), self._last_end
            if last is not None and last[1] is ids and self._same_since(last[0], j):
                landed = last[2]  # the same hazards, none turned since
            else:
                landed = sum(s.weigh(h, self.truth(h, j)) for h in sides.landed)
                self._last_end = (j, ids, landed)
        return idx.landing_on(sides), landed, mixed

    def _same_since(self, a: int, b: int) -> bool:
        turns = self._turns(False)
        return turns[a] == turns[b]

    def completes(self, c: int, end: frozenset[str]) -> int:
        """What the start hazards of class ``c`` that ``end`` completes add (kept per class
        and end set: the index keeps one object per set of ids, ``Index.landing_on``)."""
        hit = self._completes.get((c, id(end)))
        if hit is None or hit[0] is not end:
            weights = self._weights[c]
            hit = self._completes[(c, id(end))] = (
                end,
                sum([weights[h] for h in weights.keys() & end]),
            )
        return hit[1]

    def moves(self, i: int, j: int) -> bool:
        a, b = self.at[i], self.at[j]
        return a is not None and b is not None and a != b


def _parsed(s: Window, product: str, i: int, version: str) -> object:
    if product == s.product:
        return s.nodes[i].parsed
    return parse_version(version)


def cheapest(s: Window, truths: Truths, turns: Turns) -> list[int]:
    """Node indices of the cheapest path from the start to the target (empty: none); exact
    where ``applies`` holds, else weighed on ``state_at``."""
    nodes, idx = s.nodes, s.idx
    n = len(nodes)
    movers = [_Mover(s, s.product, truths, turns)]
    # a component no landing moves meets no hazard on any hop
    movers += [
        _Mover(s, c, truths, turns)
        for c in s.comps
        if idx.by_product.get(c) and f"installed.{c}" in s.moving
    ]
    # a start's class: one per mover; the combined classes are few (boundaries are rare)
    combined: dict[tuple[int, ...], int] = {}
    keys: list[tuple[int, ...]] = []  # per combined class: its movers' classes
    starts: list[tuple[int, ...]] = []
    start_of: list[int] = []

    def start(i: int) -> None:
        key = tuple(m.start(i) for m in movers)
        starts.append(key)
        c = combined.get(key)
        if c is None:
            c = combined[key] = len(keys)
            keys.append(key)
        start_of.append(c)

    pair: dict[tuple[int, tuple[frozenset[str] | None, ...]], int] = {}

    def between(c: int, ends: tuple[frozenset[str] | None, ...]) -> int:
        """What the start hazards of class ``c`` the ends complete add (memoised)."""
        p = pair.get((c, ends))
        if p is None:
            p = 0
            for m, mc, end in zip(movers, keys[c], ends, strict=True):
                if end is not None and mc >= 0:
                    p += m.completes(mc, end)
            pair[(c, ends)] = p
        return p

    dist: list[int | None] = [0] + [None] * (n - 1)
    prev = [0] * n
    best: dict[int, tuple[int, int]] = {}  # class -> (dist, index) of its cheapest start
    order: list[tuple[int, int, int]] = []  # (dist, index, class) of each best, ascending
    start(0)
    best[start_of[0]] = (0, 0)
    order.append((0, 0, start_of[0]))
    line: list[Ordered] = []  # the window's versions, sorted (``admitted``)

    def admitted(rel: Release, j: int) -> Iterator[int]:
        """The releases below ``j`` that may hop to ``rel`` (its ``upgrade_from``)."""
        if rel.upgrade_from is None:
            yield from range(j)
            return
        if not line:
            line.append(Ordered([node.parsed for node in nodes]))
        for a, b in line[0].runs(parse_constraint(rel.upgrade_from)):
            yield from range(a, min(b, j))

    ends_before: tuple[frozenset[str] | None, ...] | None = None
    found: tuple[int, int, int] | None = None  # (dist + P, dist, index): the best start
    for j in range(1, n):
        rel = nodes[j].release
        assert rel is not None
        terms = [m.end(j, j) for m in movers]
        ends = tuple(t[0] for t in terms)
        landed = sum(t[1] for t in terms)
        post = s.state_at(j)
        req = s.requirement_status(j - 1, j, post)
        by_start = (
            rel.upgrade_from is not None
            or any(t[2] for t in terms)
            or (req is not None and (req[0] == "may-apply" or bool(rel.requires_when)))
        )
        if by_start:  # weighed start by start
            cands = []
            for i in admitted(rel, j):
                d = dist[i]
                if d is None:
                    continue
                w = HOP_COST + s.requirement_cost(i, j, post)
                for k, (m, (end, add, _)) in enumerate(zip(movers, terms, strict=True)):
                    if end is not None and m.moves(i, j):
                        mc = starts[i][k]
                        w += add + m.completes(mc, end)
                cands.append((d + w, d, i))
            ends_before = None  # the next end considers every class again
            if not cands:
                if j < n - 1:
                    start(j)
                continue
            dist[j], _, prev[j] = min(cands)
        else:
            if ends != ends_before or found is None:  # a new end set: every start class
                found = None
                for d, i, c in order:  # cheapest first: P >= 0 bounds the rest
                    if found is not None and (d, d, i) >= found:
                        break
                    here = (d + between(c, ends), d, i)
                    if found is None or here < found:
                        found = here
                assert found is not None
                ends_before = ends
            else:  # the same ends: only the class of the release before may have improved
                held = best.get(start_of[j - 1])
                if held is not None and dist[j - 1] is not None:
                    found = min(found, (held[0] + between(start_of[j - 1], ends), *held))
            dist[j] = found[0] + HOP_COST + landed + s.requirement_cost(j - 1, j, post)
            prev[j] = found[2]
        if j < n - 1:
            start(j)
            c, d = start_of[j], dist[j]
            assert d is not None
            held = best.get(c)
            if held is None or (d, j) < held:
                if held is not None:
                    del order[bisect.bisect_left(order, (*held, c))]
                best[c] = (d, j)
                bisect.insort(order, (d, j, c))
    if dist[n - 1] is None:
        return []
    path = [n - 1]
    while path[-1] != 0:
        path.append(prev[path[-1]])
    return path[::-1]


__all__ = ["Truths", "applies", "cheapest"]
