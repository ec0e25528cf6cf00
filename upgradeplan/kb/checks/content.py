"""Checks of what knowledge entries say: patterns, advice, provenance, fact keys, templates.

KB015 (patterns compile), KB019/KB020 (symptoms, verify), KB021/KB026/KB032 (references), KB025
(inferred fields), KB024 (fact keys), KB014 (migration templates render).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any

from upgradeplan.kb.checks.context import (
    REFERENCE,
    Ctx,
    Where,
    all_hazards,
    all_releases,
    resolve,
    walk_conditions,
)
from upgradeplan.kb.crossing import is_derived, shipped_releases
from upgradeplan.kb.documents import Loaded
from upgradeplan.kb.problems import Problem, problem
from upgradeplan.kb.templating import render_migration
from upgradeplan.linear import PatternError, compile_pattern
from upgradeplan.model import Condition, KnowledgeBase, Location, ObjectKind
from upgradeplan.state import keys


def _predicates(kb: KnowledgeBase) -> Iterator[Condition]:
    """Every predicate of every hazard's and every release's conditions, in knowledge order."""
    roots = [hz.when for hz in all_hazards(kb)]
    roots += [c for rel in all_releases(kb) for c in rel.requires_when.values()]
    for root in roots:
        yield from (cond for cond in walk_conditions(root) if cond.op == "pred")


def check_patterns(loaded: Loaded) -> Iterator[Problem]:
    """KB015: symptom patterns (case-insensitive) and `fact_matches` patterns compile."""
    ctx = Ctx(loaded)
    for cond in _predicates(ctx.kb):
        pattern = cond.args.get("pattern")
        if isinstance(pattern, str):
            try:
                re.compile(pattern)
            except re.error as exc:
                yield problem(
                    "KB015", cond.location, f"pattern {pattern!r} does not compile: {exc}"
                )

    for hz in all_hazards(ctx.kb):
        for i, symptom in enumerate(hz.symptoms):
            for key, pattern in [
                ("pattern", symptom.pattern),
                *(("needs", p) for p in symptom.needs),
            ]:
                try:  # diagnose runs symptoms on RE2: linear time, or refused here
                    compile_pattern(pattern)
                except PatternError as exc:
                    yield problem(
                        "KB015",
                        ctx.at(hz.location, "symptoms", i, key),
                        f"symptom pattern {pattern!r} is not one RE2 runs in linear time "
                        f"(no back-references or look-arounds): {exc}",
                    )


def check_advice(loaded: Loaded) -> Iterator[Problem]:
    """KB019/KB020 (warnings): a live hazard should say how to recognise and verify it."""
    ctx = Ctx(loaded)
    for hz in all_hazards(ctx.kb):
        if hz.withdrawn is not None or is_derived(hz.id):  # its release carries the advice
            continue
        if not hz.symptoms:
            yield problem(
                "KB019",
                hz.location,
                f"hazard {hz.id!r} has no symptoms; diagnose cannot recognise it",
            )
        if not hz.verify:
            yield problem("KB020", hz.location, f"hazard {hz.id!r} has no verify commands")


def check_inferred(loaded: Loaded) -> Iterator[Problem]:
    """KB025 (warning): every field marked inferred, with its reason."""
    ctx = Ctx(loaded)
    kb = ctx.kb
    entries: list[Any] = [*kb.products.values(), *all_releases(kb), *all_hazards(kb)]
    entries += kb.migrations.values()
    for entry in entries:
        for path, reason in entry.inferred.items():
            yield problem(
                "KB025", ctx.at(entry.location, "inferred", path), f"{path} is inferred: {reason}"
            )


def check_crossing_notes(loaded: Loaded) -> Iterator[Problem]:
    """KB031: a crossing note's range admits a release of its product; it cites its section."""
    kb = loaded.kb
    for product in kb.products.values():
        seen: set[str] = set()
        for note in product.crossing_notes:
            what = f"crossing note {note.id!r}"
            if note.id in seen:
                yield problem("KB031", note.location, f"{what} is given twice")
            seen.add(note.id)
            try:
                shipped = shipped_releases(note, kb.releases.get(product.id, ()))
            except ValueError as exc:
                yield problem("KB031", note.location, f"{what}: shipped: {exc}")
                continue
            if not shipped:
                yield problem(
                    "KB031",
                    note.location,
                    f"{what}: shipped {note.shipped!r} admits no release of {product.id}",
                )
            for hid in note.hazards:
                if hid not in kb.hazards:
                    yield problem("KB031", note.location, f"{what} names unknown hazard {hid!r}")
            if not (note.source and note.section and note.quote):
                yield problem(
                    "KB031", note.location, f"{what} needs source, section and quote to cite"
                )


