"""The files behind ``--gitops PATH``: which ones to read, from disk or from a git ref.

A :class:`Tree` gives read access to the files under PATH, either in the working tree
(:class:`WorkTree`) or as they are at a git ref (:class:`GitTree`, through ``git ls-tree`` and
``git cat-file --batch`` with a list argv, never a shell). :func:`walk` decides which files
matter: a ``kustomization.yaml`` is followed through its ``resources``, ``components`` and
``configMapGenerator`` files (entries that leave PATH are reported, not read); a directory
without one contributes every ``*.yaml`` / ``*.yml`` file, recursively.

:func:`documents` parses one file into :class:`Doc` objects that remember the 1-based line of
every value, so facts can point at ``file:line``.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from upgradeplan.errors import BadInput

YAML_SUFFIXES = (".yaml", ".yml")
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

PathKey = tuple[Any, ...]


# --------------------------------------------------------------------------- trees


class Tree(Protocol):
    """Read access to the files under one root; paths are POSIX and relative to the root."""

    def is_dir(self, rel: str) -> bool: ...

    def is_file(self, rel: str) -> bool: ...

    def list_dir(self, rel: str) -> list[str]: ...

    def read(self, rel: str) -> bytes: ...


class WorkTree:
    """The files under a directory of the working tree."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, rel: str) -> Path:
        return self.root if rel in ("", ".") else self.root / rel

    def is_dir(self, rel: str) -> bool:
        return self._path(rel).is_dir()

    def is_file(self, rel: str) -> bool:
        return self._path(rel).is_file()

    def list_dir(self, rel: str) -> list[str]:
        return sorted(p.name for p in self._path(rel).iterdir())

    def read(self, rel: str) -> bytes:
        return self._path(rel).read_bytes()


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *args],
            input=stdin,
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        raise BadInput(
            "--base needs git, which is not on PATH", hint="install git or drop --base"
        ) from None


def git_toplevel(start: Path) -> Path:
    """The root of the git work tree that holds ``start`` (a directory)."""
    proc = _git(start, "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        raise BadInput(
            f"{start} is not inside a git repository",
            hint="run from the repository's work tree or drop --base",
        )
    return Path(proc.stdout.decode().strip())


def git_tree(path: Path, ref: str) -> tuple[GitTree, str]:
    """The tree of ``path`` (file or directory) at git ``ref``, and where to start in it."""
    absolute = Path(os.path.abspath(path))
    anchor = absolute
    while not anchor.is_dir() and anchor != anchor.parent:
        anchor = anchor.parent
    repo = git_toplevel(anchor)
    verify = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if verify.returncode != 0:
        raise BadInput(
            f"--base {ref}: no such git ref in {repo}",
            hint="fetch it first (e.g. git fetch origin main) or pass a ref that exists "
            "(git branch -a, git log)",
        )
    commit = verify.stdout.decode().strip()
    try:
        prefix = absolute.relative_to(repo.resolve()).as_posix()
    except ValueError:
        try:
            prefix = absolute.resolve().relative_to(repo.resolve()).as_posix()
        except ValueError:
            raise BadInput(
                f"--gitops {path} is outside the git repository {repo}",
                hint="pass a path inside the repository with --base",
            ) from None
    prefix = "" if prefix == "." else prefix
    kind = _git(repo, "cat-file", "-t", f"{commit}:{prefix}")
    what = kind.stdout.decode().strip()
    if kind.returncode != 0 or what not in ("blob", "tree"):
        raise BadInput(
            f"--gitops {path} does not exist at {ref}",
            hint=f"the PR adds it (there is nothing to compare), or pass the path it had at {ref}",
        )
    if what == "blob":
        return GitTree(repo, commit, posixpath.dirname(prefix)), posixpath.basename(prefix)
    return GitTree(repo, commit, prefix), ""


