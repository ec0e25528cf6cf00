"""The knowledge loader: YAML with lines -> frozen model objects, problems collected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from upgradeplan.cli import cli
from upgradeplan.errors import BadInput, KnowledgeError
from upgradeplan.kb import roots
from upgradeplan.kb.loader import bundled_dir, load, load_all
from upgradeplan.kb.problems import Problem
from upgradeplan.kb.templating import make_env, render_migration
from upgradeplan.model import Condition, KnowledgeBase, Location, Release, Withdrawn
from upgradeplan.yamlload import YamlError, line_of, load_lines


def load_with_problems(dirs: Any = (), *, bundled: bool = True) -> tuple[KnowledgeBase, list[Any]]:
    """The knowledge built from what could be read and every problem, the checks included."""
    loaded = load_all(dirs, bundled=bundled)
    return loaded.kb, loaded.problems


def load_text(text: str) -> Any:
    """One YAML document with line numbers (the loader's parser)."""
    return load_lines(text)


FIXTURES = Path(__file__).resolve().parent / "fixtures"
MINI = FIXTURES / "kb-mini"
BROKEN = FIXTURES / "kb-broken"


@pytest.fixture(scope="module")
def mini() -> KnowledgeBase:
    return load([MINI], bundled=False)


def test_products_releases_hazards_migrations_are_loaded(mini: KnowledgeBase) -> None:
    assert sorted(mini.products) == ["alpha", "beta", "kubernetes"]
    assert sorted(mini.hazards) == [
        "handover-skipped",
        "landing-120",
        "major-jump",
        "old-kubernetes",
    ]
    assert sorted(mini.migrations) == ["beta-drift-detection", "reconcile"]
    assert mini.roots == (str(MINI),)


def test_releases_are_ordered_by_version_with_next_last(mini: KnowledgeBase) -> None:
    versions = [r.version for r in mini.releases["alpha"]]
    assert versions == ["1.0.0", "1.2.0", "1.10.0", "2.0.0-rc.1", "next"]
    assert mini.releases["alpha"][-1].unreleased


def test_every_object_knows_its_file_relative_to_the_root_parent(mini: KnowledgeBase) -> None:
    rel = mini.release("alpha", "1.10.0")
    assert rel is not None
    assert rel.location == Location("kb-mini/releases/alpha/1.10.0.yaml", 1)
    assert mini.products["beta"].location == Location("kb-mini/products/beta.yaml", 1)
    assert (
        str(mini.hazards["handover-skipped"].location) == "kb-mini/hazards/handover-skipped.yaml:1"
    )


def _release(kb: KnowledgeBase, product: str, version: str) -> Release:
    rel = kb.release(product, version)
    assert rel is not None
    return rel


def test_release_fields(mini: KnowledgeBase) -> None:
    rel = _release(mini, "alpha", "1.10.0")
    assert rel.date == "2026-03-01"
    assert rel.summary == "beta takes over the shared object.\n"
    assert rel.references == ("example/alpha#12", "https://example.invalid/alpha/1.10.0")
    assert dict(rel.bom) == {"beta": "0.2.0"}
    assert dict(rel.requires) == {"kubernetes": ">=1.28.0-0"}
    assert rel.changes[0].kind == "ownership-moved"
    assert dict(rel.changes[0].details) == {"object": "Widget ns/shared"}
    assert dict(rel.effects) == {"helmrelease.beta.drift-detection": "enabled"}
    assert rel.notes[0].condition == "BOM pins beta exactly."
    assert rel.notes[0].commands == ("kubectl get widget -n ns shared",)
    assert rel.verify == ("kubectl -n ns get widget shared",)
    rc = _release(mini, "alpha", "2.0.0-rc.1")
    assert rc.upgrade_from == ">=1.10.0"
    assert rc.withdrawn == Withdrawn("2026-04-02", "Superseded the next day.")
    assert _release(mini, "alpha", "next").date is None


def test_product_fields(mini: KnowledgeBase) -> None:
    alpha = mini.products["alpha"]
    assert alpha.kind == "chart"
    assert alpha.recognise.helmrelease == ("alpha",)
    assert alpha.upgrade_doc_title == "Upgrading alpha"
    assert mini.products["beta"].recognise.bom_component == "beta"
    assert mini.products["kubernetes"].kind == "environment"


def test_hazard_scopes_map_to_model_fields(mini: KnowledgeBase) -> None:
    skip = mini.hazards["handover-skipped"]
    assert (skip.scope, skip.stop, skip.to_range, skip.from_range) == (
        "skip",
        "1.10.0",
        ">=2.0.0-0",
        None,
    )
    landing = mini.hazards["landing-120"]
    assert (landing.scope, landing.to_range) == ("landing", "1.2.0")
    trans = mini.hazards["major-jump"]
    assert (trans.from_range, trans.to_range) == ("<1.2.0", ">=2.0.0-0")
    state = mini.hazards["old-kubernetes"]
    assert (state.scope, state.from_range) == ("state", ">=1.10.0")
    assert skip.symptoms[0].where == "logs"
    assert landing.symptoms[0].where == "events"
    assert trans.symptoms[0].where == "any"
    assert skip.migrations == ("beta-drift-detection",)
    assert trans.withdrawn is not None


def test_when_becomes_a_condition_tree_with_lines(mini: KnowledgeBase) -> None:
    when = mini.hazards["handover-skipped"].when
    file = "kb-mini/hazards/handover-skipped.yaml"
    assert when == Condition(
        "all",
        (
            Condition(
                "pred",
                predicate="version_below",
                args={"product": "beta", "version": "0.2.0"},
                location=Location(file, 11),
            ),
            Condition(
                "not",
                (
                    Condition(
                        "pred",
                        predicate="drift_detection",
                        args={"helmrelease": "beta", "mode": "enabled"},
                        location=Location(file, 13),
                    ),
                ),
                location=Location(file, 12),
            ),
        ),
        location=Location(file, 10),
    )
    assert type(when.children[0].args) is dict
    assert mini.hazards["landing-120"].when is None


def test_migration_fields(mini: KnowledgeBase) -> None:
    mig = mini.migrations["beta-drift-detection"]
    assert (mig.kind, mig.product, mig.when) == ("helmrelease-patch", "alpha", "before")
    assert dict(mig.target) == {"kind": "HelmRelease", "name": "beta"}
    assert mig.params["namespace"] == {
        "fact": "helmrelease.beta.namespace",
        "placeholder": "<gitops-namespace>",
    }
    assert mini.migrations["reconcile"].when == "after"


def test_templates_render_sandboxed_with_shq(mini: KnowledgeBase) -> None:
    out = render_migration(mini.migrations["reconcile"], {"namespace": "flux system"})
    assert out == "flux -n 'flux system' reconcile helmrelease beta --force"
    step = {"product": "alpha", "from": "1.2.0", "to": "1.10.0", "bom": {"beta": "0.2.0"}}
    out = render_migration(
        mini.migrations["beta-drift-detection"], {"namespace": "gitops", "step": step}
    )
    assert "namespace: gitops}" in out
    assert "# for alpha 1.2.0 -> 1.10.0 (beta 0.2.0)" in out


def test_template_env_is_strict_and_has_no_globals() -> None:
    from jinja2.exceptions import SecurityError, UndefinedError

    env = make_env()
    with pytest.raises(UndefinedError):
        env.from_string("{{ namespace }}").render()
    with pytest.raises(SecurityError):
        env.from_string("{{ x.__class__.__mro__ }}").render(x=1)


def test_broken_knowledge_raises_one_error_listing_every_problem() -> None:
    with pytest.raises(KnowledgeError) as info:
        load([BROKEN], bundled=False)
    problems = info.value.problems
    assert len(problems) > 20
    assert all(isinstance(p, Problem) and p.severity == "error" for p in problems)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("knowledge base: kb-broken/")
    assert "run 'upgradeplan kb lint'" in message


def test_load_with_problems_keeps_what_could_be_read() -> None:
    kb, problems = load_with_problems([BROKEN], bundled=False)
    assert "app" in kb.products
    assert [r.version for r in kb.releases["app"]][:3] == ["1.0.0", "1.1.0", "1.2.0"]
    codes = {p.code for p in problems}
    assert {"KB001", "KB003", "KB004", "KB005", "KB018"} <= codes
    assert "KB014" not in codes  # templates are rendered by lint only


def test_an_id_defined_in_two_directories_names_both_places(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    (extra / "products").mkdir(parents=True)
    shutil.copy(MINI / "products" / "beta.yaml", extra / "products" / "beta.yaml")
    _, problems = load_with_problems([MINI, extra], bundled=False)
    assert [str(p) for p in problems] == [
        "extra/products/beta.yaml:1 KB004 product 'beta' is defined twice: "
        "here and at kb-mini/products/beta.yaml:1"
    ]


def test_extra_directories_merge_with_the_bundled_one() -> None:
    kb, _ = load_with_problems([MINI])
    assert kb.roots[0] == str(bundled_dir())
    assert "alpha" in kb.products
    assert bundled_dir().name == "knowledge"


def test_a_missing_directory_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        load([tmp_path / "nope"], bundled=False)


def test_yaml_keeps_lines_and_dates_as_text() -> None:
    doc = load_text("a: 1\nb:\n  - x\n  - {c: 2022-01-02}\n")
    assert doc["b"][1]["c"] == "2022-01-02"
    assert line_of(doc, ["b", 1, "c"]) == 4
    assert line_of(doc, ["b", 0]) == 3
    assert line_of(doc, ["missing", "deeper"]) == 1
    with pytest.raises(YamlError) as info:
        load_text("a: 1\nb: [\n")
    assert info.value.line == 3
    with pytest.raises(YamlError):
        load_text("? [a]\n: 1\n")


def test_kb_list_shows_releases_marks_and_counts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(roots, "bundled_path", lambda: str(tmp_path))
    runner = CliRunner()
    result = runner.invoke(cli, ["--kb", str(MINI), "kb", "list", "--product", "alpha"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "alpha (chart): 5 releases, 4 hazards, 2 migrations"
    assert lines[1].split() == ["1.0.0", "2026-01-10", "the", "first", "release"]
    assert lines[4].endswith("[withdrawn 2026-04-02]")
    assert lines[5].split()[:2] == ["next", "-"] and lines[5].endswith("[unreleased]")
    result = runner.invoke(cli, ["--kb", str(MINI), "kb", "list", "-o", "json"])
    doc = json.loads(result.stdout)
    assert [p["id"] for p in doc["products"]] == ["alpha", "beta", "kubernetes"]
    assert doc["products"][1]["releases"][0] == {
        "version": "0.1.0",
        "date": "2026-01-01",
        "title": "beta 0.1.0",
        "unreleased": False,
        "withdrawn": None,
        "file": "kb-mini/releases/beta/0.1.0.yaml",
        "amendments": [],
        "inferred": {},
    }
    result = runner.invoke(cli, ["--kb", str(MINI), "kb", "list", "--product", "alpah"])
    assert result.exit_code == 2
    assert "unknown product 'alpah'" in result.stderr and "alpha" in result.stderr


def test_the_schema_vocabulary_is_the_one_conditions_evaluates() -> None:
    from upgradeplan.conditions import PREDICATES
    from upgradeplan.kb.schema import predicate_specs

    specs = predicate_specs()
    assert sorted(specs) == sorted(PREDICATES)
    for name, spec in specs.items():
        assert set(spec.required) == set(PREDICATES[name].required), name
        assert set(spec.optional) == set(PREDICATES[name].optional), name


def test_an_unquoted_predicate_version_stops_the_load(tmp_path: Path) -> None:
    root = tmp_path / "kb"
    shutil.copytree(MINI, root)
    hazard = root / "hazards" / "old-kubernetes.yaml"
    hazard.write_text(hazard.read_text().replace('version: "1.28.0"', "version: 1.28"))
    with pytest.raises(KnowledgeError) as info:
        load([root], bundled=False)
    assert [str(p) for p in info.value.problems] == [
        "kb/hazards/old-kubernetes.yaml:10 KB002 fact_version_below.version: 1.28 is not of "
        "type string; quote it"
    ]


def test_yaml_anchors_merge_keys_and_several_documents() -> None:
    doc = load_text("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\n")
    assert doc["use"] == {"x": 1, "y": 3}
    assert load_text("a: yes\nb: 2\nc: ~\nd: 1.5\n") == {"a": True, "b": 2, "c": None, "d": 1.5}
    with pytest.raises(
        YamlError,
        match="expected one YAML document, found more",
    ):
        load_text("a: 1\n---\nb: 2\n")


def test_knowledge_yaml_reads_ints_as_yaml_does() -> None:
    """The loader's fast path takes plain decimals only: 0755 stays octal, as YAML 1.1 says."""
    import yaml

    text = "a: 0755\nb: 10\nc: 0\nd: 0x1f\ne: 08\nf: 1_000\n"
    data = load_lines(text)
    assert data == yaml.load(text, Loader=yaml.CSafeLoader)
    assert data["a"] == 493


def test_an_alias_inside_the_node_it_names_is_a_yaml_error(tmp_path: Path) -> None:
    """A recursive alias is reported as KB001 for its file, not a RecursionError."""
    (tmp_path / "products").mkdir()
    (tmp_path / "products" / "loop.yaml").write_text(
        "schema_version: 1\nkind: product\nid: loop\nname: &n [*n]\n"
    )
    _, problems = load_with_problems([tmp_path], bundled=False)
    assert [(p.code, p.location.file) for p in problems] == [
        ("KB001", f"{tmp_path.name}/products/loop.yaml")
    ]
    assert "an alias inside the node it names" in problems[0].message


def test_equal_texts_of_a_load_are_one_object(mini: KnowledgeBase) -> None:
    """The parser makes a new string per scalar; the loader keeps one per distinct text, so
    the knowledge (and its cache entry) holds each text once."""
    files = [r.location.file for rs in mini.releases.values() for r in rs]
    products = [r.product for rs in mini.releases.values() for r in rs]
    assert len({id(p) for p in products}) == len(set(products))
    assert len(files) == len({id(f) for f in files})  # file names differ: no false sharing


def test_the_file_walk_finds_what_os_walk_finds(tmp_path: Path) -> None:
    """``_yaml_files`` (os.scandir) lists what the os.walk of before listed: hidden and dunder
    directories and hidden files skipped, a linked directory not entered, a linked file kept."""
    import os

    from upgradeplan.kb.loader import _yaml_files

    for rel in (
        "products/a.yaml",
        "products/b.yml",
        "products/.c.yaml",
        "products/d.txt",
        "releases/p/1.0.0.yaml",
        "releases/p/deep/x.yaml",
        ".hidden/e.yaml",
        "__pycache__/f.yaml",
        "top.yaml",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("a: 1\n")
    (tmp_path / "linked").symlink_to(tmp_path / "releases")
    (tmp_path / "products" / "g.yaml").symlink_to(tmp_path / "top.yaml")
    (tmp_path / "products" / "dir.yaml").mkdir()

    expected = []
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "__"))]
        rel_dir = os.path.relpath(dirpath, tmp_path)
        prefix = () if rel_dir == "." else tuple(rel_dir.split(os.sep))
        for name in filenames:
            if name.endswith((".yaml", ".yml")) and not name.startswith("."):
                expected.append((*prefix, name))
    assert _yaml_files(str(tmp_path)) == sorted(expected)
    assert ("products", "g.yaml") in expected and not any(p[0] == "linked" for p in expected)


def test_a_kb_directory_is_checked_with_the_bundled_knowledge(tmp_path: Path) -> None:
    """The bundled knowledge alone loads without the load-time checks (tests hold it clean:
    the next test); a --kb directory beside it still has every check, so a hazard of a product
    nobody defines stops the load."""
    (tmp_path / "hazards").mkdir()
    hazard = (MINI / "hazards" / "landing-120.yaml").read_text(encoding="utf-8")
    (tmp_path / "hazards" / "landing-120.yaml").write_text(
        hazard.replace("product: alpha", "product: no-such-product"), encoding="utf-8"
    )
    with pytest.raises(KnowledgeError) as info:
        load([tmp_path])
    problems = [p for p in info.value.problems if isinstance(p, Problem)]
    assert [p.code for p in problems] == ["KB005"] and len(info.value.problems) == 1
    assert str(problems[0].location).startswith(f"{tmp_path.name}/hazards/")


def test_the_bundled_knowledge_passes_the_load_time_checks() -> None:
    _, problems = load_with_problems()
    assert [p for p in problems if p.severity == "error"] == []
