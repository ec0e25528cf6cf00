"""What source-controller puts in a source's artifact, and a Flux build that needs what it
leaves out (upgradeplan/readers/gitops/sourceignore.py, flux.py).

The pattern cases restate gitignore as go-git reads it (the package fluxcd/pkg sourceignore
vendors); the Artifact cases restate source-controller's SourceIgnoreFilter: the default list
applies only while the repository has no rule of its own.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from support.cli import run

from upgradeplan.readers.gitops.facts import NOT_IN_ARTIFACT
from upgradeplan.readers.gitops.flux import Applier, find_entries
from upgradeplan.readers.gitops.render import Renderer
from upgradeplan.readers.gitops.sourceignore import Artifact, Pattern
from upgradeplan.readers.gitops.trees import GitTree, WorkTree, open_path

WALK = Path(__file__).resolve().parent / "fixtures" / "gitops-walk"


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "verdict"),
    [
        ("*.png", "apps/dashy/icons/router.png", False, True),  # any depth
        ("icons", "apps/dashy/icons/router.png", False, True),  # a parent directory's name
        ("icon", "apps/dashy/icons/router.png", False, None),
        ("**/.sops.yaml", "apps/db/.sops.yaml", False, True),
        (".github/", ".github/workflows/ci.yaml", False, True),
        (".github/", ".github", False, None),  # a file of that name: not a directory
        (".github/", ".github", True, True),
        ("/*", "README.md", False, True),
        ("/*", "kubernetes/apps/x.yaml", False, True),  # below a top-level entry too
        ("!/kubernetes", "kubernetes/apps/x.yaml", False, False),  # put back
        ("/docs", "kubernetes/docs/x.yaml", False, None),  # anchored at the root
        ("docs/x.yaml", "kubernetes/docs/x.yaml", False, None),  # a "/" anchors it
        ("/kubernetes/**/secrets/", "kubernetes/clusters/main/secrets/a.yaml", False, True),
        ("/kubernetes/**/secrets/", "kubernetes/secrets/a.yaml", False, True),  # ** spans 0
        ("/apps/**", "apps/x/y.yaml", False, True),
        ("a[bc]d.yaml", "acd.yaml", False, True),
        ("a[^bc]d.yaml", "acd.yaml", False, None),
        ("a[x-z]d.yaml", "ayd.yaml", False, True),
        ("a[", "a[", False, None),  # Go refuses the pattern: it matches nothing
        ("\\*.yaml", "*.yaml", False, True),  # an escaped star is a star
        ("\\*.yaml", "x.yaml", False, None),
        ("v?.yaml", "v1.yaml", False, True),
        ("*.YAML", "x.yaml", False, None),  # case matters
    ],
)
def test_a_pattern_matches_as_go_git_reads_it(
    pattern: str, path: str, is_dir: bool, verdict: bool | None
) -> None:
    assert Pattern.parse(pattern, (), "test").match(tuple(path.split("/")), is_dir) is verdict


def test_a_pattern_of_a_nested_file_applies_below_its_directory_only() -> None:
    p = Pattern.parse("*.local.yaml", ("apps", "home"), "apps/home/.sourceignore:2")
    assert p.match(("apps", "home", "recipes", "preview.local.yaml"), False) is True
    assert p.match(("apps", "other", "preview.local.yaml"), False) is None


def test_matching_takes_linear_time() -> None:
    # a pattern that backtracks badly in a naive matcher, against a long name
    p = Pattern.parse("*a*a*a*a*a*a*a*a*a*a*b", (), "test")
    start = time.perf_counter()
    assert p.match(("a" * 50_000,), False) is None
    assert time.perf_counter() - start < 0.5


def _tree(tmp_path: Path, files: dict[str, str]) -> WorkTree:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return WorkTree(tmp_path)


def test_without_rules_of_its_own_the_default_list_applies(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"a/logo.png": "x", "a/app.yaml": "x", ".github/ci.yaml": "x"})
    art = Artifact(tree, "")
    found = art.excluded("a/logo.png")
    assert found is not None and found.text == "*.png"
    assert "default" in Artifact.why(found)
    assert art.excluded(".github/ci.yaml") is not None
    assert art.excluded("a/.sops.yaml") is not None
    assert art.excluded("a/app.yaml") is None


def test_a_sourceignore_replaces_the_default_list_but_not_the_vcs_files(tmp_path: Path) -> None:
    # szinn/k8s-homelab's shape: a root .sourceignore, and images a generator reads
    tree = _tree(tmp_path, {".sourceignore": "# ours\ndocs/\n", "a/logo.png": "x"})
    art = Artifact(tree, "")
    assert art.excluded("a/logo.png") is None  # packaged: the defaults no longer apply
    assert art.excluded(".github/ci.yaml") is None
    assert art.excluded(".gitignore") is not None
    found = art.excluded("docs/x.yaml")
    assert found is not None and found.origin == ".sourceignore:2"


def test_spec_ignore_comes_last_and_alone_replaces_the_defaults(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {".sourceignore": "/keep/\n", "a/logo.png": "x"})
    art = Artifact(tree, "", "!/keep/\n/drop/\n", ("clusters/x/gotk-sync.yaml", 12))
    assert art.excluded("keep/a.yaml") is None  # spec.ignore's "!" wins over .sourceignore
    found = art.excluded("drop/a.yaml")
    assert found is not None
    assert found.origin == "spec.ignore, clusters/x/gotk-sync.yaml:13"
    assert Artifact(WorkTree(tmp_path / "a"), "", "/x\n").excluded("logo.png") is None


def test_an_artifact_rooted_below_the_tree_reads_its_own_rules(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"oci/.sourceignore": "*.md\n", "oci/a.md": "x", "b.md": "x"})
    art = Artifact(tree, "oci")
    assert art.excluded("oci/a.md") is not None
    assert art.excluded("b.md") is None  # outside this source: not its to say


def test_the_ignore_files_of_a_commit_are_those_of_the_work_tree(tmp_path: Path) -> None:
    files = {".sourceignore": "/notes/\n", "apps/.sourceignore": "*.local.yaml\n", "x.yaml": ""}
    work = _tree(tmp_path, files)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = GitTree(tmp_path, "HEAD", "")
    assert sorted(head.files_named("", ".sourceignore")) == sorted(
        work.files_named("", ".sourceignore")
    )
    assert sorted(work.files_named("", ".sourceignore")) == [".sourceignore", "apps/.sourceignore"]
    for tree in (work, head):
        art = Artifact(tree, "")
        assert art.excluded("apps/a/b.local.yaml") is not None
        assert art.excluded("notes/a.yaml") is not None
        assert art.excluded("a.local.yaml") is None


def _unread(name: str) -> dict[str, tuple[str, str, str]]:
    tree, _, _ = open_path(str(WALK / name), None)
    renderer = Renderer(tree, lambda rel: rel)
    out: dict[str, tuple[str, str, str]] = {}
    for inst_name, root in find_entries(tree, "", renderer):
        inst = Applier(tree, renderer, lambda rel: rel).apply(inst_name, root)
        for rec in inst.unread.records.values():
            out[rec.source] = (rec.cause, rec.location, rec.detail)
    return out


def test_a_build_that_needs_a_file_left_out_is_refused_with_the_file_and_rule() -> None:
    unread = _unread("artifact-defaults")
    cause, where, detail = unread["Kustomization flux-system/wiki"]
    assert cause == NOT_IN_ARTIFACT
    assert where == "clusters/lab/wiki.yaml:8"  # its spec.path
    assert "apps/wiki/assets/logo.png" in detail
    assert "'*.png' (source-controller's default exclusions)" in detail
    assert "Flux applies none of it" in detail


def test_sourceignore_and_spec_ignore_refuse_what_they_leave_out() -> None:
    unread = _unread("artifact-sourceignore")
    assert set(unread) == {
        "Kustomization flux-system/notebook",
        "Kustomization flux-system/guestbook",
    }
    _, _, detail = unread["Kustomization flux-system/notebook"]
    assert "settings.draft.yaml" in detail and "(.sourceignore:3)" in detail
    _, _, detail = unread["Kustomization flux-system/guestbook"]
    assert "spec.path" in detail
    assert "'/apps/legacy/' (spec.ignore, clusters/home/flux-system/gotk-sync.yaml:13)" in detail


def test_scan_is_undetermined_when_a_build_is_refused() -> None:
    code, out = run("scan", "--gitops", str(WALK / "artifact-sourceignore"))
    assert code == 4, out
    assert "could not read Kustomization flux-system/notebook" in out
    assert "not in the source artifact" in out
