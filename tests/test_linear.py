"""Patterns on RE2: case-insensitive by default, refused when RE2 cannot run them linearly."""

from __future__ import annotations

import time

import pytest

from upgradeplan.linear import PatternError, compile_pattern


def test_patterns_match_case_insensitively_unless_asked() -> None:
    assert compile_pattern("oomkilled").search("Reason: OOMKilled") is not None
    assert compile_pattern("oomkilled", case_sensitive=True).search("OOMKilled") is None


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)a", r"(?<=a)b", r"([unclosed"])
def test_what_re2_cannot_run_is_refused(pattern: str) -> None:
    with pytest.raises(PatternError):
        compile_pattern(pattern)


def test_a_nested_quantifier_runs_in_linear_time() -> None:
    rx = compile_pattern(r"(a+)+$")
    started = time.perf_counter()
    assert rx.search("a" * 100_000 + "!") is None
    assert time.perf_counter() - started < 0.5
