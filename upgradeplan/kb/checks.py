"""The coded semantic checks over a loaded knowledge base.

Each check is a function taking the :class:`~upgradeplan.kb.documents.Loaded` result and yielding
:class:`~upgradeplan.kb.problems.Problem` s; the codes and their descriptions live in
:data:`upgradeplan.kb.problems.CATALOGUE`. Checks marked ``lint_only`` (template rendering)
run in ``kb lint`` only; the others also run whenever the knowledge is loaded.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from upgradeplan.kb.documents import Document, Loaded
from upgradeplan.kb.problems import Problem, problem
from upgradeplan.model import NEXT, Condition, Hazard, KnowledgeBase, Location, Release
from upgradeplan.state import keys

HOP_VARIABLES = ("$from", "$to")
REFERENCE = re.compile(
    r"^(?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+|https?://\S+|doc:[a-z0-9][a-z0-9._-]*)$"
)


@dataclass(frozen=True)
class Check:
    codes: tuple[str, ...]
    run: Callable[[Loaded], Iterable[Problem]]
    lint_only: bool = False


class _Ctx:
    """Helpers shared by the checks: documents, locations, parsed versions per product."""

    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.kb: KnowledgeBase = loaded.kb
        self._known: dict[str, list[tuple[Any, Release]]] = {}
        self._known_versions: dict[str, frozenset[str]] = {}

    def doc(self, location: Location) -> Document | None:
        return self.loaded.documents.get(location.file)

    def at(self, location: Location, *path: Any) -> Location:
        doc = self.doc(location)
        return doc.at(*path) if doc is not None else location

    def known_versions(self, product: str) -> frozenset[str]:
        """The version strings of :meth:`known`."""
        if product not in self._known_versions:
            self._known_versions[product] = frozenset(r.version for _, r in self.known(product))
        return self._known_versions[product]

    def known(self, product: str) -> list[tuple[Any, Release]]:
        """Released versions of ``product`` (ascending, parsed)."""
        if product not in self._known:
            from upgradeplan.versions import parse_version

            out = []
            for rel in self.kb.releases.get(product, ()):
                if rel.version == NEXT:
                    continue
                try:
                    out.append((parse_version(rel.version), rel))
                except ValueError:
                    continue
            self._known[product] = out
        return self._known[product]


# A location, or a function computing it: line numbers are looked up only for problems.
Where = Location | Callable[[], Location]


def _loc(where: Where) -> Location:
    return where if isinstance(where, Location) else where()


def _version_problem(text: str, where: Where, what: str) -> Problem | None:
    from upgradeplan.versions import parse_version

    try:
        parse_version(text)
    except ValueError as exc:
        return problem("KB008", _loc(where), f"{what}: {exc}")
    return None


def _constraint(text: str, where: Where, what: str, out: list[Problem]) -> Any:
    from upgradeplan.versions import parse_constraint

    try:
        return parse_constraint(text)
    except ValueError as exc:
        out.append(problem("KB009", _loc(where), f"{what}: {exc}"))
        return None


def walk_conditions(cond: Condition | None) -> Iterator[Condition]:
    """Every node of a condition tree, parents before their children."""
    if cond is None:
        return
    yield cond
    for child in cond.children:
        yield from walk_conditions(child)


def _all_hazards(kb: KnowledgeBase) -> Iterable[Hazard]:
    return kb.hazards.values()


def _all_releases(kb: KnowledgeBase) -> Iterable[Release]:
    for rels in kb.releases.values():
        yield from rels


# --------------------------------------------------------------------------- references


def check_references(loaded: Loaded) -> Iterator[Problem]:
    """KB005/KB006/KB007/KB008/KB009: ids, versions and constraints a file refers to."""
    ctx = _Ctx(loaded)
    kb = ctx.kb
    products = kb.products
    out: list[Problem] = []
    for rel in _all_releases(kb):
        loc = rel.location
        if rel.product not in products:
            out.append(problem("KB005", ctx.at(loc, "product"), f"unknown product {rel.product!r}"))
        for comp, version in rel.bom.items():

            def where(comp: str = comp, loc: Location = loc) -> Location:
                return ctx.at(loc, "bom", comp)

            if comp not in products:
                out.append(problem("KB005", where(), f"bom: unknown product {comp!r}"))
            bad = _version_problem(version, where, f"bom {comp}")
            if bad is not None:
                out.append(bad)
                continue
            known = ctx.known_versions(comp)
            if known and version not in known:
                out.append(
                    problem(
                        "KB006",
                        where(),
                        f"bom: {comp} {version!r} is not a known release of {comp}",
                    )
                )
        for req, constraint in rel.requires.items():

            def at_req(req: str = req, loc: Location = loc) -> Location:
                return ctx.at(loc, "requires", req)

            if req not in products:
                out.append(problem("KB005", at_req(), f"requires: unknown product {req!r}"))
            _constraint(constraint, at_req, f"requires {req}", out)
        for cond in rel.requires_when.values():
            out.extend(_condition_problems(cond, products))
        for comp, rng in rel.components.items():
            at_comp = partial(ctx.at, loc, "components", comp, "versionRange")
            if comp not in products:
                out.append(problem("KB005", at_comp(), f"components: unknown product {comp!r}"))
            _constraint(rng, at_comp, f"components.{comp}.versionRange", out)
            if comp in rel.bom:
                out.append(
                    problem(
                        "KB002",
                        at_comp(),
                        f"{comp} is in both bom (exact) and components (range); keep one",
                    )
                )
        for dep, version in rel.built_against.items():
            at_dep = partial(ctx.at, loc, "built_against", dep)
            if dep not in products:
                out.append(problem("KB005", at_dep(), f"built_against: unknown product {dep!r}"))
            bad = _version_problem(version, at_dep, f"built_against {dep}")
            if bad is not None:
                out.append(bad)
            elif ctx.known_versions(dep) and version not in ctx.known_versions(dep):
                out.append(
                    problem(
                        "KB006",
                        at_dep(),
                        f"built_against: {dep} {version!r} is not a known release of {dep}",
                    )
                )
        if rel.upgrade_from is not None:
            _constraint(rel.upgrade_from, partial(ctx.at, loc, "upgrade_from"), "upgrade_from", out)
    for hz in _all_hazards(kb):
        if hz.product and hz.product not in products:
            out.append(
                problem("KB005", ctx.at(hz.location, "product"), f"unknown product {hz.product!r}")
            )
        for i, mid in enumerate(hz.migrations):
            if mid not in kb.migrations:
                out.append(
                    problem(
                        "KB007", ctx.at(hz.location, "migrations", i), f"unknown migration {mid!r}"
                    )
                )
        out.extend(_condition_problems(hz.when, products))
    for mig in kb.migrations.values():
        if mig.product and mig.product not in products:
            out.append(
                problem(
                    "KB005", ctx.at(mig.location, "product"), f"unknown product {mig.product!r}"
                )
            )
    yield from out


def _condition_problems(root: Condition | None, products: Any) -> list[Problem]:
    """KB005/KB008/KB009 for the products, versions and ranges a condition names."""
    out: list[Problem] = []
    for cond in walk_conditions(root):
        if cond.op != "pred":
            continue
        name = cond.predicate
        args = cond.args
        for arg in ("product", "component", "built_against_other"):
            product = args.get(arg)
            if isinstance(product, str) and product not in products:
                out.append(problem("KB005", cond.location, f"{name}: unknown product {product!r}"))
        varg = args.get("version")
        if name != "crd_stored_version" and isinstance(varg, str) and varg not in HOP_VARIABLES:
            bad = _version_problem(varg, cond.location, name)
            if bad is not None:
                out.append(bad)
        above = args.get("above")
        if isinstance(above, str):
            bad = _version_problem(above, cond.location, name)
            if bad is not None:
                out.append(bad)
        rng = args.get("range")
        if isinstance(rng, str):
            _constraint(rng, cond.location, name, out)
    return out


# --------------------------------------------------------------------------- hazard ranges


def check_hazard_ranges(loaded: Loaded) -> Iterator[Problem]:
    """KB006/KB008/KB009/KB010/KB011: scope parameters against the known releases."""
    ctx = _Ctx(loaded)
    out: list[Problem] = []
    for hz in _all_hazards(ctx.kb):
        known = ctx.known(hz.product)
        scope = hz.scope
        if scope == "skip":
            stop_at = hz.location

            def stop_loc(at: Location = stop_at) -> Location:
                return ctx.at(at, "skip", "stop")

            def to_loc(at: Location = stop_at) -> Location:
                return ctx.at(at, "skip", "to")

            stop = None
            if hz.stop is not None:
                from upgradeplan.versions import parse_version

                bad = _version_problem(hz.stop, stop_loc, "skip stop")
                if bad is not None:
                    out.append(bad)
                else:
                    stop = parse_version(hz.stop)
            to = _constraint(hz.to_range, to_loc, "skip to", out) if hz.to_range else None
            if hz.from_range is not None:

                def from_loc(at: Location = stop_at) -> Location:
                    return ctx.at(at, "skip", "from")

                start = _constraint(hz.from_range, from_loc, "skip from", out)
                if start is not None and known and not any(start.check(v) for v, _ in known):
                    out.append(
                        problem(
                            "KB011",
                            from_loc(),
                            f"skip from {hz.from_range!r} matches no known release of {hz.product}",
                        )
                    )
            if to is None or not known:
                continue
            matching = [(v, r) for v, r in known if to.check(v)]
            if not matching:
                out.append(
                    problem(
                        "KB011",
                        to_loc(),
                        f"skip to {hz.to_range!r} matches no known release of {hz.product}",
                    )
                )
                continue
            if stop is None:
                continue
            lowest_v, lowest = matching[0]
            from upgradeplan.versions import compare

            if compare(stop, lowest_v) >= 0:
                out.append(
                    problem(
                        "KB010",
                        stop_loc(),
                        f"skip stop {hz.stop!r} is not below {lowest.version!r}, the lowest known "
                        f"release in `to` {hz.to_range!r}; the stop must come before the target",
                    )
                )
                continue
            if not any(compare(stop, v) <= 0 and compare(v, lowest_v) < 0 for v, _ in known):
                out.append(
                    problem(
                        "KB006",
                        stop_loc(),
                        f"skip stop {hz.stop!r}: no known release of {hz.product} at or above it "
                        f"and below {lowest.version!r} to stop at",
                    )
                )
            continue
        ranges: list[tuple[str | None, tuple[str, ...], str]] = []
        if scope == "landing":
            ranges.append((hz.to_range, ("landing", "range"), "landing range"))
        elif scope == "transition":
            ranges.append((hz.from_range, ("transition", "from"), "transition from"))
            ranges.append((hz.to_range, ("transition", "to"), "transition to"))
        else:
            ranges.append((hz.from_range, ("state", "range"), "state range"))
        for text, path, what in ranges:
            if text is None:
                continue

            def where(at: Location = hz.location, path: tuple[str, ...] = path) -> Location:
                return ctx.at(at, *path)

            c = _constraint(text, where, what, out)
            if c is not None and known and not any(c.check(v) for v, _ in known):
                out.append(
                    problem(
                        "KB011",
                        where(),
                        f"{what} {text!r} matches no known release of {hz.product}",
                    )
                )
    yield from out


# --------------------------------------------------------------------------- upgrade edges


def check_upgrade_edges(loaded: Loaded) -> Iterator[Problem]:
    """KB012/KB013: upgrade_from must admit some earlier release and no later one."""
    from upgradeplan.versions import parse_constraint

    ctx = _Ctx(loaded)
    for product in ctx.kb.releases:
        known = ctx.known(product)
        for index, (_, rel) in enumerate(known):
            if rel.upgrade_from is None:
                continue
            try:
                admits = parse_constraint(rel.upgrade_from)
            except ValueError:
                continue  # reported by check_references
            where = ctx.at(rel.location, "upgrade_from")
            later = [r.version for v, r in known[index:] if admits.check(v)]
            if later:
                what = "itself" if later[0] == rel.version else f"the later release {later[0]!r}"
                yield problem(
                    "KB012",
                    where,
                    f"upgrade_from {rel.upgrade_from!r} admits {what}; an upgrade edge must come "
                    f"from an earlier release (this makes a cycle)",
                )
            if index > 0 and not any(admits.check(v) for v, _ in known[:index]):
                yield problem(
                    "KB013",
                    where,
                    f"upgrade_from {rel.upgrade_from!r} admits none of the earlier releases of "
                    f"{product}; {rel.version} can never be reached",
                )


# --------------------------------------------------------------------------- dates, patterns


def _date_problem(text: str, where: Where, what: str) -> Problem | None:
    try:
        parsed = datetime.date.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is None or parsed.isoformat() != text:
        return problem("KB023", _loc(where), f"{what} {text!r} is not a YYYY-MM-DD calendar date")
    return None


def check_dates(loaded: Loaded) -> Iterator[Problem]:
    """KB016/KB023: dates are real; unreleased entries have none."""
    ctx = _Ctx(loaded)
    for rel in _all_releases(ctx.kb):
        if rel.date is not None:

            def where(at: Location = rel.location) -> Location:
                return ctx.at(at, "date")

            if rel.unreleased:
                yield problem(
                    "KB016", where(), "an unreleased (next) release has no date; remove it"
                )
            else:
                bad = _date_problem(rel.date, where, "date")
                if bad is not None:
                    yield bad
        if rel.withdrawn is not None and rel.withdrawn.date:
            bad = _date_problem(
                rel.withdrawn.date, ctx.at(rel.location, "withdrawn", "date"), "withdrawn date"
            )
            if bad is not None:
                yield bad
    for hz in _all_hazards(ctx.kb):
        if hz.withdrawn is not None and hz.withdrawn.date:
            bad = _date_problem(
                hz.withdrawn.date, ctx.at(hz.location, "withdrawn", "date"), "withdrawn date"
            )
            if bad is not None:
                yield bad


def check_patterns(loaded: Loaded) -> Iterator[Problem]:
    """KB015: symptom patterns (case-insensitive) and `fact_matches` patterns compile."""
    ctx = _Ctx(loaded)
    roots = [hz.when for hz in _all_hazards(ctx.kb)]
    roots += [c for rel in _all_releases(ctx.kb) for c in rel.requires_when.values()]
    for root in roots:
        for cond in walk_conditions(root):
            pattern = cond.args.get("pattern") if cond.op == "pred" else None
            if isinstance(pattern, str):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    yield problem(
                        "KB015", cond.location, f"pattern {pattern!r} does not compile: {exc}"
                    )
    for hz in _all_hazards(ctx.kb):
        for i, symptom in enumerate(hz.symptoms):
            try:
                re.compile(symptom.pattern, re.IGNORECASE)
            except re.error as exc:
                yield problem(
                    "KB015",
                    ctx.at(hz.location, "symptoms", i, "pattern"),
                    f"symptom pattern {symptom.pattern!r} does not compile: {exc}",
                )


def check_advice(loaded: Loaded) -> Iterator[Problem]:
    """KB019/KB020 (warnings): a live hazard should say how to recognise and verify it."""
    ctx = _Ctx(loaded)
    for hz in _all_hazards(ctx.kb):
        if hz.withdrawn is not None:
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
    ctx = _Ctx(loaded)
    kb = ctx.kb
    entries: list[Any] = [*kb.products.values(), *_all_releases(kb), *_all_hazards(kb)]
    entries += kb.migrations.values()
    for entry in entries:
        for path, reason in entry.inferred.items():
            yield problem(
                "KB025", ctx.at(entry.location, "inferred", path), f"{path} is inferred: {reason}"
            )


def check_hazard_references(loaded: Loaded) -> Iterator[Problem]:
    """KB026: a live hazard names at least one source (an issue, a pull request, a page)."""
    ctx = _Ctx(loaded)
    for hz in _all_hazards(ctx.kb):
        if hz.withdrawn is None and not hz.references:
            yield problem(
                "KB026",
                ctx.at(hz.location, "references")
                if "references" in _keys(ctx, hz)
                else hz.location,
                f"hazard {hz.id!r} has no reference; add the issue, pull request or page behind it",
            )


def _keys(ctx: _Ctx, entry: Any) -> frozenset[str]:
    doc = ctx.doc(entry.location)
    return frozenset(doc.data) if doc is not None else frozenset()


def check_reference_format(loaded: Loaded) -> Iterator[Problem]:
    """KB021: references are owner/repo#N or http(s) URLs."""
    ctx = _Ctx(loaded)
    owners: list[tuple[Location, tuple[str, ...]]] = [
        (r.location, r.references) for r in _all_releases(ctx.kb)
    ] + [(h.location, h.references) for h in _all_hazards(ctx.kb)]
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
                "KB005", _loc(where), f"{what}: fact {key!r} names unknown product {product!r}"
            )
        return
    yield problem(
        "KB024", _loc(where), f"{what}: {key!r} is not a fact key of docs/state-format.md"
    )


