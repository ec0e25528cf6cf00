"""yamlload: the safe loader's data with lines, every file bounded, a key written twice refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from upgradeplan import yamlload
from upgradeplan.yamlload import DuplicateKey, LineDict, LineList, YamlError

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
    assert typed(yamlload.load_all(text)) == typed(safe(text))


def test_a_plain_equals_sign_is_the_string_go_yaml_reads() -> None:
    """prometheus-operator's AlertmanagerConfig CRD writes ``- =`` in an enum; PyYAML's safe
    loader refuses it (YAML 1.1's value key), kubectl and Helm read the string "=" (once every
    kube-prometheus-stack archive's CRD file failed to load here)."""
    with pytest.raises(yaml.YAMLError):
        safe("enum:\n- =\n- '!='\n")
    assert yamlload.load_all("enum:\n- =\n- '!='\n") == [{"enum": ["=", "!="]}]
    assert yamlload.load_one("= : x\n") == {"=": "x"}


def test_an_alias_reads_as_its_anchor_and_a_node_inside_itself_is_refused() -> None:
    docs = yamlload.load_all("base: &b {x: 1}\nuse: *b\n")
    assert docs[0]["use"] == {"x": 1}
    with pytest.raises(YamlError, match="an alias inside the node it names"):
        yamlload.load_all("&r [*r]\n")


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
def test_what_the_safe_loader_refuses_is_refused_with_its_line(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        safe(text)
    with pytest.raises(YamlError) as got:
        yamlload.load_all(text)
    assert got.value.line >= 1 and "\n" not in got.value.message


def test_every_yaml_fixture_of_the_repository_reads_the_same() -> None:
    checked = 0
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            expected = safe(text)
        except (yaml.YAMLError, RecursionError):
            continue
        if "kb-broken" in path.parts:  # a key written twice on purpose (KB022)
            continue
        assert typed(yamlload.load_all(text)) == typed(expected), path
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
        assert typed(yamlload.load_all(text)) == typed(safe(text))


def test_every_key_and_item_remembers_its_line() -> None:
    doc = yamlload.load_lines("a: 1\nb:\n  - x\n  - when: 2026-09-20\n")
    assert isinstance(doc, LineDict) and doc.lines == {"a": 1, "b": 2}
    assert isinstance(doc["b"], LineList) and doc["b"].lines == [3, 4]
    assert doc["b"][1] == {"when": "2026-09-20"}  # dates stay text in the knowledge
    assert yamlload.line_of(doc, ["b", 1, "when"]) == 4
    assert yamlload.line_of(doc, ["b", 7]) == 2


def test_every_value_of_a_document_has_its_line_and_text_as_written() -> None:
    [(data, lines, key_lines, raw, styles)] = yamlload.load_paths(
        "spec:\n  version: 4.10\n  name: 'x'\n  <<: {name: y, z: 1}\n", offset=10
    )
    assert data == {"spec": {"version": 4.1, "name": "x", "z": 1}}
    assert lines[("spec", "version")] == 12 and key_lines[("spec",)] == 11
    assert raw[("spec", "version")] == "4.10" and styles[("spec", "name")] == "'"


def test_an_anchor_defined_again_names_the_later_node() -> None:
    assert yamlload.load_all("a: &x 1\nb: &x 2\nc: *x\n") == [{"a": 1, "b": 2, "c": 2}]


def _bomb(levels: int = 9) -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("load", [yamlload.load_all, yamlload.load_lines, yamlload.load_paths])
def test_an_alias_bomb_is_refused_at_the_documented_number_of_nodes(load: Any) -> None:
    with pytest.raises(YamlError, match=f"more than {yamlload.MAX_ALIASED} nodes"):
        load(_bomb())
    load(_bomb(4))  # 9**4 nodes through aliases: under the limit, read


@pytest.mark.parametrize("load", [yamlload.load_all, yamlload.load_lines, yamlload.load_paths])
def test_nesting_deeper_than_the_limit_is_refused_with_its_line(load: Any) -> None:
    deep = "".join(" " * i + f"k{i}:\n" for i in range(yamlload.MAX_DEPTH + 5)) + " " * 200 + "v\n"
    with pytest.raises(YamlError, match=f"deeper than {yamlload.MAX_DEPTH} levels") as got:
        load(deep)
    assert got.value.line == yamlload.MAX_DEPTH + 2  # the mapping past the limit
    flow = "[" * 5000 + "]" * 5000  # past libyaml's own limit
    with pytest.raises(YamlError, match="nested deeper than"):
        load(flow)


def test_a_text_larger_than_the_limit_is_refused_before_it_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(yamlload, "MAX_BYTES", 1000)
    with pytest.raises(YamlError, match="larger than"):
        yamlload.load_all("a: " + "x" * 2000 + "\n")


@pytest.mark.parametrize("load", [yamlload.load_all, yamlload.load_lines, yamlload.load_paths])
def test_a_key_written_twice_is_refused_with_the_line_of_the_second(load: Any) -> None:
    with pytest.raises(DuplicateKey, match="key 'b' is written twice") as got:
        load("a:\n  b: 1\n  c: 2\n  b: 3\n")
    assert got.value.line == 4
    # a merged key is no duplicate: the mapping's own key wins, as YAML says
    assert load("base: &b {x: 1}\nm:\n  <<: *b\n  x: 2\n") not in (None, [])


# -- through every option that reads YAML: exit 2, one line, bounded time and memory

FIXTURES = ROOT / "tests" / "fixtures"
MEMORY = 300 * 1024 * 1024  # address space of the process: RSS can only be less


def _limited() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def refused(*args: str) -> str:
    """Run the CLI as a user does, with at most MEMORY bytes; the one line it printed (it
    must exit 2 within 5 s of CPU, without a traceback)."""
    import resource
    import subprocess
    import sys

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "upgradeplan", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=_limited,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    assert done.returncode == 2, done.stderr
    assert cpu < 5 and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def _gitops(tmp_path: Path, bom: str) -> str:
    import shutil

    tree = tmp_path / "repo"
    shutil.copytree(FIXTURES / "gitops" / "s1", tree)
    (tree / "bom.yaml").write_text(bom, encoding="utf-8")
    return str(tree)


def _kb(tmp_path: Path, name: str, text: str) -> str:
    import shutil

    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb-mini", kb)
    (kb / "products" / name).write_text(text, encoding="utf-8")
    return str(kb)


BOM = (FIXTURES / "gitops" / "s1" / "bom.yaml").read_text(encoding="utf-8")
DUPLICATED = BOM.replace(
    '    versionRange: "0.11.0-gs.6"\n',
    '    versionRange: "0.11.0-gs.6"\n    versionRange: "0.11.0-gs.7"\n',
    1,
)
ALPHA = (FIXTURES / "kb-mini" / "products" / "alpha.yaml").read_text(encoding="utf-8")
DEEP = "".join(" " * i + f"k{i}:\n" for i in range(150)) + " " * 150 + "v\n"


def test_a_bom_with_a_key_written_twice_is_refused_at_its_line(tmp_path: Path) -> None:
    line = refused("scan", "--gitops", _gitops(tmp_path, DUPLICATED))
    assert "bom.yaml:12: key 'versionRange' is written twice" in line


def test_an_alias_bomb_or_deep_nesting_in_a_gitops_tree_is_refused(tmp_path: Path) -> None:
    line = refused("scan", "--gitops", _gitops(tmp_path, BOM + "bomb:\n" + _indented(_bomb())))
    assert "bom.yaml:" in line and f"more than {yamlload.MAX_ALIASED} nodes" in line
    line = refused("scan", "--gitops", _gitops(tmp_path / "deep", BOM + DEEP))
    assert "bom.yaml:" in line and "nested deeper than 100 levels" in line


def _indented(text: str) -> str:
    return "".join("  " + line for line in text.splitlines(keepends=True))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (ALPHA + "name: again\n", "alpha.yaml:13 KB022 key 'name' is written twice"),
        ("schema_version: 1\n" + _bomb(), "/a.yaml:2 KB001 aliases expand to more than"),
        ("schema_version: 1\n" + DEEP, "/a.yaml:103 KB001 nested deeper than 100 levels"),
        ("[" * 5000 + "]" * 5000, "/a.yaml:1 KB001 nested deeper than 100 levels"),
    ],
    ids=["duplicate", "bomb", "deep", "deep-flow"],
)
def test_a_knowledge_file_past_a_limit_is_refused_at_its_line(
    tmp_path: Path, text: str, words: str
) -> None:
    name = "alpha.yaml" if text.startswith(ALPHA) else "a.yaml"  # reported first
    line = refused("--kb", _kb(tmp_path, name, text), "kb", "list")
    assert words in line


