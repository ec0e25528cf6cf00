"""The state a path reaches, and the search where that state depends on the path taken.

After a path ``0 -> p1 -> ... -> pk`` the installation holds what the start held with the
facts of each landing laid on in order (``Search.landing_facts``: the installed version, the
pins moved in lockstep by the BOM rule, the components a release's ranges select, the
release's effects). A release the path skips moves nothing.

``Search.state_at(i)`` is the state as if every release up to ``i`` had been installed. For a
fact key that every landing of the window sets, or none does, the two agree: its value at a
release is that release's (or the start's), whatever the path. A key that some landings set
and a later one does not (a component only some BOMs list, an effect of one release) has the
value of the last release *the path stopped at* that sets it: it is *path-dependent*. Where
no path-dependent key is read by anything a hop's weight reads (the conditions of the
product's and lockstep components' hazards, a lockstep component's installed version, the
products a release requires), ``state_at`` is exact for every weight and the search is the
one pass in version order (planner/onepass.py). Otherwise the search runs Dijkstra over
*expanded* nodes: a release together with the values of the path-dependent keys the path has
reached it with, each hop weighed on the state that path reaches.

Expanded nodes already merge the partial paths that reach a release with the same values of
the path-dependent keys (the rest of the state is the same for every path there), so that
search is exact. Its size is what makes it slow: a component that only every third BOM lists
reaches release ``i`` at any of about ``i / 3`` versions, each a node whose hops to every later
release are weighed (about ``n**3 / 18`` hops for a window of ``n`` releases). The search
therefore weighs at most ``Search.budget`` hops (``HOP_BUDGET``). Where it stops there, the
plan follows the path the one pass finds on ``state_at`` (a path that exists: the hops
allowed do not depend on the path), judged
like any other on the states that path reaches, and its first step carries a finding that says
so: ``path-search-bound:PRODUCT``, blocking and *may apply* (the verdict is then at best
undetermined): a path with fewer or milder hazards was not ruled out.
"""

from __future__ import annotations

import heapq
from typing import Any

from upgradeplan.model import Fact, Finding, State
from upgradeplan.planner.costs import HOP_COST
from upgradeplan.planner.window import Window

_Sig = tuple[Any, ...]

# the most hops the path-aware search weighs before it stops (``expanded``; the default of
# ``Search.budget``); at about 60 us a hop (5 x 100 generated releases, bench/plan.py
# --bom-every 3) about 3 s of CPU
HOP_BUDGET = 40_000
# not started where the expanded graph may hold more than this many times its budget of hops
# (``possible``: an upper bound; 5 x 100 --bom-every 3 may hold about 57,000 and weighs
# 34,958; 5 x 400 may hold about 3.5 million)
BEYOND = 4
# the bound finding's id: ``path-search-bound:PRODUCT``
BOUND_PREFIX = "path-search-bound:"


def dependent_keys(s: Window) -> tuple[str, ...]:
    """The path-dependent fact keys some hop weight reads (sorted; empty: none)."""
    n = len(s.nodes)
    if n <= 2:  # one hop at most: nothing to skip
        return ()
    # set by some landing and not by a later one: the value depends on the last stop. A key
    # every landing from its first on sets is set by as many landings as follow that one
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for j in range(1, n):
        for k in s.landing_map(j):
            if k in count:
                count[k] += 1
            else:
                first[k], count[k] = j, 1
    moving = {k for k, at in first.items() if count[k] < n - at}
    if not moving:
        return ()
    read = read_keys(s)
    return tuple(sorted(moving if read is None else moving & read))


def read_keys(s: Window) -> set[str] | None:
    """The fact keys a hop's weight may read (None: any, a condition reads templated keys)."""
    out: set[str] = set()
    for product in (s.product, *s.comps):
        s.idx.product(product)  # fills idx.keys
        hazards = s.idx.by_product.get(product, ())
        if hazards and product != s.product:
            out.add(f"installed.{product}")  # where its hops start (Search.moved)
        for h in hazards:
            if h.when is None:
                continue
            keys = s.idx.keys.get(h.id)
            if keys is None:
                return None
            out.update(keys)
    for node in s.nodes[1:]:
        rel = node.release
        if rel is None:
            continue
        if rel.requires_when:
            return None
        out.update(f"installed.{p}" for p in rel.requires)
    return out


