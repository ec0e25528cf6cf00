"""Findings: judging one hazard on a hop or on the installation, requirements, locations.

A finding says whether a hazard applies, may apply or does not apply, in a sentence naming the
scope and the predicates that decided it, with the evidence and where the deciding pin is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from upgradeplan import conditions, errors
from upgradeplan.model import (
    SEVERITY_RANK,
    Evidence,
    Fact,
    Finding,
    Hazard,
    KnowledgeBase,
    MissingFact,
    Release,
    State,
    Truth,
)
from upgradeplan.planner import scopes
from upgradeplan.planner.index import index_of
from upgradeplan.planner.verdicts import threshold
from upgradeplan.provenance import Source
from upgradeplan.state.derive import derive
from upgradeplan.versions import parse_constraint, parse_version

if TYPE_CHECKING:
    from upgradeplan.conditions.evaluate import Memo

# how to supply a missing fact: a function of its key alone (the fact-key table)
_hint = lru_cache(maxsize=4096)(conditions.missing_fact_hint)


def _location(evidence: Iterable[Evidence]) -> Source | None:
    """The file line of the fact that decided it: a pin or version first, else the first."""
    best: Source | None = None
    for ev in evidence:
        if ev.result is Truth.UNKNOWN:
            continue
        for fact in ev.facts:
            src = fact.source.unmoved().underived()
            if src.file_line is not None:
                if fact.key.startswith(("pin.", "installed.")):
                    return src
                best = best or src
    return best


def not_in_scope(h: Hazard, f: str | None, t: str | None) -> Finding:
    return _finding(h, "does-not-apply", f, t, reason=f"not in scope: {scopes.outside(h, f, t)}")


def _finding(
    h: Hazard,
    status: str,
    f: str | None,
    t: str | None,
    *,
    reason: str,
    evidence: tuple[Any, ...] = (),
    missing: Sequence[str] = (),
    location: Source | None = None,
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
        missing=tuple(MissingFact(k, _hint(k)) for k in missing) if missing else (),
        consequence=h.consequence,
        recover=h.recover,
        avoid=h.avoid,
        location=location,
        reason=reason,
    )


def judge(
    h: Hazard,
    state: State,
    kb: KnowledgeBase,
    f: str | None,
    t: str | None,
    memo: Memo | None = None,
) -> Finding:
    """Evaluate an in-scope hazard's condition on ``state`` with ``$from``/``$to`` = f, t
    (``memo``: predicate outcomes shared by the hazards judged on this state and hop)."""
    if h.when is None:
        return _finding(h, "applies", f, t, reason=f"applies: {scopes.phrase(h, f, t)}")
    res = conditions.evaluate_full(h.when, state, kb, hop=(f, t), memo=memo)
    if res.truth is Truth.FALSE:  # the scope is not said: the deciding predicates are
        said = _deciding(res.evidence, Truth.FALSE)
        return _finding(
            h, "does-not-apply", f, t, reason=f"does not apply: {said}", evidence=res.evidence
        )
    phrase = scopes.phrase(h, f, t)
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
    return _finding(
        h,
        "may-apply",
        f,
        t,
        reason=f"may apply: {phrase}; not known: {_unknowns(res)}",
        evidence=res.evidence,
        missing=res.missing,
    )


def _unknowns(res: Any) -> str:
    """The missing facts of an UNKNOWN evaluation, or what left it unknown when no fact did."""
    if res.missing:
        return ", ".join(res.missing)
    said = [e.description for e in res.evidence if e.result is Truth.UNKNOWN]
    return "; ".join(said) or "see evidence"


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
    state = derive(state, kb)
    fv = parse_version(from_version) if from_version else None
    tv = parse_version(to_version) if to_version else None
    scope = scopes.scope_of(hazard)
    if scope is not None and scope.covers(fv, tv):
        return judge(hazard, state, kb, from_version, to_version)
    return not_in_scope(hazard, from_version, to_version)


def requirement_truth(
    kb: KnowledgeBase, rel: Release, state: State, f: str | None
) -> tuple[Truth, list[Evidence], list[str], dict[str, str]]:
    """Whether some requirement of ``rel`` is unmet on ``state``: (truth, evidence, the facts
    missing, the requirements checked — those whose ``when`` does not rule them out)."""
    evidence: list[Evidence] = []
    truth = Truth.FALSE  # "some requirement is unmet"
    missing: list[str] = []
    checked: dict[str, str] = {}
    for product, text in sorted(rel.requires.items()):
        key = f"installed.{product}"
        fact = state.get(key)
        gate = Truth.TRUE  # a conditional requirement holds only where its `when` is true
        cond = rel.requires_when.get(product)
        if cond is not None:
            res = conditions.evaluate_full(cond, state, kb, hop=(f, rel.version))
            gate = res.truth
            if gate is Truth.FALSE:
                continue
            evidence.extend(res.evidence)
            if gate is Truth.UNKNOWN:
                missing.extend(res.missing)
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
        t = t & gate
        truth = truth | t
        evidence.append(Evidence("requires", desc, t, facts, (key,) if t is Truth.UNKNOWN else ()))
    return truth, evidence, missing, checked


REQUIREMENT_STATUS = {
    Truth.TRUE: "applies",
    Truth.UNKNOWN: "may-apply",
    Truth.FALSE: "does-not-apply",
}


def requires_finding(
    kb: KnowledgeBase,
    rel: Release,
    state: State,
    f: str | None,
    already: Mapping[str, str] | None = None,
) -> Finding | None:
    """``rel.requires`` on ``state``: one blocking finding, applies when one is unmet.

    A requirement whose product's version is unknown may apply, always: it is never dropped,
    not even when the release running before the hop (``already``, kept for callers) had the
    same requirement — an unknown Kubernetes version must not turn a blocked move "safe".
    """
    truth, evidence, missing, checked = requirement_truth(kb, rel, state, f)
    if not checked:
        return None
    reqs = ", ".join(f"{p} {c}" for p, c in sorted(checked.items()))
    when = {
        p: conditions.phrase(c, kb, hop=(f, rel.version))
        for p, c in rel.requires_when.items()
        if p in checked
    }
    said_reqs = ", ".join(
        f"{p} {c}" + (f" when {when[p]}" if p in when else "") for p, c in sorted(checked.items())
    )
    h = Hazard(
        id=f"requires:{rel.product}@{rel.version}",
        title=f"{rel.product} {rel.version} requires {said_reqs}",
        product=rel.product,
        severity="blocking",
        scope="landing",
        consequence=f"{rel.product} {rel.version} does not work without {reqs}.",
        location=rel.location,
        to_range=rel.version,
        avoid=f"Meet the requirement ({reqs}) before moving to {rel.version}.",
    )
    status = REQUIREMENT_STATUS
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
        location=_location(evidence) if truth is Truth.TRUE else None,
    )


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
    threshold(fail_on)
    state = derive(state, kb)
    idx = index_of(kb)
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
        for h in sorted(pidx.running(v), key=lambda h: (-SEVERITY_RANK[h.severity], h.id)):
            out.append(judge(h, state, kb, None, installed))
        rel = next((r for r, rv in zip(pidx.releases, pidx.versions, strict=True) if rv == v), None)
        if rel is not None:
            req = requires_finding(kb, rel, state, None)
            if req is not None:
                out.append(req)
        out.extend(_admitted_hop(kb, state, product, installed, v))
    return tuple(out)


def _admitted_hop(
    kb: KnowledgeBase, state: State, product: str, installed: str, v: Any
) -> list[Finding]:
    """The hop a range pin makes on its own: the pin of ``product`` admits a known release
    above the one it runs, which Flux installs on its next reconcile. The hop's skip,
    transition and landing hazards that apply or may apply are reported for it."""
    pin = state.pin(product)
    if pin is None or not isinstance(pin.value, str) or not pin.value:
        return []
    chosen = conditions.resolve_pin(kb, product, pin.value)
    if chosen is None or parse_version(chosen) <= v:
        return []
    out: list[Finding] = []
    for h in index_of(kb).by_product.get(product, ()):
        if h.scope == "state":
            continue
        found = evaluate_hazard(kb, h, state, installed, chosen)
        if found.status == "does-not-apply":
            continue
        why = f"the pin {pin.value} ({pin.source}) admits {product} {chosen}; "
        out.append(replace(found, reason=why + found.reason))
    return out
