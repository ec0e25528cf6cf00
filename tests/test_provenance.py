"""Sources: their printed text is the outputs' wording; a snapshot records their fields and
gives them back typed, never by reading the text."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import yaml

from upgradeplan import provenance
from upgradeplan.provenance import (
    ObjectRef,
    Source,
    default_of,
    derived_from_pin,
    flag,
    from_fields,
    in_file,
    moved,
    read_from,
    release_default,
    supposed,
    text,
    to_fields,
)

BOM = in_file("clusters/prod/bom.yaml", 12)
HR_VALUES = read_from(
    "HelmRelease ns-a/agent spec.values.delegateVersion",
    "cluster prod",
    obj=ObjectRef("HelmRelease", "ns-a", "agent"),
    path="spec.values.delegateVersion",
)

PRINTED: list[tuple[Source, str]] = [
    (BOM, "clusters/prod/bom.yaml:12"),
    (in_file("values.yaml"), "values.yaml"),
    (flag("--installed"), "flag --installed"),
    (HR_VALUES, "cluster prod: HelmRelease ns-a/agent spec.values.delegateVersion"),
    (read_from("/version gitVersion v1.29.3"), "/version gitVersion v1.29.3"),
    (supposed("plan: agent-platform@4.8.0"), "plan: agent-platform@4.8.0"),
    (derived_from_pin(BOM), "derived: exact pin (clusters/prod/bom.yaml:12)"),
    (
        moved(BOM, "4.8.0", "agent-platform@4.8.0"),
        "clusters/prod/bom.yaml:12 (moved to 4.8.0 with agent-platform@4.8.0)",
    ),
    (
        moved(None, "4.8.0", "agent-platform@4.8.0"),
        "agent-platform@4.8.0 (moved to 4.8.0 with agent-platform@4.8.0)",
    ),
    (
        default_of("bom.yaml", 4, "kagent", "agent-platform 4.8.0 (oci.yaml:9) defaults it to x"),
        "derived: bom.yaml:4 sets no driftDetection for kagent; "
        "agent-platform 4.8.0 (oci.yaml:9) defaults it to x",
    ),
    (
        release_default("agent-platform@4.8.0", "components.kagent.versionRange"),
        "default of agent-platform@4.8.0 (components.kagent.versionRange)",
    ),
    (release_default("agent-platform@4.8.0"), "default of agent-platform@4.8.0"),
    (text("example: clusters/prod/bom.yaml:9"), "example: clusters/prod/bom.yaml:9"),
]


@pytest.mark.parametrize(("source", "printed"), PRINTED, ids=[p for _, p in PRINTED])
def test_a_source_prints_as_the_outputs_say(source: Source, printed: str) -> None:
    assert str(source) == printed


@pytest.mark.parametrize("source", [s for s, _ in PRINTED], ids=[p for _, p in PRINTED])
def test_the_fields_a_snapshot_records_read_back_as_the_same_source(source: Source) -> None:
    fields = to_fields(source)
    assert from_fields(json.loads(json.dumps(fields))) == source
    assert from_fields(yaml.safe_load(yaml.safe_dump(fields))) == source


def test_sources_standing_on_sources_keep_every_level() -> None:
    twice = moved(derived_from_pin(HR_VALUES), "4.8.0", "agent-platform@4.8.0")
    back = from_fields(to_fields(twice))
    assert back == twice and back.unmoved().underived() == HR_VALUES
    assert back.unmoved().underived().obj == ObjectRef("HelmRelease", "ns-a", "agent")


def test_a_person_writes_a_file_line_without_a_kind() -> None:
    assert from_fields({"file": "clusters/prod/bom.yaml", "line": 12}) == BOM
    assert from_fields({"file": "clusters/prod/bom.yaml", "line": 12}).file_line == (
        "clusters/prod/bom.yaml",
        12,
    )


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ("bom.yaml:12", "expected a mapping of source fields, got str"),
        ({"file": "bom.yaml", "lines": 12}, "unknown source field 'lines'"),
        ({"kind": "somewhere"}, "kind 'somewhere' is not one of file, flag"),
        ({"detail": "x"}, "kind None is not one of"),
        ({"file": "bom.yaml", "line": "12"}, "line '12' must be a whole number"),
        ({"file": "bom.yaml", "line": -1}, "line -1 must be a whole number"),
        ({"file": "bom.yaml", "line": True}, "line True must be a whole number"),
        ({"kind": "file", "file": 7}, "file 7 must be a string"),
        ({"kind": "derived"}, "a derived source needs behind"),
        ({"kind": "moved", "behind": {"file": "a"}}, "a moved source needs detail"),
        ({"kind": "derived", "behind": {"kind": "flag"}}, "a flag source needs detail"),
        ({"kind": "object", "detail": "x", "obj": {"kind": "HelmRelease"}}, "obj needs kind"),
        ({"kind": "object", "detail": "x", "obj": ["HelmRelease"]}, "obj must be a mapping"),
    ],
)
def test_fields_that_are_no_source_say_what_is_wrong(fields: object, said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        from_fields(fields)


def test_a_source_nested_beyond_any_real_one_is_refused() -> None:
    deep: Source = BOM
    for _ in range(20):
        deep = derived_from_pin(deep)
    with pytest.raises(ValueError, match="nested more than"):
        from_fields(to_fields(deep))


def test_provenance_has_no_way_back_from_text() -> None:
    """A Source is built from its fields only: no function of provenance reads text apart
    (no partition/split/startswith/slicing, no regex), so rewording a source cannot change
    what a snapshot reads back."""
    tree = ast.parse(Path(provenance.__file__).read_text(encoding="utf-8"))
    parsing = {"partition", "rpartition", "split", "rsplit", "startswith", "endswith",
               "removeprefix", "removesuffix", "find", "rfind", "index", "match"}  # fmt: skip
    found = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in parsing)
        or (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice))
        or (isinstance(node, ast.Import | ast.ImportFrom) and "re" in _imported(node))
    ]
    assert found == []
    assert not hasattr(provenance, "recorded")


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.ImportFrom):
        return {node.module or ""}
    return {a.name for a in node.names}


def test_only_a_file_line_is_a_place_to_edit() -> None:
    assert BOM.file_line == ("clusters/prod/bom.yaml", 12)
    assert in_file("values.yaml").file_line is None
    assert derived_from_pin(BOM).file_line is None
    assert HR_VALUES.file_line is None
    assert flag("--fact").file_line is None
    assert text("clusters/prod/bom.yaml:12").file_line is None  # text stays text


def test_moved_and_derived_sources_lead_back_to_where_the_pin_is_written() -> None:
    twice = moved(moved(BOM, "4.7.19", "a@4.7.19"), "4.8.0", "a@4.8.0")
    assert twice.unmoved() == BOM
    assert str(twice) == "clusters/prod/bom.yaml:12 (moved to 4.8.0 with a@4.8.0)"
    assert derived_from_pin(BOM).underived() == BOM
    assert BOM.unmoved() == BOM and BOM.underived() == BOM


# --------------------------------------------------------------------------- the package

PACKAGE = Path(provenance.__file__).parent
_SOURCE_NAMES = {"source", "src", "location", "behind", "written", "unmoved", "underived"}
_PARSING = {"partition", "rpartition", "split", "rsplit", "startswith", "endswith",
            "removeprefix", "removesuffix", "find", "rfind", "index", "rindex", "splitlines",
            "strip", "lstrip", "rstrip", "match", "fullmatch", "search", "findall"}  # fmt: skip


def _is_source(node: ast.AST) -> bool:
    """An expression that holds a Source by the package's naming (``fact.source``,
    ``m.location``, ``src``, ``x.source.unmoved()``)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr in _SOURCE_NAMES
    return isinstance(node, ast.Name) and node.id in _SOURCE_NAMES


