"""The predicate vocabulary of hazard conditions and their three-valued evaluation.

A hazard's ``when`` is a tree of :class:`~upgradeplan.model.Condition` nodes: ``all``,
``any``, ``not`` and predicates from the fixed table :data:`PREDICATES`. Nothing from the
knowledge is ever executed: a predicate name selects one of the functions of the vocabulary,
and its arguments are plain data.

Evaluation follows Kleene logic over :class:`~upgradeplan.model.Truth`. A predicate whose fact
is not in the state is UNKNOWN; every predicate records an :class:`~upgradeplan.model.Evidence`
(a sentence, the facts read with their sources, the fact keys it missed).

- :mod:`~upgradeplan.conditions.outcome`: what a predicate returns, the vocabulary entry, the
  result of a tree, and the value readers every predicate shares
- :mod:`~upgradeplan.conditions.versions`: predicates about versions, pins and published ranges
- :mod:`~upgradeplan.conditions.objects`: predicates about objects, workloads, nodes, plain facts
- :mod:`~upgradeplan.conditions.values`: predicates about chart values (set, else the default)
- :mod:`~upgradeplan.conditions.vocabulary`: :data:`PREDICATES`, name -> arguments, reads, function
- :mod:`~upgradeplan.conditions.evaluate`: evaluation with evidence, truth only, the keys read
- :mod:`~upgradeplan.conditions.hints`: how a user supplies a missing fact

To add a predicate: write ``p_<name>`` in ``versions``, ``objects`` or ``values`` (or a new
module beside them) and give it an entry in ``vocabulary.PREDICATES``.
"""

from __future__ import annotations

from upgradeplan.conditions.evaluate import (
    bind,
    evaluate,
    evaluate_full,
    facts_read,
    hop_refs,
    kleene,
    phrase,
    shared_outcomes,
    truth,
)
from upgradeplan.conditions.hints import READERS_HINT, missing_fact_hint
from upgradeplan.conditions.outcome import Hop, Outcome, PredicateSpec, Result
from upgradeplan.conditions.versions import known_versions, resolve_pin
from upgradeplan.conditions.vocabulary import PREDICATES

__all__ = [
    "PREDICATES",
    "READERS_HINT",
    "Hop",
    "Outcome",
    "PredicateSpec",
    "Result",
    "bind",
    "evaluate",
    "evaluate_full",
    "facts_read",
    "hop_refs",
    "kleene",
    "known_versions",
    "missing_fact_hint",
    "phrase",
    "resolve_pin",
    "shared_outcomes",
    "truth",
]