class GitTree:
    """The files under ``prefix`` of a git repository as they are at ``commit``."""

    def __init__(self, repo: Path, commit: str, prefix: str) -> None:
        self.repo = repo
        self.commit = commit
        self.prefix = prefix.strip("/")
        args = ["ls-tree", "-r", "-z", self.commit]
        if self.prefix:
            args += ["--", self.prefix]
        listing = _git(repo, *args)
        if listing.returncode != 0:
            raise BadInput(f"git ls-tree failed: {listing.stderr.decode().strip()}")
        self._blobs: dict[str, str] = {}
        self._dirs: set[str] = {""}
        self._children: dict[str, set[str]] = {"": set()}
        for entry in listing.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if not entry:
                continue
            meta, _, name = entry.partition("\t")
            parts = meta.split()
            if len(parts) != 3 or parts[1] != "blob":
                continue
            rel = self._relative(name)
            if rel is None:
                continue
            self._blobs[rel] = parts[2]
            self._add_child(rel)
        self._cache: dict[str, bytes] = {}

    def _add_child(self, rel: str) -> None:
        """Record ``rel`` under its parent directory, creating the parents as needed."""
        while rel:
            parent = posixpath.dirname(rel)
            self._children.setdefault(parent, set()).add(posixpath.basename(rel))
            if parent in self._dirs:
                return
            self._dirs.add(parent)
            rel = parent

    def _relative(self, path: str) -> str | None:
        if not self.prefix:
            return path
        if path == self.prefix:
            return ""
        if path.startswith(self.prefix + "/"):
            return path[len(self.prefix) + 1 :]
        return None

    def is_dir(self, rel: str) -> bool:
        return _norm(rel) in self._dirs

    def is_file(self, rel: str) -> bool:
        return _norm(rel) in self._blobs

    def list_dir(self, rel: str) -> list[str]:
        return sorted(self._children.get(_norm(rel), ()))

    def read(self, rel: str) -> bytes:
        rel = _norm(rel)
        if rel not in self._cache:
            self._prefetch([rel])
        return self._cache[rel]

    def prefetch(self, rels: list[str]) -> None:
        """Read these files with one ``git cat-file --batch`` (instead of one call each)."""
        self._prefetch([_norm(r) for r in rels])

    def _prefetch(self, rels: list[str]) -> None:
        wanted = [r for r in rels if r not in self._cache and r in self._blobs]
        if not wanted:
            return
        stdin = "".join(self._blobs[r] + "\n" for r in wanted).encode()
        proc = _git(self.repo, "cat-file", "--batch", stdin=stdin)
        if proc.returncode != 0:
            raise BadInput(f"git cat-file failed: {proc.stderr.decode().strip()}")
        out = proc.stdout
        pos = 0
        for rel in wanted:
            eol = out.index(b"\n", pos)
            header = out[pos:eol].split()
            size = int(header[2])
            start = eol + 1
            self._cache[rel] = out[start : start + size]
            pos = start + size + 1


def _norm(rel: str) -> str:
    rel = posixpath.normpath(rel) if rel else ""
    return "" if rel == "." else rel


# --------------------------------------------------------------------------- walking


@dataclass
class Walk:
    """The YAML files to read, in order, with the namespace a kustomization gives them."""

    files: list[tuple[str, str | None]] = field(default_factory=list)  # (rel, namespace)
    skipped: dict[str, str] = field(default_factory=dict)  # entry -> why it was not read


def walk(tree: Tree, start: str) -> Walk:
    """The files under ``start`` (a file or directory relative to the tree's root)."""
    out = Walk()
    seen: set[str] = set()
    _walk(tree, _norm(start), None, out, seen, where="")
    return out


def _kustomization_in(tree: Tree, rel: str) -> str | None:
    for name in KUSTOMIZATION_NAMES:
        candidate = _norm(posixpath.join(rel, name))
        if tree.is_file(candidate):
            return candidate
    return None


