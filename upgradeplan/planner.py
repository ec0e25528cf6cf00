"""Plans: the direct jump, the recommended path and their findings. Pure functions.

The planner evaluates hazards on an evolving state. For one product it searches the releases
between the installed version and the target (Dijkstra on hop weights, edges computed lazily):
each hop costs 1 plus the cost of the hazards it meets; a hop on which a hazard at or above
``fail_on`` applies and cannot be fixed by actions is *forbidden* (it only appears in a path
when no path avoids it, and the plan is then blocked).

The state a hop ``F -> T`` starts from is a function of ``F`` alone: the installed version of
the product is ``F``; every exact pin of a component published in a BOM of a release in
``(current, F]`` has moved in lockstep (unless held) to the newest such BOM entry; and the
``effects`` of those releases hold (later ones override earlier ones). The state the hop lands
on adds what ``T`` itself brings (its version, its BOM pins, the product's own exact pin, its
effects); releases the hop skips bring nothing, so the direct jump never borrows the effects of
a required stop it jumps over.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from upgradeplan import conditions, errors
from upgradeplan.model import (
    NEXT,
    SEVERITY_RANK,
    STATUS_OF_TRUTH,
    Action,
    Evidence,
    Fact,
    Finding,
    Hazard,
    Jump,
    KnowledgeBase,
    Migration,
    MissingFact,
    Move,
    Plan,
    Release,
    State,
    Step,
    Target,
    Truth,
    Verdict,
)

# hop weights
HOP_COST = 1.0
FORBIDDEN_COST = 1_000_000.0
APPLIES_COST = {"blocking": 1000.0, "warning": 10.0, "notice": 0.5}
MAY_APPLY_COST = {"blocking": 100.0, "warning": 2.0, "notice": 0.1}
FIXED_COST = {"blocking": 3.0, "warning": 2.0, "notice": 0.5}

# windows larger than this consider only hops to the next release, the target and releases
# where some hazard range or upgrade_from constraint starts or stops matching
EXHAUSTIVE_WINDOW = 40

_UNSET = object()
_FILE_LINE = re.compile(r"^[^\s:][^:]*:\d+$")


def threshold(fail_on: str) -> int:
    """The lowest severity rank that fails; above every rank for ``never``."""
    if fail_on == "never":
        return max(SEVERITY_RANK.values()) + 1
    if fail_on not in SEVERITY_RANK:
        raise errors.BadInput(
            f"--fail-on {fail_on!r} is not one of blocking, warning, notice, never"
        )
    return SEVERITY_RANK[fail_on]


def verdict_of(
    findings: Iterable[Finding],
    fail_on: str = "blocking",
    has_actions: bool = False,
    *,
    count_fixed: bool = False,
) -> Verdict:
    """The verdict of ``findings`` relative to ``fail_on`` (docs/exit-codes.md).

    Findings fixed by the plan's actions do not block a step or a path; ``count_fixed`` judges
    them like any other (the direct jump as asked, before any action is taken).
    """
    limit = threshold(fail_on)
    found = list(findings)
    open_ = found if count_fixed else [f for f in found if not f.fixed_by]
    failing = [f for f in open_ if SEVERITY_RANK[f.severity] >= limit]
    if any(f.status == "applies" for f in failing):
        return "blocked"
    if any(f.status == "may-apply" for f in failing):
        return "undetermined"
    if has_actions or any(f.status == "applies" for f in found):
        return "safe-with-actions"
    return "safe"


_VERDICT_RANK: dict[str, int] = {
    "safe": 0,
    "safe-with-actions": 1,
    "undetermined": 2,
    "blocked": 3,
}


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    out: Verdict = "safe"
    for v in verdicts:
        if _VERDICT_RANK[v] > _VERDICT_RANK[out]:
            out = v
    return out


# --------------------------------------------------------------------------- knowledge index


@dataclass
class _ProductIndex:
    """Hazards of one product by scope, with their constraints parsed once."""

    skip: list[tuple[Hazard, Any, Any]] = field(default_factory=list)  # (h, stop, to)
    landing: list[tuple[Hazard, Any]] = field(default_factory=list)  # (h, range)
    transition: list[tuple[Hazard, Any, Any]] = field(default_factory=list)  # (h, from, to)
    state: list[tuple[Hazard, Any]] = field(default_factory=list)  # (h, range or None)
    releases: list[Release] = field(default_factory=list)  # planned, ascending
    versions: list[Any] = field(default_factory=list)  # parsed, parallel to releases


@dataclass
class _Sides:
    """The hazards a version can meet as the start or the end of a hop."""

    skip_pre: list[Hazard]  # skip hazards whose stop is above it
    trans_pre: list[Hazard]  # transition hazards whose `from` contains it
    skip_post: frozenset[str]  # skip hazards whose `to` contains it
    trans_post: frozenset[str]  # transition hazards whose `to` contains it
    landed: list[Hazard]  # landing and state hazards in scope when it runs
    landed_uses_from: bool  # one of them refers to $from


class _Index:
    """Per knowledge base: hazards by product and scope with parsed constraints (lazily)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.products: dict[str, _ProductIndex] = {}
        self.by_product: dict[str, list[Hazard]] = {}
        for h in sorted(kb.hazards.values(), key=lambda h: h.id):
            if h.withdrawn is None:
                self.by_product.setdefault(h.product, []).append(h)
        self.refs: dict[str, frozenset[str]] = {}
        # the fact keys a condition reads, when they do not depend on other facts
        self.keys: dict[str, tuple[str, ...] | None] = {}
        self._sides: dict[tuple[str, str], _Sides] = {}

    def product(self, product: str) -> _ProductIndex:
        hit = self.products.get(product)
        if hit is None:
            hit = self.products[product] = self._build(product)
        return hit

    def sides(self, product: str, version: str, parsed: Any) -> _Sides:
        """Which hazards of ``product`` a hop from / to ``version`` can be in scope of."""
        key = (product, version)
        hit = self._sides.get(key)
        if hit is None:
            pidx = self.product(product)
            landed = [h for h, rng in pidx.landing if rng.check(parsed)]
            landed += [h for h, rng_ in pidx.state if rng_ is None or rng_.check(parsed)]
            hit = _Sides(
                skip_pre=[h for h, stop, _ in pidx.skip if parsed < stop],
                trans_pre=[h for h, a, _ in pidx.transition if a.check(parsed)],
                skip_post=frozenset(h.id for h, _, to in pidx.skip if to.check(parsed)),
                trans_post=frozenset(h.id for h, _, b in pidx.transition if b.check(parsed)),
                landed=landed,
                landed_uses_from=any("$from" in self.refs.get(h.id, ()) for h in landed),
            )
            self._sides[key] = hit
        return hit

    def _build(self, product: str) -> _ProductIndex:
        from upgradeplan.graph import planned_releases
        from upgradeplan.versions import parse_constraint, parse_version

        rels = planned_releases(self.kb, product)
        idx = _ProductIndex(releases=rels, versions=[parse_version(r.version) for r in rels])
        con = parse_constraint
        for h in self.by_product.get(product, ()):
            if h.scope == "skip" and h.stop and h.to_range:
                idx.skip.append((h, parse_version(h.stop), con(h.to_range)))
            elif h.scope == "landing" and h.to_range:
                idx.landing.append((h, con(h.to_range)))
            elif h.scope == "transition" and h.from_range and h.to_range:
                idx.transition.append((h, con(h.from_range), con(h.to_range)))
            elif h.scope == "state":
                idx.state.append((h, con(h.from_range) if h.from_range else None))
            self.refs[h.id] = frozenset(conditions.hop_refs(h.when))
            keys = conditions.facts_read(h.when)
            self.keys[h.id] = None if any("<" in k for k in keys) else tuple(keys)
        return idx


