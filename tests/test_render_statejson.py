"""render/statejson writes what jsontext.dumps(to_document(state)) writes, byte for byte."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from upgradeplan import provenance
from upgradeplan.model import Fact, State
from upgradeplan.provenance import ObjectRef, Source
from upgradeplan.readers.snapshot import to_document
from upgradeplan.render import jsontext
from upgradeplan.render.statejson import StateJSON
from upgradeplan.unreadable import Unreadable

texts = st.text(max_size=12)  # every code point: escapes, non-ASCII
objects = st.builds(ObjectRef, texts, texts, texts)
leaf_sources = st.one_of(
    st.builds(provenance.read_from, texts, texts),  # the common one: origin and detail
    st.builds(provenance.read_from, texts, texts, obj=st.none() | objects, path=texts),
    st.builds(provenance.in_file, texts, st.integers(0, 99)),
    st.builds(provenance.flag, texts),
    st.builds(provenance.text, texts),
    st.builds(provenance.release_default, texts, texts),
    st.builds(provenance.default_of, texts, st.integers(0, 9), texts, texts),
)
sources = st.one_of(
    leaf_sources,
    st.builds(provenance.derived_from_pin, leaf_sources),
    st.builds(provenance.moved, leaf_sources, texts, texts),
)
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    texts,
    st.lists(texts, max_size=3),
    st.dictionaries(texts, texts | st.lists(texts, max_size=2), max_size=3),
)
unread = st.builds(Unreadable, texts, st.sampled_from(["403 Forbidden", "timeout"]))


@st.composite
def states(draw: Any) -> State:
    facts = {}
    for key in draw(st.lists(texts, max_size=6, unique=True)):
        facts[key] = Fact(key, draw(values), draw(sources))
    return State(
        facts=facts,
        name=draw(texts),
        unreadable=draw(st.dictionaries(texts, texts, max_size=2)),
        unread=tuple(draw(st.lists(unread, max_size=2))),
    )


@settings(max_examples=150, deadline=None)
@given(states(), st.integers(0, 3))
def test_the_same_text_as_the_document_dumped(state: State, depth: int) -> None:
    nest: Any = StateJSON(state)
    plain: Any = to_document(state)
    for _ in range(depth):  # wherever it sits (scan -o json: results[i].state)
        nest, plain = (
            {"results": [{"name": "x", "state": nest}]},
            {"results": [{"name": "x", "state": plain}]},
        )
    assert jsontext.dumps(nest) == jsontext.dumps(plain)


def test_a_state_without_facts() -> None:
    state = State(facts={}, name="empty")
    assert jsontext.dumps([StateJSON(state)]) == jsontext.dumps([to_document(state)])


def test_an_object_source_with_neither_origin_nor_detail_written_as_its_fields_say() -> None:
    for source in (Source("object", detail="d"), Source("object", origin="o")):
        state = State(facts={"k": Fact("k", 1, source)})
        assert jsontext.dumps(StateJSON(state)) == jsontext.dumps(to_document(state))
