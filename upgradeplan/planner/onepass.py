"""The cheapest path in one pass over a window whose hop weights split into start and end.

Every hop rises, so the window is a DAG in version order and the cheapest path to release
``j`` is the cheapest of ``dist(i) + w(i, j)`` over the releases ``i`` below it. Trying every
pair is quadratic; this pass is linear in the releases times the number of distinct *start
classes*, for the windows where a hop's weight splits into what its start and its end bring:

- every release of the window sets the same fact keys on landing (its installed version, its
  own pin, the same effect keys …) and moves no other product's installed version, so the
  state a hop lands on is the state at its end whatever it starts from, and no lockstep
  component's hazards join the hop;
- no release of the window has an ``upgrade_from``, ``requires`` or a hazard of the product
  that refers to ``$from``/``$to``.

Then ``w(i, j) = HOP_COST + P(start class of i, end class of j) + E(j)``: ``P`` sums the skip
and transition hazards the start can meet and the end completes, each judged on the state at
the start; ``E`` the landing and state hazards at the end, judged on the state at the end. A
start class is the set of those hazards with their truth at that start; releases between two
hazard boundaries share one. Each hazard's condition is evaluated once per distinct state it
reads (``Truths``): the facts it read are recorded, and any later state holding the very same
facts under those keys reuses the answer.

Ties are broken as Dijkstra over every release breaks them (it pops releases by cost, then by
index, and keeps the first predecessor reaching the cheapest cost), so the path is the one the
hop-by-hop search finds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from upgradeplan import conditions
from upgradeplan.model import Fact, Hazard, KnowledgeBase, Release, State, Truth
from upgradeplan.planner.index import Index


class _Node(Protocol):
    @property
    def version(self) -> str: ...
    @property
    def parsed(self) -> Any: ...
    @property
    def release(self) -> Release | None: ...


class Window(Protocol):
    """What the pass reads of a search (planner/search.py ``Search``)."""

    @property
    def kb(self) -> KnowledgeBase: ...
    @property
    def idx(self) -> Index: ...
    @property
    def product(self) -> str: ...
    @property
    def nodes(self) -> Sequence[_Node]: ...
    @property
    def hop_cost(self) -> int: ...
    def state_at(self, i: int) -> State: ...
    def landing_map(self, j: int) -> dict[str, Fact]: ...
    def comps(self) -> tuple[str, ...]: ...
    def weigh(self, h: Hazard, truth: Truth) -> int: ...


_ALL = "\0all"  # the evaluation iterated the facts: it may have read any of them


class _Reads(Mapping[str, Fact]):
    """A state's facts that note which keys are read."""

    def __init__(self, facts: Mapping[str, Fact]) -> None:
        self.facts = facts
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Fact:
        self.read.add(key)
        return self.facts[key]

    def get(self, key: str, default: object = None) -> Fact | None:  # type: ignore[override]
        self.read.add(key)
        found = self.facts.get(key)
        return found if found is not None else default  # type: ignore[return-value]

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return key in self.facts

    def __iter__(self) -> Iterator[str]:
        self.read.add(_ALL)
        return iter(self.facts)

    def __len__(self) -> int:
        self.read.add(_ALL)
        return len(self.facts)


class Truths:
    """Hazard truths over one window, each condition evaluated once per distinct state it
    reads: an answer is kept with the facts (by identity) under the keys its evaluation read,
    and reused on any state holding those very facts. The window's states differ only in the
    keys a landing sets (``moving``): an answer that read none of them holds on every state
    of the window."""

    def __init__(self, kb: KnowledgeBase, moving: frozenset[str]) -> None:
        self.kb = kb
        self.moving = moving
        self.fixed: dict[str, Truth] = {}  # hazard id -> its truth on every window state
        # hazard id -> the keys an evaluation read -> the ids of the facts under them -> truth
        self._known: dict[str, dict[tuple[str, ...], dict[tuple[object, ...], Truth]]] = {}
        self._kept: list[State] = []  # the states read: their facts stay alive (ids stay valid)
        self._defaults_keys: dict[str, frozenset[str]] = {}  # hazard id -> see _by_defaults

    def of(self, h: Hazard, state: State) -> Truth:
        hit = self.fixed.get(h.id)
        if hit is not None:
            return hit
        if h.when is None:
            self.fixed[h.id] = Truth.TRUE
            return Truth.TRUE
        facts = state.facts
        entries = self._known.setdefault(h.id, {})
        by_defaults = self._by_defaults(h)
        for keys, seen in entries.items():  # few: the keys differ only where the facts do
            hit = seen.get(tuple(self._token(facts.get(k), k, by_defaults) for k in keys))
            if hit is not None:
                return hit
        reads = _Reads(facts)
        probe = State(facts=reads, name=state.name, unreadable=state.unreadable)
        truth = conditions.truth(h.when, probe, self.kb)
        if _ALL not in reads.read:
            if not reads.read & self.moving:
                self.fixed[h.id] = truth
                return truth
            keys = tuple(sorted(reads.read))
            token = tuple(self._token(facts.get(k), k, by_defaults) for k in keys)
            entries.setdefault(keys, {})[token] = truth
            self._kept.append(state)
        return truth

    def _by_defaults(self, h: Hazard) -> frozenset[str]:
        """The ``installed.<product>`` keys the hazard's condition reads only for the chart
        defaults of the release that runs (value predicates): two versions whose releases
        share one ``defaults`` mapping answer alike there (a pack's line of a thousand
        releases shares one)."""
        found = self._defaults_keys.get(h.id)
        if found is None:
            value_reads: set[str] = set()
            other_reads: set[str] = set()
            pending = [h.when] if h.when is not None else []
            while pending:
                node = pending.pop()
                pending.extend(node.children)
                if node.op != "pred":
                    continue
                key = f"installed.{node.args.get('product')}"
                (value_reads if node.predicate in _VALUE_PREDICATES else other_reads).add(key)
            if any(isinstance(v, str) and v.startswith("$") for v in _args_of(h)):
                other_reads |= value_reads
            found = self._defaults_keys[h.id] = frozenset(value_reads - other_reads)
        return found

    def _token(self, fact: Fact | None, key: str, by_defaults: frozenset[str]) -> object:
        """What a memoised answer is keyed by for ``key``: the fact itself (by identity), or
        for a version read only for its defaults, the defaults mapping of that release."""
        if key in by_defaults and fact is not None and isinstance(fact.value, str):
            rel = self.kb.release(key[len("installed.") :], fact.value)
            if rel is not None:
                return ("defaults", id(rel.defaults))
        return id(fact)