def _sig(state: State, keys: tuple[str, ...]) -> _Sig:
    return tuple(_value_of(state.facts.get(k)) for k in keys)


def _value_of(fact: Fact | None) -> Any:
    if fact is None:
        return None
    try:
        hash(fact.value)
    except TypeError:
        return ("id", id(fact))  # an unhashable value: told apart by its fact
    return (type(fact.value).__name__, fact.value, fact.source.kind)


Stopped = tuple[int, int]  # where ``expanded`` stopped: (states, hops weighed; 0: not started)


def expanded(s: Window, keys: tuple[str, ...]) -> tuple[list[int] | None, Stopped | None]:
    """Node indices of the cheapest path when ``keys`` are path-dependent: Dijkstra over
    (release, the values of ``keys`` the path reached it with), ties broken by the lower
    release as in a search over releases alone. Every hop is weighed on the state its path
    reaches; the path is empty where no path reaches the target.

    With ``s.budget`` (0: no bound) the path is None where the search stopped after weighing
    that many hops, with where it stopped: (the expanded nodes reached, the hops weighed); or
    where it was not started, the expanded graph holding possibly more than ``BEYOND`` times
    that many hops (``possible``): (the nodes it may hold, 0)."""
    limit = s.budget
    if limit:
        nodes, hops = possible(s, keys)
        if hops > BEYOND * limit:  # it would stop at the budget long before the target
            return None, (nodes, 0)
    weighed = 0
    cost = _Weigher(s, keys).cost
    Node = tuple[int, _Sig]
    origin: Node = (0, _sig(s.start_state, keys))
    states: dict[Node, State] = {origin: s.start_state}
    dist: dict[Node, int] = {origin: 0}
    prev: dict[Node, Node] = {}
    heap: list[tuple[int, int, int, Node]] = [(0, 0, 0, origin)]
    done: set[Node] = set()
    order = 0
    end: Node | None = None
    while heap:
        d, i, _, node = heapq.heappop(heap)
        if node in done:
            continue
        done.add(node)
        if i == s.target:
            end = node
            break
        pre = states[node]
        for j in s.successors(i):
            post = pre.with_facts(*s.landing_facts(j))
            nxt = (j, _sig(post, keys))
            if nxt in done:
                continue
            # one state per expanded node: states alike in every key a weight reads
            post = states.setdefault(nxt, post)
            if weighed == limit and limit:
                s.keep(list(states.values()))
                return None, (len(states), weighed)
            weighed += 1
            nd = d + cost(i, j, pre, post)
            if nd < dist.get(nxt, nd + 1):
                dist[nxt], prev[nxt] = nd, node
                order += 1
                heapq.heappush(heap, (nd, j, order, nxt))
    s.keep(list(states.values()))  # truths are cached by the identity of the facts read
    if end is None:
        return [], None
    path = [end]
    while path[-1] != origin:
        path.append(prev[path[-1]])
    return [i for i, _ in reversed(path)], None