_INDEX_CACHE: dict[int, tuple[weakref.ref[KnowledgeBase], _Index]] = {}


def _index(kb: KnowledgeBase) -> _Index:
    hit = _INDEX_CACHE.get(id(kb))
    if hit is not None and hit[0]() is kb:
        return hit[1]
    idx = _Index(kb)
    _INDEX_CACHE[id(kb)] = (weakref.ref(kb), idx)
    if len(_INDEX_CACHE) > 16:
        for key in [k for k, (ref, _) in _INDEX_CACHE.items() if ref() is None]:
            del _INDEX_CACHE[key]
    return idx


# --------------------------------------------------------------------------- targets


def _parse(text: str, what: str) -> Any:
    from upgradeplan.versions import parse_version

    try:
        return parse_version(text)
    except errors.InvalidVersion as exc:
        raise errors.InvalidVersion(text, exc.reason, where=what) from None


def latest_release(kb: KnowledgeBase, product: str) -> str:
    """The newest released, non-withdrawn version of ``product``."""
    if product not in kb.products:
        raise errors.UnknownName("product", product, sorted(kb.products))
    rels = _index(kb).product(product).releases
    if not rels:
        raise errors.BadInput(f"{product} has no released version in the knowledge base")
    return rels[-1].version


def resolve_target(kb: KnowledgeBase, target: Target) -> Target:
    """The knowledge's release for ``target`` ("latest" allowed); typed errors otherwise."""
    if target.product not in kb.products:
        raise errors.UnknownName("product", target.product, sorted(kb.products))
    if target.version == "latest":
        return Target(target.product, latest_release(kb, target.product))
    all_rels = [r for r in kb.releases.get(target.product, ()) if r.version != NEXT]
    known = [r.version for r in all_rels if r.withdrawn is None]
    wanted = None
    try:
        wanted = _parse(target.version, f"target {target.product}")
    except errors.InvalidVersion:
        raise errors.UnknownName(f"release of {target.product}", target.version, known) from None
    for rel in all_rels:
        if rel.version == target.version or _parse(rel.version, rel.key) == wanted:
            if rel.withdrawn is not None:
                raise errors.BadInput(
                    f"{rel.key} was withdrawn ({rel.withdrawn.date}: {rel.withdrawn.reason})",
                    hint=f"pick another release: {', '.join(known[-3:])}",
                )
            return Target(target.product, rel.version)
    raise errors.UnknownName(f"release of {target.product}", target.version, known)


# --------------------------------------------------------------------------- findings


def _in(con: Any, version: Any) -> bool:
    return version is not None and bool(con.check(version))


_MOVED = re.compile(r"^(?P<where>.*) \(moved to \S+ with \S+\)$")


def moved_source(written: Fact | None, version: str, release: str) -> str:
    """The source of a pin the plan moved: where it is written, and that the plan moved it."""
    where = written.source if written is not None else release
    return f"{written_at(where)} (moved to {version} with {release})"


def written_at(source: str) -> str:
    """Where a pin is written, without the note that the plan moved it."""
    m = _MOVED.match(source)
    return m.group("where") if m else source


def _location(evidence: Iterable[Evidence]) -> str:
    best = ""
    for ev in evidence:
        if ev.result is Truth.UNKNOWN:
            continue
        for fact in ev.facts:
            src = written_at(fact.source)
            inner = re.fullmatch(r"derived: exact pin \((.*)\)", src)
            if inner:
                src = str(inner.group(1))
            if _FILE_LINE.match(src) and not src.startswith(("flag ", "cluster ")):
                if fact.key.startswith(("pin.", "installed.")):
                    return src
                best = best or src
    return best


def _scope_phrase(h: Hazard, f: str | None, t: str | None) -> str:
    if h.scope == "skip":
        return f"the hop {f} → {t} skips {h.stop}"
    if h.scope == "landing":
        return f"{h.product} {t} is in {h.to_range}"
    if h.scope == "transition":
        return f"the hop {f} → {t} goes from {h.from_range} to {h.to_range}"
    return f"{h.product} runs {t}" + (f" (in {h.from_range})" if h.from_range else "")


