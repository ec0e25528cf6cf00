"""Three-valued (Kleene) evaluation of a condition tree, with evidence for every predicate."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from upgradeplan import errors
from upgradeplan.conditions.outcome import (
    Hop,
    Outcome,
    PredicateSpec,
    Result,
)
from upgradeplan.conditions.vocabulary import PREDICATES
from upgradeplan.model import (
    Condition,
    Evidence,
    KnowledgeBase,
    State,
    Truth,
)


def bind(args: Mapping[str, Any], spec: PredicateSpec, hop: Hop) -> tuple[dict[str, Any], str]:
    """Replace ``$from`` / ``$to`` in version arguments; returns (args, unbound name or "")."""
    if not any(args.get(name) in ("$from", "$to") for name in spec.version_args):
        return args if isinstance(args, dict) else dict(args), ""
    out = dict(args)
    for name in spec.version_args:
        value = out.get(name)
        if value in ("$from", "$to"):
            bound = hop[0] if value == "$from" else hop[1]
            if bound is None:
                return out, str(value)
            out[name] = bound
    return out, ""


_CHECKED: dict[int, tuple[Condition, PredicateSpec]] = {}


def _spec_of(cond: Condition) -> PredicateSpec:
    hit = _CHECKED.get(id(cond))
    if hit is not None and hit[0] is cond:
        return hit[1]
    spec = PREDICATES.get(cond.predicate)
    if spec is None:
        raise errors.UnknownName("predicate", cond.predicate, sorted(PREDICATES))
    missing = [a for a in spec.required if a not in cond.args]
    if missing:
        where = f"{cond.location}: " if cond.location.line else ""
        raise errors.BadInput(
            f"{where}predicate {cond.predicate!r} is missing argument {', '.join(missing)}"
        )
    if len(_CHECKED) > 100_000:
        _CHECKED.clear()
    _CHECKED[id(cond)] = (cond, spec)
    return spec


_CONTENT: dict[int, tuple[Condition, tuple[str, str]]] = {}


def _content(cond: Condition) -> tuple[str, str]:
    """A predicate's name and arguments, as a key (cached per predicate node)."""
    hit = _CONTENT.get(id(cond))
    if hit is None or hit[0] is not cond:
        if len(_CONTENT) > 100_000:
            _CONTENT.clear()
        hit = _CONTENT[id(cond)] = (cond, (cond.predicate, repr(sorted(cond.args.items()))))
    return hit[1]


Memo = dict[tuple[str, str], Outcome]

# Within :func:`shared_outcomes`: predicate outcomes by content and the identity of every fact
# the predicate reads (the facts kept in the entry, so no id is reused), shared by every state
# evaluated in that block — a predicate on the same facts has the same outcome on any state
_Shared = dict[tuple[Any, ...], list[Any]]
_SHARED: ContextVar[_Shared | None] = ContextVar("upgradeplan_shared_outcomes", default=None)

# per predicate node: the fact keys it reads when they are all it reads (no templated key, no
# $from / $to argument); None: its outcome is not shared across states
_PLAIN: dict[int, tuple[Condition, tuple[str, ...] | None, Any]] = {}


@contextmanager
def shared_outcomes() -> Iterator[None]:
    """Share predicate outcomes across the states evaluated in the block (one knowledge base:
    a planner call); nested blocks use the outermost one's."""
    if _SHARED.get() is not None:
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _plain_of(cond: Condition) -> tuple[Condition, tuple[str, ...] | None, Any]:
    """(cond, the keys it reads or None, its content key), cached per predicate node."""
    hit = _PLAIN.get(id(cond))
    if hit is None or hit[0] is not cond:
        keys: tuple[str, ...] | None = None
        if not any(v in ("$from", "$to") for v in cond.args.values()):
            read = facts_read(cond)
            keys = None if any("<" in k for k in read) else tuple(read)
        if len(_PLAIN) > 100_000:
            _PLAIN.clear()
        hit = _PLAIN[id(cond)] = (cond, keys, _content(cond))
    return hit


