"""Which files source-controller puts in a source's artifact: its ignore rules, as it applies them.

source-controller archives a GitRepository (and the content of an OCIRepository) without
the files its ignore rules match. What is modelled here is read from fluxcd/source-controller
v1.9.0 (``internal/controller/gitrepository_controller.go``: the rules are every
``.sourceignore`` of the checkout, then ``spec.ignore``) and the fluxcd/pkg modules it uses
(``sourceignore`` v0.18.0, ``sourceignore.go``: the lists and how ``.sourceignore`` files are
found; ``artifact`` v0.18.0, ``storage/archive.go``: ``SourceIgnoreFilter`` and
``Archive``):

* the version-control files are always left out: ``.git/``, ``.gitignore``, ``.gitmodules``,
  ``.gitattributes``;
* the rest of the default list (:data:`DEFAULTS`: images and archives such as ``*.png`` and
  ``*.zip``, CI files such as ``.github/``, and ``**/.sops.yaml``) applies only when there is
  no rule of the repository's own: a single ``.sourceignore`` pattern or a ``spec.ignore``
  replaces it (a repository with a ``.sourceignore`` keeps its ``*.png`` files unless it
  lists them itself);
* the repository's rules: each ``.sourceignore`` (its patterns relative to its directory;
  the root's first, then the subdirectories' depth-first in name order, ``.git`` skipped),
  then ``spec.ignore`` (relative to the root). The last pattern that matches a path decides;
  ``!pattern`` puts a path back;
* patterns are gitignore syntax as go-git reads it: without a ``/`` a pattern matches any
  component of the path (so everything below a directory of that name); with one it is
  anchored at its file's directory and ``**`` spans directories; a trailing ``/`` matches a
  directory only; ``*``, ``?`` and ``[…]`` are Go's ``filepath.Match`` (never across ``/``),
  run on RE2 (time linear in the name). A pattern Go cannot parse matches nothing.

:class:`Artifact` answers, for a path of the tree, whether the artifact holds it and, if
not, which rule leaves it out.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol

from msgspec import Struct

from upgradeplan.linear import PatternError, compile_pattern
from upgradeplan.readers.gitops.docs import Doc
from upgradeplan.readers.gitops.facts import NOT_IN_ARTIFACT
from upgradeplan.readers.gitops.transform import identity
from upgradeplan.readers.gitops.trees import Tree, norm
from upgradeplan.unreadable import Unreadable

IGNORE_FILE = ".sourceignore"
VCS = (".git/", ".gitignore", ".gitmodules", ".gitattributes")
DEFAULTS = (
    *("*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip"),
    *(".github/", ".circleci/", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".drone.yml"),
    *("cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml"),
    *("**/.goreleaser.yml", "**/.sops.yaml", "**/.flux.yaml"),
)
_DEFAULT_ORIGIN = "source-controller's default exclusions"


@lru_cache(maxsize=4096)
def _glob(pattern: str) -> Any:
    """Go's ``filepath.Match`` of one path component as an RE2 pattern; None when Go would
    report a bad pattern (it then matches nothing)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\":
            if i + 1 == n:
                return None
            i += 1
            out.append(_lit(pattern[i]))
        elif c == "[":
            cls, i = _class(pattern, i + 1)
            if cls is None:
                return None
            out.append(cls)
            continue
        else:
            out.append(_lit(c))
        i += 1
    try:
        return compile_pattern("".join(out), case_sensitive=True)
    except PatternError:
        return None


def _lit(c: str) -> str:
    """``c`` as a literal of RE2 (ASCII punctuation escaped, anything else as it is)."""
    return "\\" + c if c.isascii() and not c.isalnum() and c != "_" else c


def _class(pattern: str, i: int) -> tuple[str | None, int]:
    """A ``[…]`` class starting after its ``[`` at ``i``: its RE2 form and where it ends."""
    n = len(pattern)
    negate = i < n and pattern[i] == "^"
    i += negate
    items: list[str] = []
    while True:
        if i >= n:
            return None, i
        if pattern[i] == "]" and items:
            break
        lo, i = _class_char(pattern, i)
        if lo is None:
            return None, i
        item = _lit(lo)
        if i < n and pattern[i] == "-":
            hi, i = _class_char(pattern, i + 1)
            if hi is None or hi < lo:
                return None, i
            item += "-" + _lit(hi)
        items.append(item)
    body = "".join(items)
    return (f"[^/{body}]" if negate else f"[{body}]"), i + 1


def _class_char(pattern: str, i: int) -> tuple[str | None, int]:
    if i >= len(pattern) or pattern[i] in "-]":
        return None, i
    if pattern[i] == "\\":
        i += 1
        if i >= len(pattern):
            return None, i
    return pattern[i], i + 1


