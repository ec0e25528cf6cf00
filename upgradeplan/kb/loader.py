"""Load knowledge directories into a :class:`upgradeplan.model.KnowledgeBase`.

The bundled knowledge (package ``upgradeplan.knowledge``, the top-level ``knowledge/`` of the
repository) is merged with extra directories. Every file is parsed with the C YAML parser
keeping line numbers, checked for the structure the model needs, and turned into frozen model
objects with a ``Location(file, line)``; file names are shown relative to the parent of their
knowledge root (``knowledge/hazards/x.yaml``). Problems are collected, never raised one by
one: :func:`load_with_problems` returns them all, :func:`load` raises
:class:`upgradeplan.errors.KnowledgeError` when any is an error.

Full JSON Schema validation and template rendering are left to :mod:`upgradeplan.kb.lint`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from upgradeplan import keypath
from upgradeplan.errors import BadInput, KnowledgeError
from upgradeplan.kb.documents import Document, Loaded
from upgradeplan.kb.problems import Problem, problem
from upgradeplan.kb.schema import top_level_properties
from upgradeplan.kb.when import parse_condition
from upgradeplan.kb.yamlio import LineDict, YamlSyntaxError, line_of, load_text_with_duplicates
from upgradeplan.model import (
    NEXT,
    Amendment,
    Change,
    Condition,
    Hazard,
    KnowledgeBase,
    Location,
    Migration,
    Note,
    Product,
    Recognise,
    Release,
    Symptom,
    Withdrawn,
)

DIRECTORIES: dict[str, str] = {
    "products": "product",
    "releases": "release",
    "hazards": "hazard",
    "migrations": "migration",
}
PRODUCT_TYPES = ("chart", "agent", "platform", "environment")
SEVERITIES = ("blocking", "warning", "notice")
SCOPES = ("skip", "landing", "transition", "state")
MIGRATION_TYPES = ("bom-pin", "helmrelease-patch", "json6902", "values-edit", "manifest", "command")
WHERE = ("logs", "events", "status", "any")

_E = TypeVar("_E", Product, Release, Hazard, Migration)

# YAML keys that name an entry rather than set a field of it
_IDENTITY = frozenset({"schema_version", "kind", "id", "amend", "version"})
# YAML key -> the model attributes it sets (default: the attribute of the same name)
_ATTRS: dict[str, tuple[str, ...]] = {
    "type": ("kind",),
    "upgrade_doc": ("upgrade_doc_title", "upgrade_doc_intro"),
    "requires": ("requires", "requires_when"),
    "skip": ("stop", "to_range", "from_range"),
    "landing": ("to_range",),
    "transition": ("from_range", "to_range"),
    "state": ("from_range",),
}


def bundled_dir() -> Path:
    """The directory of the bundled knowledge (package ``upgradeplan.knowledge``).

    The package's own directory (it always installs as files): importlib.resources would pull
    tempfile, zipfile, shutil and the compression modules into every command.
    """
    from importlib.util import find_spec

    spec = find_spec("upgradeplan.knowledge")
    if spec is None or not spec.submodule_search_locations:
        raise BadInput(
            "the bundled knowledge (package upgradeplan.knowledge) is missing",
            hint="reinstall upgradeplan",
        )
    return Path(next(iter(spec.submodule_search_locations)))


def load(dirs: Sequence[str | Path] = (), *, bundled: bool = True) -> KnowledgeBase:
    """The knowledge base; raises KnowledgeError listing every error-level problem."""
    kb, problems = load_with_problems(dirs, bundled=bundled)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise KnowledgeError(errors)
    return kb


def load_with_problems(
    dirs: Sequence[str | Path] = (), *, bundled: bool = True
) -> tuple[KnowledgeBase, list[Problem]]:
    """The knowledge base built from what could be read, and every problem found."""
    loaded = load_all(dirs, bundled=bundled)
    return loaded.kb, loaded.problems


def roots_of(dirs: Sequence[str | Path], *, bundled: bool) -> list[Path]:
    """The knowledge roots in load order (bundled first), each once."""
    roots: list[Path] = [bundled_dir()] if bundled else []
    for d in dirs:
        p = Path(d)
        if not p.is_dir():
            raise BadInput(
                f"knowledge directory {str(d)!r} does not exist or is not a directory",
                hint="check --kb / UPGRADEPLAN_KB",
            )
        roots.append(p)
    seen: set[Path] = set()
    out: list[Path] = []
    for r in roots:
        key = r.resolve()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def load_all(
    dirs: Sequence[str | Path] = (), *, bundled: bool = True, semantic: bool = True
) -> Loaded:
    """Parse, build and (with ``semantic``) run the load-time semantic checks."""
    import gc

    builder = _Builder()
    roots = roots_of(dirs, bundled=bundled)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # many small objects, all kept: the cyclic collector would only cost time
    try:
        for root in roots:
            builder.load_root(root)
        kb = builder.finish(tuple(str(r) for r in roots))
        loaded = Loaded(kb, builder.problems, builder.documents)
        if semantic:
            from upgradeplan.kb.checks import run_checks

            loaded.problems.extend(run_checks(loaded, lint=False))
    finally:
        if gc_was_enabled:
            gc.enable()
    loaded.problems[:] = sorted(set(loaded.problems))
    return loaded


# --------------------------------------------------------------------------- building


class _Builder:
    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.documents: dict[str, Document] = {}
        self.products: dict[str, Product] = {}
        self.releases: dict[tuple[str, str], Release] = {}
        self.hazards: dict[str, Hazard] = {}
        self.migrations: dict[str, Migration] = {}

    # -- files

    def load_root(self, root: Path) -> None:
        name = root.resolve().name  # files are shown relative to the root's parent
        for rel in _yaml_files(root):
            self.load_file(root, root.joinpath(*rel), "/".join((name, *rel)), rel)

    def load_file(self, root: Path, path: Path, file: str, rel: tuple[str, ...]) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(
                problem("KB001", Location(file, 0), f"cannot read the file: {exc}")
            )
            return
        try:
            data, duplicates = load_text_with_duplicates(text)
        except YamlSyntaxError as exc:
            self.problems.append(problem("KB001", Location(file, exc.line), exc.message))
            return
        for key, line in duplicates:
            self.problems.append(
                problem(
                    "KB022",
                    Location(file, line),
                    f"key {key!r} is written twice; YAML keeps only the last",
                )
            )
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
        doc = Document(path, file, str(root), dir_kind, data)
        self.documents[file] = doc
        ctx = _Ctx(doc, self.problems)
        ctx.header(dir_kind)
        if dir_kind == "product":
            self.add_product(ctx)
        elif dir_kind == "release":
            self.add_release(ctx, rel)
        elif dir_kind == "hazard":
            self.add_hazard(ctx)
        else:
            self.add_migration(ctx)

    # -- kinds

    def _duplicate(self, ctx: _Ctx, what: str, name: str, first: Location) -> None:
        ctx.report("KB004", (), f"{what} {name!r} is defined twice: here and at {first}")

    def add_product(self, ctx: _Ctx) -> None:
        pid = ctx.ident("id")
        rec = ctx.mapping("recognise")
        labels = ctx.strmap(rec, "deployment_labels", ("recognise",)) if rec is not None else {}
        upgrade_doc = ctx.mapping("upgrade_doc") or {}
        product = Product(
            id=pid,
            name=ctx.text("name", required=True),
            kind=ctx.choice("type", PRODUCT_TYPES, required=True, default="chart"),  # type: ignore[arg-type]
            description=ctx.text("description"),
            recognise=Recognise(
                helmrelease=ctx.strlist(rec, "helmrelease", ("recognise",)) if rec else (),
                chart=ctx.strlist(rec, "chart", ("recognise",)) if rec else (),
                deployment_labels=tuple(sorted(labels.items())),
                image=ctx.strlist(rec, "image", ("recognise",)) if rec else (),
                values_keys=ctx.strlist(rec, "values_keys", ("recognise",)) if rec else (),
                bom_component=ctx.text_in(rec, "bom_component", ("recognise",)) if rec else "",
                chart_source=ctx.strlist(rec, "chart_source", ("recognise",)) if rec else (),
            ),
            location=ctx.where(),
            upgrade_doc_title=ctx.text_in(upgrade_doc, "title", ("upgrade_doc",)),
            upgrade_doc_intro=ctx.text_in(upgrade_doc, "intro", ("upgrade_doc",)),
            inferred=ctx.inferred(),
        )
        if pid != ctx.doc.path.stem:
            ctx.report(
                "KB003",
                ("id",),
                f"product {pid!r} is in {ctx.doc.path.name}; name the file {pid}.yaml",
            )
        kept = self._place(ctx, "product", pid, self.products.get(pid), product)
        if kept is not None:
            self.products[pid] = kept

    def add_release(self, ctx: _Ctx, rel: tuple[str, ...]) -> None:
        dir_product = rel[1] if len(rel) == 3 else ""
        if len(rel) != 3:
            ctx.report("KB003", (), "a release file is releases/<product>/<version>.yaml")
        product = ctx.ident("product", default=dir_product)
        version = ctx.text("version", required=True, default=ctx.doc.path.stem)
        if dir_product and product != dir_product:
            ctx.report(
                "KB003",
                ("product",),
                f"a release of {product!r} in releases/{dir_product}/; "
                f"move it to releases/{product}/",
            )
        if version != ctx.doc.path.stem:
            ctx.report(
                "KB003",
                ("version",),
                f"release {version!r} is in {ctx.doc.path.name}; name the file {version}.yaml",
            )
        notes = []
        for i, item in ctx.items("notes"):
            path = ("notes", i)
            notes.append(
                Note(
                    condition=ctx.text_in(item, "condition", path, required=True),
                    text=ctx.text_in(item, "text", path, required=True),
                    commands=ctx.strlist(item, "commands", path),
                )
            )
        changes = []
        for i, item in ctx.items("changes"):
            path = ("changes", i)
            details = item.get("details", {})
            if not isinstance(details, dict):
                ctx.report("KB002", (*path, "details"), "details must be a mapping")
                details = {}
            changes.append(
                Change(
                    kind=ctx.text_in(item, "kind", path, required=True),
                    summary=ctx.text_in(item, "summary", path, required=True),
                    details=_plain(details),
                )
            )
        requires, requires_when = self._requires(ctx)
        components: dict[str, str] = {}
        for comp, spec in (ctx.mapping("components") or {}).items():
            rng = ctx.text_in(spec, "versionRange", ("components", comp), required=True)
            if not isinstance(spec, dict):
                ctx.report("KB002", ("components", comp), "a component is {versionRange: RANGE}")
            elif rng:
                components[str(comp)] = rng
        defaults = ctx.mapping("defaults") or {}
        effects = ctx.data.get("effects", {})
        if not isinstance(effects, dict):
            ctx.report("KB002", ("effects",), "effects must be a mapping of fact key -> value")
            effects = {}
        release = Release(
            product=product,
            version=version,
            title=ctx.text("title", required=True),
            location=ctx.where(),
            date=ctx.text("date") or None,
            summary=ctx.text("summary"),
            references=ctx.strlist(ctx.data, "references"),
            bom=ctx.strmap(ctx.data, "bom"),
            requires=requires,
            upgrade_from=ctx.text("upgrade_from") or None,
            changes=tuple(changes),
            effects=_plain(effects),
            notes=tuple(notes),
            verify=ctx.strlist(ctx.data, "verify"),
            withdrawn=ctx.withdrawn(),
            from_label=ctx.text("from_label"),
            components=components,
            built_against=ctx.strmap(ctx.data, "built_against"),
            defaults=_plain(defaults),
            requires_when=requires_when,
            inferred=ctx.inferred(),
        )
        key = (product, version)
        name = f"{product}@{version}"
        kept_release = self._place(ctx, "release", name, self.releases.get(key), release)
        if kept_release is not None:
            self.releases[key] = kept_release

    def _requires(self, ctx: _Ctx) -> tuple[dict[str, str], dict[str, Condition]]:
        """``requires``: product -> constraint, or {range, when} (a conditional requirement)."""
        plain: dict[str, str] = {}
        when: dict[str, Condition] = {}
        for req, spec in (ctx.mapping("requires") or {}).items():
            path = ("requires", req)
            if isinstance(spec, dict):
                rng = ctx.text_in(spec, "range", path, required=True)
                for k in spec:
                    if k not in ("range", "when"):
                        ctx.report("KB002", (*path, k), f"takes range and when, not {k!r}")
                if not rng:
                    continue
                plain[str(req)] = rng
                if spec.get("when") is not None:
                    cond = parse_condition(
                        spec["when"], ctx.data, (*path, "when"), ctx.doc.file, ctx.report
                    )
                    if cond is not None:
                        when[str(req)] = cond
            elif isinstance(spec, str):
                plain[str(req)] = spec
            else:
                ctx.report(
                    "KB002", path, f"requires.{req}: {spec!r} must be a constraint string; quote it"
                )
        return plain, when

    def add_hazard(self, ctx: _Ctx) -> None:
        hid = ctx.ident("id")
        if hid != ctx.doc.path.stem:
            ctx.report(
                "KB003",
                ("id",),
                f"hazard {hid!r} is in {ctx.doc.path.name}; name the file {hid}.yaml",
            )
        scope = ctx.choice("scope", SCOPES, required=True, default="state")
        stop = to_range = from_range = None
        for other in SCOPES:
            if other != scope and other in ctx.data:
                ctx.report(
                    "KB002", (other,), f"`{other}:` goes with scope {other}, not scope {scope}"
                )
        params = ctx.data.get(scope)
        reported = False
        if params is None and scope != "state":
            ctx.report("KB002", ("scope",), f"scope {scope} needs `{scope}:` with its parameters")
            params, reported = {}, True
        elif params is None:
            params = {}
        elif not isinstance(params, dict):
            ctx.report("KB002", (scope,), f"`{scope}:` must be a mapping")
            params, reported = {}, True
        allowed = {
            "skip": ("stop", "to", "from"),
            "landing": ("range",),
            "transition": ("from", "to"),
            "state": ("range",),
        }[scope]
        for k in params:
            if k not in allowed:
                ctx.report("KB002", (scope, k), f"`{scope}:` takes {', '.join(allowed)}, not {k!r}")
        optional = ("from",) if scope == "skip" else ()
        required = () if scope == "state" or reported else tuple(set(allowed) - set(optional))
        values = {
            k: ctx.text_in(params, k, (scope,), required=k in required) or None for k in allowed
        }
        if scope == "skip":
            stop, to_range, from_range = values["stop"], values["to"], values["from"]
        elif scope == "landing":
            to_range = values["range"]
        elif scope == "transition":
            from_range, to_range = values["from"], values["to"]
        else:
            from_range = values["range"]
        when = None
        if "when" in ctx.data and ctx.data["when"] is not None:
            when = parse_condition(ctx.data["when"], ctx.data, ("when",), ctx.doc.file, ctx.report)
        symptoms = []
        for i, item in ctx.items("symptoms"):
            path = ("symptoms", i)
            symptoms.append(
                Symptom(
                    pattern=ctx.text_in(item, "pattern", path, required=True),
                    where=ctx.choice_in(item, "where", WHERE, path, default="any"),  # type: ignore[arg-type]
                    example=ctx.text_in(item, "example", path),
                )
            )
        hazard = Hazard(
            id=hid,
            title=ctx.text("title", required=True),
            product=ctx.ident("product", default=""),
            severity=ctx.choice("severity", SEVERITIES, required=True, default="warning"),  # type: ignore[arg-type]
            scope=scope,  # type: ignore[arg-type]
            consequence=ctx.text("consequence", required=True),
            location=ctx.where(),
            stop=stop,
            to_range=to_range,
            from_range=from_range,
            when=when,
            description=ctx.text("description"),
            symptoms=tuple(symptoms),
            avoid=ctx.text("avoid"),
            recover=ctx.text("recover"),
            recover_commands=ctx.strlist(ctx.data, "recover_commands"),
            migrations=ctx.strlist(ctx.data, "migrations"),
            verify=ctx.strlist(ctx.data, "verify"),
            references=ctx.strlist(ctx.data, "references"),
            withdrawn=ctx.withdrawn(),
            inferred=ctx.inferred(),
        )
        kept = self._place(ctx, "hazard", hid, self.hazards.get(hid), hazard)
        if kept is not None:
            self.hazards[hid] = kept

    def add_migration(self, ctx: _Ctx) -> None:
        mid = ctx.ident("id")
        if mid != ctx.doc.path.stem:
            ctx.report(
                "KB003",
                ("id",),
                f"migration {mid!r} is in {ctx.doc.path.name}; name the file {mid}.yaml",
            )
        target = ctx.strmap(ctx.data, "target")
        params: dict[str, Any] = {}
        raw_params = ctx.mapping("params") or {}
        for name, spec in raw_params.items():
            if not isinstance(spec, dict):
                ctx.report(
                    "KB002", ("params", name), "a param is a mapping {fact: KEY, placeholder: TEXT}"
                )
                continue
            params[str(name)] = {
                "fact": ctx.text_in(spec, "fact", ("params", name), required=True),
                "placeholder": ctx.text_in(spec, "placeholder", ("params", name), required=True),
                **({"description": str(spec["description"])} if "description" in spec else {}),
            }
        migration = Migration(
            id=mid,
            title=ctx.text("title", required=True),
            kind=ctx.choice("type", MIGRATION_TYPES, required=True, default="command"),  # type: ignore[arg-type]
            product=ctx.ident("product", default=""),
            template=ctx.text("template", required=True),
            location=ctx.where(),
            description=ctx.text("description"),
            target=target,
            params=params,
            when=ctx.choice("when", ("before", "after"), default="before"),  # type: ignore[arg-type]
            inferred=ctx.inferred(),
        )
        earlier = self.migrations.get(mid)
        kept = self._place(ctx, "migration", mid, earlier, migration)
        if kept is not None:
            self.migrations[mid] = kept

    # -- amendments

    def _place(self, ctx: _Ctx, what: str, name: str, earlier: _E | None, new: _E) -> _E | None:
        """The entry to keep: ``new``, ``earlier`` amended by it, or ``earlier`` (a duplicate)."""
        amend = ctx.data.get("amend")
        if amend is None:
            if earlier is not None:
                self._duplicate(ctx, what, name, earlier.location)
                return earlier
            return new
        if not isinstance(amend, dict):
            return earlier  # reported by the schema check
        reason = ctx.text_in(amend, "reason", ("amend",), required=True)
        overrides = ctx.strmap(amend, "overrides", ("amend",))
        if earlier is None:
            ctx.report(
                "KB028",
                ("amend",),
                f"amends {what} {name!r}, which no earlier knowledge directory defines; "
                "remove `amend:` to define it here",
            )
            return None
        first = self.documents.get(earlier.location.file)
        if first is not None and first.root == ctx.doc.root:
            ctx.report(
                "KB028",
                ("amend",),
                f"amends {what} {name!r} of the same knowledge directory ({earlier.location}); "
                "edit that file instead",
            )
            return earlier
        return _amended(ctx, earlier, new, Amendment(ctx.where(), reason, overrides))

    # -- the knowledge base

    def finish(self, roots: tuple[str, ...]) -> KnowledgeBase:
        from upgradeplan.versions import compare, parse_version

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
        return KnowledgeBase(
            products=dict(sorted(self.products.items())),
            releases=releases,
            hazards=dict(sorted(self.hazards.items())),
            migrations=dict(sorted(self.migrations.items())),
            roots=roots,
        )


def _amended(ctx: _Ctx, earlier: _E, new: _E, amendment: Amendment) -> _E:
    """``earlier`` with what the amending file ``new`` adds: lists appended, mappings merged,
    other fields (and changed mapping entries) replaced only when ``amend.overrides`` names
    them with a reason."""
    import dataclasses

    changes: dict[str, Any] = {}
    overrides = amendment.overrides
    for key in ctx.data:
        if key in _IDENTITY or key == "inferred":
            continue
        override = key in overrides
        for attr in _ATTRS.get(str(key), (str(key),)):
            if not hasattr(earlier, attr):
                continue
            old, value = getattr(earlier, attr), getattr(new, attr)
            if override:
                changes[attr] = value
            elif isinstance(old, tuple) and isinstance(value, tuple):
                changes[attr] = old + tuple(v for v in value if v not in old)
            elif isinstance(old, dict) and isinstance(value, dict):
                clash = [k for k in value if k in old and old[k] != value[k]]
                if clash:
                    ctx.report(
                        "KB028",
                        (key, clash[0]),
                        f"{key}.{clash[0]} differs from {earlier.location}; to replace it add "
                        f"{key!r} to amend.overrides with the reason",
                    )
                changes[attr] = {**old, **{k: v for k, v in value.items() if k not in clash}}
            elif old != value:
                ctx.report(
                    "KB028",
                    (key,),
                    f"{key} differs from {earlier.location}; to replace it add {key!r} to "
                    "amend.overrides with the reason",
                )
    for key in overrides:
        if key not in ctx.data:
            ctx.report(
                "KB028",
                ("amend", "overrides", key),
                f"overrides {key!r}, which it does not set",
            )
    kept = {k: v for k, v in earlier.inferred.items() if keypath.split(k)[0] not in overrides}
    changes["inferred"] = {**kept, **new.inferred}
    changes["amendments"] = (*earlier.amendments, amendment)
    return dataclasses.replace(earlier, **changes)


def _yaml_files(root: Path) -> list[tuple[str, ...]]:
    """Every *.yaml / *.yml file under ``root`` as path parts relative to it, sorted.

    Hidden and dunder directories are skipped.
    """
    import os

    found: list[tuple[str, ...]] = []
    top = str(root)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "__"))]
        rel_dir = os.path.relpath(dirpath, top)
        prefix: tuple[str, ...] = () if rel_dir == "." else tuple(rel_dir.split(os.sep))
        for name in filenames:
            if name.endswith((".yaml", ".yml")) and not name.startswith("."):
                found.append((*prefix, name))
    return sorted(found)


def _reason(exc: BaseException) -> str:
    return str(exc)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _Ctx:
    """Typed field access on one document; problems go to the shared list."""

    def __init__(self, doc: Document, problems: list[Problem]) -> None:
        self.doc = doc
        self.data = doc.data
        self.problems = problems
        # an amending file names its entry and sets only what it adds
        self.amending = isinstance(doc.data.get("amend"), dict)

    def inferred(self) -> dict[str, str]:
        """``inferred:`` field path -> reason; each path must name a field of this file."""
        marks = self.strmap(self.data, "inferred")
        for path in list(marks):
            if keypath.get(self.data, keypath.split(path)) is keypath.ABSENT:
                del marks[path]
                self.report(
                    "KB027",
                    ("inferred", path),
                    f"inferred: {path!r} names no field of this file "
                    "(keys joined by '.', a '.' inside a key written '\\.', list items by index)",
                )
        return marks

    def report(self, code: str, path: tuple[Any, ...], message: str) -> None:
        self.problems.append(problem(code, self.doc.at(*path), message))

    def where(self) -> Location:
        return Location(self.doc.file, self.data.line or 1)

    def header(self, kind: str) -> None:
        if self.data.get("schema_version") != 1:
            got = self.data.get("schema_version")
            what = "missing" if got is None else f"{got!r}"
            self.report("KB002", ("schema_version",), f"schema_version must be 1 ({what})")
        if "kind" not in self.data:
            self.report("KB002", (), f"missing required property 'kind' (kind: {kind})")
        elif self.data["kind"] not in DIRECTORIES.values():
            self.report(
                "KB002", ("kind",), f"kind must be one of {', '.join(DIRECTORIES.values())}"
            )
        allowed = top_level_properties(kind)
        for key in self.data:
            if key not in allowed:
                self.report("KB002", (key,), f"unknown property {key!r} for a {kind}")

    # scalar helpers: `d` is a mapping inside the document at `path`

    def text(self, key: str, *, required: bool = False, default: str = "") -> str:
        return self.text_in(self.data, key, (), required=required, default=default)

    def text_in(
        self,
        d: Any,
        key: str,
        path: tuple[Any, ...],
        *,
        required: bool = False,
        default: str = "",
    ) -> str:
        value = d.get(key) if isinstance(d, dict) else None
        if value is None:
            if required and not (self.amending and not path):
                self.report("KB002", path, f"missing required property {key!r}")
            return default
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float, bool)):
            self.report(
                "KB002",
                (*path, key),
                f"{key}: {value!r} is not a string; quote it "
                f"(YAML read it as a {type(value).__name__})",
            )
        else:
            self.report("KB002", (*path, key), f"{key} must be a string")
        return default

    def ident(self, key: str, *, default: str | None = None) -> str:
        fallback = self.doc.path.stem if default is None else default
        return self.text(key, required=True, default=fallback)

    def choice(
        self, key: str, choices: tuple[str, ...], *, required: bool = False, default: str
    ) -> str:
        return self.choice_in(self.data, key, choices, (), required=required, default=default)

    def choice_in(
        self,
        d: Any,
        key: str,
        choices: tuple[str, ...],
        path: tuple[Any, ...],
        *,
        required: bool = False,
        default: str,
    ) -> str:
        value = self.text_in(d, key, path, required=required, default="")
        if not value:
            return default
        if value not in choices:
            self.report(
                "KB002", (*path, key), f"{key} {value!r} is not one of {', '.join(choices)}"
            )
            return default
        return value

    def mapping(self, key: str) -> dict[Any, Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.report("KB002", (key,), f"{key} must be a mapping")
            return None
        return value

    def strlist(self, d: Any, key: str, path: tuple[Any, ...] = ()) -> tuple[str, ...]:
        value = d.get(key) if isinstance(d, dict) else None
        if value is None:
            return ()
        if isinstance(value, str) or not isinstance(value, list):
            self.report("KB002", (*path, key), f"{key} must be a list of strings")
            return ()
        out = []
        for i, item in enumerate(value):
            if isinstance(item, str):
                out.append(item)
            else:
                self.report("KB002", (*path, key, i), f"{key}[{i}] must be a string (quote it)")
        return tuple(out)

    def strmap(self, d: Any, key: str, path: tuple[Any, ...] = ()) -> dict[str, str]:
        value = d.get(key) if isinstance(d, dict) else None
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.report("KB002", (*path, key), f"{key} must be a mapping")
            return {}
        out = {}
        for k, v in value.items():
            if isinstance(v, str) and isinstance(k, str):
                out[k] = v
            else:
                self.report(
                    "KB002",
                    (*path, key, k),
                    f"{key}.{k}: {v!r} must be a string; quote it",
                )
        return out

    def items(self, key: str) -> list[tuple[int, dict[Any, Any]]]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.report("KB002", (key,), f"{key} must be a list")
            return []
        out = []
        for i, item in enumerate(value):
            if isinstance(item, dict):
                out.append((i, item))
            else:
                self.report("KB002", (key, i), f"{key}[{i}] must be a mapping")
        return out

    def withdrawn(self) -> Withdrawn | None:
        value = self.data.get("withdrawn")
        if value is None:
            return None
        if not isinstance(value, dict):
            self.report("KB002", ("withdrawn",), "withdrawn is a mapping {date, reason}")
            return None
        if "date" not in value:
            self.report("KB017", ("withdrawn",), 'withdrawn without a date; add date: "YYYY-MM-DD"')
        date = self.text_in(value, "date", ("withdrawn",))
        reason = self.text_in(value, "reason", ("withdrawn",), required=True)
        return Withdrawn(date=date, reason=reason)