def _entry(cond: Condition, state: State, kb: KnowledgeBase, hop: Hop) -> list[Any] | None:
    """The shared entry of predicate ``cond`` on ``state``: [outcome, the facts read, its
    evidence, its evidence under a negation] (evidence built on first use); None when no
    block of shared outcomes is open or the predicate's outcome is not shared."""
    store = _SHARED.get()
    if store is None:
        return None
    plain = _PLAIN.get(id(cond))
    if plain is None or plain[0] is not cond:
        plain = _plain_of(cond)
    keys = plain[1]
    if keys is None:
        return None
    read = tuple(map(state.facts.get, keys))
    key = (plain[2], *map(id, read))
    hit = store.get(key)
    if hit is None:
        hit = store[key] = [_outcome(cond, state, kb, hop), read, None, None]
    return hit


def _shared_outcome(cond: Condition, state: State, kb: KnowledgeBase, hop: Hop) -> Outcome:
    """``_outcome``, through the shared outcomes when a block of them is open."""
    entry = _entry(cond, state, kb, hop)
    return _outcome(cond, state, kb, hop) if entry is None else entry[0]


def evaluate_full(
    cond: Condition,
    state: State,
    kb: KnowledgeBase,
    *,
    hop: Hop = (None, None),
    memo: Memo | None = None,
) -> Result:
    """Evaluate ``cond``; ``missing`` lists only the keys that could change an UNKNOWN.

    ``memo`` (one per state and hop, kept by the caller) holds the outcome of each predicate
    by name and arguments, so conditions judged on the same state share their predicates.
    Within :func:`shared_outcomes`, a condition whose every predicate is shared, evaluated
    again on the same facts, gives the result found first (made of the same outcomes)."""
    store = _SHARED.get()
    keys = None if store is None else _whole_of(cond)
    if keys is not None:
        assert store is not None
        read = tuple(map(state.facts.get, keys))
        key = ("\0whole", id(cond), *map(id, read))
        hit = store.get(key)
        if hit is not None:
            return hit[0]  # type: ignore[no-any-return]
    evidence: list[Evidence] = []
    truth, missing = _eval(cond, state, kb, hop, False, evidence, memo)
    res = Result(truth, tuple(evidence), tuple(dict.fromkeys(missing)))
    if keys is not None:
        assert store is not None
        store[key] = [res, read, cond]  # the facts and the condition kept: no id is reused
    return res


# per condition tree: the fact keys it reads when every predicate in it is shared (None: not)
_WHOLE: dict[int, tuple[Condition, tuple[str, ...] | None]] = {}


def _whole_of(cond: Condition) -> tuple[str, ...] | None:
    hit = _WHOLE.get(id(cond))
    if hit is None or hit[0] is not cond:
        if len(_WHOLE) > 100_000:
            _WHOLE.clear()
        hit = _WHOLE[id(cond)] = (cond, _plain_keys(cond))
    return hit[1]


def _plain_keys(cond: Condition) -> tuple[str, ...] | None:
    """The fact keys of every predicate of ``cond``, when each one's outcome is shared."""
    if cond.op == "pred":
        return _plain_of(cond)[1]
    if cond.op not in ("all", "any", "not") or (cond.op == "not" and len(cond.children) != 1):
        return None  # _eval says what is wrong
    out: list[str] = []
    for child in cond.children:
        keys = _plain_keys(child)
        if keys is None:
            return None
        out.extend(k for k in keys if k not in out)
    return tuple(out)


def evaluate(
    cond: Condition, state: State, kb: KnowledgeBase, *, hop: Hop = (None, None)
) -> tuple[Truth, tuple[Evidence, ...]]:
    """Kleene evaluation of ``cond`` on ``state``; ``hop`` binds ``$from`` / ``$to``."""
    res = evaluate_full(cond, state, kb, hop=hop)
    return res.truth, res.evidence


def truth(cond: Condition, state: State, kb: KnowledgeBase, *, hop: Hop = (None, None)) -> Truth:
    """Only the truth of ``cond`` (short-circuit Kleene evaluation, no evidence kept)."""
    if cond.op == "pred":
        return _shared_outcome(cond, state, kb, hop).result
    if cond.op == "not":
        return ~truth(cond.children[0], state, kb, hop=hop)
    return kleene(cond.op, (truth(child, state, kb, hop=hop) for child in cond.children))


