"""explain: a hazard, release, migration or product; with a state, the evidence on it."""

from __future__ import annotations

from collections.abc import Sequence

from upgradeplan import conditions, errors, releases
from upgradeplan.conditions import missing_fact_hint
from upgradeplan.model import Evidence, Finding, Hazard, KnowledgeBase, MissingFact, State, Truth
from upgradeplan.planner.findings import evaluate_hazard
from upgradeplan.planner.scopes import judged_before
from upgradeplan.planner.targets import resolve_targets
from upgradeplan.results import ConditionResult, Explanation


def _missing(keys: Sequence[str]) -> tuple[MissingFact, ...]:
    return tuple(MissingFact(k, missing_fact_hint(k)) for k in keys)


def _value_text(value: object) -> str:
    import json

    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _condition_results(evidence: Sequence[Evidence]) -> tuple[ConditionResult, ...]:
    out: list[ConditionResult] = []
    for ev in evidence:
        out.append(
            ConditionResult(
                predicate=ev.predicate,
                description=ev.description,
                result=ev.result.value,
                observed=tuple((f.key, _value_text(f.value), str(f.source)) for f in ev.facts),
                missing=_missing(ev.missing),
                negated=ev.negated,
            )
        )
    return tuple(out)


def explain(
    kb: KnowledgeBase,
    ident: str,
    state: State | None = None,
    *,
    to: Sequence[str] = (),
) -> Explanation:
    """A hazard, release (``product@version``), migration or product; with a state, evidence."""
    if ident in kb.hazards:
        return _explain_hazard(kb, kb.hazards[ident], state, to)
    if ident in kb.migrations:
        mig = kb.migrations[ident]
        fixes = tuple(sorted(h.id for h in kb.hazards.values() if ident in h.migrations))
        return Explanation(kind="migration", id=ident, migration=mig, related=fixes)
    if "@" in ident:
        product, _, version = ident.partition("@")
        releases.require_product(kb, product)
        rel = kb.release(product, version)
        if rel is None:
            raise errors.UnknownName(
                f"{product} release", version, releases.nearest(kb, product, version)
            )
        related = tuple(sorted(h.id for h in kb.hazards_for(product)))
        return Explanation(kind="release", id=ident, release=rel, related=related)
    if ident in kb.products:
        related = tuple(sorted(h.id for h in kb.hazards_for(ident)))
        return Explanation(kind="product", id=ident, product=kb.products[ident], related=related)
    known = sorted(kb.hazards) + sorted(kb.migrations) + sorted(kb.products)
    raise errors.UnknownName("hazard, migration, product or release", ident, known)


def _explain_hazard(
    kb: KnowledgeBase, hazard: Hazard, state: State | None, to: Sequence[str]
) -> Explanation:
    if state is None:
        return Explanation(kind="hazard", id=hazard.id, hazard=hazard, related=hazard.migrations)
    targets = resolve_targets(kb, state, to) if to else []
    from_version = state.installed(hazard.product)
    to_version = next((t.version for t in targets if t.product == hazard.product), None)
    if to_version is None and not judged_before(hazard):
        to_version = from_version
    finding: Finding | None = None
    if from_version is not None and to_version is not None:
        finding = evaluate_hazard(kb, hazard, state, from_version, to_version)
    results: tuple[ConditionResult, ...] = ()
    truth = Truth.TRUE
    if hazard.when is not None:
        truth, evidence = conditions.evaluate(
            hazard.when, state, kb, hop=(from_version, to_version)
        )
        if finding is not None and finding.evidence:
            evidence = finding.evidence
        results = _condition_results(evidence)
    return Explanation(
        kind="hazard",
        id=hazard.id,
        hazard=hazard,
        finding=finding,
        conditions=results,
        hop=(from_version, to_version),
        truth=truth.value,
        related=hazard.migrations,
    )


__all__ = ["explain"]
