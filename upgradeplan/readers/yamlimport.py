"""PyYAML imported without compiling a pattern the C loaders never use.

Importing this module imports ``yaml``: :mod:`upgradeplan.readers.yamldata` (the one C loader
of snapshots, GitOps files and the knowledge) imports it first, so a command that parses YAML
does not pay for compiling the pure-Python reader's pattern of printable characters: 57M
instructions, two thirds of importing yaml and a fifth of what a cold knowledge cache adds to
an offline check. A module that imports ``yaml`` before it does no harm: yaml is then
imported as usual.
"""

from __future__ import annotations

import re
import sys
from typing import Any

# PyYAML's pure-Python reader (yaml.reader.Reader) compiles this class of printable characters
# when yaml is imported; its ranges up to U+FFFF make it the most expensive compile of the
# import. The C loaders this package uses never read it.
_NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


class _DeferredPattern:
    """A regular expression compiled when first used; until then only its text is kept."""

    def __init__(self, pattern: str) -> None:
        self._text = pattern
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._text)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"re.compile({self._text!r}) (deferred)"


def _defer_reader_pattern() -> None:
    """Import yaml with the reader's pattern deferred until a pure-Python reader uses it.

    ``re.compile`` answers from ``re``'s cache of compiled patterns, so the entry of the
    reader's pattern is the deferred one while yaml is imported, and is removed right after
    (any later ``re.compile`` of that text compiles it as always). Where ``re`` keeps its cache
    differently, or yaml is imported already, this does nothing and yaml imports as usual.
    """
    cache = getattr(re, "_cache", None)
    key = (str, _NON_PRINTABLE, 0)
    if "yaml" in sys.modules or not isinstance(cache, dict) or key in cache:
        return
    deferred = _DeferredPattern(_NON_PRINTABLE)
    cache[key] = deferred
    try:
        import yaml  # noqa: F401
    finally:
        if cache.get(key) is deferred:
            del cache[key]


_defer_reader_pattern()
