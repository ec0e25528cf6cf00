"""Targets: resolving ``--to`` against the knowledge, installed versions, target order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from upgradeplan import conditions, errors
from upgradeplan.model import NEXT, KnowledgeBase, State, Target
from upgradeplan.planner.index import index_of


def parse_named(text: str, what: str) -> Any:
    from upgradeplan.versions import parse_version

    try:
        return parse_version(text)
    except errors.InvalidVersion as exc:
        raise errors.InvalidVersion(text, exc.reason, where=what) from None


def latest_release(kb: KnowledgeBase, product: str) -> str:
    """The newest released, non-withdrawn version of ``product``."""
    if product not in kb.products:
        raise errors.UnknownName("product", product, sorted(kb.products))
    rels = index_of(kb).product(product).releases
    if not rels:
        raise errors.BadInput(f"{product} has no released version in the knowledge base")
    return rels[-1].version


def resolve_target(kb: KnowledgeBase, target: Target) -> Target:
    """The knowledge's release for ``target`` ("latest" allowed); typed errors otherwise."""
    if target.product not in kb.products:
        raise errors.UnknownName("product", target.product, sorted(kb.products))
    if target.version == "latest":
        return Target(target.product, latest_release(kb, target.product))
    all_rels = [r for r in kb.releases.get(target.product, ()) if r.version != NEXT]
    known = [r.version for r in all_rels if r.withdrawn is None]
    wanted = None
    try:
        wanted = parse_named(target.version, f"target {target.product}")
    except errors.InvalidVersion:
        raise errors.UnknownName(f"release of {target.product}", target.version, known) from None
    for rel in all_rels:
        if rel.version == target.version or parse_named(rel.version, rel.key) == wanted:
            if rel.withdrawn is not None:
                raise errors.BadInput(
                    f"{rel.key} was withdrawn ({rel.withdrawn.date}: {rel.withdrawn.reason})",
                    hint=f"pick another release: {', '.join(known[-3:])}",
                )
            return Target(target.product, rel.version)
    raise errors.UnknownName(f"release of {target.product}", target.version, known)


def current_version(state: State, product: str) -> str:
    installed = state.installed(product)
    if installed is None:
        raise errors.BadInput(
            f"the installed version of {product} is unknown",
            hint=f"state it with {conditions.missing_fact_hint('installed.' + product)}",
        )
    parse_named(installed, f"installed.{product}")
    return installed


def order_targets(kb: KnowledgeBase, targets: Sequence[Target]) -> list[Target]:
    """Products another target's release requires go first; otherwise the given order."""
    wanted = {t.product: t for t in targets}
    out: list[Target] = []
    seen: set[str] = set()

    def visit(t: Target, trail: tuple[str, ...]) -> None:
        if t.product in seen or t.product in trail:
            return
        rel = kb.release(t.product, t.version)
        for dep in sorted(rel.requires if rel else {}):
            if dep in wanted:
                visit(wanted[dep], (*trail, t.product))
        seen.add(t.product)
        out.append(t)

    for t in targets:
        visit(t, ())
    return out