def _name_match(glob: str, name: str) -> bool:
    return _matcher(glob)(name)


@lru_cache(maxsize=4096)
def _matcher(glob: str) -> Callable[[str], bool]:
    """A test of one name against ``glob``: plain text and ``*.ext`` without RE2 (most
    patterns are one of those), anything else on RE2."""
    if not any(c in glob for c in "*?[\\"):
        return glob.__eq__
    if glob.startswith("*") and not any(c in glob[1:] for c in "*?[\\"):
        tail = glob[1:]
        return lambda name: name.endswith(tail)
    compiled = _glob(glob)
    if compiled is None:
        return lambda _name: False
    return lambda name: compiled.fullmatch(name) is not None


class Pattern(Struct, frozen=True):
    """One ignore pattern, read as go-git's gitignore package reads it."""

    text: str  # as written
    domain: tuple[str, ...]  # the directory (path components) its file is in
    origin: str  # where it is written: "kubernetes/.sourceignore:3", the default list, …
    parts: tuple[str, ...]
    include: bool
    dir_only: bool
    anchored: bool  # it holds a "/": matched from its directory, component by component

    @classmethod
    def parse(cls, text: str, domain: tuple[str, ...], origin: str) -> Pattern:
        p = text
        include = p.startswith("!")
        if include:
            p = p[1:]
        if not p.endswith("\\ "):
            p = p.rstrip(" ")
        dir_only = p.endswith("/")
        if dir_only:
            p = p[:-1]
        return cls(text, domain, origin, tuple(p.split("/")), include, dir_only, "/" in p)

    def match(self, path: tuple[str, ...], is_dir: bool) -> bool | None:
        """True: excluded; False: put back (``!``); None: the pattern says nothing."""
        if len(path) <= len(self.domain) or path[: len(self.domain)] != self.domain:
            return None
        rest = path[len(self.domain) :]
        hit = self._anchored(rest, is_dir) if self.anchored else self._anywhere(rest, is_dir)
        return None if not hit else not self.include

    def _anywhere(self, path: tuple[str, ...], is_dir: bool) -> bool:
        for i, name in enumerate(path):
            if not _name_match(self.parts[0], name):
                continue
            return not (self.dir_only and not is_dir and i == len(path) - 1)
        return False

    def _anchored(self, path: tuple[str, ...], is_dir: bool) -> bool:
        matched = False
        traverse = False
        for i, part in enumerate(self.parts):
            if part == "":
                traverse = False
                continue
            if part == "**":
                if i == len(self.parts) - 1:
                    break
                traverse = True
                continue
            if "**" in part or not path:
                return False
            if traverse:
                traverse = False
                while path:
                    name, path = path[0], path[1:]
                    if _name_match(part, name):
                        matched = True
                        break
                    if not path:
                        matched = False
            else:
                if not _name_match(part, path[0]):
                    return False
                matched = True
                path = path[1:]
        return not (matched and self.dir_only and not is_dir and not path) and matched


def read_patterns(
    text: str, domain: tuple[str, ...], file: str, first: int = 1, what: str = ""
) -> list[Pattern]:
    """The patterns of an ignore file's text (``#`` comments and blank lines skipped), each
    with its origin: ``what`` (if any) and ``file:line``, the text starting at line ``first``."""
    out: list[Pattern] = []
    for n, line in enumerate(text.splitlines()):
        if line.startswith("#") or not line.strip():
            continue
        origin = f"{what}, {file}:{first + n}" if what else f"{file}:{first + n}"
        out.append(Pattern.parse(line, domain, origin))
    return out