def _out_of_scope(h: Hazard, f: str | None, t: str | None) -> Finding:
    if h.scope == "skip":
        why = f"the hop {f} → {t} does not skip {h.stop} into {h.to_range}"
    elif h.scope == "landing":
        why = f"{h.product} {t} is not in {h.to_range}"
    elif h.scope == "transition":
        why = f"the hop {f} → {t} is not from {h.from_range} to {h.to_range}"
    else:
        why = f"{h.product} {t} is not in {h.from_range}"
    return _finding(h, "does-not-apply", f, t, reason=f"not in scope: {why}")


def _finding(
    h: Hazard,
    status: str,
    f: str | None,
    t: str | None,
    *,
    reason: str,
    evidence: tuple[Any, ...] = (),
    missing: Sequence[str] = (),
    location: str = "",
) -> Finding:
    return Finding(
        hazard=h.id,
        title=h.title,
        severity=h.severity,
        scope=h.scope,
        status=status,  # type: ignore[arg-type]
        product=h.product,
        from_version=f,
        to_version=t,
        evidence=evidence,
        missing=tuple(MissingFact(k, conditions.missing_fact_hint(k)) for k in missing),
        consequence=h.consequence,
        recover=h.recover,
        avoid=h.avoid,
        location=location,
        reason=reason,
    )


def _judge(h: Hazard, state: State, kb: KnowledgeBase, f: str | None, t: str | None) -> Finding:
    """Evaluate an in-scope hazard's condition on ``state`` with ``$from``/``$to`` = f, t."""
    phrase = _scope_phrase(h, f, t)
    if h.when is None:
        return _finding(h, "applies", f, t, reason=f"applies: {phrase}")
    res = conditions.evaluate_full(h.when, state, kb, hop=(f, t))
    if res.truth is Truth.TRUE:
        said = _deciding(res.evidence, Truth.TRUE)
        return _finding(
            h,
            "applies",
            f,
            t,
            reason=f"applies: {phrase}; {said}",
            evidence=res.evidence,
            location=_location(res.evidence),
        )
    if res.truth is Truth.UNKNOWN:
        return _finding(
            h,
            "may-apply",
            f,
            t,
            reason=f"may apply: {phrase}; not known: {', '.join(res.missing) or 'see evidence'}",
            evidence=res.evidence,
            missing=res.missing,
        )
    said = _deciding(res.evidence, Truth.FALSE)
    return _finding(
        h, "does-not-apply", f, t, reason=f"does not apply: {said}", evidence=res.evidence
    )


def _deciding(evidence: Sequence[Evidence], outcome: Truth) -> str:
    """The sentences of the predicates that pushed the condition to ``outcome``.

    A predicate counts when its result, read through its negations, equals the outcome (for
    the usual ``all`` of possibly negated predicates those are exactly the deciding ones);
    when none does, every settled predicate is listed.
    """
    settled = [e for e in evidence if e.result is not Truth.UNKNOWN]
    chosen = [e for e in settled if (~e.result if e.negated else e.result) is outcome]
    return "; ".join(e.description for e in (chosen or settled))


def evaluate_hazard(
    kb: KnowledgeBase,
    hazard: Hazard,
    state: State,
    from_version: str | None,
    to_version: str | None,
) -> Finding:
    """``hazard`` for the hop ``from_version`` → ``to_version`` of its product on ``state``.

    The caller picks the state: before the hop for skip/transition hazards, after it for
    landing/state hazards. Out of scope gives a does-not-apply finding saying why.
    """
    from upgradeplan.versions import parse_constraint, parse_version

    state = conditions.derive(state, kb)
    fv = parse_version(from_version) if from_version else None
    tv = parse_version(to_version) if to_version else None
    if _hazard_in_scope(hazard, fv, tv, parse_constraint, parse_version):
        return _judge(hazard, state, kb, from_version, to_version)
    return _out_of_scope(hazard, from_version, to_version)


def _hazard_in_scope(h: Hazard, fv: Any, tv: Any, con: Any, ver: Any) -> bool:
    if h.scope == "skip":
        return (
            fv is not None
            and tv is not None
            and bool(h.stop)
            and bool(h.to_range)
            and fv < ver(h.stop)
            and _in(con(h.to_range), tv)
        )
    if h.scope == "landing":
        return bool(h.to_range) and _in(con(h.to_range), tv)
    if h.scope == "transition":
        return (
            bool(h.from_range)
            and bool(h.to_range)
            and _in(con(h.from_range), fv)
            and _in(con(h.to_range), tv)
        )
    return not h.from_range or _in(con(h.from_range), tv)


def _requires_finding(
    kb: KnowledgeBase,
    rel: Release,
    state: State,
    f: str | None,
    already: Mapping[str, str] | None = None,
) -> Finding | None:
    """``rel.requires`` on ``state``: one blocking finding, applies when one is unmet.

    A requirement whose product's version is unknown is checked (may apply) only when it is
    new or raised compared with ``already`` (the requirements of the release running before
    the hop; None when nothing is known to run, e.g. the installation as it is).
    """
    from upgradeplan.versions import parse_constraint

    evidence: list[Evidence] = []
    truth = Truth.FALSE  # "some requirement is unmet"
    missing: list[str] = []
    checked: dict[str, str] = {}
    for product, text in sorted(rel.requires.items()):
        key = f"installed.{product}"
        fact = state.get(key)
        if fact is None and (already is None or already.get(product) == text):
            continue
        checked[product] = text
        claim = f"{product} is not in {text}"
        if fact is None or not isinstance(fact.value, str):
            t = Truth.UNKNOWN
            desc = f"{claim}: unknown ({key} not known)"
            if fact is None:
                missing.append(key)
            facts: tuple[Fact, ...] = () if fact is None else (fact,)
            if fact is not None and fact.value is None:
                t, desc = Truth.TRUE, f"{claim}: yes ({product} is not installed)"
        else:
            facts = (fact,)
            unmet = not parse_constraint(text).check(fact.value)
            t = Truth.TRUE if unmet else Truth.FALSE
            desc = f"{claim}: {'yes' if unmet else 'no'} (runs {fact.value})"
        truth = truth | t
        evidence.append(Evidence("requires", desc, t, facts, (key,) if t is Truth.UNKNOWN else ()))
    if not checked:
        return None
    reqs = ", ".join(f"{p} {c}" for p, c in sorted(checked.items()))
    h = Hazard(
        id=f"requires:{rel.product}@{rel.version}",
        title=f"{rel.product} {rel.version} requires {reqs}",
        product=rel.product,
        severity="blocking",
        scope="landing",
        consequence=f"{rel.product} {rel.version} does not work without {reqs}.",
        location=rel.location,
        to_range=rel.version,
        avoid=f"Meet the requirement ({reqs}) before moving to {rel.version}.",
    )
    status = {Truth.TRUE: "applies", Truth.UNKNOWN: "may-apply", Truth.FALSE: "does-not-apply"}
    said = "; ".join(e.description for e in evidence)
    reason = {
        Truth.TRUE: f"applies: {said}",
        Truth.UNKNOWN: f"may apply: not known: {', '.join(missing)}",
        Truth.FALSE: f"does not apply: {said}",
    }[truth]
    return _finding(
        h,
        status[truth],
        f,
        rel.version,
        reason=reason,
        evidence=tuple(evidence),
        missing=missing if truth is Truth.UNKNOWN else (),
        location=_location(evidence) if truth is Truth.TRUE else "",
    )


