"""Load knowledge directories into a :class:`upgradeplan.model.KnowledgeBase`.

The bundled knowledge (package ``upgradeplan.knowledge``, the top-level ``knowledge/`` of the
repository) is merged with extra directories. Every file is parsed with the C YAML parser
keeping line numbers, checked for the structure the model needs, and turned into frozen model
objects with a ``Location(file, line)``; file names are shown relative to the parent of their
knowledge root (``knowledge/hazards/x.yaml``). Problems are collected, never raised one by
one: :func:`load_all` returns them all, :func:`load` raises
:class:`upgradeplan.errors.KnowledgeError` when any is an error.

Reading one document's fields is :mod:`upgradeplan.kb.fields`, turning it into an entry
:mod:`upgradeplan.kb.entries`, entries of the same identity from several directories
:mod:`upgradeplan.kb.amend`. Full JSON Schema validation and template rendering are left to
:mod:`upgradeplan.kb.lint`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec.structs import replace

from upgradeplan.errors import KnowledgeError
from upgradeplan.kb import entries
from upgradeplan.kb.amend import place
from upgradeplan.kb.checks import run_checks
from upgradeplan.kb.crossing import derived_hazards
from upgradeplan.kb.documents import Document, Loaded
from upgradeplan.kb.fields import DIRECTORIES, Fields
from upgradeplan.kb.problems import Problem, problem
from upgradeplan.kb.roots import bundled_dir as bundled_dir  # re-exported
from upgradeplan.kb.roots import root_dirs
from upgradeplan.model import NEXT, Hazard, KnowledgeBase, Location, Migration, Product, Release
from upgradeplan.versions import compare, parse_constraint, parse_version
from upgradeplan.yamlload import MAX_BYTES, DuplicateKey, LineDict, YamlError, line_of, load_lines

if TYPE_CHECKING:
    from pathlib import Path


def load(dirs: Sequence[str | Path] = (), *, bundled: bool = True) -> KnowledgeBase:
    """The knowledge base; raises KnowledgeError listing every error-level problem.

    The bundled knowledge alone is read without the load-time semantic checks: the tests hold
    it clean (``kb lint`` on it prints nothing, tests/test_kb_lint.py), so a command does not
    check it again on every run. With any other directory (``--kb``, a pack) every check runs
    over the whole knowledge, the bundled files included."""
    loaded = load_all(dirs, bundled=bundled, semantic=bool(dirs) or not bundled)
    errors = [p for p in loaded.problems if p.severity == "error"]
    if errors:
        raise KnowledgeError(errors)
    return loaded.kb


def load_all(
    dirs: Sequence[str | Path] = (),
    *,
    bundled: bool = True,
    semantic: bool = True,
    read_text: Callable[[str], str] | None = None,
) -> Loaded:
    """Parse, build and (with ``semantic``) run the load-time semantic checks.

    ``read_text`` reads a file's text from its path (default: UTF-8, universal newlines, as
    ``Path.read_text``). Paths are strings: pathlib is not imported on a command's path.
    """
    builder = _Builder(read_text)
    roots = root_dirs(dirs, bundled=bundled)
    for root in roots:
        builder.load_root(root)
    kb = builder.finish(tuple(roots))
    loaded = Loaded(kb, builder.problems, builder.documents)
    if semantic:
        loaded.problems.extend(run_checks(loaded, lint=False))
    loaded.problems[:] = sorted(set(loaded.problems))
    return loaded


# --------------------------------------------------------------------------- building


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        # a file of a known size within the limit is read whole; anything else (a pipe, a
        # file past the limit) up to the limit: what is past it is never read. (A read of the
        # limit's size allocates it: 4 ms a load for the bundled knowledge's 139 files.)
        size = os.fstat(f.fileno()).st_size
        text = f.read() if 0 < size <= MAX_BYTES else f.read(MAX_BYTES + 1)
    if len(text) > MAX_BYTES:
        raise OSError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB (the limit for a YAML file)")
    return text


class _Builder:
    def __init__(self, read_text: Callable[[str], str] | None = None) -> None:
        self.read_text = read_text or _read_text
        self.problems: list[Problem] = []
        self.documents: dict[str, Document] = {}
        self.products: dict[str, Product] = {}
        self.releases: dict[tuple[str, str], Release] = {}
        self.hazards: dict[str, Hazard] = {}
        self.migrations: dict[str, Migration] = {}
        self.strings: dict[str, str] = {}  # one object per distinct text of the load

    # -- files

    def load_root(self, root: str) -> None:
        # files are shown relative to the root's parent
        name = os.path.basename(os.path.realpath(root))
        for rel in _yaml_files(root):
            if rel == ("pack.yaml",):  # a knowledge pack's manifest (upgradeplan.kb.packs)
                continue
            self.load_file(root, os.path.join(root, *rel), "/".join((name, *rel)), rel)

    def load_file(self, root: str, path: str, file: str, rel: tuple[str, ...]) -> None:
        try:
            text = self.read_text(path)
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(
                problem("KB001", Location(file, 0), f"cannot read the file: {exc}")
            )
            return
        duplicates: list[DuplicateKey] = []
        try:
            data = load_lines(text, strings=self.strings, duplicates=duplicates)
        except YamlError as exc:
            self.problems.append(problem("KB001", Location(file, exc.line), exc.message))
            return
        for twice in duplicates:  # an error: the knowledge base does not load
            self.problems.append(problem("KB022", Location(file, twice.line), twice.message))
        if not isinstance(data, LineDict):
            self.problems.append(
                problem(
                    "KB002",
                    Location(file, 1),
                    "a knowledge file is one YAML mapping (schema_version, kind, …)",
                )
            )
            return
        dir_kind = DIRECTORIES.get(rel[0]) if len(rel) > 1 else None
        kind = data.get("kind")
        if dir_kind is None:
            where = "products/, releases/<product>/, hazards/ or migrations/"
            self.problems.append(
                problem(
                    "KB003",
                    Location(file, 1),
                    f"a knowledge file belongs in {where} of the knowledge root",
                )
            )
            if kind not in DIRECTORIES.values():
                return
            dir_kind = str(kind)
        elif kind != dir_kind and kind in DIRECTORIES.values():
            self.problems.append(
                problem(
                    "KB003",
                    Location(file, line_of(data, ("kind",))),
                    f"a {kind} file in {rel[0]}/; move it to the directory of its kind",
                )
            )
        doc = Document(path, file, root, dir_kind, data)
        self.documents[file] = doc
        ctx = Fields(doc, self.problems)
        ctx.header(dir_kind)
        self.add(ctx, dir_kind, rel)

    def add(self, ctx: Fields, kind: str, rel: tuple[str, ...]) -> None:
        """Build the document's entry and place it (new, amended into an earlier one, or KB004)."""
        docs = self.documents
        if kind == "product":
            product = entries.product_of(ctx)
            kept = place(ctx, docs, kind, product.id, self.products.get(product.id), product)
            if kept is not None:
                self.products[product.id] = kept
        elif kind == "release":
            release = entries.release_of(ctx, rel)
            key = (release.product, release.version)
            name = f"{release.product}@{release.version}"
            kept_release = place(ctx, docs, kind, name, self.releases.get(key), release)
            if kept_release is not None:
                self.releases[key] = kept_release
        elif kind == "hazard":
            hazard = entries.hazard_of(ctx)
            kept_hazard = place(ctx, docs, kind, hazard.id, self.hazards.get(hazard.id), hazard)
            if kept_hazard is not None:
                self.hazards[hazard.id] = kept_hazard
        else:
            mig = entries.migration_of(ctx)
            kept_mig = place(ctx, docs, kind, mig.id, self.migrations.get(mig.id), mig)
            if kept_mig is not None:
                self.migrations[mig.id] = kept_mig

    # -- the knowledge base

    def hazard_defaults(
        self, releases: dict[str, tuple[Release, ...]]
    ) -> dict[str, tuple[Release, ...]]:
        """Each hazard's ``defaults`` folded into the releases of its product in range (a
        release's own ``defaults`` win), so the value predicates judge an unset key on them."""
        done: set[tuple[str, str, str]] = set()  # the same defaults stated by several hazards
        shared: dict[str, dict[str, Any]] = {}  # equal merged defaults: one mapping
        for hazard in self.hazards.values():
            line = releases.get(hazard.product)
            if not hazard.defaults or not line:
                continue
            changed = list(line)
            parsed = [None if r.unreleased else parse_version(r.version) for r in changed]
            for i, (versions, values) in enumerate(hazard.defaults):
                key = (hazard.product, versions, repr(values))
                if key in done:
                    continue
                done.add(key)
                try:
                    con = parse_constraint(versions)
                except ValueError as exc:
                    doc = self.documents.get(hazard.location.file)
                    loc = doc.at("defaults", i, "versions") if doc else hazard.location
                    self.problems.append(problem("KB009", loc, f"defaults versions: {exc}"))
                    continue
                for n, rel in enumerate(changed):
                    v = parsed[n]
                    if v is not None and con.check(v):
                        merged = _merged(values, rel.defaults)
                        merged = shared.setdefault(repr(merged), merged)
                        changed[n] = replace(rel, defaults=merged)
            releases[hazard.product] = tuple(changed)
        return releases

    def finish(self, roots: tuple[str, ...]) -> KnowledgeBase:
        by_product: dict[str, list[tuple[Any, Release]]] = {}
        unreleased: dict[str, list[Release]] = {}
        for (product, version), release in self.releases.items():
            if version == NEXT:
                unreleased.setdefault(product, []).append(release)
                continue
            try:
                parsed = parse_version(version)
            except ValueError as exc:
                doc = self.documents.get(release.location.file)
                loc = doc.at("version") if doc else release.location
                self.problems.append(problem("KB008", loc, f"release version: {_reason(exc)}"))
                continue
            by_product.setdefault(product, []).append((parsed, release))
        import functools

        def by_version(a: tuple[Any, Release], b: tuple[Any, Release]) -> int:
            return compare(a[0], b[0])

        releases: dict[str, tuple[Release, ...]] = {}
        for product in sorted(set(by_product) | set(unreleased)):
            ordered = sorted(by_product.get(product, []), key=functools.cmp_to_key(by_version))
            releases[product] = tuple(r for _, r in ordered) + tuple(unreleased.get(product, ()))
        releases = self.hazard_defaults(releases)
        derived = derived_hazards(self.products, releases)
        return KnowledgeBase(
            products=dict(sorted(self.products.items())),
            releases=releases,
            hazards=dict(sorted({**self.hazards, **derived}.items())),
            migrations=dict(sorted(self.migrations.items())),
            roots=roots,
        )


def _merged(under: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``under``, nested mappings merged key by key."""
    out = dict(under)
    for k, v in over.items():
        below = out.get(k)
        if isinstance(v, Mapping) and isinstance(below, Mapping):
            out[k] = _merged(below, v)
        else:
            out[k] = v
    return out


def _yaml_files(root: str) -> list[tuple[str, ...]]:
    """Every *.yaml / *.yml file under ``root`` as path parts relative to it, sorted.

    Hidden and dunder directories are skipped. Directories as ``os.walk`` walks them (a linked
    one is not entered, an unreadable one is left out), with ``os.scandir`` directly.
    """
    found: list[tuple[str, ...]] = []
    pending: list[tuple[str, tuple[str, ...]]] = [(root, ())]
    while pending:
        path, prefix = pending.pop()
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not name.startswith((".", "__")) and not entry.is_symlink():
                    pending.append((entry.path, (*prefix, name)))
            elif name.endswith((".yaml", ".yml")) and not name.startswith("."):
                found.append((*prefix, name))
    return sorted(found)


def _reason(exc: BaseException) -> str:
    return str(exc)
