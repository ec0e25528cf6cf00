"""Where a fleet's installations come from, yielded one at a time.

A *source* on the command line is one of:

- a snapshot file (upgradeplan's own format or plain ``kubectl get -o yaml|json`` output,
  optionally gzip-compressed: ``.gz``); a file holding several upgradeplan-state documents
  (``snapshot --all-contexts``) gives one installation per document;
- a directory: each snapshot file directly in it is an installation, and each subdirectory is
  one installation made of every snapshot file under it (a kubectl dump in several files);
- a glob pattern (``'snapshots/*.yaml.gz'``), expanded in sorted order;
- ``s3://bucket/prefix`` (the ``s3`` extra): every snapshot object under the prefix.

A member that cannot be read (not UTF-8, broken gzip, malformed YAML, not a snapshot) is
yielded with its reason instead of a state: it is listed, and the run goes on.
"""

from __future__ import annotations

import glob
import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from msgspec import Struct

from upgradeplan import errors
from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers import gitops, snapshot
from upgradeplan.readers.kube import cluster
from upgradeplan.state.merge import merge

SNAPSHOT_SUFFIXES = (".yaml", ".yml", ".json")
GZIP_SUFFIX = ".gz"


class Member(Struct, frozen=True):
    """One installation of the fleet: its state, or why it could not be read."""

    name: str
    source: str  # the file, directory, object URL, context or GitOps path it was read from
    state: State | None
    error: str | None = None


def is_snapshot_name(name: str) -> bool:
    """A file name a fleet reads: ``.yaml``, ``.yml``, ``.json``, each optionally ``.gz``."""
    base = name[: -len(GZIP_SUFFIX)] if name.endswith(GZIP_SUFFIX) else name
    return base.endswith(SNAPSHOT_SUFFIXES) and not os.path.basename(name).startswith(".")


def stem(name: str) -> str:
    """``prod.yaml.gz`` -> ``prod``."""
    base = os.path.basename(name.rstrip("/"))
    if base.endswith(GZIP_SUFFIX):
        base = base[: -len(GZIP_SUFFIX)]
    for suffix in SNAPSHOT_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def decode(data: bytes, label: str) -> str:
    """The text of a snapshot's bytes: gunzipped when ``label`` ends in .gz (or the bytes are
    gzip), then UTF-8 (a BOM is dropped). Raises errors.BadInput naming ``label``."""
    if label.endswith(GZIP_SUFFIX) or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise errors.BadInput(f"not a readable gzip file ({exc})", location=label) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise errors.BadInput(f"not UTF-8 text ({exc.reason})", location=label) from None


def states_from_bytes(
    data: bytes, label: str, kb: KnowledgeBase, *, name: str | None = None
) -> list[State]:
    """The installations one snapshot file holds (one per upgradeplan-state document, or one
    for its Kubernetes objects). Unnamed states get ``name`` (default: the file's stem)."""

    states = snapshot.states_of(decode(data, label), label, kb)
    fallback = name or stem(label)
    return [s if s.name and s.name != label else _renamed(s, fallback) for s in states]


def _renamed(state: State, name: str) -> State:
    return State(facts=state.facts, name=name, unreadable=state.unreadable, unread=state.unread)


def _file_members(path: str, kb: KnowledgeBase) -> Iterator[Member]:
    try:
        data = Path(path).read_bytes()
        states = states_from_bytes(data, path, kb)
    except errors.UpgradeplanError as exc:
        yield Member(stem(path), path, None, exc.one_line())
        return
    except OSError as exc:
        yield Member(stem(path), path, None, f"{path}: cannot read ({exc.strerror})")
        return
    yield from snapshot_members(states, path)


def snapshot_members(states: list[State], where: str) -> Iterator[Member]:
    """The members one snapshot at ``where`` holds: itself when it has one installation, else
    one per document (``where (document N)``)."""
    if len(states) == 1:
        yield Member(states[0].name, where, states[0])
        return
    for number, state in enumerate(states, start=1):
        yield Member(state.name, f"{where} (document {number})", state)


def _directory_member(path: str, kb: KnowledgeBase) -> Member:
    """A subdirectory: one installation made of every snapshot file under it, merged in
    sorted order (later files win per fact, as repeated ``--snapshot`` flags do)."""

    files = sorted(
        os.path.join(root, f)
        for root, _dirs, names in os.walk(path)
        for f in names
        if is_snapshot_name(f)
    )
    name = os.path.basename(path.rstrip("/"))
    if not files:
        return Member(name, path + "/", None, f"{path}/: no snapshot files (.yaml, .yml, .json)")
    states: list[State] = []
    try:
        for f in files:
            states.extend(states_from_bytes(Path(f).read_bytes(), f, kb, name=name))
    except errors.UpgradeplanError as exc:
        return Member(name, path + "/", None, exc.one_line())
    except OSError as exc:
        return Member(name, path + "/", None, f"{exc.filename}: cannot read ({exc.strerror})")
    merged = merge(*states)
    return Member(name, path + "/", _renamed(merged, name))


def _paths_of(source: str) -> list[str]:
    if any(ch in source for ch in "*?["):
        found = sorted(glob.glob(source, recursive=True))
        if not found:
            raise errors.BadInput(
                f"{source}: the pattern matches no file", hint="quote the pattern or fix it"
            )
        return found
    if not os.path.exists(source):
        raise errors.BadInput(
            f"{source}: no such file or directory",
            hint="pass snapshot files, a directory of them, a glob or s3://bucket/prefix",
        )
    return [source]


def local_tasks(sources: Iterable[str]) -> list[str]:
    """The files and subdirectories that local sources (files, directories, globs) stand for,
    in order: each is read by :func:`task_members`. A source that does not exist raises
    errors.BadInput (exit 2) before anything is read or judged."""
    out: list[str] = []
    for source in sources:
        for path in _paths_of(source):
            if not os.path.isdir(path):
                out.append(path)
                continue
            try:
                entries = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError as exc:
                raise errors.BadInput(f"{path}: cannot list ({exc.strerror})") from None
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir() or is_snapshot_name(entry.name):
                    out.append(entry.path)
    return out


def task_members(path: str, kb: KnowledgeBase) -> Iterator[Member]:
    """The members of one file (one per upgradeplan-state document) or subdirectory (one)."""
    if os.path.isdir(path):
        yield _directory_member(path, kb)
    else:
        yield from _file_members(path, kb)


def context_members(
    kb: KnowledgeBase, kubeconfig: str | None, contexts: Iterable[str]
) -> list[Member]:
    """Every context of a kubeconfig (or the named ones), read in parallel, read-only."""

    wanted = list(contexts)
    results = cluster.read_contexts(kb, kubeconfig, wanted, not wanted)
    out: list[Member] = []
    for res in results:
        source = f"context {res.name}"
        if res.state is None:
            out.append(Member(res.name, source, None, res.error or "could not be read"))
        else:
            out.append(Member(res.name, source, _renamed(res.state, res.name)))
    return out


def gitops_members(kb: KnowledgeBase, paths: Iterable[str]) -> Iterator[Member]:
    """Every installation of each GitOps tree (one per cluster entry point, read the way Flux
    applies the files; a tree without Flux Kustomizations is one installation)."""

    for path in paths:
        fallback = os.path.basename(os.path.abspath(path)) or path
        try:
            states = gitops.read_installations(kb, path)
        except errors.UpgradeplanError as exc:
            yield Member(fallback, path, None, exc.one_line())
            continue
        for state in states:
            name = state.name if state.name and state.name != path else fallback
            source = path if len(states) == 1 else f"{path} ({name})"
            yield Member(name, source, _renamed(state, name))