# --------------------------------------------------------------------------- actions


def _migration_available(m: Migration | None, holds: Sequence[str]) -> bool:
    if m is None:
        return False
    if m.kind == "bom-pin":
        named = {str(m.target.get(k)) for k in ("component", "product", "name") if m.target.get(k)}
        if named & set(holds):
            return False
    return True


def fixable(kb: KnowledgeBase, finding: Finding, holds: Sequence[str]) -> bool:
    """Can the step's actions fix ``finding`` (it applies, has migrations, none is held)?"""
    if finding.status != "applies" or finding.scope == "skip":
        return False
    h = kb.hazards.get(finding.hazard)
    if h is None or not h.migrations:
        return False
    return all(_migration_available(kb.migrations.get(m), holds) for m in h.migrations)


def _render(m: Migration, values: dict[str, Any]) -> str:
    try:
        from upgradeplan.kb.templating import render_migration
    except ImportError:  # pragma: no cover - the kb package ships it
        return _render_fallback(m, values)
    try:
        return render_migration(m, values)
    except Exception as exc:  # jinja2 TemplateError subclasses
        raise errors.BadInput(
            f"migration {m.id} does not render: {exc}",
            location=str(m.location),
            hint="run 'upgradeplan kb lint'",
        ) from None


def _render_fallback(m: Migration, values: dict[str, Any]) -> str:  # pragma: no cover
    import shlex

    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    env.filters["shq"] = lambda v: shlex.quote("" if v is None else str(v))
    env.globals.clear()
    return env.from_string(m.template).render(**values)


def render_action(
    m: Migration,
    state: State,
    *,
    product: str,
    from_version: str,
    to_version: str,
    bom: Mapping[str, str],
    fixes: Sequence[str],
) -> Action:
    """Fill ``m``'s params from ``state`` (placeholders where unknown) and render it."""
    values: dict[str, Any] = {}
    placeholders: list[str] = []
    for name, spec in m.params.items():
        if isinstance(spec, Mapping):
            key = spec.get("fact")
            fact = state.get(str(key)) if key else None
            if fact is not None and fact.value is not None:
                value: Any = fact.value
            elif "value" in spec:
                value = spec["value"]
            else:
                value = spec.get("placeholder", f"<{name}>")
                placeholders.append(str(name))
        else:
            value = spec
        values[str(name)] = value
    values["step"] = {"product": product, "from": from_version, "to": to_version, "bom": dict(bom)}
    return Action(
        migration=m.id,
        title=m.title,
        kind=m.kind,
        when=m.when,
        content=_render(m, values),
        target=dict(m.target),
        fixes=tuple(fixes),
        placeholders=tuple(placeholders),
    )


# --------------------------------------------------------------------------- per-product search


@dataclass
class _Node:
    version: str
    parsed: Any
    release: Release | None
    state: State | None = None  # computed lazily


@dataclass
class _Hop:
    statuses: Sequence[tuple[str, str, str, bool]]  # (hazard id, severity, status, fixable)
    forbidden: tuple[str, ...]
    cost: float