def check_fact_keys(loaded: Loaded) -> Iterator[Problem]:
    """KB024 (and KB005 for the product part): fact keys in effects, params and predicates."""
    ctx = _Ctx(loaded)
    products = ctx.kb.products
    for rel in _all_releases(ctx.kb):
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
    roots = [hz.when for hz in _all_hazards(ctx.kb)]
    roots += [c for rel in _all_releases(ctx.kb) for c in rel.requires_when.values()]
    for root in roots:
        for cond in walk_conditions(root):
            if cond.op != "pred":
                continue
            for arg in ("fact", "other"):
                fact = cond.args.get(arg)
                if isinstance(fact, str):
                    yield from _fact_problems(fact, cond.location, cond.predicate, products)


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

    from upgradeplan.kb.templating import render_migration

    ctx = _Ctx(loaded)
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


CHECKS: tuple[Check, ...] = (
    Check(("KB005", "KB006", "KB007", "KB008", "KB009"), check_references),
    Check(("KB006", "KB008", "KB009", "KB010", "KB011"), check_hazard_ranges),
    Check(("KB012", "KB013"), check_upgrade_edges),
    Check(("KB016", "KB023"), check_dates),
    Check(("KB015",), check_patterns, lint_only=True),
    Check(("KB019", "KB020"), check_advice),
    Check(("KB021",), check_reference_format),
    Check(("KB025",), check_inferred),
    Check(("KB026",), check_hazard_references, lint_only=True),
    Check(("KB005", "KB024"), check_fact_keys),
    Check(("KB014",), check_templates, lint_only=True),
)


def run_checks(loaded: Loaded, *, lint: bool) -> list[Problem]:
    """Every check's problems (the lint-only ones only with ``lint``)."""
    out: list[Problem] = []
    for check in CHECKS:
        if check.lint_only and not lint:
            continue
        out.extend(check.run(loaded))
    return out