# the predicates that read ``installed.<product>`` only to find the running release's defaults
_VALUE_PREDICATES = frozenset({"value_set", "value_equals", "value_in", "value_contains"})


def _args_of(h: Hazard) -> list[Any]:
    """Every argument value of the hazard's predicates."""
    out: list[Any] = []
    pending = [h.when] if h.when is not None else []
    while pending:
        node = pending.pop()
        pending.extend(node.children)
        out.extend(node.args.values())
    return out


def applies(s: Window) -> bool:
    """Whether the window's hop weights split into start and end terms (see the module)."""
    nodes = s.nodes
    if len(nodes) < 3:
        return False
    if any(n.release is None for n in nodes[1:]):
        return False
    if any(b.parsed <= a.parsed for a, b in itertools.pairwise(nodes)):
        return False
    if any(
        n.release.upgrade_from or n.release.requires or n.release.requires_when
        for n in nodes[1:]
        if n.release
    ):
        return False
    keys = frozenset(s.landing_map(1))
    if any(frozenset(s.landing_map(j)) != keys for j in range(2, len(nodes))):
        return False
    if any(f"installed.{c}" in keys for c in s.comps()):
        return False
    refs = s.idx.refs
    s.idx.product(s.product)  # fills idx.refs
    return not any(refs.get(h.id) for h in s.idx.by_product.get(s.product, ()))


def cheapest(s: Window) -> list[int]:
    """Node indices of the cheapest path from the start to the target (``applies`` holds)."""
    nodes, product, idx = s.nodes, s.product, s.idx
    truths = Truths(s.kb, frozenset(s.landing_map(1)))
    n = len(nodes)
    # start classes: the skip and transition hazards a start can meet that are not FALSE
    # there, with their truth (neighbouring starts mostly share one)
    starts: list[int] = []
    class_of: dict[tuple[tuple[str, Truth], ...], int] = {}
    members: list[list[tuple[str, int]]] = []  # per class: (hazard id, its weight)
    by_set: dict[int, int] = {}  # id of a start's hazard set -> its class, where truths are fixed
    for i in range(n - 1):
        sides = idx.sides(product, nodes[i].version, nodes[i].parsed)
        ids, _ = idx.started(sides)
        c = by_set.get(id(ids))
        if c is None:
            state = s.state_at(i)
            met = [(h, truths.of(h, state)) for h in (*sides.skip_pre, *sides.trans_pre)]
            met = [(h, t) for h, t in met if t is not Truth.FALSE]
            key = tuple((h.id, t) for h, t in met)
            c = class_of.get(key)
            if c is None:
                c = class_of[key] = len(members)
                members.append([(h.id, s.weigh(h, t)) for h, t in met])
            if all(h.id in truths.fixed for h in (*sides.skip_pre, *sides.trans_pre)):
                by_set[id(ids)] = c  # the index keeps ``ids``: its id stays valid
        starts.append(c)
    # P(class, end set), memoised: both are few
    pair: dict[tuple[int, frozenset[str]], int] = {}

    def between(c: int, ends: frozenset[str]) -> int:
        p = pair.get((c, ends))
        if p is None:
            p = pair[(c, ends)] = sum(w for hid, w in members[c] if hid in ends)
        return p

    best: list[tuple[int, int] | None] = [None] * len(members)  # (dist, index) per class
    best[starts[0]] = (0, 0)
    dist = [0] * n
    prev = [0] * n
    ends_before: frozenset[str] | None = None
    found: tuple[int, int, int] = (0, 0, 0)  # (dist + P, dist, index): the best start
    for j in range(1, n):
        sides = idx.sides(product, nodes[j].version, nodes[j].parsed)
        ends = idx.landing_on(sides)  # one object per distinct set
        if ends is not ends_before:  # a new end set: every start class again
            cands = [
                (d + between(c, ends), d, i)
                for c, held in enumerate(best)
                if held is not None
                for d, i in (held,)
            ]
            found = min(cands)
            ends_before = ends
        else:  # the same end set: only the class of the release before may have improved
            held = best[starts[j - 1]]
            assert held is not None
            found = min(found, (held[0] + between(starts[j - 1], ends), *held))
        post = s.state_at(j)
        end = sum(s.weigh(h, truths.of(h, post)) for h in sides.landed)
        dist[j] = found[0] + s.hop_cost + end
        prev[j] = found[2]
        if j < n - 1:
            c = starts[j]
            held = best[c]
            if held is None or (dist[j], j) < held:
                best[c] = (dist[j], j)
    path = [n - 1]
    while path[-1] != 0:
        path.append(prev[path[-1]])
    return path[::-1]


__all__ = ["Truths", "applies", "cheapest"]