class _Search:
    """Hop evaluation and the path search for one product from one state.

    During the search only the status of each in-scope hazard is computed (cached by the
    identity of the facts its condition reads); findings with evidence are built afterwards
    for the hops of the chosen path only.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        idx: _Index,
        product: str,
        start_state: State,
        current: str,
        target: str,
        holds: Sequence[str],
        limit: int,
    ) -> None:
        from upgradeplan.versions import parse_version

        self.kb, self.idx, self.product = kb, idx, product
        self.holds = tuple(holds)
        self.limit = limit
        self.pidx = idx.product(product)
        self.start_state = start_state
        cur_v = parse_version(current)
        tgt_v = parse_version(target)
        pairs = list(zip(self.pidx.versions, self.pidx.releases, strict=True))
        start_rel = next((r for v, r in pairs if v == cur_v), None)
        self.nodes: list[_Node] = [_Node(current, cur_v, start_rel, start_state)]
        self.nodes += [_Node(r.version, v, r) for v, r in pairs if cur_v < v <= tgt_v]
        self.target = len(self.nodes) - 1
        self._pins = {
            k[len("pin.") :]
            for k, f in start_state.facts.items()
            if k.startswith("pin.") and isinstance(f.value, str) and _is_exact(f.value)
        }
        self._hop_cache: dict[tuple[int, int], _Hop] = {}
        self._truth_cache: dict[tuple[Any, ...], Truth] = {}
        self._req_cache: dict[tuple[int, int], Finding | None] = {}
        self._fix_cache: dict[str, bool] = {}
        self._landed_cache: dict[tuple[str, str, int], list[tuple[Hazard, Truth]]] = {}
        self._allowed: list[int] | None = None  # None: every release
        self._allowed_ready = False
        self._landed_states: dict[tuple[int, int], State] = {}
        self._landing: dict[int, list[Fact]] = {}

    @property
    def carried(self) -> tuple[str, ...]:
        """Components whose exact pins move with this product's BOM."""
        published = {c for node in self.nodes[1:] if node.release for c in node.release.bom}
        return tuple(sorted((self._pins & published) - {self.product} - set(self.holds)))

    # ---- states along the window

    def state_at(self, i: int) -> State:
        """The state once the path has reached release ``i`` (every release before it visited)."""
        node = self.nodes[i]
        if node.state is not None:
            return node.state
        rel = node.release
        assert rel is not None
        node.state = self.state_at(i - 1).with_facts(*self._landing_facts(i))
        return node.state

    def landed_state(self, i: int, j: int) -> State:
        """The state right after the hop ``i -> j``: what ``j`` brings on top of ``i``.

        Releases the hop skips contribute nothing (their effects never happened).
        """
        if j == i + 1 or j == i:
            return self.state_at(j)
        key = (i, j)
        cached = self._landed_states.get(key)
        if cached is None:
            cached = self.state_at(i).with_facts(*self._landing_facts(j))
            self._landed_states[key] = cached
        return cached

    def _landing_facts(self, j: int) -> list[Fact]:
        """Installed version, lockstep pins and effects that landing on release ``j`` sets.

        Built once per release, so the facts keep their identity across hops (the truth
        cache is keyed by the identity of the facts a condition reads).
        """
        hit = self._landing.get(j)
        if hit is not None:
            return hit
        rel = self.nodes[j].release
        assert rel is not None
        facts: list[Fact] = [Fact(f"installed.{self.product}", rel.version, f"plan: {rel.key}")]
        if self.product in self._pins and self.product not in self.holds:
            # the product's own exact pin is what the user bumps to make the hop
            src = self.start_state.get(f"pin.{self.product}")
            facts.append(
                Fact(f"pin.{self.product}", rel.version, moved_source(src, rel.version, rel.key))
            )
        for comp, version in rel.bom.items():
            if comp in self._pins and comp not in self.holds and comp != self.product:
                src = self.start_state.get(f"pin.{comp}")
                facts.append(Fact(f"pin.{comp}", version, moved_source(src, version, rel.key)))
                facts.append(Fact(f"installed.{comp}", version, f"plan: BOM of {rel.key}"))
        for key, value in rel.effects.items():
            facts.append(Fact(str(key), value, f"effects of {rel.key} ({rel.location})"))
        self._landing[j] = facts
        return facts

    # ---- candidate hops

    def _interesting(self) -> list[int] | None:
        """For a large window: the releases worth stopping at (None: every release).

        The target; the next release; the first release at or above each skip hazard's stop;
        releases where a transition range starts or stops matching; releases whose effects
        change a fact; where the target's ``upgrade_from`` starts or stops matching.
        """
        n = len(self.nodes)
        if n <= EXHAUSTIVE_WINDOW:
            return None
        from upgradeplan.versions import parse_constraint

        marks: set[int] = {0, n - 1}
        if n > 1:
            marks.add(1)
        parsed = [node.parsed for node in self.nodes]
        for _, stop, _to in self.pidx.skip:
            first = bisect.bisect_left(parsed, stop, lo=1)
            if first < n:
                marks.add(first)
        # a transition is avoided by a stop outside its `from` range (and outside its `to`)
        for _, a, b in self.pidx.transition:
            inside = a.check(self.nodes[0].parsed)
            for i in range(1, n):
                if inside and not a.check(self.nodes[i].parsed):
                    if not b.check(self.nodes[i].parsed):
                        marks.add(i)
                    break
        target_rel = self.nodes[-1].release
        if target_rel is not None and target_rel.upgrade_from:
            con = parse_constraint(target_rel.upgrade_from)
            before = con.check(self.nodes[0].parsed)
            for i in range(1, n):
                now = con.check(self.nodes[i].parsed)
                if now != before:
                    marks.update((i - 1, i))
                before = now
        effects: dict[str, Any] = {}
        for i in range(1, n):
            rel = self.nodes[i].release
            if rel is not None and any(effects.get(k, _UNSET) != v for k, v in rel.effects.items()):
                marks.add(i)
                effects.update(rel.effects)
        return sorted(marks)

    @property
    def allowed(self) -> list[int] | None:
        """The releases the search may stop at (computed on first use); None: all."""
        if not self._allowed_ready:
            self._allowed, self._allowed_ready = self._interesting(), True
        return self._allowed

    @allowed.setter
    def allowed(self, value: list[int] | None) -> None:
        self._allowed, self._allowed_ready = value, True

    def successors(self, i: int) -> list[int]:
        from upgradeplan.graph import may_hop

        n = len(self.nodes)
        allowed = self.allowed
        cands = range(i + 1, n) if allowed is None else [j for j in allowed if j > i]
        out = []
        for j in cands:
            rel = self.nodes[j].release
            if (
                rel is not None
                and self.nodes[j].parsed > self.nodes[i].parsed
                and may_hop(rel, self.nodes[i].version)
            ):
                out.append(j)
        return out

    # ---- hop evaluation (search: statuses only)

    def _truth(self, h: Hazard, state: State, f: str, t: str) -> Truth:
        if h.when is None:
            return Truth.TRUE
        refs = self.idx.refs.get(h.id, frozenset())
        bound = (f if "$from" in refs else None, t if "$to" in refs else None)
        keys = self.idx.keys.get(h.id)
        if keys is None:
            ck: tuple[Any, ...] = (h.id, bound, id(state))
        else:
            ck = (h.id, bound, *map(id, map(state.facts.get, keys)))
        hit = self._truth_cache.get(ck)
        if hit is None:
            hit = conditions.truth(h.when, state, self.kb, hop=(f, t))
            self._truth_cache[ck] = hit
        return hit

    def _scan(
        self, product: str, f: str, t: str, fv: Any, tv: Any, pre: State, post: State
    ) -> list[tuple[Hazard, Truth]]:
        """In-scope hazards of ``product`` for the hop f -> t with their truth."""
        a = self.idx.sides(product, f, fv)
        b = self.idx.sides(product, t, tv)
        truth = self._truth
        out = [(h, truth(h, pre, f, t)) for h in a.skip_pre if h.id in b.skip_post]
        out += [(h, truth(h, pre, f, t)) for h in a.trans_pre if h.id in b.trans_post]
        if b.landed:
            key = (product, t, id(post))
            landed = None if b.landed_uses_from else self._landed_cache.get(key)
            if landed is None:
                landed = [(h, truth(h, post, f, t)) for h in b.landed]
                if not b.landed_uses_from:
                    self._landed_cache[key] = landed
            out += landed
        return out

    def _moved(self, pre: State, post: State) -> list[tuple[str, str, str]]:
        out = []
        for comp in sorted(self._pins):
            a, b = pre.installed(comp), post.installed(comp)
            if a is not None and b is not None and a != b and comp != self.product:
                out.append((comp, a, b))
        return out

    def _requires(self, i: int, j: int) -> Finding | None:
        rel = self.nodes[j].release
        if rel is None or not rel.requires:
            return None
        before = self.nodes[i].release
        already = before.requires if before else {}
        ck = (j, id(already))
        if ck not in self._req_cache:
            self._req_cache[ck] = _requires_finding(
                self.kb, rel, self.state_at(j), self.nodes[i].version, already
            )
        found = self._req_cache[ck]
        if found is not None and found.from_version != self.nodes[i].version:
            found = replace(found, from_version=self.nodes[i].version)
        return found

    def fixable_id(self, hazard_id: str) -> bool:
        hit = self._fix_cache.get(hazard_id)
        if hit is None:
            h = self.kb.hazards.get(hazard_id)
            hit = (
                h is not None
                and h.scope != "skip"
                and bool(h.migrations)
                and all(
                    _migration_available(self.kb.migrations.get(m), self.holds)
                    for m in h.migrations
                )
            )
            self._fix_cache[hazard_id] = hit
        return hit

    def hop(self, i: int, j: int) -> _Hop:
        """The weight of the hop i -> j (cached)."""
        from upgradeplan.versions import parse_version

        hit = self._hop_cache.get((i, j))
        if hit is not None:
            return hit
        pre, post = self.state_at(i), self.landed_state(i, j)
        f, t = self.nodes[i].version, self.nodes[j].version
        found = self._scan(
            self.product, f, t, self.nodes[i].parsed, self.nodes[j].parsed, pre, post
        )
        for comp, a, b in self._moved(pre, post):
            found += self._scan(comp, a, b, parse_version(a), parse_version(b), pre, post)
        statuses = [
            (h.id, h.severity, STATUS_OF_TRUTH[truth], self.fixable_id(h.id)) for h, truth in found
        ]
        req = self._requires(i, j)
        if req is not None:
            statuses.append((req.hazard, req.severity, req.status, False))
        result = self._weigh(statuses)
        self._hop_cache[(i, j)] = result
        return result

    def _weigh(self, statuses: Sequence[tuple[str, str, str, bool]]) -> _Hop:
        cost = HOP_COST
        forbidden: list[str] = []
        for hazard, severity, status, can_fix in statuses:
            if status == "does-not-apply":
                continue
            if status == "may-apply":
                cost += MAY_APPLY_COST[severity]
            elif can_fix:
                cost += FIXED_COST[severity]
            else:
                cost += APPLIES_COST[severity]
                if SEVERITY_RANK[severity] >= self.limit:
                    forbidden.append(hazard)
                    cost += FORBIDDEN_COST
        return _Hop(statuses, tuple(forbidden), cost)

    # ---- hop findings (the chosen path and the direct jump: full evidence)

    def hop_findings(self, i: int, j: int, *, out_of_scope: bool = False) -> list[Finding]:
        from upgradeplan.versions import parse_version

        pre, post = self.state_at(i), self.landed_state(i, j)
        f, t = self.nodes[i].version, self.nodes[j].version
        findings = self.product_findings(
            self.product,
            f,
            t,
            self.nodes[i].parsed,
            self.nodes[j].parsed,
            pre,
            post,
            out_of_scope=out_of_scope,
        )
        for comp, a, b in self._moved(pre, post):
            findings += self.product_findings(
                comp, a, b, parse_version(a), parse_version(b), pre, post
            )
        req = self._requires(i, j)
        if req is not None:
            findings.append(req)
        return findings

    def product_findings(
        self,
        product: str,
        f: str,
        t: str,
        fv: Any,
        tv: Any,
        pre: State,
        post: State,
        *,
        out_of_scope: bool = False,
    ) -> list[Finding]:
        pidx = self.idx.product(product)
        kb = self.kb
        out: list[Finding] = []
        skipped: list[Hazard] = []
        for h, stop, to in pidx.skip:
            if fv < stop and to.check(tv):
                out.append(_judge(h, pre, kb, f, t))
            else:
                skipped.append(h)
        for h, a, b in pidx.transition:
            if a.check(fv) and b.check(tv):
                out.append(_judge(h, pre, kb, f, t))
            else:
                skipped.append(h)
        for h, rng in pidx.landing:
            if rng.check(tv):
                out.append(_judge(h, post, kb, f, t))
            else:
                skipped.append(h)
        for h, rng_ in pidx.state:
            if rng_ is None or rng_.check(tv):
                out.append(_judge(h, post, kb, f, t))
            else:
                skipped.append(h)
        if out_of_scope:
            out += [_out_of_scope(h, f, t) for h in skipped]
        return out

    # ---- search

    def search(self) -> list[int]:
        """Node indices of the cheapest path from the current version to the target."""
        dist: dict[int, float] = {0: 0.0}
        prev: dict[int, int] = {}
        heap: list[tuple[float, int]] = [(0.0, 0)]
        done: set[int] = set()
        while heap:
            d, i = heapq.heappop(heap)
            if i in done:
                continue
            done.add(i)
            if i == self.target:
                break
            for j in self.successors(i):
                if j in done:
                    continue
                nd = d + self.hop(i, j).cost
                if nd < dist.get(j, float("inf")):
                    dist[j] = nd
                    prev[j] = i
                    heapq.heappush(heap, (nd, j))
        if self.target not in done:
            if self.allowed is not None:
                self.allowed = None  # the pruned releases gave no path: try them all
                return self.search()
            return []
        path = [self.target]
        while path[-1] != 0:
            path.append(prev[path[-1]])
        return path[::-1]


