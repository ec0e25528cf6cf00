"""render/jsontext writes what json.dumps(indent=2, ensure_ascii=False) writes, byte for byte."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from upgradeplan.render import jsontext

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),  # every code point: escapes, non-ASCII, surrogates
)
keys = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(keys, inner, max_size=5),
    ),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(value: Any) -> None:
    assert jsontext.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        {"a": {}, "b": [], "c": [[]], "d": [{}]},
        {'\u00e9\u2028\n\t"\\': "\x00\x1f\u00fc\U0001f600"},
        {7: 1, 2.5: -0.0, True: math.inf, False: 0, None: -math.inf, "n": math.nan},
        [1e16, 1e-7, 2**64, -(2**63), 0.1],
    ],
)
def test_edges(value: Any) -> None:
    assert jsontext.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", [{"x": object()}, [b"bytes"], {(1, 2): 1}, {"s": {1, 2}}])
def test_what_json_refuses_is_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        json.dumps(value, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError):
        jsontext.dumps(value)


@settings(max_examples=60, deadline=None)
@given(values)
def test_the_same_text_without_the_c_encoder(value: Any) -> None:
    """Dicts and lists of scalars go through json's C encoder; without it, the same text."""
    saved = jsontext._c_make_encoder
    jsontext._c_make_encoder = None
    try:
        assert jsontext.dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
    finally:
        jsontext._c_make_encoder = saved