def test_a_huge_scalar_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    huge = "kind: upgradeplan-state\nschema_version: 1\nnote: " + "x" * (yamlload.MAX_BYTES + 1)
    snapshot = tmp_path / "huge.yaml"
    snapshot.write_text(huge, encoding="utf-8")
    line = refused("check", "--snapshot", str(snapshot))
    assert "huge.yaml: larger than 64 MiB (the limit for a YAML file)" in line
    line = refused("--kb", _kb(tmp_path, "huge.yaml", huge), "kb", "list")
    assert "huge.yaml KB001 cannot read the file: larger than 64 MiB" in line


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("kind: upgradeplan-state\nschema_version: 1\nfacts: {}\nfacts: {}\n", "s.yaml:4: key"),
        ("kind: upgradeplan-state\nschema_version: 1\n" + _bomb(), "s.yaml:3: aliases expand"),
        ("kind: upgradeplan-state\nschema_version: 1\n" + DEEP, "s.yaml:104: nested deeper"),
    ],
    ids=["duplicate", "bomb", "deep"],
)
def test_a_snapshot_past_a_limit_is_refused_at_its_line(
    tmp_path: Path, text: str, words: str
) -> None:
    snapshot = tmp_path / "s.yaml"
    snapshot.write_text(text, encoding="utf-8")
    assert words in refused("check", "--snapshot", str(snapshot))


def test_an_accept_file_past_a_limit_is_refused_at_its_line(tmp_path: Path) -> None:
    accept = tmp_path / "a.yaml"
    accept.write_text("accept: []\naccept: []\n", encoding="utf-8")
    check = ("check", "--installed", "agent-platform=4.7.18", "--to", "4.7.19")
    assert "a.yaml:2: key 'accept' is written twice" in refused(
        *check, "--accept-file", str(accept)
    )
    accept.write_text("accept: []\n" + _bomb(), encoding="utf-8")
    assert "a.yaml:2: aliases expand" in refused(*check, "--accept-file", str(accept))
