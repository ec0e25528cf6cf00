"""Knowledge documents to model entries: one function per kind.

Each ``*_of`` function reads one parsed document through :class:`~upgradeplan.kb.fields.Fields`
(which reports every structural problem with its line) and returns the frozen model entry;
placing it in the knowledge base (duplicates, amendments) is the loader's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from upgradeplan.kb.fields import Fields, plain
from upgradeplan.kb.when import parse_condition
from upgradeplan.model import (
    Change,
    ChartSource,
    Condition,
    CrossingNote,
    Hazard,
    Migration,
    Note,
    ObjectKind,
    Prerequisite,
    Product,
    Recognise,
    Release,
    Stepping,
    Symptom,
)

PRODUCT_TYPES = ("chart", "agent", "platform", "environment")
SEVERITIES = ("blocking", "warning", "notice")
SCOPES = ("skip", "landing", "transition", "state")
MIGRATION_TYPES = ("bom-pin", "helmrelease-patch", "json6902", "values-edit", "manifest", "command")
WHERE = ("logs", "events", "status", "any")
NOTE_KEYS = (
    *("id", "shipped", "title", "text", "source", "section", "quote", "inferred", "hazards"),
)
PREREQUISITE_KEYS = ("id", "at", "title", "text", "unmet", "severity", "source", "quote")


def product_of(ctx: Fields) -> Product:
    """A product entry from its document."""
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
        objects=_objects(ctx),
        upgrade_doc_title=ctx.text_in(upgrade_doc, "title", ("upgrade_doc",)),
        upgrade_doc_intro=ctx.text_in(upgrade_doc, "intro", ("upgrade_doc",)),
        inferred=ctx.inferred(),
        charts=_charts(ctx),
        reviewed_through=ctx.text("reviewed_through"),
        stepping=_stepping(ctx),
        crossing_notes=_crossing_notes(ctx),
    )
    _named_by_file(ctx, "product", pid)
    return product


def _crossing_notes(ctx: Fields) -> tuple[CrossingNote, ...]:
    """``crossing_notes:`` what any path crossing the releases in ``shipped`` meets."""
    out = []
    for i, item in ctx.items("crossing_notes"):
        path = ("crossing_notes", i)
        for k in item:
            if k not in NOTE_KEYS:
                ctx.report(
                    "KB002", (*path, k), f"a crossing note takes {', '.join(NOTE_KEYS)}, not {k!r}"
                )
        out.append(
            CrossingNote(
                id=ctx.text_in(item, "id", path, required=True),
                shipped=ctx.text_in(item, "shipped", path, required=True),
                title=ctx.text_in(item, "title", path, required=True),
                text=ctx.text_in(item, "text", path, required=True),
                source=ctx.text_in(item, "source", path),
                section=ctx.text_in(item, "section", path),
                quote=ctx.text_in(item, "quote", path),
                hazards=ctx.strlist(item, "hazards", path),
                location=ctx.doc.at(*path),
            )
        )
    return tuple(out)


def _stepping(ctx: Fields) -> Stepping | None:
    """``stepping: {line: minor|major, at: latest-patch|any, source, quote, references}``."""
    spec = ctx.mapping("stepping")
    if spec is None:
        return None
    path = ("stepping",)
    for k in spec:
        if k not in ("line", "at", "source", "quote", "references"):
            ctx.report(
                "KB002",
                (*path, k),
                f"`stepping:` takes line, at, source, quote, references, not {k!r}",
            )
    return Stepping(
        line=ctx.choice_in(spec, "line", ("minor", "major"), path, default="minor"),  # type: ignore[arg-type]
        at=ctx.choice_in(spec, "at", ("latest-patch", "any"), path, default="latest-patch"),  # type: ignore[arg-type]
        source=ctx.text_in(spec, "source", path),
        quote=ctx.text_in(spec, "quote", path),
        references=ctx.strlist(spec, "references", path),
    )


def _crossing(ctx: Fields) -> tuple[Prerequisite, ...]:
    """``crossing:`` prerequisites of every path that crosses the release."""
    out = []
    for i, item in ctx.items("crossing"):
        path = ("crossing", i)
        for k in item:
            if k not in PREREQUISITE_KEYS:
                ctx.report(
                    "KB002",
                    (*path, k),
                    f"a prerequisite takes {', '.join(PREREQUISITE_KEYS)}, not {k!r}",
                )
        unmet = None
        if item.get("unmet") is not None:
            unmet = parse_condition(
                item["unmet"], ctx.data, (*path, "unmet"), ctx.doc.file, ctx.report
            )
        out.append(
            Prerequisite(
                id=ctx.text_in(item, "id", path, required=True),
                at=ctx.choice_in(item, "at", ("leaving", "entering"), path, default="leaving"),  # type: ignore[arg-type]
                title=ctx.text_in(item, "title", path, required=True),
                text=ctx.text_in(item, "text", path, required=True),
                unmet=unmet,
                severity=ctx.choice_in(item, "severity", SEVERITIES, path, default="blocking"),  # type: ignore[arg-type]
                source=ctx.text_in(item, "source", path),
                quote=ctx.text_in(item, "quote", path),
            )
        )
    return tuple(out)


def _named_by_file(ctx: Fields, what: str, ident: str) -> None:
    """KB003 when an entry's id is not its file's name (``<id>.yaml``)."""
    if ident != ctx.doc.stem:
        ctx.report(
            "KB003",
            ("id",),
            f"{what} {ident!r} is in {ctx.doc.name}; name the file {ident}.yaml",
        )


def _charts(ctx: Fields) -> tuple[ChartSource, ...]:
    """``charts:``: each place the chart is published, with the versions served there."""
    out = []
    for i, item in ctx.items("charts"):
        url = ctx.text_in(item, "url", ("charts", i), required=True)
        if url:
            versions = ctx.text_in(item, "versions", ("charts", i))
            out.append(
                ChartSource(url.rstrip("/"), versions, ctx.text_in(item, "era", ("charts", i)))
            )
    return tuple(out)


def _objects(ctx: Fields) -> dict[str, ObjectKind]:
    """``objects:`` kind -> {apiVersion, plural, fields}: the objects hazards read (custom
    resources, or core kinds: ``v1`` is the core group's version)."""
    out: dict[str, ObjectKind] = {}
    for kind, spec in (ctx.mapping("objects") or {}).items():
        path = ("objects", kind)
        if not isinstance(spec, dict):
            ctx.report("KB002", path, "an object kind is {apiVersion, plural, fields}")
            continue
        api = ctx.text_in(spec, "apiVersion", path, required=True)
        plural = ctx.text_in(spec, "plural", path, required=True)
        fields = ctx.strlist(spec, "fields", path)
        if "/" not in api and not (api[:1] == "v" and api[1:2].isdigit()):  # v1: the core group
            ctx.report("KB002", (*path, "apiVersion"), f"apiVersion {api!r} is not group/version")
        elif plural and fields:
            out[str(kind)] = ObjectKind(str(kind), api, plural, fields)
    return out


def release_of(ctx: Fields, rel: tuple[str, ...]) -> Release:
    """A release entry from its document at ``releases/<product>/<version>.yaml`` (``rel``)."""
    dir_product = rel[1] if len(rel) == 3 else ""
    if len(rel) != 3:
        ctx.report("KB003", (), "a release file is releases/<product>/<version>.yaml")
    product = ctx.ident("product", default=dir_product)
    version = ctx.text("version", required=True, default=ctx.doc.stem)
    if dir_product and product != dir_product:
        ctx.report(
            "KB003",
            ("product",),
            f"a release of {product!r} in releases/{dir_product}/; move it to releases/{product}/",
        )
    if version != ctx.doc.stem:
        ctx.report(
            "KB003",
            ("version",),
            f"release {version!r} is in {ctx.doc.name}; name the file {version}.yaml",
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
                details=plain(details),
            )
        )
    requires, requires_when = _requires(ctx)
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
        effects=plain(effects),
        notes=tuple(notes),
        verify=ctx.strlist(ctx.data, "verify"),
        withdrawn=ctx.withdrawn(),
        from_label=ctx.text("from_label"),
        components=components,
        built_against=ctx.strmap(ctx.data, "built_against"),
        defaults=plain(defaults),
        requires_when=requires_when,
        inferred=ctx.inferred(),
        crossing=_crossing(ctx),
        app_version=ctx.text("app_version"),
        kube_version=ctx.text("kube_version"),
    )
    return release


