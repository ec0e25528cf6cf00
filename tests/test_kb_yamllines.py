"""The line-tuple reader gives exactly the subset parser's answer (so libyaml's).

Differential, as tests/test_kb_yamlsubset.py for the subset parser: every bundled knowledge
file and a generated base are read by the fast reader itself (no hand-over) and equal the
subset parser's and libyaml's answers; generated documents inside and at the edge of the
subset, whenever the fast reader answers, get the subset parser's answer, which libyaml's
compose gives too (the C loader, CSafeLoader's parser); malformed text gives libyaml's one-line
error through the loader's entry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_kb_yamlsubset import (
    _EDGE,
    _INSIDE,
    _document,
    _generated_base,
    _libyaml,
    _same,
    _yaml_files,
)

from upgradeplan.kb import libyaml, yamllines, yamlsubset
from upgradeplan.kb.loader import bundled_dir
from upgradeplan.kb.yamlio import YamlSyntaxError
from upgradeplan.kb.yamllines import load_text_with_duplicates


def _subset(text: str) -> tuple[Any, list[tuple[Any, int]]] | None:
    try:
        return yamlsubset.parse(text, {})
    except yamlsubset.OutsideSubset:
        return None


def _fast(text: str) -> tuple[Any, list[tuple[Any, int]]] | None:
    """The fast reader's own answer, None when it hands the text over (or refuses)."""
    try:
        yamlsubset.check_text(text)
        return yamllines._Lines(text, {}).read()
    except (yamllines._Unusual, yamlsubset.OutsideSubset):
        return None


def _agrees(text: str) -> bool:
    """Whether the fast reader answered; when it did, its answer is the subset parser's and
    libyaml's, and parse() always gives the subset parser's answer (or its refusal)."""
    expected = _subset(text)
    try:
        got = yamllines.parse(text, {})
    except yamlsubset.OutsideSubset:
        assert expected is None, f"refused text the subset parser reads:\n{text}"
        got = None
    if expected is not None:
        assert got is not None and _same(got[0], expected[0]) and got[1] == expected[1], text
    fast = _fast(text)
    if fast is None:
        return False
    assert expected is not None, f"read text the subset parser refuses:\n{text}"
    assert _same(fast[0], expected[0]), f"different data or lines:\n{text}"
    assert fast[1] == expected[1], f"different duplicate keys:\n{text}"
    through_libyaml = _libyaml(text)
    assert through_libyaml is not None and _same(fast[0], through_libyaml[0]), text
    assert fast[1] == through_libyaml[1], text
    return True


def test_every_bundled_knowledge_file_is_read_by_the_fast_reader() -> None:
    files = _yaml_files(Path(bundled_dir()))
    assert len(files) > 100
    for path in files:
        assert _agrees(path.read_text(encoding="utf-8")), path


def test_a_generated_knowledge_base_is_read_by_the_fast_reader(tmp_path: Path) -> None:
    for path in _generated_base(tmp_path):
        assert _agrees(path.read_text(encoding="utf-8")), path


@given(_document(_INSIDE))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_documents_read_as_the_subset_parser_reads_them(text: str) -> None:
    _agrees(text)


@given(_document(st.one_of(_INSIDE, _EDGE)))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_documents_at_the_edge_read_the_same_or_handed_over(text: str) -> None:
    _agrees(text)


def test_the_fast_reader_answers_many_generated_documents() -> None:
    """The differential tests above are not vacuous: the fast reader answers a good part of
    them (the rest have quoted keys or other forms it hands over, about two thirds)."""
    answered = []

    @given(_document(_INSIDE))
    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    def count(text: str) -> None:
        answered.append(_agrees(text))

    count()
    assert sum(answered) > len(answered) * 0.15, (sum(answered), len(answered))


# forms the fast reader hands to the subset parser, each read there as libyaml reads it
HANDED_OVER = [
    "'q k': 1\n",
    "a:\n- - x\n  - y\n",
    "1a: x\n",
    "- -x\n",
    "a:\n  - 'k': v\n",
]

# forms read through the subset parser's scalar readers (no hand-over)
READ = [
    "a: 'it''s'\n",
    'a: "tab\\there" # c\n',
    "a: {b: [c, 'd'], e: f}\n",
    "- |-\n  text\n\n  more\n- >+\n  folded\n  line\n\n",
    "a:\n- x\n- y: 1\n  z: no\nb: ~\n",
]


@pytest.mark.parametrize("text", READ)
def test_usual_forms_are_read_by_the_fast_reader(text: str) -> None:
    assert _agrees(text)


@pytest.mark.parametrize("text", HANDED_OVER)
def test_unusual_forms_are_handed_to_the_subset_parser(text: str) -> None:
    assert _fast(text) is None
    expected = _libyaml(text)
    got = yamllines.parse(text, {})
    assert expected is not None and _same(got[0], expected[0]) and got[1] == expected[1]


BAD = [
    "a:\n  b: 1\n c: 2\n",
    "a: 1\n  b: 2\n",
    "a: b\n- c\n",
    "- a\nb: c\n",
    'a: "x" y\n',
    "a: [x, y\n",
    "key: |\n  text\n bad: x\n",
]


@pytest.mark.parametrize("text", BAD)
def test_malformed_text_gives_libyamls_one_line_error(text: str) -> None:
    assert _fast(text) is None
    with pytest.raises(YamlSyntaxError) as expected:
        libyaml.load(text, {})
    with pytest.raises(YamlSyntaxError) as got:
        load_text_with_duplicates(text)
    assert (got.value.message, got.value.line) == (expected.value.message, expected.value.line)
    assert "\n" not in got.value.message
