"""diagnose over a corpus of pastes in the formats support receives: precision, recall, top-1.

The corpus (tests/fixtures/pastes/corpus.yaml) is written from the real format strings of
Kubernetes, Flux and Helm; each entry says which. A match counts when its confidence is medium
or high (a low-confidence hint is not a match); a paste's hazards are those its ``expect``
names (any of them is right where the text cannot tell them apart).

    python -m pytest -q tests/test_diagnose_corpus.py -s   # prints the figures
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from upgradeplan import symptoms
from upgradeplan.model import KnowledgeBase

CORPUS = Path(__file__).parent / "fixtures" / "pastes" / "corpus.yaml"


def _pastes() -> list[dict[str, Any]]:
    doc = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    pastes: list[dict[str, Any]] = doc["pastes"]
    return pastes


@dataclass
class Figures:
    pastes: int
    noise: int
    predicted: int
    right: int
    with_hazard: int
    found: int
    first: int
    misses: list[str]

    @property
    def precision(self) -> float:
        return self.right / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.with_hazard

    @property
    def top1(self) -> float:
        return self.first / self.with_hazard


def figures(kb: KnowledgeBase) -> Figures:
    f = Figures(0, 0, 0, 0, 0, 0, 0, [])
    for paste in _pastes():
        expect = set(paste["expect"])
        matched = [
            d.hazard.id for d in symptoms.diagnose(kb, paste["text"]) if d.confidence != "low"
        ]
        f.pastes += 1
        f.noise += not expect
        f.predicted += len(matched)
        wrong = [h for h in matched if h not in expect]
        f.right += len(matched) - len(wrong)
        if wrong:
            f.misses.append(f"{paste['id']}: false {wrong}")
        if expect:
            f.with_hazard += 1
            f.found += any(h in expect for h in matched)
            f.first += bool(matched) and matched[0] in expect
            if not matched or matched[0] not in expect:
                f.misses.append(f"{paste['id']}: first {matched[:1]}, expected {sorted(expect)}")
    return f


def test_the_corpus_is_as_large_as_promised() -> None:
    pastes = _pastes()
    assert len(pastes) >= 60
    assert sum(1 for p in pastes if not p["expect"]) >= 20
    assert len({p["id"] for p in pastes}) == len(pastes)


def test_every_expected_hazard_exists(kb: KnowledgeBase) -> None:
    for paste in _pastes():
        assert set(paste["expect"]) <= set(kb.hazards), paste["id"]


def test_precision_recall_and_top1_over_the_corpus(
    kb: KnowledgeBase, capsys: pytest.CaptureFixture[str]
) -> None:
    f = figures(kb)
    with capsys.disabled():
        print(
            f"\ncorpus: {f.pastes} pastes ({f.noise} noise); precision {f.precision:.3f} "
            f"({f.right}/{f.predicted}), recall {f.recall:.3f} ({f.found}/{f.with_hazard}), "
            f"top-1 {f.top1:.3f} ({f.first}/{f.with_hazard})"
        )
        for miss in f.misses:
            print("  ", miss)
    assert f.precision >= 0.9, f.misses
    assert f.recall >= 0.9, f.misses
    assert f.top1 >= 0.9, f.misses