def check_hazard_references(loaded: Loaded) -> Iterator[Problem]:
    """KB026: a live hazard names at least one source (an issue, a pull request, a page)."""
    ctx = Ctx(loaded)
    for hz in all_hazards(ctx.kb):
        if hz.withdrawn is None and not hz.references:
            yield problem(
                "KB026",
                ctx.at(hz.location, "references")
                if "references" in _keys(ctx, hz)
                else hz.location,
                f"hazard {hz.id!r} has no reference; add the issue, pull request or page behind it",
            )


def check_migration_references(loaded: Loaded) -> Iterator[Problem]:
    """KB032 (warning): a migration names the issue, pull request or page its steps come from."""
    ctx = Ctx(loaded)
    for mig in ctx.kb.migrations.values():
        if not mig.references:
            yield problem(
                "KB032",
                mig.location,
                f"migration {mig.id!r} has no reference; add the issue, pull request or page "
                "its steps come from",
            )


def _keys(ctx: Ctx, entry: Any) -> frozenset[str]:
    doc = ctx.doc(entry.location)
    return frozenset(doc.data) if doc is not None else frozenset()


def check_reference_format(loaded: Loaded) -> Iterator[Problem]:
    """KB021: references are owner/repo#N or http(s) URLs."""
    ctx = Ctx(loaded)
    owners: list[tuple[Location, tuple[str, ...]]] = [
        (r.location, r.references) for r in all_releases(ctx.kb)
    ] + [(h.location, h.references) for h in all_hazards(ctx.kb)]
    owners += [(m.location, m.references) for m in ctx.kb.migrations.values()]
    for loc, refs in owners:
        for i, ref in enumerate(refs):
            if not REFERENCE.match(ref):
                yield problem(
                    "KB021",
                    ctx.at(loc, "references", i),
                    f"reference {ref!r} is neither owner/repo#N, an http(s) URL nor doc:<name>",
                )


def _fact_problems(key: str, where: Where, what: str, products: Iterable[str]) -> Iterator[Problem]:
    found = keys.match(key)
    if found is not None:
        product = found.product
        if product is not None and product not in products:
            yield problem(
                "KB005", resolve(where), f"{what}: fact {key!r} names unknown product {product!r}"
            )
        return
    yield problem(
        "KB024", resolve(where), f"{what}: {key!r} is not a fact key of docs/state-format.md"
    )


def check_fact_keys(loaded: Loaded) -> Iterator[Problem]:
    """KB024 (and KB005 for the product part): fact keys in effects, params and predicates."""
    ctx = Ctx(loaded)
    products = ctx.kb.products
    for rel in all_releases(ctx.kb):
        for key in rel.effects:
            yield from _fact_problems(
                str(key),
                partial(ctx.at, rel.location, "effects", key),
                "effects",
                products,
            )
    for mig in ctx.kb.migrations.values():
        for name, spec in mig.params.items():
            fact = spec.get("fact") if isinstance(spec, dict) else None
            if fact:
                yield from _fact_problems(
                    fact, ctx.at(mig.location, "params", name, "fact"), f"param {name}", products
                )
    for cond in _predicates(ctx.kb):
        for arg in ("fact", "other"):
            fact = cond.args.get(arg)
            if isinstance(fact, str):
                yield from _fact_problems(fact, cond.location, cond.predicate, products)