def _walk(
    tree: Tree, rel: str, namespace: str | None, out: Walk, seen: set[str], where: str
) -> None:
    if rel in seen:
        return
    seen.add(rel)
    if tree.is_dir(rel):
        kust = _kustomization_in(tree, rel)
        if kust is not None:
            _follow_kustomization(tree, kust, namespace, out, seen)
            return
        if rel and tree.is_file(posixpath.join(rel, "Chart.yaml")):
            out.skipped[rel] = "a Helm chart's sources (templates are not manifests); not read"
            return
        for name in tree.list_dir(rel):
            child = _norm(posixpath.join(rel, name))
            if name.startswith("."):
                continue  # .git, .github and other tool directories
            if tree.is_dir(child) or name.endswith(YAML_SUFFIXES):
                _walk(tree, child, namespace, out, seen, where)
        return
    if not tree.is_file(rel):
        out.skipped[rel or "."] = f"listed in {where} but not found" if where else "not found"
        return
    if posixpath.basename(rel) in KUSTOMIZATION_NAMES:
        _follow_kustomization(tree, rel, namespace, out, seen)
        return
    out.files.append((rel, namespace))


def _follow_kustomization(
    tree: Tree, rel: str, namespace: str | None, out: Walk, seen: set[str]
) -> None:
    seen.add(rel)
    docs = documents(tree.read(rel), rel)
    base = posixpath.dirname(rel)
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict):
            continue
        ns = data.get("namespace")
        own_ns = ns if isinstance(ns, str) and ns else namespace
        entries: list[str] = []
        for key in ("resources", "components", "bases"):
            items = data.get(key)
            if isinstance(items, list):
                entries += [i for i in items if isinstance(i, str)]
        generators = data.get("configMapGenerator")
        if isinstance(generators, list):
            for gen in generators:
                files = gen.get("files") if isinstance(gen, dict) else None
                if isinstance(files, list):
                    entries += [f.split("=", 1)[-1] for f in files if isinstance(f, str)]
        for entry in entries:
            if "://" in entry or entry.startswith(("git@", "github.com/")):
                out.skipped[entry] = f"remote resource in {rel}; not read"
                continue
            target = posixpath.normpath(posixpath.join(base, entry))
            if target == ".." or target.startswith("../") or posixpath.isabs(target):
                out.skipped[entry] = (
                    f"listed in {rel} but outside the --gitops PATH; pass a PATH that contains it"
                )
                continue
            _walk(tree, _norm(target), own_ns, out, seen, where=rel)


# --------------------------------------------------------------------------- YAML with lines


@dataclass
class Doc:
    """One YAML document: the data, and per path (tuple of keys/indexes) its value's line."""

    data: Any
    file: str
    index: int  # 0-based document index in the file
    lines: dict[PathKey, int] = field(default_factory=dict)
    key_lines: dict[PathKey, int] = field(default_factory=dict)  # line of a mapping key
    raw: dict[PathKey, str] = field(default_factory=dict)  # scalar text as written
    styles: dict[PathKey, str] = field(default_factory=dict)  # scalar style ("|", ">", '"'…)

    def line(self, *path: Any) -> int:
        """The line of the value at ``path``, or of its deepest existing ancestor (≥ 1)."""
        key: PathKey = tuple(path)
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key[:-1]
        return self.lines.get((), 1)

    def get(self, *path: Any) -> Any:
        node = self.data
        for step in path:
            if isinstance(node, dict):
                if step not in node:
                    return None
                node = node[step]
            elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
                node = node[step]
            else:
                return None
        return node

    def text(self, *path: Any) -> str | None:
        """The scalar at ``path`` as written in the file (``4.10`` stays ``"4.10"``)."""
        value = self.get(*path)
        if value is None or isinstance(value, dict | list):
            return None
        raw = self.raw.get(tuple(path))
        return raw if raw is not None else str(value)


