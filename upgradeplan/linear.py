"""Regular expressions on RE2: time linear in the text, whatever the pattern.

``diagnose`` runs the knowledge's symptom patterns against whatever is pasted, and ``kb
lint`` checks them; both compile them here, so a pattern the engine cannot run in linear
time (a back-reference, a look-around) is refused at lint time and never hangs a diagnosis.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


class PatternError(ValueError):
    """A pattern RE2 cannot run (a back-reference, a look-around, bad syntax)."""


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str, case_sensitive: bool = False) -> Any:
    """``pattern`` compiled by RE2, case-insensitive unless asked; :class:`PatternError` when
    RE2 refuses it."""
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise PatternError(str(exc)) from None


@lru_cache(maxsize=64)
def compile_set(patterns: tuple[str, ...]) -> Any:
    """All ``patterns`` in one RE2 set, case-insensitive: ``.Match(text)`` gives the indices
    of those that occur in ``text``, in one pass over it whatever their number."""
    import re2

    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    found = re2.Set.SearchSet(options)
    for pattern in patterns:
        try:
            found.Add(pattern)
        except re2.error as exc:
            raise PatternError(f"{pattern!r}: {exc}") from None
    found.Compile()
    return found


__all__ = ["PatternError", "compile_pattern", "compile_set"]