# Object keys the readers make for every object they read, whatever the knowledge declares.
_OBJECT_META = (".exists", ".annotations", ".labels", ".harnesses")


def _undeclared_field(key: str, kinds: Mapping[str, ObjectKind]) -> bool:
    """``object.<Kind>.<ns>.<name>.<field>`` whose kind or field no product declares."""
    found = keys.match(key)
    if found is None or found.row.key != "object.<Kind>.<namespace>.<name>.<field>":
        return False
    if key.endswith(_OBJECT_META):
        return False
    decl = kinds.get(key.split(".", 2)[1])
    return decl is None or not any(key.endswith("." + f) for f in decl.fields)


def check_object_fields(loaded: Loaded) -> Iterator[Problem]:
    """KB029 (warning): custom-resource fields a condition reads are declared by a product."""
    ctx = Ctx(loaded)
    kinds = ctx.kb.object_kinds()
    for cond in _predicates(ctx.kb):
        args, name = cond.args, cond.predicate
        if name in ("any_object", "all_objects"):
            decl = kinds.get(str(args.get("kind")))
            if decl is None or str(args.get("field")) not in decl.fields:
                key = f"object.{args.get('kind')}.<namespace>.<name>.{args.get('field')}"
                yield _kb029(cond.location, name, key)
            continue
        for arg in ("fact", "other"):
            fact = args.get(arg)
            if isinstance(fact, str) and _undeclared_field(fact, kinds):
                yield _kb029(cond.location, name, fact)


def _kb029(where: Location, predicate: str, key: str) -> Problem:
    return problem(
        "KB029",
        where,
        f"{predicate}: {key} is a field no product declares under objects: "
        "(declare the kind and the field, or state the fact)",
    )


# --------------------------------------------------------------------------- templates


def sample_values(kb: KnowledgeBase, migration: Any) -> dict[str, Any]:
    """The variables a template sees, filled from the knowledge (params -> placeholders)."""
    values: dict[str, Any] = {
        name: (spec.get("placeholder", f"<{name}>") if isinstance(spec, dict) else f"<{name}>")
        for name, spec in migration.params.items()
    }
    released = [r for r in kb.releases.get(migration.product, ()) if not r.unreleased]
    # land on the latest live release that publishes a BOM (else the latest), from the one before
    live = [r for r in released if r.withdrawn is None] or released
    with_bom = [r for r in live if r.bom]
    to = (with_bom or live)[-1] if live else None
    if to is not None:
        index = released.index(to)
        before = released[index - 1].version if index > 0 else to.version
        step = {"product": migration.product, "from": before, "to": to.version, "bom": dict(to.bom)}
    else:
        step = {"product": migration.product, "from": "1.0.0", "to": "1.0.1", "bom": {}}
    values["step"] = step
    return values


def check_templates(loaded: Loaded) -> Iterator[Problem]:
    """KB014: every migration template renders against a sample state."""
    from jinja2 import TemplateError, TemplateSyntaxError

    ctx = Ctx(loaded)
    for mig in ctx.kb.migrations.values():
        if not mig.template:
            continue
        where = ctx.at(mig.location, "template")
        try:
            render_migration(mig, sample_values(ctx.kb, mig))
        except TemplateSyntaxError as exc:
            line = where.line + (exc.lineno or 0)
            yield problem(
                "KB014", Location(where.file, line), f"template syntax error: {exc.message}"
            )
        except TemplateError as exc:
            yield problem(
                "KB014",
                where,
                f"template does not render ({type(exc).__name__}: {exc}); "
                "the variables are its params and step",
            )