def _is_exact(text: str) -> bool:
    from upgradeplan.versions import is_exact

    return is_exact(text)


# --------------------------------------------------------------------------- plan


@dataclass
class _Acc:
    """What the plan collects while it walks the targets."""

    steps: list[Step] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    fixed: set[str] = field(default_factory=set)  # hazard ids whose actions were given


def _moves(before: State, after: State, product: str, comps: Iterable[str]) -> tuple[Move, ...]:
    out: list[Move] = [
        Move("installed", product, before.installed(product), after.installed(product))
    ]
    for comp in sorted(comps):
        pb, pa = before.value(f"pin.{comp}"), after.value(f"pin.{comp}")
        if pb != pa:
            src = after.get(f"pin.{comp}")
            out.append(Move("pin", comp, pb, pa, written_at(src.source) if src else ""))
        ib, ia = before.installed(comp), after.installed(comp)
        if ib != ia and comp != product:
            out.append(Move("installed", comp, ib, ia))
    return tuple(out)


def _step(
    kb: KnowledgeBase,
    search: _Search | None,
    product: str,
    f: str,
    t: str,
    pre: State,
    post: State,
    findings: Sequence[Finding],
    extra: Sequence[Finding],
    acc: _Acc,
    holds: Sequence[str],
    fail_on: str,
    bom: Mapping[str, str],
    verify: Sequence[str],
) -> Step:
    """A step: fix what can be fixed (once per plan), collect actions and verification."""
    out_findings: list[Finding] = []
    actions: list[Action] = []
    checks: list[str] = []
    for fd in [*extra, *findings]:
        h = kb.hazards.get(fd.hazard)
        if fixable(kb, fd, holds) and h is not None:
            if fd.hazard in acc.fixed:
                fd = replace(
                    fd,
                    fixed_by=h.migrations,
                    reason=fd.reason + " (fixed by the actions of an earlier step)",
                )
            else:
                acc.fixed.add(fd.hazard)
                fd = replace(fd, fixed_by=h.migrations)
                for mid in h.migrations:
                    m = kb.migrations[mid]
                    st = pre if m.when == "before" else post
                    actions.append(
                        render_action(
                            m,
                            st,
                            product=product,
                            from_version=f,
                            to_version=t,
                            bom=bom,
                            fixes=(fd.hazard,),
                        )
                    )
        if h is not None and fd.status != "does-not-apply":
            checks += [c for c in h.verify if c not in checks]
        out_findings.append(fd)
    checks += [c for c in verify if c not in checks]
    merged = _merge_actions(actions)
    verdict = verdict_of(out_findings, fail_on, bool(merged))
    comps = search._pins if search is not None else ()
    return Step(
        product=product,
        from_version=f,
        to_version=t,
        moves=_moves(pre, post, product, comps) if f != t else (),
        findings=tuple(out_findings),
        actions=merged,
        verify=tuple(checks),
        verdict=verdict,
    )


