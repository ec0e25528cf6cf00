"""diagnose: the knowledge's symptom patterns against pasted logs, events or status text, ranked."""

from __future__ import annotations

import re

from upgradeplan.model import SEVERITY_RANK, KnowledgeBase
from upgradeplan.results import Diagnosis, SymptomMatch

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


def diagnose(kb: KnowledgeBase, text: str) -> list[Diagnosis]:
    """Match every line of ``text`` against every hazard's symptoms; best match first.

    Ranking: total specificity of the distinct patterns that matched, then how many patterns
    matched, then severity, then the hazard id (for a stable order).
    """
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    out: list[Diagnosis] = []
    for hazard in kb.hazards.values():
        if hazard.withdrawn is not None:
            continue
        matches: list[SymptomMatch] = []
        matched_patterns: set[str] = set()
        for symptom in hazard.symptoms:
            try:
                rx = re.compile(symptom.pattern, re.IGNORECASE)
            except re.error:
                continue
            for number, line in enumerate(lines, start=1):
                if rx.search(line):
                    matches.append(
                        SymptomMatch(symptom.pattern, line.strip(), number, symptom.where)
                    )
                    matched_patterns.add(symptom.pattern)
        if matches:
            score = sum(specificity(p) for p in matched_patterns)
            out.append(Diagnosis(hazard, tuple(matches), score, len(matched_patterns)))
    out.sort(key=lambda d: (-d.score, -d.patterns, -SEVERITY_RANK[d.hazard.severity], d.hazard.id))
    return out


__all__ = ["diagnose", "specificity"]
