"""Where ``--gitops`` files come from: the working tree, or a git ref (``--base``).

A :class:`Tree` reads files by POSIX paths relative to the ``--gitops`` directory. A path may
leave that directory (``../base``, as kustomize overlays do) but not the tree's boundary: the
git work tree that holds it, or the directory itself outside git. :class:`GitTree` reads the
files of a commit through ``git ls-tree`` and ``git cat-file --batch`` (a list argv, never a
shell); nothing is checked out. Base and head are bounded alike, so they read the same files.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from pathlib import Path
from typing import Protocol

from upgradeplan.errors import BadInput
from upgradeplan.readers.inputs import file_kind, read_bounded

MAX_FILE = 64 * 1024 * 1024  # bytes of one file of a GitOps tree


class Tree(Protocol):
    """Read access to files by POSIX paths relative to the ``--gitops`` directory."""

    bound: str  # what the boundary is, for messages ("the repository")
    repo_rel: str  # the repository root, relative to the --gitops directory ("", "../..")

    def contains(self, rel: str) -> bool: ...

    def is_dir(self, rel: str) -> bool: ...

    def is_file(self, rel: str) -> bool: ...

    def list_dir(self, rel: str) -> list[str]: ...

    def read(self, rel: str) -> bytes: ...

    def files_named(self, rel: str, name: str) -> list[str]: ...


_YAML = (".yaml", ".yml")


def norm(rel: str) -> str:
    """``rel`` normalised (``a/./b/../c`` → ``a/c``; ``.`` → ``""``)."""
    rel = posixpath.normpath(rel) if rel else ""
    return "" if rel == "." else rel


def _outside(rel: str) -> bool:
    return rel == ".." or rel.startswith("../") or posixpath.isabs(rel)


class WorkTree:
    """Files of the working tree under ``root``, bounded by ``boundary`` (a parent of it)."""

    def __init__(self, root: Path, boundary: Path | None = None) -> None:
        self.root = Path(os.path.abspath(root))
        self.boundary = Path(os.path.abspath(boundary)) if boundary is not None else self.root
        self.bound = "the repository" if boundary is not None else "the --gitops PATH"
        rel = os.path.relpath(os.path.realpath(self.boundary), os.path.realpath(self.root))
        self.repo_rel = norm(rel.replace(os.sep, "/"))

    def _path(self, rel: str) -> str:
        rel = norm(rel)
        base = str(self.root)
        return base if not rel else os.path.normpath(os.path.join(base, rel))

    def contains(self, rel: str) -> bool:
        # compare real paths: git reports its top level with symlinks resolved
        path = Path(os.path.realpath(self._path(rel)))
        bound = Path(os.path.realpath(self.boundary))
        return path == bound or bound in path.parents

    def is_dir(self, rel: str) -> bool:
        return os.path.isdir(self._path(rel))

    def is_file(self, rel: str) -> bool:
        return os.path.isfile(self._path(rel))

    def list_dir(self, rel: str) -> list[str]:
        """The entries of a directory, symlinks resolved: one leaving the boundary is left
        out (nothing outside is read), and so is a symlinked directory that loops back to an
        ancestor or lies inside the tree (it is walked where it really is: visited once)."""
        here = Path(os.path.realpath(self._path(rel)))
        bound = Path(os.path.realpath(self.boundary))
        root = Path(os.path.realpath(self.root))
        out = []
        for p in Path(self._path(rel)).iterdir():
            if p.is_symlink():
                real = Path(os.path.realpath(p))
                if real != bound and bound not in real.parents:
                    continue  # leaves the repository
                if real.is_dir() and (
                    real in (root, here) or root in real.parents or real in here.parents
                ):
                    continue  # a loop, or a second way to a directory walked anyway
            out.append(p.name)
        return sorted(out)

    def read(self, rel: str) -> bytes:
        """A file's bytes: a regular file of at most MAX_FILE bytes (a FIFO or a device in
        the tree is refused by name, never opened)."""

        return read_bounded(self._path(rel), rel or self._path(rel), cap=MAX_FILE)

    def files_named(self, rel: str, name: str) -> list[str]:
        """Tree paths of the regular files called ``name`` in and below ``rel``, as
        source-controller finds its ``.sourceignore`` files: ``.git`` and symlinked
        directories are not entered."""
        top = self._path(rel)
        out: list[str] = []
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != ".git"]
            if name in files and os.path.isfile(os.path.join(folder, name)):
                inside = os.path.relpath(os.path.join(folder, name), top).replace(os.sep, "/")
                out.append(norm(posixpath.join(rel, inside)))
        return out


def work_tree(root: Path) -> WorkTree:
    """The working tree of ``root`` (a directory), bounded by its git work tree if any."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel"],
            capture_output=True,
            check=False,
        )
    except OSError:
        return WorkTree(root)
    top = proc.stdout.decode().strip() if proc.returncode == 0 else ""
    return WorkTree(root, Path(top) if top else None)


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
        prefix = absolute.relative_to(repo).as_posix()
    except ValueError:
        try:
            prefix = absolute.resolve().relative_to(repo.resolve()).as_posix()
        except ValueError:
            raise BadInput(
                f"--gitops {path} is outside the git repository {repo}",
                hint="pass a path inside the repository with --base",
            ) from None
    prefix = norm(prefix)
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
    """The files of a git commit, seen from the directory ``prefix`` of the repository."""

    def __init__(self, repo: Path, commit: str, prefix: str) -> None:
        self.repo = repo
        self.commit = commit
        self.prefix = norm(prefix.strip("/"))
        self.bound = "the repository"
        self.repo_rel = "/".join([".."] * len(self.prefix.split("/"))) if self.prefix else ""
        listing = _git(repo, "ls-tree", "-r", "-z", self.commit)
        if listing.returncode != 0:
            raise BadInput(f"git ls-tree failed: {listing.stderr.decode().strip()}")
        self._blobs: dict[str, str] = {}  # repository path -> blob id
        self._dirs: set[str] = {""}
        self._children: dict[str, set[str]] = {"": set()}
        for entry in listing.stdout.decode("utf-8", "surrogateescape").split("\0"):
            meta, _, name = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                self._blobs[name] = parts[2]
                self._add_child(name)
        self._cache: dict[str, bytes] = {}

    def _add_child(self, path: str) -> None:
        """Record ``path`` under its parent directory, creating the parents as needed."""
        while path:
            parent = posixpath.dirname(path)
            self._children.setdefault(parent, set()).add(posixpath.basename(path))
            if parent in self._dirs:
                return
            self._dirs.add(parent)
            path = parent

    def _repo_path(self, rel: str) -> str:
        return norm(posixpath.join(self.prefix, rel)) if self.prefix else norm(rel)

    def contains(self, rel: str) -> bool:
        return not _outside(self._repo_path(rel))

    def is_dir(self, rel: str) -> bool:
        return self._repo_path(rel) in self._dirs

    def is_file(self, rel: str) -> bool:
        return self._repo_path(rel) in self._blobs

    def list_dir(self, rel: str) -> list[str]:
        return sorted(self._children.get(self._repo_path(rel), ()))

    def files_named(self, rel: str, name: str) -> list[str]:
        """Tree paths of the files called ``name`` in and below ``rel`` at this commit."""
        top = self._repo_path(rel)
        out = []
        for path in self._blobs:
            if posixpath.basename(path) != name or "/.git/" in f"/{path}":
                continue
            if top and not path.startswith(top + "/"):
                continue
            inside = path[len(top) + 1 :] if top else path
            out.append(norm(posixpath.join(rel, inside)))
        return sorted(out)

    def read(self, rel: str) -> bytes:
        path = self._repo_path(rel)
        if path not in self._cache:
            # the first read fetches every YAML file with it: one git call, not one a file
            yaml_files = [] if self._cache else [p for p in self._blobs if p.endswith(_YAML)]
            self._fetch([path, *yaml_files])
        return self._cache[path]

    def _fetch(self, paths: list[str]) -> None:
        wanted = list(dict.fromkeys(p for p in paths if p not in self._cache and p in self._blobs))
        if not wanted:
            return
        stdin = "".join(self._blobs[p] + "\n" for p in wanted).encode()
        proc = _git(self.repo, "cat-file", "--batch", stdin=stdin)
        if proc.returncode != 0:
            raise BadInput(f"git cat-file failed: {proc.stderr.decode().strip()}")
        out = proc.stdout
        pos = 0
        for path in wanted:
            eol = out.index(b"\n", pos)
            size = int(out[pos:eol].split()[2])
            start = eol + 1
            self._cache[path] = out[start : start + size]
            pos = start + size + 1