def kleene(op: str, truths: Iterable[Truth]) -> Truth:
    """``all`` or ``any`` of ``truths`` in Kleene logic, read only up to the first that
    decides it (FALSE for ``all``, TRUE for ``any``); UNKNOWN when none decides and one is."""
    stop = Truth.FALSE if op == "all" else Truth.TRUE
    seen_unknown = False
    for t in truths:
        if t is stop:
            return stop
        seen_unknown = seen_unknown or t is Truth.UNKNOWN
    if seen_unknown:
        return Truth.UNKNOWN
    return Truth.TRUE if op == "all" else Truth.FALSE


def _eval(
    cond: Condition,
    state: State,
    kb: KnowledgeBase,
    hop: Hop,
    negated: bool,
    evidence: list[Evidence],
    memo: Memo | None = None,
) -> tuple[Truth, Sequence[str]]:
    """``cond``'s truth and the keys that could change an UNKNOWN, every predicate's evidence
    appended to ``evidence`` in order (through the function compiled for the node)."""
    return _run_of(cond)(state, kb, hop, negated, evidence, memo, _SHARED.get())


# a condition node evaluated: (state, kb, hop, negated, evidence, memo, the shared outcomes)
# -> (its truth, the keys that could change an UNKNOWN; never changed by the caller)
_Run = Callable[
    [State, KnowledgeBase, Hop, bool, list[Evidence], "Memo | None", "_Shared | None"],
    tuple[Truth, Sequence[str]],
]

# per condition node (by identity, the node kept so its id is not reused): its _Run
_RUNS: dict[int, tuple[Condition, _Run]] = {}


def _run_of(cond: Condition) -> _Run:
    hit = _RUNS.get(id(cond))
    if hit is None or hit[0] is not cond:
        if len(_RUNS) > 100_000:
            _RUNS.clear()
        hit = _RUNS[id(cond)] = (cond, _compile(cond))
    return hit[1]


def _compile(cond: Condition) -> _Run:
    """The evaluation of one node, its children's compiled once: the node's operator is
    looked at here, not on every evaluation. What is wrong with a node (a ``not`` of more
    than one condition, an unknown operator) is raised where it is evaluated, as before."""
    if cond.op == "pred":
        return _pred_run(cond)
    if cond.op == "not":
        if len(cond.children) != 1:
            return _raising("`not` takes exactly one condition")
        inner = _run_of(cond.children[0])

        def run_not(
            state: State,
            kb: KnowledgeBase,
            hop: Hop,
            negated: bool,
            evidence: list[Evidence],
            memo: Memo | None,
            store: _Shared | None,
        ) -> tuple[Truth, Sequence[str]]:
            t, missing = inner(state, kb, hop, not negated, evidence, memo, store)
            return ~t, missing

        return run_not
    if cond.op not in ("all", "any"):
        return _raising(f"unknown condition operator {cond.op!r}")
    runs = tuple(_run_of(c) for c in cond.children)
    # Kleene: `all` is FALSE when a child is, else UNKNOWN when one is, else TRUE (`any` dual)
    stop, rest = (Truth.FALSE, Truth.TRUE) if cond.op == "all" else (Truth.TRUE, Truth.FALSE)
    unknown = Truth.UNKNOWN

    def run_junction(
        state: State,
        kb: KnowledgeBase,
        hop: Hop,
        negated: bool,
        evidence: list[Evidence],
        memo: Memo | None,
        store: _Shared | None,
    ) -> tuple[Truth, Sequence[str]]:
        # every child is evaluated (each predicate's evidence is kept), in order
        results = [run(state, kb, hop, negated, evidence, memo, store) for run in runs]
        out = rest
        for t, _ in results:
            if t is stop:
                return stop, ()
            if t is unknown:
                out = unknown
        if out is rest:
            return rest, ()
        return unknown, [k for t, m in results if t is unknown for k in m]

    return run_junction


def _raising(message: str) -> _Run:
    """A node that is wrong: raises when evaluated (never on a good condition's path, so its
    arguments are not spelt out)."""

    def run_bad(*_: object) -> tuple[Truth, Sequence[str]]:
        raise errors.BadInput(message)

    return run_bad


