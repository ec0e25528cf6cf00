"""The state a path reaches, and the search where that state depends on the path taken.

After a path ``0 -> p1 -> ... -> pk`` the installation holds what the start held with the
facts of each landing laid on in order (``Search._landing_facts``: the installed version, the
pins moved in lockstep by the BOM rule, the components a release's ranges select, the
release's effects). A release the path skips moves nothing.

``Search.state_at(i)`` is the state as if every release up to ``i`` had been installed. For a
fact key that every landing of the window sets, or none does, the two agree: its value at a
release is that release's (or the start's), whatever the path. A key that some landings set
and a later one does not (a component only some BOMs list, an effect of one release) has the
value of the last release *the path stopped at* that sets it: it is *path-dependent*. Where
no path-dependent key is read by anything a hop's weight reads (the conditions of the
product's and lockstep components' hazards, a lockstep component's installed version, the
products a release requires), ``state_at`` is exact for every weight and the search runs as
before (the fan-out, the one pass in version order, the pruning). Otherwise the search runs
Dijkstra over *expanded* nodes: a release together with the values of the path-dependent keys
the path has reached it with, each hop weighed on the state that path reaches. Where no such
key exists (the bundled knowledge's common case) the expanded graph is the plain one.

Expanded nodes already merge the partial paths that reach a release with the same values of
the path-dependent keys (the rest of the state is the same for every path there), so that
search is exact. Its size is what makes it slow: a component that only every third BOM lists
reaches release ``i`` at any of about ``i / 3`` versions, each a node whose hops to every later
release are weighed (about ``n**3 / 18`` hops for a window of ``n`` releases). The search
therefore weighs at most ``HOP_BUDGET`` hops. Where it stops there, the plan follows the path
the plain search finds (a path that exists: the hops allowed do not depend on the path), judged
like any other on the states that path reaches, and its first step carries a finding that says
so: ``path-search-bound:PRODUCT``, blocking and *may apply* (the verdict is then at best
undetermined): a path with fewer or milder hazards was not ruled out.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

from upgradeplan import provenance
from upgradeplan.model import Fact, Finding, State
from upgradeplan.versions import parse_version

if TYPE_CHECKING:
    from upgradeplan.planner.search import Search

_Sig = tuple[Any, ...]

# the most hops the path-aware search weighs before it stops (``expanded``); at about 60 us a
# hop (5 x 100 generated releases, bench/plan.py --bom-every 3) about 3 s of CPU
HOP_BUDGET = 40_000
# not started where the expanded graph may hold more than this many times HOP_BUDGET hops
# (``possible``: an upper bound; 5 x 100 --bom-every 3 may hold about 57,000 and weighs
# 34,958; 5 x 400 may hold about 3.5 million)
BEYOND = 4
# weigh what no path-dependent key reaches once per hop (``_Weigher``); off: every hop on
# its path's states by ``Search.hop`` (the reference the tests compare with)
SPLIT = True
# the bound finding's id: ``path-search-bound:PRODUCT``
BOUND_PREFIX = "path-search-bound:"


def landing_facts(s: Search, j: int) -> list[Fact]:
    """What landing on release ``j`` sets: the installed version (and the product's own exact
    pin), the exact pins of the components its BOM lists with their installed versions (the
    BOM rule, unless held), the components it publishes a range for that the installation does
    not pin, and its effects. The facts that do not depend on the state are the knowledge
    base's (``Index.landing``); only the pins the plan moves are built here."""
    rel = s.nodes[j].release
    assert rel is not None
    known = s.idx.landing(s.product, rel)
    facts: list[Fact] = [known.installed]
    pins, holds, start = s._pins, s.holds, s.start_state
    if s.product in pins and s.product not in holds:
        # the product's own exact pin is what the user bumps to make the hop
        src = start.get(f"pin.{s.product}")
        moved = provenance.moved(src.source if src else None, rel.version, rel.key)
        facts.append(Fact(f"pin.{s.product}", rel.version, moved))
    for comp, version, installed in known.bom:
        if comp in pins and comp not in holds and comp != s.product:
            written = s._pin_written.get(comp)
            if written is None:  # looked up once per search: (its key, where it is written)
                src = start.get(f"pin.{comp}")
                where = src.source.unmoved() if src else None
                written = s._pin_written[comp] = (f"pin.{comp}", where)
            key, where = written
            if where is None:
                moved = provenance.moved(None, version, rel.key)
            else:
                moved = provenance.moved_behind(where, version, rel.key)
            facts.append(Fact(key, version, moved))
            facts.append(installed)
    for comp, pin, admits in known.components:
        # a component the installation does not pin follows the range the release publishes
        own = start.get(f"pin.{comp}")
        if comp in holds or (own is not None and own.source.kind != "release-default"):
            continue
        facts.append(pin)
        if admits is not None:
            facts.append(admits)
    facts += known.effects
    return facts


def dependent_keys(s: Search) -> tuple[str, ...]:
    """The path-dependent fact keys some hop weight reads (sorted; empty: none), cached."""
    if s._dependent is None:
        s._dependent = _dependent(s)
    return s._dependent


def _dependent(s: Search) -> tuple[str, ...]:
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


def read_keys(s: Search) -> set[str] | None:
    """The fact keys a hop's weight may read (None: any, a condition reads templated keys)."""
    out: set[str] = set()
    for product in (s.product, *s.comps()):
        s.idx.product(product)  # fills idx.keys
        hazards = s.idx.by_product.get(product, ())
        if hazards and product != s.product:
            out.add(f"installed.{product}")  # where its hops start (Search._moved)
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