def open_path(path: str, ref: str | None) -> tuple[Tree, str, str]:
    """The tree to read, where to start in it, and the prefix shown in sources."""
    given = path.rstrip("/") or path
    if ref is None:
        p = Path(given)
        if p.is_dir():
            return work_tree(p), "", clean(given)
        if p.is_file():
            return work_tree(p.parent), p.name, clean(posixpath.dirname(given))
        hint = "pass the directory of your cluster's GitOps files (e.g. clusters/prod)"
        try:
            kind = file_kind(p.stat().st_mode)
        except OSError:
            raise BadInput(f"--gitops {path}: no such file or directory", hint=hint) from None
        raise BadInput(f"--gitops {path}: is {kind}, not a directory or a regular file", hint=hint)
    tree, start = git_tree(Path(given), ref)
    shown = clean(given if start == "" else posixpath.dirname(given))
    return tree, start, shown


def spelled(path: str) -> str:
    """``path`` as every output shows it: an absolute path inside the working directory is
    relative to it (``--gitops "$PWD"`` reads as ``--gitops .``), a trailing ``/`` dropped."""
    given = path.rstrip("/") or path
    if os.path.isabs(given):
        try:
            rel = Path(given).relative_to(Path.cwd())
        except ValueError:
            return given
        return rel.as_posix() if rel.parts else "."
    return clean(given) or "."


def clean(prefix: str) -> str:
    prefix = prefix.replace(os.sep, "/")
    norm = posixpath.normpath(prefix) if prefix else ""
    return "" if norm == "." else norm