def _pred_run(cond: Condition) -> _Run:
    # what ``_plain_of`` says of the node (the keys it reads or None, its content key, whether
    # it reads one key), found on its first evaluation among shared outcomes (where a node
    # that is wrong raises, as ``_outcome`` would)
    plain: list[Any] = []

    def run_pred(
        state: State,
        kb: KnowledgeBase,
        hop: Hop,
        negated: bool,
        evidence: list[Evidence],
        memo: Memo | None,
        store: _Shared | None,
    ) -> tuple[Truth, Sequence[str]]:
        if store is not None:  # shared (``_entry``): its outcome and evidence (immutable) reused
            if not plain:
                _, keys, content = _plain_of(cond)
                plain.extend((keys, content, keys is not None and len(keys) == 1))
            keys = plain[0]
            if keys is not None:
                read: tuple[Any, ...]
                if plain[2]:
                    fact = state.facts.get(keys[0])
                    read, key = (fact,), (plain[1], id(fact))  # as ``_entry`` keys it
                else:
                    read = tuple(map(state.facts.get, keys))
                    key = (plain[1], *map(id, read))
                entry = store.get(key)
                if entry is None:
                    entry = store[key] = [_outcome(cond, state, kb, hop), read, None, None]
                out: Outcome = entry[0]
                ev = entry[2 + negated]
                if ev is None:
                    ev = entry[2 + negated] = _evidence(cond, out, negated)
                evidence.append(ev)
                return out.result, out.missing if out.result is Truth.UNKNOWN else ()
        found = memo.get(_content(cond)) if memo is not None else None
        if found is not None:
            out = found
        else:
            out = _outcome(cond, state, kb, hop)
            if memo is not None:
                memo[_content(cond)] = out
        evidence.append(_evidence(cond, out, negated))
        return out.result, out.missing if out.result is Truth.UNKNOWN else ()

    return run_pred


def _evidence(cond: Condition, out: Outcome, negated: bool) -> Evidence:
    return Evidence(cond.predicate, out.description, out.result, out.facts, out.missing, negated)


def _outcome(cond: Condition, state: State, kb: KnowledgeBase, hop: Hop) -> Outcome:
    spec = _spec_of(cond)
    args, unbound = bind(cond.args, spec, hop)
    if unbound:
        return Outcome(Truth.UNKNOWN, f"{cond.predicate}: {unbound} has no value outside a hop")
    return spec.fn(args, state, kb)


def facts_read(cond: Condition | None, hop: Hop = (None, None)) -> list[str]:
    """Every fact key ``cond`` may read (templated keys keep ``<placeholders>``)."""
    if cond is None:
        return []
    if cond.op == "pred":
        spec = _spec_of(cond)
        args, _ = bind(cond.args, spec, hop)
        return spec.reads(args)
    out: list[str] = []
    for child in cond.children:
        out.extend(k for k in facts_read(child, hop) if k not in out)
    return out


def hop_refs(cond: Condition | None) -> set[str]:
    """Which of ``$from`` / ``$to`` the condition refers to."""
    if cond is None:
        return set()
    if cond.op == "pred":
        return {v for v in cond.args.values() if v in ("$from", "$to")}
    out: set[str] = set()
    for child in cond.children:
        out |= hop_refs(child)
    return out


def phrase(cond: Condition, kb: KnowledgeBase, *, hop: Hop = (None, None)) -> str:
    """The condition in words, as the predicates state their claims ("values.x is true and
    not (…)"), for titles; nothing of an installation is read."""
    if cond.op == "pred":
        spec = _spec_of(cond)
        args, unbound = bind(cond.args, spec, hop)
        if not unbound:
            try:
                said = spec.fn(args, State(), kb).description
            except errors.UpgradeplanError:
                said = ""
            if said:
                return said.split(": ", 1)[0]
        shown = ", ".join(f"{k}={v}" for k, v in sorted(cond.args.items()))
        return f"{cond.predicate}({shown})"
    if cond.op == "not":
        return "not " + _wrapped(cond.children[0], kb, hop)
    joiner = " and " if cond.op == "all" else " or "
    return joiner.join(_wrapped(c, kb, hop) for c in cond.children)


def _wrapped(cond: Condition, kb: KnowledgeBase, hop: Hop) -> str:
    said = phrase(cond, kb, hop=hop)
    return f"({said})" if cond.op in ("all", "any") and len(cond.children) > 1 else said
