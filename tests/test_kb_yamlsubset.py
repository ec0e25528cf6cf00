"""The knowledge parser of its YAML subset gives exactly what libyaml's path gives.

Differential: every bundled knowledge file and a generated base, and generated documents
inside and just outside the subset, against :func:`upgradeplan.kb.libyaml.load` (libyaml's
compose and the line-keeping walk): the same data and types, the same lines of every mapping,
key, sequence and item, the same keys written twice. Outside the subset the parser refuses
(:class:`OutsideSubset`) and the loader's answer is libyaml's, errors included.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from upgradeplan.kb import libyaml, yamlsubset
from upgradeplan.kb.loader import bundled_dir
from upgradeplan.kb.yamlio import LineDict, LineList, YamlSyntaxError, load_text_with_duplicates

REPO = Path(__file__).resolve().parent.parent


def _same(a: Any, b: Any) -> bool:
    """Equal data, types and lines, all the way down (True == 1 is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, LineDict):
        return (
            (a.line, a.lines, list(a)) == (b.line, b.lines, list(b))
            and all(_same(a[k], b[k]) for k in a)
        )  # fmt: skip
    if isinstance(a, LineList):
        return (a.line, a.lines, len(a)) == (b.line, b.lines, len(b)) and all(
            _same(x, y) for x, y in zip(a, b, strict=True)
        )
    return bool(a == b)


def _libyaml(text: str) -> tuple[Any, list[tuple[Any, int]]] | None:
    try:
        return libyaml.load(text, {})
    except YamlSyntaxError:
        return None


def _check(text: str, *, inside: bool) -> bool:
    """The subset's answer equals libyaml's whenever it gives one; ``inside``: it must."""
    expected = _libyaml(text)
    try:
        got = yamlsubset.parse(text, {})
    except yamlsubset.OutsideSubset:
        assert not inside, f"refused text of the subset:\n{text}"
        return False
    assert expected is not None, f"read text libyaml rejects:\n{text}"
    assert _same(got[0], expected[0]), f"different data or lines:\n{text}"
    assert got[1] == expected[1], f"different duplicate keys:\n{text}"
    return True


def _yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.yaml") if "__" not in p.as_posix())


def test_every_bundled_knowledge_file_is_read_by_the_subset_exactly() -> None:
    files = _yaml_files(Path(bundled_dir()))
    assert len(files) > 100
    for path in files:
        assert _check(path.read_text(encoding="utf-8"), inside=True), path