class Artifact:
    """The files of ``tree`` under ``root`` (a tree path) that the artifact of that source
    holds: the repository's ``.sourceignore`` files are read once; ``ignore`` is the
    GitRepository's ``spec.ignore`` (None when it sets none) and ``where`` the file and line
    its text starts at; ``display`` shows a tree path in messages."""

    def __init__(
        self,
        tree: Tree,
        root: str,
        ignore: str | None = None,
        where: tuple[str, int] = ("", 1),
        display: Callable[[str], str] = str,
    ) -> None:
        self.tree = tree
        self.root = norm(root)
        own: list[Pattern] = []
        for rel in sorted(tree.files_named(self.root, IGNORE_FILE), key=lambda r: r.split("/")):
            inside = posixpath.relpath(rel, self.root or ".") if self.root else rel
            domain = tuple(posixpath.dirname(inside).split("/")) if "/" in inside else ()
            try:
                text = tree.read(rel).decode("utf-8", "replace")
            except OSError:
                continue
            own += read_patterns(text, domain, display(rel))
        if ignore is not None:
            own += read_patterns(ignore, (), where[0], where[1], "spec.ignore")
        vcs = [Pattern.parse(p, (), _DEFAULT_ORIGIN) for p in VCS]
        if own:
            self.patterns = [*vcs, *own]
        else:
            self.patterns = [*vcs, *(Pattern.parse(p, (), _DEFAULT_ORIGIN) for p in DEFAULTS)]
        self._cache: dict[tuple[str, bool], Pattern | None] = {}

    def excluded(self, rel: str, *, is_dir: bool = False) -> Pattern | None:
        """The pattern that leaves the file (``is_dir``: the directory) ``rel``, a tree path,
        out of the artifact, or None when the artifact holds it (or it lies outside this
        source)."""
        rel = norm(rel)
        if (rel, is_dir) in self._cache:
            return self._cache[rel, is_dir]
        inside = posixpath.relpath(rel, self.root) if self.root else rel
        found: Pattern | None = None
        if inside not in (".", "") and not inside.startswith("../"):
            path = tuple(inside.split("/"))
            for pattern in reversed(self.patterns):
                verdict = pattern.match(path, is_dir)
                if verdict is not None:
                    found = pattern if verdict else None
                    break
        self._cache[rel, is_dir] = found
        return found

    @staticmethod
    def why(pattern: Pattern) -> str:
        """How a pattern reads in a message."""
        rule = f"{pattern.text!r} ({pattern.origin})"
        return f"which source-controller leaves out of the artifact: {rule}"


class Archives:
    """The artifacts the Flux Kustomizations of one tree build from, each read once."""

    def __init__(self, tree: Tree, display: Callable[[str], str]) -> None:
        self.tree = tree
        self.display = display
        self._made: dict[tuple[str, str], Artifact] = {}

    def of(self, ks: Doc, base: str, entry: str, found: Sources) -> Artifact:
        """What the artifact ``ks`` builds from holds: this repository's GitRepository (also
        behind an ExternalArtifact copied from it) with its ``spec.ignore``, or an OCI
        artifact of one of its directories (``base``), rooted there. ``entry``: the
        installation's directory; ``found``: the tree's GitRepositories and own names."""
        oci = ks.get("spec", "sourceRef", "kind") == "OCIRepository"
        root = base if oci else self.tree.repo_rel
        ignore, where = (None, ("", 1)) if oci else own_ignore(found, entry)
        key = (root, entry if ignore is not None else "")
        if key not in self._made:
            self._made[key] = Artifact(self.tree, root, ignore, where, self.display)
        return self._made[key]


class Sources(Protocol):
    """What the reader found of the repository's own source (a Renderer)."""

    own_sources: set[str]
    git_repositories: list[tuple[str, Doc]]


def own_ignore(found: Sources, entry: str) -> tuple[str | None, tuple[str, int]]:
    """The ``spec.ignore`` of this repository's GitRepository and the file and line its
    text starts at: the one in ``entry``'s directory, else the one every copy agrees on."""
    repos = [
        (rel, repo)
        for rel, repo in found.git_repositories
        if identity(repo)[3] in found.own_sources
        and (identity(repo)[2] or "flux-system") == "flux-system"
        and isinstance(repo.get("spec", "ignore"), str)
    ]
    mine = [r for rel, r in repos if not entry or rel == entry or rel.startswith(entry + "/")]
    chosen = mine or [r for _, r in repos]
    texts = {str(r.get("spec", "ignore")) for r in chosen}
    if len(texts) != 1:
        return None, ("", 1)
    text = texts.pop()
    # a block scalar (ignore: |) starts on the line after its key
    return text, (chosen[0].file, chosen[0].line("spec", "ignore") + ("\n" in text))


def refusal(ks: Doc, refused: list[tuple[str, str]], display: Callable[[str], str]) -> Unreadable:
    """The record of a Flux Kustomization whose build needs files (tree paths, and why) its
    artifact leaves out: kustomize fails, and Flux applies none of it."""
    _, _, ns, name = identity(ks)
    source = f"Kustomization {ns or 'flux-system'}/{name}"
    file, why = refused[0]
    more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
    detail = (
        f"its build needs {display(file)}{more}: {why}; kustomize fails and Flux applies none of it"
    )
    where = f"{ks.file}:{ks.line('spec', 'path')}"
    key = f"source {source}"
    return Unreadable(
        source, NOT_IN_ARTIFACT, kind="resource", location=where, detail=detail, keys=(key,)
    )


__all__ = [
    "DEFAULTS",
    "IGNORE_FILE",
    "VCS",
    "Archives",
    "Artifact",
    "Pattern",
    "own_ignore",
    "read_patterns",
    "refusal",
]