def _merge_actions(actions: Sequence[Action]) -> tuple[Action, ...]:
    """One action per migration (fixes merged), before-actions first."""
    by_id: dict[str, Action] = {}
    for a in actions:
        if a.migration in by_id:
            old = by_id[a.migration]
            fixes = tuple(dict.fromkeys((*old.fixes, *a.fixes)))
            by_id[a.migration] = replace(old, fixes=fixes)
        else:
            by_id[a.migration] = a
    merged = list(by_id.values())
    return tuple(sorted(merged, key=lambda a: 0 if a.when == "before" else 1))


def _order_targets(kb: KnowledgeBase, targets: Sequence[Target]) -> list[Target]:
    """Products another target's release requires go first; otherwise the given order."""
    wanted = {t.product: t for t in targets}
    out: list[Target] = []
    seen: set[str] = set()

    def visit(t: Target, trail: tuple[str, ...]) -> None:
        if t.product in seen or t.product in trail:
            return
        rel = kb.release(t.product, t.version)
        for dep in sorted(rel.requires if rel else {}):
            if dep in wanted:
                visit(wanted[dep], (*trail, t.product))
        seen.add(t.product)
        out.append(t)

    for t in targets:
        visit(t, ())
    return out


def current_findings(
    kb: KnowledgeBase,
    state: State,
    fail_on: str = "blocking",
    *,
    products: Iterable[str] | None = None,
) -> tuple[Finding, ...]:
    """Landing hazards on the installed versions, state hazards and unmet requirements.

    ``products`` limits the products looked at (default: every installed one). A requirement
    is reported only when the required product's version is known.
    """
    from upgradeplan.versions import parse_version

    threshold(fail_on)
    state = conditions.derive(state, kb)
    idx = _index(kb)
    out: list[Finding] = []
    wanted = set(kb.products) if products is None else set(products) & set(kb.products)
    for product in sorted(wanted):
        installed = state.installed(product)
        if installed is None:
            continue
        try:
            v = parse_version(installed)
        except errors.InvalidVersion:
            continue
        pidx = idx.product(product)
        hz = [h for h, rng in pidx.landing if rng.check(v)]
        hz += [h for h, rng in pidx.state if rng is None or rng.check(v)]
        for h in sorted(hz, key=lambda h: (-SEVERITY_RANK[h.severity], h.id)):
            out.append(_judge(h, state, kb, None, installed))
        rel = next((r for r, rv in zip(pidx.releases, pidx.versions, strict=True) if rv == v), None)
        if rel is not None:
            req = _requires_finding(kb, rel, state, None)
            if req is not None:
                out.append(req)
    return tuple(out)


def _involved(
    kb: KnowledgeBase, targets: Sequence[Target], currents: Mapping[str, str]
) -> set[str]:
    """The targets, the components their releases publish and the products they require."""
    from upgradeplan.versions import parse_version

    out: set[str] = set()
    for t in targets:
        out.add(t.product)
        low, high = parse_version(currents[t.product]), parse_version(t.version)
        pidx = _index(kb).product(t.product)
        for rel, v in zip(pidx.releases, pidx.versions, strict=True):
            if low <= v <= high:
                out.update(rel.bom)
                out.update(rel.requires)
    return out