def _source_text(node: ast.AST, texts: set[str]) -> bool:
    """``str(<source>)``, an f-string of one, or a local name assigned one of those."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        return len(node.args) == 1 and _is_source(node.args[0])
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) and _is_source(v.value) for v in node.values)
    return isinstance(node, ast.Name) and node.id in texts


def _reads_of_source_text(tree: ast.AST) -> list[str]:
    """Each place in a module that reads a source's text apart; a local name assigned a
    source's text counts as one within its function."""
    out: list[str] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        nodes = list(ast.walk(func))
        texts = {
            t.id
            for node in nodes
            if isinstance(node, ast.Assign) and _source_text(node.value, set())
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        out += [f"{func.name}: {ast.unparse(n)}" for n in nodes if _parses(n, texts)]
    return sorted(set(out))


def _is_field(node: ast.AST) -> bool:
    """``x.source`` or ``x.location`` (a bare name ``source`` may be any text, e.g. a chart's)."""
    return isinstance(node, ast.Attribute) and node.attr in ("source", "location")


def _parses(node: ast.AST, texts: set[str]) -> bool:
    """Reading apart a source's text, or a text field named like one (``acc.source``,
    ``rec.location``: a place is read from typed fields, never out of a sentence)."""
    if isinstance(node, ast.Attribute):
        return node.attr in _PARSING and (_source_text(node.value, texts) or _is_field(node.value))
    if isinstance(node, ast.Subscript):
        return _source_text(node.value, texts) or _is_field(node.value)
    if isinstance(node, ast.Compare):
        return any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) and any(
            _source_text(c, texts) for c in node.comparators
        )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        module = node.func.value
        return (
            isinstance(module, ast.Name)
            and module.id == "re"
            and any(_source_text(a, texts) for a in node.args)
        )
    return False


def test_the_check_sees_a_source_text_read_back() -> None:
    """The check below finds each way a source's text can be read apart."""
    code = """
def a(fact):
    return str(fact.source).partition(": ")
def b(src):
    text = str(src)
    return text[:5], "bom.yaml" in text
def c(f):
    return re.match(r"(.*):(\\\\d+)", f"{f.location}")
def d(fact):
    return str(fact.source.unmoved()).startswith("derived")
def e(acc):
    return acc.source.rpartition(":"), acc.location[-3:]
"""
    assert len(_reads_of_source_text(ast.parse(code))) == 7


def test_no_module_reads_a_source_back_from_its_text() -> None:
    """Issue 9: where a fact came from is typed; no module under upgradeplan/ turns a
    source's printed text back into a place, a kind or an object (rewording a reader's
    message cannot break patch, SARIF or the planner)."""
    found = [
        f"{path.relative_to(PACKAGE)}: {hit}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for hit in _reads_of_source_text(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []
