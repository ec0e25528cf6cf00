"""Checks of what knowledge files refer to and the versions they name.

KB005-KB009 (products, releases, versions and constraints referred to), KB010/KB011 (scope
parameters against the known releases), KB012/KB013 (upgrade edges), KB016/KB023 (dates).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from functools import partial
from typing import Any

from upgradeplan.kb.checks.context import (
    HOP_VARIABLES,
    Ctx,
    Where,
    all_hazards,
    all_releases,
    constraint,
    resolve,
    version_problem,
    walk_conditions,
)
from upgradeplan.kb.documents import Loaded
from upgradeplan.kb.problems import Problem, problem
from upgradeplan.model import Condition, Location
from upgradeplan.versions import compare, parse_constraint, parse_version

# --------------------------------------------------------------------------- references


def check_references(loaded: Loaded) -> Iterator[Problem]:
    """KB005/KB006/KB007/KB008/KB009: ids, versions and constraints a file refers to."""
    ctx = Ctx(loaded)
    kb = ctx.kb
    products = kb.products
    out: list[Problem] = []
    for rel in all_releases(kb):
        loc = rel.location
        if rel.product not in products:
            out.append(problem("KB005", ctx.at(loc, "product"), f"unknown product {rel.product!r}"))
        for comp, version in rel.bom.items():

            def where(comp: str = comp, loc: Location = loc) -> Location:
                return ctx.at(loc, "bom", comp)

            if comp not in products:
                out.append(problem("KB005", where(), f"bom: unknown product {comp!r}"))
            bad = version_problem(version, where, f"bom {comp}")
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
        for req, required in rel.requires.items():

            def at_req(req: str = req, loc: Location = loc) -> Location:
                return ctx.at(loc, "requires", req)

            if req not in products:
                out.append(problem("KB005", at_req(), f"requires: unknown product {req!r}"))
            constraint(required, at_req, f"requires {req}", out)
        for cond in rel.requires_when.values():
            out.extend(_condition_problems(cond, products))
        for comp, rng in rel.components.items():
            at_comp = partial(ctx.at, loc, "components", comp, "versionRange")
            if comp not in products:
                out.append(problem("KB005", at_comp(), f"components: unknown product {comp!r}"))
            constraint(rng, at_comp, f"components.{comp}.versionRange", out)
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
            bad = version_problem(version, at_dep, f"built_against {dep}")
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
            constraint(rel.upgrade_from, partial(ctx.at, loc, "upgrade_from"), "upgrade_from", out)
    for hz in all_hazards(kb):
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
            bad = version_problem(varg, cond.location, name)
            if bad is not None:
                out.append(bad)
        above = args.get("above")
        if isinstance(above, str):
            bad = version_problem(above, cond.location, name)
            if bad is not None:
                out.append(bad)
        rng = args.get("range")
        if isinstance(rng, str):
            constraint(rng, cond.location, name, out)
    return out


# --------------------------------------------------------------------------- hazard ranges


def check_hazard_ranges(loaded: Loaded) -> Iterator[Problem]:
    """KB006/KB008/KB009/KB010/KB011: scope parameters against the known releases."""
    ctx = Ctx(loaded)
    out: list[Problem] = []
    for hz in all_hazards(ctx.kb):
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
                bad = version_problem(hz.stop, stop_loc, "skip stop")
                if bad is not None:
                    out.append(bad)
                else:
                    stop = parse_version(hz.stop)
            to = constraint(hz.to_range, to_loc, "skip to", out) if hz.to_range else None
            if hz.from_range is not None:

                def from_loc(at: Location = stop_at) -> Location:
                    return ctx.at(at, "skip", "from")

                start = constraint(hz.from_range, from_loc, "skip from", out)
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

            c = constraint(text, where, what, out)
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

    ctx = Ctx(loaded)
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


# --------------------------------------------------------------------------- dates


def _date_problem(text: str, where: Where, what: str) -> Problem | None:
    try:
        parsed = datetime.date.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is None or parsed.isoformat() != text:
        return problem(
            "KB023", resolve(where), f"{what} {text!r} is not a YYYY-MM-DD calendar date"
        )
    return None


def check_dates(loaded: Loaded) -> Iterator[Problem]:
    """KB016/KB023: dates are real; unreleased entries have none."""
    ctx = Ctx(loaded)
    for rel in all_releases(ctx.kb):
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
    for hz in all_hazards(ctx.kb):
        if hz.withdrawn is not None and hz.withdrawn.date:
            bad = _date_problem(
                hz.withdrawn.date, ctx.at(hz.location, "withdrawn", "date"), "withdrawn date"
            )
            if bad is not None:
                yield bad
