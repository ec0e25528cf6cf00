"""diagnose: the knowledge's symptom patterns against pasted logs, events or status text, ranked.

The paste is first read as messages (:mod:`upgradeplan.pasted`: lines joined, JSON unescaped,
original line numbers kept). Every pattern runs on RE2 (:mod:`upgradeplan.linear`: linear in
the text, whatever the pattern). A symptom says more than its pattern
(:class:`upgradeplan.model.Symptom`): a generic line (``generic``) or one whose companions
(``needs``) are absent is a low-confidence hint; a message naming only other charts or
releases than the symptom's ``names`` is not it; an event or condition read with another
reason than the symptom's ``reasons`` is not it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from msgspec import Struct, field

from upgradeplan import pasted
from upgradeplan.linear import compile_pattern, compile_set
from upgradeplan.model import SEVERITY_RANK, Hazard, KnowledgeBase, Symptom
from upgradeplan.results import Diagnosis, SymptomMatch

CONFIDENCE_RANK = {"high": 2, "medium": 1, "low": 0}
_EVIDENCE = 10  # messages kept as the evidence of one symptom of one hazard

_REGEX_SYNTAX = re.compile(r"\\[dDwWsSbB]|\\.|[.^$*+?{}\[\]|()]")


def specificity(pattern: str) -> int:
    """How much literal text a pattern demands (escapes count as one character)."""
    literal = 0
    for token in re.findall(r"\\.|.", pattern, flags=re.S):
        if token.startswith("\\"):
            literal += 0 if token[1] in "dDwWsSbB" else 1
        elif not _REGEX_SYNTAX.fullmatch(token):
            literal += 1
    return literal


# -- matching ----------------------------------------------------------------------------------


class _Hit(Struct):
    symptom: Symptom
    message: pasted.Message
    confidence: str
    agree: bool  # a name the symptom is about shows in the paste


class _Candidate(Struct):
    hits: list[_Hit] = field(default_factory=list)


def _agrees(names: Sequence[str], found: Iterable[str], text: str) -> bool:
    lowered = text.lower()
    return any(n in lowered or any(n in f for f in found) for n in names)


def _confidence(
    symptom: Symptom, msg: pasted.Message, msg_names: set[str], paste: set[str], needs_met: bool
) -> tuple[str, bool] | None:
    """(confidence, names agree) of ``symptom`` on ``msg``; None when the message is not it."""
    if symptom.reasons and msg.reason and msg.reason not in symptom.reasons:
        return None
    level = 2
    if symptom.generic and not symptom.needs:
        level = 0
    if symptom.needs and not needs_met:
        level = 0
    agree = False
    if symptom.names:
        if _agrees(symptom.names, msg_names, msg.text):
            agree = True
        elif msg_names:
            return None  # the message is about another chart, release or object
        elif paste and not _agrees(symptom.names, paste, ""):
            level = 0
        elif _agrees(symptom.names, paste, ""):
            agree = True
        else:
            level = min(level, 1)
    return ("low", "medium", "high")[level], agree


def diagnose(kb: KnowledgeBase, text: str, first_line: int = 1) -> list[Diagnosis]:
    """Every hazard a message of ``text`` shows; best first.

    Ranking: confidence (high, medium, low), then whether a name the symptom is about shows in
    the paste, then the total specificity of the distinct patterns that matched, how many
    matched, severity and the hazard id (for a stable order).
    """
    messages = pasted.normalise(text, first_line)
    symptoms = [
        (hazard, s)
        for hazard in kb.hazards.values()
        if hazard.withdrawn is None
        for s in hazard.symptoms
    ]
    if not messages or not symptoms:
        return []
    # one RE2 set of every pattern: one pass over each message says which patterns occur
    patterns = tuple(sorted({s.pattern for _, s in symptoms}))
    by_pattern: dict[str, list[tuple[Hazard, Symptom]]] = {}
    for hazard, s in symptoms:
        by_pattern.setdefault(s.pattern, []).append((hazard, s))
    every = compile_set(patterns)
    hot = [(m, hits) for m in messages if (hits := every.Match(m.text))]
    if not hot:
        return []
    paste_names: set[str] | None = None  # read on first need
    needs_cache: dict[str, bool] = {}
    whole: list[str] = []  # the messages' text, one a line, joined on first need

    def needs_met(symptom: Symptom) -> bool:
        for pattern in symptom.needs:
            if pattern not in needs_cache:
                if not whole:
                    whole.append("\n".join(m.text for m in messages))
                needs_cache[pattern] = compile_pattern(pattern).search(whole[0]) is not None
            if needs_cache[pattern]:
                return True
        return False

    found: dict[str, _Candidate] = {}
    # a log repeats its errors: what a message's text (with its reason and names) gives is
    # judged once, and a symptom keeps at most _EVIDENCE messages as its evidence
    judged_once: dict[tuple[str, str, tuple[str, ...]], list[tuple[Hazard, Symptom, str, bool]]]
    judged_once = {}
    kept: dict[tuple[str, str], int] = {}
    for msg, hits in hot:
        key = (msg.text, msg.reason, msg.names)
        verdicts = judged_once.get(key)
        if verdicts is None:
            verdicts = judged_once[key] = []
            msg_names = set(msg.names) | pasted.names_in(msg.text)
            for i in sorted(hits):
                for hazard, symptom in by_pattern[patterns[i]]:
                    if symptom.names and not msg_names and paste_names is None:
                        paste_names = pasted.paste_names(messages)
                    judged = _confidence(
                        symptom, msg, msg_names, paste_names or set(), needs_met(symptom)
                    )
                    if judged is not None:
                        verdicts.append((hazard, symptom, *judged))
        for hazard, symptom, confidence, agree in verdicts:
            counted = kept.get((hazard.id, symptom.pattern), 0)
            if counted >= _EVIDENCE:
                continue
            kept[hazard.id, symptom.pattern] = counted + 1
            found.setdefault(hazard.id, _Candidate()).hits.append(
                _Hit(symptom, msg, confidence, agree)
            )
    out: list[Diagnosis] = []
    for hazard_id, cand in found.items():
        hazard = kb.hazards[hazard_id]
        best = max(CONFIDENCE_RANK[h.confidence] for h in cand.hits)
        confidence = ("low", "medium", "high")[best]
        agree = any(h.agree for h in cand.hits if CONFIDENCE_RANK[h.confidence] == best)
        seen: dict[tuple[str, tuple[int, ...]], SymptomMatch] = {}
        for h in cand.hits:
            seen.setdefault(
                (h.symptom.pattern, h.message.lines),
                SymptomMatch(
                    h.symptom.pattern,
                    _shown(h.message.text),
                    h.message.lines[0],
                    h.symptom.where,
                    lines=h.message.lines,
                    confidence=h.confidence,
                    read_as=h.message.where,
                ),
            )
        best_patterns = {
            h.symptom.pattern for h in cand.hits if CONFIDENCE_RANK[h.confidence] == best
        }
        score = sum(specificity(p) for p in best_patterns)
        out.append(
            Diagnosis(
                hazard,
                tuple(sorted(seen.values(), key=lambda s: (s.line_number, s.pattern))),
                score,
                len(best_patterns),
                confidence=confidence,
                names_agree=agree,
            )
        )
    out.sort(key=rank_key)
    return out


def rank_key(d: Diagnosis) -> tuple[int, int, int, int, int, str]:
    """The order of diagnoses without a state (best first)."""
    return (
        -CONFIDENCE_RANK[d.confidence],
        -int(d.names_agree),
        -d.score,
        -d.patterns,
        -SEVERITY_RANK[d.hazard.severity],
        d.hazard.id,
    )


def _shown(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "CONFIDENCE_RANK",
    "diagnose",
    "rank_key",
    "specificity",
]