def _index(node: yaml.Node, path: PathKey, doc: Doc, seen: set[int]) -> None:
    doc.lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        doc.raw[path] = str(node.value)
        if node.style:
            doc.styles[path] = node.style
        return
    if id(node) in seen:  # an alias: its lines are those of the anchor
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = _key_of(key_node)
                doc.key_lines[(*path, key)] = key_node.start_mark.line + 1
                _index(value_node, (*path, key), doc, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, child in enumerate(node.value):
            _index(child, (*path, i), doc, seen)


def _key_of(node: yaml.ScalarNode) -> Any:
    if node.tag == "tag:yaml.org,2002:int":
        try:
            return int(node.value)
        except ValueError:
            return node.value
    if node.tag == "tag:yaml.org,2002:bool":
        return node.value.lower() in ("true", "yes", "on")
    return node.value


def documents(content: bytes, display: str) -> list[Doc]:
    """Parse every document of a YAML file; errors become :class:`BadInput` at ``file:line``."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadInput(
            f"not UTF-8 text (byte {exc.start})",
            location=display,
            hint="save the file as UTF-8 or remove it from the --gitops PATH",
        ) from None
    return parse(text, display)


def parse(text: str, display: str, offset: int = 0) -> list[Doc]:
    """Parse YAML text whose first line is line ``offset + 1`` of ``display``."""
    loader = yaml.CSafeLoader(text)
    out: list[Doc] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            data = loader.construct_document(node)
            doc = Doc(data=data, file=display, index=len(out))
            _index(node, (), doc, set())
            if offset:
                doc.lines = {k: v + offset for k, v in doc.lines.items()}
                doc.key_lines = {k: v + offset for k, v in doc.key_lines.items()}
            out.append(doc)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + offset if mark is not None else 0
        what = exc.problem or exc.context or "invalid YAML"
        raise BadInput(
            f"YAML syntax error: {what}",
            location=f"{display}:{line}" if line else display,
            hint="fix the YAML (or remove the file from the --gitops PATH)",
        ) from None
    except yaml.YAMLError as exc:
        raise BadInput(f"YAML error: {exc}", location=display, hint="fix the YAML") from None
    finally:
        loader.dispose()
    return out


@dataclass(frozen=True)
class View:
    """A mapping inside a document (the document itself, a List item, ``spec.values``…)."""

    doc: Doc
    prefix: PathKey = ()

    def get(self, *path: Any) -> Any:
        return self.doc.get(*self.prefix, *path)

    def line(self, *path: Any) -> int:
        return self.doc.line(*self.prefix, *path)

    def text(self, *path: Any) -> str | None:
        return self.doc.text(*self.prefix, *path)

    def where(self, *path: Any) -> str:
        """``file:line`` of the value at ``path``."""
        return f"{self.doc.file}:{self.line(*path)}"

    def key_where(self, *path: Any) -> str:
        """``file:line`` of the key of ``path`` (where a mapping entry starts)."""
        line = self.doc.key_lines.get((*self.prefix, *path)) or self.line(*path)
        return f"{self.doc.file}:{line}"

    def embedded(self, *path: Any) -> list[Doc]:
        """The YAML documents held in the string at ``path`` (a ConfigMap's ``values.yaml``).

        Lines stay true to the file for a literal block (``|``); otherwise every value is
        placed on the key's line.
        """
        text = self.get(*path)
        if not isinstance(text, str):
            return []
        full = (*self.prefix, *path)
        key_line = self.doc.key_lines.get(full) or self.line(*path)
        if self.doc.styles.get(full) == "|":
            return parse(text, self.doc.file, offset=key_line)
        docs = parse(text, self.doc.file)
        for d in docs:
            d.lines = dict.fromkeys(d.lines, key_line)
            d.key_lines = dict.fromkeys(d.key_lines, key_line)
        return docs

    def sub(self, *path: Any) -> View:
        return View(self.doc, (*self.prefix, *path))

    def mapping(self, *path: Any) -> dict[Any, Any]:
        value = self.get(*path)
        return value if isinstance(value, dict) else {}

    def sequence(self, *path: Any) -> list[Any]:
        value = self.get(*path)
        return value if isinstance(value, list) else []


def iter_objects(doc: Doc) -> Iterator[View]:
    """The mappings a document holds: itself, or the items of a ``kind: List``."""
    data = doc.data
    if not isinstance(data, dict):
        return
    items = data.get("items")
    if data.get("kind") == "List" and isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict):
                yield View(doc, ("items", i))
        return
    yield View(doc)