def _requires(ctx: Fields) -> tuple[dict[str, str], dict[str, Condition]]:
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


def hazard_of(ctx: Fields) -> Hazard:
    """A hazard entry from its document."""
    hid = ctx.ident("id")
    _named_by_file(ctx, "hazard", hid)
    scope = ctx.choice("scope", SCOPES, required=True, default="state")
    stop = to_range = from_range = None
    for other in SCOPES:
        if other != scope and other in ctx.data:
            ctx.report("KB002", (other,), f"`{other}:` goes with scope {other}, not scope {scope}")
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
    values = {k: ctx.text_in(params, k, (scope,), required=k in required) or None for k in allowed}
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
                generic=item.get("generic") is True,
                needs=ctx.strlist(item, "needs", path),
                names=tuple(n.lower() for n in ctx.strlist(item, "names", path)),
                reasons=ctx.strlist(item, "reasons", path),
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
        defaults=_hazard_defaults(ctx),
    )
    return hazard


def _hazard_defaults(ctx: Fields) -> tuple[tuple[str, Mapping[str, Any]], ...]:
    """``defaults:`` of a hazard: ``[{versions: RANGE, values: {...}}]``."""
    out: list[tuple[str, Mapping[str, Any]]] = []
    for i, item in ctx.items("defaults"):
        path = ("defaults", i)
        versions = ctx.text_in(item, "versions", path, required=True)
        values = item.get("values")
        if not isinstance(values, dict):
            ctx.report("KB002", (*path, "values"), "values must be a mapping, as in values.yaml")
            continue
        if versions:
            out.append((versions, plain(values)))
    return tuple(out)


def migration_of(ctx: Fields) -> Migration:
    """A migration entry from its document."""
    mid = ctx.ident("id")
    _named_by_file(ctx, "migration", mid)
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
        references=ctx.strlist(ctx.data, "references"),
        inferred=ctx.inferred(),
    )
    return migration