def walk(s: Search, path: list[int]) -> list[State]:
    """The state at each stop of ``path``: the start, then each landing laid on in turn
    (cached for the last path asked; the states stay alive with the search)."""
    key = tuple(path)
    if s._walk is not None and s._walk[0] == key:
        return s._walk[1]
    states = [s.start_state]
    for j in path[1:]:
        states.append(states[-1].with_facts(*s._landing_facts(j)))
    s._walk = (key, states)
    s._kept.extend(states)
    return states


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


def expanded(s: Search, keys: tuple[str, ...], budget: int | None = None) -> list[int] | None:
    """Node indices of the cheapest path when ``keys`` are path-dependent: Dijkstra over
    (release, the values of ``keys`` the path reached it with), ties broken by the lower
    release as in the plain search. Every hop is weighed on the state its path reaches.

    None: stopped after weighing ``budget`` hops (default ``HOP_BUDGET``; 0: no bound), with
    ``s.stopped`` set to (the expanded nodes reached, the hops weighed); or not started, where
    the expanded graph may hold more than ``BEYOND`` times that many hops (``possible``), with
    ``s.stopped`` set to (the nodes it may hold, 0)."""
    limit = HOP_BUDGET if budget is None else budget
    if limit:
        nodes, hops = possible(s, keys)
        if hops > BEYOND * limit:  # it would stop at the budget long before the target
            s.stopped = (nodes, 0)
            return None
    weighed = 0
    cost = _Weigher(s, keys).cost if SPLIT else (lambda i, j, a, b: s.hop(i, j, a, b).cost)
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
            post = pre.with_facts(*s._landing_facts(j))
            nxt = (j, _sig(post, keys))
            if nxt in done:
                continue
            # one state per expanded node: states alike in every key a weight reads
            post = states.setdefault(nxt, post)
            if weighed == limit and limit:
                s._kept.extend(states.values())
                s.stopped = (len(states), weighed)
                return None
            weighed += 1
            nd = d + cost(i, j, pre, post)
            if nd < dist.get(nxt, nd + 1):
                dist[nxt], prev[nxt] = nd, node
                order += 1
                heapq.heappush(heap, (nd, j, order, nxt))
    s._kept.extend(states.values())  # truths are cached by the identity of the facts read
    if end is None:
        return []
    path = [end]
    while path[-1] != origin:
        path.append(prev[path[-1]])
    return [i for i, _ in reversed(path)]


class _Weigher:
    """The cost of a hop of the expanded search, what ``Search.hop`` gives on the same states:
    the terms that read no path-dependent key (the product's hazards, a lockstep component's
    where neither they nor where its hop starts depend on the path, the requirements) are
    weighed once per hop ``i -> j``, on the first states met; the others on each path's."""

    def __init__(self, s: Search, keys: tuple[str, ...]) -> None:
        self.s = s
        self.keys = frozenset(keys)
        self.fixed: dict[tuple[int, int], int] = {}
        self.reads: dict[str, bool] = {}
        self.comps = [c for c in sorted(s._pins) if c != s.product]
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

    def _scan(self, comp: str, pre: State, post: State, j: int) -> int:
        s = self.s
        a, b = pre.installed(comp), post.installed(comp)
        if a is None or b is None or a == b:
            return 0
        found = s._scan(comp, a, b, parse_version(a), parse_version(b), pre, post, j)
        return sum(s.weigh(h, truth) for h, truth in found)

    def _own(self, i: int, j: int, pre: State, post: State) -> int:
        s = self.s
        f, t = s.nodes[i], s.nodes[j]
        found = s._scan(s.product, f.version, t.version, f.parsed, t.parsed, pre, post, j)
        return sum(s.weigh(h, truth) for h, truth in found)

    def cost(self, i: int, j: int, pre: State, post: State) -> int:
        from upgradeplan.planner import requirements
        from upgradeplan.planner.search import HOP_COST

        s = self.s
        fixed = self.fixed.get((i, j))
        if fixed is None:
            fixed = HOP_COST
            if not self.own:
                fixed += self._own(i, j, pre, post)
            fixed += sum(self._scan(c, pre, post, j) for c in self.comps if self._alike(c))
            if self._requires_alike(j):
                fixed += requirements.cost(s, i, j, post)
            self.fixed[(i, j)] = fixed
        out = fixed
        if self.own:
            out += self._own(i, j, pre, post)
        out += sum(self._scan(c, pre, post, j) for c in self.comps if not self._alike(c))
        if not self._requires_alike(j):
            out += requirements.cost(s, i, j, post)
        return out


def possible(s: Search, keys: tuple[str, ...]) -> tuple[int, int]:
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


def bound_finding(s: Search) -> Finding:
    """What the plan says where the path-aware search stopped at its budget (``expanded``):
    blocking, may apply, on the first step of the path the plain search found."""
    assert s.stopped is not None
    states, hops = s.stopped
    first, target = s.nodes[0].version, s.nodes[s.target].version
    if not hops:  # not started: the graph is too large for the budget
        title = f"undetermined: the path-aware search would have to weigh up to {states} states"
        most = possible(s, dependent_keys(s))[1]
        said = (
            f"the path-aware search was not run: the versions a path may leave components at "
            f"make up to {states} states and {most} hops, more than {BEYOND} times its "
            f"budget of {HOP_BUDGET} hops"
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
    "bound_finding",
    "dependent_keys",
    "expanded",
    "landing_facts",
    "possible",
    "read_keys",
    "walk",
]