class _Weigher:
    """The cost of a hop of the expanded search, what ``Search.hop`` gives on the same states:
    the terms that read no path-dependent key (the product's hazards, a lockstep component's
    where neither they nor where its hop starts depend on the path, the requirements) are
    weighed once per hop ``i -> j``, on the first states met; the others on each path's."""

    def __init__(self, s: Window, keys: tuple[str, ...]) -> None:
        self.s = s
        self.keys = frozenset(keys)
        self.fixed: dict[tuple[int, int], int] = {}
        self.reads: dict[str, bool] = {}
        self.comps = list(s.comps)
        # lockstep components whose version, where their hops start, depends on the path
        self.moving = {c for c in self.comps if f"installed.{c}" in self.keys}
        self.own = self._reads(s.product)

    def _reads(self, product: str) -> bool:
        """Whether a condition of a hazard of ``product`` may read a path-dependent key."""
        hit = self.reads.get(product)
        if hit is None:
            s = self.s
            s.idx.product(product)  # fills idx.keys
            hit = False
            for h in s.idx.by_product.get(product, ()):
                if h.when is not None:
                    read = s.idx.keys.get(h.id)
                    if read is None or not self.keys.isdisjoint(read):
                        hit = True
                        break
            self.reads[product] = hit
        return hit

    def _alike(self, comp: str) -> bool:
        """Whether ``comp``'s hazards weigh a hop alike whatever the path to its start."""
        return comp not in self.moving and not self._reads(comp)

    def _requires_alike(self, j: int) -> bool:
        rel = self.s.nodes[j].release
        if rel is None or not rel.requires:
            return True
        if rel.requires_when:
            return False
        return all(f"installed.{p}" not in self.keys for p in rel.requires)

    def _scan(self, comp: str, pre: State, post: State) -> int:
        s = self.s
        a, b = pre.installed(comp), post.installed(comp)
        if a is None or b is None or a == b:
            return 0
        return sum(s.weigh(h, truth) for h, truth in s.scan(comp, a, b, pre, post))

    def _own(self, i: int, j: int, pre: State, post: State) -> int:
        s = self.s
        found = s.scan(s.product, s.nodes[i].version, s.nodes[j].version, pre, post)
        return sum(s.weigh(h, truth) for h, truth in found)

    def cost(self, i: int, j: int, pre: State, post: State) -> int:
        s = self.s
        fixed = self.fixed.get((i, j))
        if fixed is None:
            fixed = HOP_COST
            if not self.own:
                fixed += self._own(i, j, pre, post)
            fixed += sum(self._scan(c, pre, post) for c in self.comps if self._alike(c))
            if self._requires_alike(j):
                fixed += s.requirement_cost(i, j, post)
            self.fixed[(i, j)] = fixed
        out = fixed
        if self.own:
            out += self._own(i, j, pre, post)
        out += sum(self._scan(c, pre, post) for c in self.comps if not self._alike(c))
        if not self._requires_alike(j):
            out += s.requirement_cost(i, j, post)
        return out


def possible(s: Window, keys: tuple[str, ...]) -> tuple[int, int]:
    """At most how many nodes and hops the expanded graph has: at release ``i``, per group of
    ``keys`` set by the same releases, one value per release up to ``i`` that sets them (and
    the start's), each node hopping to every later release."""
    n = len(s.nodes)
    setters: dict[str, frozenset[int]] = {
        k: frozenset(j for j in range(1, n) if k in s.landing_map(j)) for k in keys
    }
    groups = sorted(set(setters.values()), key=sorted)
    seen = [1] * len(groups)
    nodes = hops = 0
    for i in range(n):
        count = 1
        for g, group in enumerate(groups):
            if i in group:
                seen[g] += 1
            count *= seen[g]
        nodes += count
        hops += count * (n - 1 - i)
    return nodes, hops


def bound_finding(s: Window, stopped: Stopped, keys: tuple[str, ...]) -> Finding:
    """What the plan says where the path-aware search stopped at its budget (``expanded``;
    ``keys``: the path-dependent keys): blocking, may apply, on the first step of the path
    the search over releases alone found."""
    states, hops = stopped
    first, target = s.nodes[0].version, s.nodes[s.target].version
    if not hops:  # not started: the graph is too large for the budget
        title = f"undetermined: the path-aware search would have to weigh up to {states} states"
        most = possible(s, keys)[1]
        said = (
            f"the path-aware search was not run: the versions a path may leave components at "
            f"make up to {states} states and {most} hops, more than {BEYOND} times its "
            f"budget of {s.budget} hops"
        )
    else:
        title = f"undetermined: the path-aware search stopped after {states} states"
        said = f"the path-aware search stopped after {states} states ({hops} hops weighed)"
    return Finding(
        hazard=f"{BOUND_PREFIX}{s.product}",
        title=title,
        severity="blocking",
        scope="transition",
        status="may-apply",
        product=s.product,
        from_version=first,
        to_version=target,
        consequence=(
            f"The version a component is left at depends on the releases of {s.product} a "
            f"path stops at; {said}, so which path from {first} to {target} meets the fewest "
            "hazards is not decided. This path is judged on the states it reaches."
        ),
        avoid="Plan to an earlier target first, or from a later installed version.",
        reason=f"may apply: {said}: a path with fewer or milder hazards was not ruled out",
    )


__all__ = [
    "BEYOND",
    "BOUND_PREFIX",
    "HOP_BUDGET",
    "Stopped",
    "bound_finding",
    "dependent_keys",
    "expanded",
    "possible",
    "read_keys",
]