def _current_version(state: State, product: str) -> str:
    installed = state.installed(product)
    if installed is None:
        raise errors.BadInput(
            f"the installed version of {product} is unknown",
            hint=f"state it with {conditions.missing_fact_hint('installed.' + product)}",
        )
    _parse(installed, f"installed.{product}")
    return installed


def plan(
    kb: KnowledgeBase,
    state: State,
    targets: Sequence[Target],
    *,
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
) -> Plan:
    """The direct jump, the recommended path and the verdicts for ``targets`` from ``state``."""
    limit = threshold(fail_on)
    holds = tuple(dict.fromkeys(holds))
    for h in holds:
        if h not in kb.products:
            raise errors.UnknownName("product", h, sorted(kb.products))
    state = conditions.derive(state, kb)
    resolved = [resolve_target(kb, t) for t in targets]
    if len({t.product for t in resolved}) != len(resolved):
        raise errors.BadInput(
            "a product is named twice as a target", hint="give one --to per product"
        )
    idx = _index(kb)
    currents = {t.product: _current_version(state, t.product) for t in resolved}
    for t in resolved:
        if _parse(t.version, t.product) < _parse(currents[t.product], t.product):
            raise errors.BadInput(
                f"target {t.product} {t.version} is below the installed {currents[t.product]}",
                hint="upgradeplan plans upgrades only",
            )
    ordered = _order_targets(kb, resolved)
    involved = _involved(kb, resolved, currents) if resolved else None
    state_findings = current_findings(kb, state, products=involved)

    direct = _direct(kb, idx, state, ordered, currents, holds, limit, fail_on)

    acc = _Acc()
    pending = [f for f in state_findings if fixable(kb, f, holds)]
    evolving = state
    searches: list[tuple[Target, _Search, list[int]]] = []
    for t in ordered:
        # an earlier target's BOM may already have moved this one (lockstep)
        cur = evolving.installed(t.product) or currents[t.product]
        if _parse(cur, t.product) >= _parse(t.version, t.product):
            continue
        search = _Search(kb, idx, t.product, evolving, cur, t.version, holds, limit)
        path = search.search()
        if not path:
            acc.blocked_by.append(f"no-upgrade-path:{t.product}")
            continue
        searches.append((t, search, path))
        evolving = search.state_at(path[-1])

    # fixes the installation needs where it stands (no hop of its product in the plan)
    moving = {p for _t, s, _p in searches for p in (s.product, *s.carried)}
    by_product: dict[str, list[Finding]] = {}
    for f in pending:
        if f.product not in moving:
            by_product.setdefault(f.product, []).append(f)
    for product, found in sorted(by_product.items()):
        cur = state.installed(product) or ""
        acc.steps.append(
            _step(kb, None, product, cur, cur, state, state, [], found, acc, holds, fail_on, {}, ())
        )
    for _t, search, path in searches:
        for a, b in itertools.pairwise(path):
            hop = search.hop(a, b)
            hop_findings = search.hop_findings(a, b)
            for hz in hop.forbidden:
                if hz not in acc.blocked_by:
                    acc.blocked_by.append(hz)
            mine = [f for f in pending if f.product in (search.product, *search.carried)]
            pending = [f for f in pending if f not in mine]
            rel = search.nodes[b].release
            acc.steps.append(
                _step(
                    kb,
                    search,
                    search.product,
                    search.nodes[a].version,
                    search.nodes[b].version,
                    search.state_at(a),
                    search.landed_state(a, b),
                    hop_findings,
                    mine,
                    acc,
                    holds,
                    fail_on,
                    rel.bom if rel else {},
                    rel.verify if rel else (),
                )
            )
    if acc.blocked_by:
        verdict: Verdict = "blocked"
    elif acc.steps:
        verdict = worst(s.verdict for s in acc.steps)
    else:
        verdict = verdict_of(state_findings, fail_on)
        if verdict == "blocked":
            acc.blocked_by += [
                f.hazard
                for f in state_findings
                if f.status == "applies" and SEVERITY_RANK[f.severity] >= limit
            ]
    current_map: dict[str, str | None] = {p: state.installed(p) for p in sorted(currents)}
    for p in sorted(kb.products):
        if p not in current_map and state.installed(p) is not None:
            current_map[p] = state.installed(p)
    return Plan(
        schema_version=1,
        targets=tuple(resolved),
        current=current_map,
        direct=direct,
        steps=tuple(acc.steps),
        verdict=verdict,
        blocked_by=tuple(acc.blocked_by),
        state_findings=state_findings,
        held=holds,
        state_name=state.name,
    )


def _direct(
    kb: KnowledgeBase,
    idx: _Index,
    state: State,
    targets: Sequence[Target],
    currents: Mapping[str, str],
    holds: Sequence[str],
    limit: int,
    fail_on: str,
) -> Jump:
    """Every target in one step: skip/transition on the state before, the rest after."""
    searches: list[_Search] = []
    post = state
    for t in targets:
        if _parse(currents[t.product], t.product) == _parse(t.version, t.product):
            continue
        s = _Search(kb, idx, t.product, state, currents[t.product], t.version, holds, limit)
        searches.append(s)
        end = s.landed_state(0, s.target)
        changed = [f for k, f in end.facts.items() if state.facts.get(k) is not f]
        post = post.with_facts(*changed)
    findings: list[Finding] = []
    for s in searches:
        # the jump's post state holds every target's moves
        s.nodes[s.target].state = post
        findings += s.hop_findings(0, s.target, out_of_scope=True)
    return Jump(findings=tuple(findings), verdict=verdict_of(findings, fail_on))


__all__ = [
    "current_findings",
    "evaluate_hazard",
    "fixable",
    "latest_release",
    "moved_source",
    "plan",
    "render_action",
    "resolve_target",
    "threshold",
    "verdict_of",
    "written_at",
]