def test_a_generated_knowledge_base_is_read_by_the_subset_exactly(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("genkb_subset", REPO / "bench" / "genkb.py")
    assert spec is not None and spec.loader is not None
    genkb = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(genkb)
    root = genkb.generate(tmp_path / "kb", products=4, releases_per_product=30, hazards=60)
    files = _yaml_files(Path(root))
    assert len(files) > 150
    for path in files:
        assert _check(path.read_text(encoding="utf-8"), inside=True), path


def test_a_check_reading_the_bundled_knowledge_does_not_import_yaml() -> None:
    import subprocess

    code = (
        "import sys\n"
        "from upgradeplan.kb import loader\n"
        "loader.load()\n"
        "print('yaml' in sys.modules)\n"
    )
    env = {**os.environ, "UPGRADEPLAN_NO_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


# -- scalars


@given(st.text(alphabet="0123456789-+._:eExXbBoOaAfFiInN~yYsStTrRuUlL<= ", min_size=1, max_size=9))
@settings(max_examples=300)
def test_plain_scalars_resolve_as_the_safe_loader_resolves_them(text: str) -> None:
    text = text.strip(" ")
    if not text:
        return
    tag = yaml.resolver.Resolver().resolve(  # type: ignore[no-untyped-call]
        yaml.ScalarNode, text, (True, False)
    )
    node = yaml.ScalarNode(tag, text)
    try:
        got = yamlsubset.resolve(text)
    except yamlsubset.OutsideSubset:
        assert tag.endswith((":int", ":float", ":merge", ":value")), text
        return
    if tag.endswith((":str", ":timestamp")):
        assert got == text and type(got) is str
    else:
        expected = yaml.constructor.SafeConstructor().construct_object(node)
        assert type(got) is type(expected) and got == expected, text


# -- generated documents

_WORD = st.text(alphabet="abcdefgz", min_size=1, max_size=5)
_SAFE_PLAIN = st.one_of(
    st.lists(_WORD, min_size=1, max_size=3).map(" ".join),
    st.builds("{}.{}/{}-{}".format, _WORD, _WORD, _WORD, _WORD),
    st.integers(-999, 99999).map(str),
    st.sampled_from(["true", "No", "OFF", "yes", "null", "~", "2026-09-20", "1.2.3", "v1.2"]),
)
_SAFE_QUOTED = st.one_of(
    st.text(alphabet="ab #:'[]{},-", max_size=6).map(lambda t: "'" + t.replace("'", "''") + "'"),
    st.text(alphabet='ab #:[]\\"é', max_size=6).map(
        lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'
    ),
    st.sampled_from(['"\\t\\n\\x41\\u00e9\\U0001F600\\/\\ \\_"', "'it''s'", '""', "''"]),
)
# tokens at the edge: indicators, colons, hashes, odd quotes, numbers of every form
_EDGE = st.one_of(
    st.text(alphabet="ab:#- ,[]{}?&*!|>'\"%@`", min_size=1, max_size=6),
    st.sampled_from(
        [
            "0755",
            "0x1F",
            "1_000",
            "1:30",
            ".5",
            "1.0",
            "-.inf",
            ".NaN",
            "<<",
            "=",
            "+1",
            "-0",
            "08",
            "1e3",
            "1.0e+3",
            "'a'b",
            '"a\\q"',
            '"\\ud800"',
            "a: b",
            "a :b",
            "oci://x",
            "x:",
            "-",
            "- a",
            "--a",
            "...",
            "a #b",
            "a#b",
            "[a, b",
            "[a,]",
            "{a: }",
            "{a:b}",
            "[a: b]",
            "{? a}",
            "[a, [b, {c: d}]]",
            "!!str a",
            "&x a",
            "*x",
        ]
    ),
)


@st.composite
def _block_scalar(draw: Any, col: int) -> tuple[str, list[str]]:
    """A block scalar's header and lines (indented for a parent at ``col``)."""
    header = draw(st.sampled_from("|>")) + draw(st.sampled_from(["", "-", "+", "1", "2", "-2"]))
    inc = int(header[-1]) if header[-1].isdigit() else draw(st.integers(1, 3))
    pad = " " * (col + inc)
    lines: list[str] = []
    for i in range(draw(st.integers(1, 5))):
        kinds = ["text", "text", "blank", "spaces", "deeper", "trail"]
        kind = draw(st.sampled_from(kinds[:1] if i == 0 and draw(st.booleans()) else kinds))
        word = draw(_WORD)
        lines.append(
            {
                "text": pad + word,
                "blank": "",
                "spaces": " " * draw(st.integers(0, col + inc + 2)),
                "deeper": pad + "  " + word,
                "trail": pad + word + "  ",
            }[kind]
        )
    return header, lines


@st.composite
def _node(draw: Any, col: int, depth: int, scalar: Any, top: int = 9) -> tuple[str, list[str]]:
    """A node for a parent at ``col``: (what follows `key:` / `- ` on its line, later lines)."""
    choice = draw(st.integers(0, top if depth < 3 else 3))
    if choice <= 2:
        text = draw(scalar)
        return " " + text + draw(st.sampled_from(["", "", " # c"])), []
    if choice == 3:
        header, lines = draw(_block_scalar(col))
        return " " + header + draw(st.sampled_from(["", " # c"])), lines
    if choice == 4:
        return " " + draw(_flow(depth, scalar)), []
    inc = draw(st.integers(0 if choice in (5, 6) else 1, 3))
    if choice in (5, 6, 7):
        return "", draw(_sequence(col + inc, depth + 1, scalar))
    return "", draw(_mapping(col + draw(st.integers(1, 3)), depth + 1, scalar))


@st.composite
def _flow(draw: Any, depth: int, scalar: Any) -> str:
    items = draw(st.lists(st.one_of(scalar, _SAFE_QUOTED), max_size=3))
    if depth < 3 and draw(st.booleans()):
        items.append(draw(_flow(depth + 1, scalar)))
    if draw(st.booleans()):
        return "[" + ", ".join(items) + "]"
    keys = draw(st.lists(_WORD, min_size=len(items), max_size=len(items)))
    return "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, items, strict=True)) + "}"


@st.composite
def _mapping(draw: Any, col: int, depth: int, scalar: Any) -> list[str]:
    out: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.one_of(_WORD, _WORD, st.sampled_from(["a", "a", "'q k'", '"d"'])))
        head, rest = draw(_node(col, depth, scalar))
        out.append(" " * col + key + ":" + head)
        out.extend(rest)
        out.extend(draw(st.sampled_from([[], [], [""], [" " * col + "# note"], ["  # x"]])))
    return out


