"""readers/yamldata.load_all gives exactly what yaml.load_all with CSafeLoader gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from upgradeplan.readers import yamldata

ROOT = Path(__file__).resolve().parents[1]


def typed(value: Any) -> Any:
    """The value with every type spelled out (True == 1 and 1 == 1.0 must not pass)."""
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, repr(value))


def safe(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))


TEXTS = [
    "",
    "---\n",
    "a: 1\n---\nb: [x, 'y', \"z\"]\n---\n",
    "kind: upgradeplan-state\nfacts:\n  installed.flux:\n    value: '1.6.4'\n    source: cluster\n",
    "n: 0\noct: 0755\nhex: 0x1F\nsep: 1_000\nsigned: +3\nneg: -4\nbig: 123456789012345678901234\n",
    "f: 1.5\ninf: .inf\nnan_: .nan\nexp: 1e3\nsexa: 1:30\n",
    "b: [yes, No, on, OFF, true, False, y, n]\n",
    "nul: [~, null, Null, '', ]\nempty:\n",
    "date: 2026-09-20\nstamp: 2001-12-14t21:59:43.10-05:00\n",
    "version: 4.10\nquoted: '4.10'\n",
    "base: &b {x: 1, y: [1, 2]}\nuse: *b\nlist: &l [a, b]\nagain: *l\n",
    "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",
    "inline:\n  <<: {x: 1}\n  y: 2\n",
    "1: int key\ntrue: bool key\n",
    "dup: 1\ndup: 2\n",
    "tagged: !!str 123\nbin: !!binary aGVsbG8=\n",
    "set: !!set {a, b}\nomap: !!omap [a: 1, b: 2]\n",
    "scalar doc\n",
    "- 1\n- [2, [3, [4]]]\n",
    "key: |\n  block\n  text\nfolded: >\n  a\n  b\n",
    'uni: \u00e9t\u00e9 \u2603\nescaped: "\\u00e9\\n"\n',
    "a: &x 1\nb: *x\n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_same_data_as_the_safe_loader(text: str) -> None:
    assert typed(yamldata.load_all(text)) == typed(safe(text))


def test_aliases_are_shared_objects_as_pyyaml_shares_them() -> None:
    docs = yamldata.load_all("base: &b {x: 1}\nuse: *b\n")
    assert docs[0]["base"] is docs[0]["use"]
    recursive = yamldata.load_all("&r [*r]\n")[0]  # the safe constructor builds this one
    assert recursive[0] is recursive


@pytest.mark.parametrize(
    "text",
    [
        "? [a, b]\n: unhashable key\n",
        "a: [1, 2\n",
        "a: b: c\n",
        "- a\nb: c\n",
        "tag: !unknown x\n",
        "x: *missing\n",
        "\t- a\n",
    ],
)
def test_the_same_errors_as_the_safe_loader(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        safe(text)
    with pytest.raises(yaml.YAMLError) as got:
        yamldata.load_all(text)
    assert type(got.value) is type(expected.value) and str(got.value) == str(expected.value)


def test_every_yaml_fixture_of_the_repository_reads_the_same() -> None:
    checked = 0
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = safe(text)
        except (yaml.YAMLError, RecursionError):
            continue
        assert typed(yamldata.load_all(text)) == typed(expected), path
        checked += 1
    assert checked > 20


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["0755", "1_000", "yes", "~", "4.10", "2026-01-02", "<<", "&a", "*a"]),
)
_data = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(_data, st.sampled_from([None, True, False]))
def test_dumped_data_reads_back_as_the_safe_loader_reads_it(data: Any, flow: bool | None) -> None:
    for text in (
        yaml.safe_dump(data, default_flow_style=flow),
        yaml.safe_dump({"a": data, "b": data, "c": [data, data]}, default_flow_style=flow),
        yaml.dump(data, Dumper=yaml.CSafeDumper, allow_unicode=True),
    ):
        assert typed(yamldata.load_all(text)) == typed(safe(text))