@st.composite
def _sequence(draw: Any, col: int, depth: int, scalar: Any) -> list[str]:
    out: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        if depth < 3 and draw(st.integers(0, 3)) == 0:  # a compact mapping or sequence
            inner = draw(
                st.one_of(
                    _mapping(col + 2, depth + 1, scalar), _sequence(col + 2, depth + 1, scalar)
                )
            )
            out.append(" " * col + "- " + inner[0][col + 2 :])
            out.extend(inner[1:])
            continue
        # a node starting on the line below its `-` is outside the subset: rarely
        head, rest = draw(_node(col, depth, scalar, top=draw(st.sampled_from([4] * 9 + [9]))))
        out.append(" " * col + "-" + head)
        out.extend(rest)
    return out


def _document(scalar: Any) -> Any:
    return st.tuples(_mapping(0, 0, scalar), st.sampled_from(["\n", "", "\n\n"])).map(
        lambda t: "\n".join(t[0]) + t[1]
    )


_INSIDE = st.one_of(_SAFE_PLAIN, _SAFE_QUOTED)


@given(_document(_INSIDE))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_documents_read_the_same_as_through_libyaml(text: str) -> None:
    _check(text, inside=False)  # block scalars may be outside (see the next test)


@given(_document(st.one_of(_INSIDE, _EDGE)))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_documents_at_the_edge_of_the_subset_are_read_the_same_or_refused(text: str) -> None:
    _check(text, inside=False)


def test_the_generated_documents_are_mostly_inside_the_subset() -> None:
    """The differential tests above are not vacuous: most of their documents are read."""
    read = []

    @given(_document(_INSIDE))
    @settings(max_examples=60, deadline=None, database=None, derandomize=True)
    def count(text: str) -> None:
        read.append(_check(text, inside=False))

    count()
    assert sum(read) > len(read) * 0.6, (sum(read), len(read))


# -- outside the subset: libyaml's answer, errors included

OUTSIDE = [
    "a: &x 1\nb: *x\n",
    "a: !!str 1\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: [1,\n  2]\n",
    "a: 'two\n  lines'\n",
    "a: plain\n  continued\n",
    "a: 1.5\nb: 0755\nc: 1_000\n",
    "<<: {a: 1}\nb: 2\n",
    "1: one\n",
    "? complex\n: key\n",
    "a: {b: c#d}\n",
    "a:\n- b\n-\n  c: d\n",
    "a: b\r\nc: d\r\n",
]


@pytest.mark.parametrize("text", OUTSIDE)
def test_text_outside_the_subset_is_left_to_libyaml(text: str) -> None:
    with pytest.raises(yamlsubset.OutsideSubset):
        yamlsubset.parse(text, {})
    expected = _libyaml(text)
    assert expected is not None
    got = load_text_with_duplicates(text)
    assert _same(got[0], expected[0]) and got[1] == expected[1]


BAD = [
    "a:\n\tb: 1\n",
    "a: 1\n---\nb: 2\n",
    "a: b: c\n",
    "a: [x, y\n",
    "a:\n  - b\n c: d\n",
    "a: 'open\n",
    'a: "\\q"\n',
    "a: 1\n  b: 2\n",
    "key: |\n  text\n bad: x\n",
    "a: b\n- c\n",
]


@pytest.mark.parametrize("text", BAD)
def test_text_that_is_not_yaml_gives_libyamls_one_line_error(text: str) -> None:
    with pytest.raises(YamlSyntaxError) as expected:
        libyaml.load(text, {})
    with pytest.raises(YamlSyntaxError) as got:
        load_text_with_duplicates(text)
    assert (got.value.message, got.value.line) == (expected.value.message, expected.value.line)
    assert "\n" not in got.value.message
