"""Targets: every ``--to`` form (and the GitOps gate's targets) resolved once, installed versions,
target order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from upgradeplan import conditions, errors, releases
from upgradeplan.model import NEXT, KnowledgeBase, State, Target
from upgradeplan.unreadable import covers
from upgradeplan.versions import Version, parse_version


def parse_named(text: str, what: str) -> Any:
    try:
        return parse_version(text)
    except errors.InvalidVersion as exc:
        raise errors.InvalidVersion(text, exc.reason, where=what) from None


def resolve_targets(
    kb: KnowledgeBase, state: State, to: Sequence[str] = (), given: Sequence[Target] = ()
) -> list[Target]:
    """Every target as a release of the knowledge: the one place a target is resolved.

    ``to`` holds ``--to`` values (``PRODUCT=VERSION``, ``PRODUCT=latest``, a bare ``VERSION``
    one product has, or ``latest``); ``given`` holds targets the inputs asked for (the
    versions the new pins of ``--gitops --base`` select). A ``to`` value overrides a given
    target of the same product. Unknown, invalid and withdrawn releases raise typed errors
    with the same message whichever form named them. Sorted by product.
    """
    merged = {t.product: _release_target(kb, t.product, t.version, "--to") for t in given}
    for raw in to:
        for t in _one_to(kb, state, raw):
            merged[t.product] = t
    return [merged[p] for p in sorted(merged)]


def _one_to(kb: KnowledgeBase, state: State, raw: str) -> list[Target]:
    text = raw.strip()
    if text == "latest":
        return _latest_targets(kb, state)
    if "=" not in text:
        releases.check_version(text, "--to")
        return [_release_target(kb, _bare_product(kb, state, text), text, "--to")]
    product, _, version = text.partition("=")
    product, version = product.strip(), version.strip()
    releases.require_product(kb, product)
    if not version:
        raise errors.BadInput(f"--to {raw!r} has no version", hint="use --to PRODUCT=VERSION")
    if version == "latest":
        latest = releases.latest(kb, product)
        if latest is None:
            raise errors.BadInput(f"--to {raw!r}: {product} has no released version")
        return [Target(product, latest)]
    releases.check_version(version, "--to")
    return [_release_target(kb, product, version, "--to")]


def _release_target(kb: KnowledgeBase, product: str, text: str, flag: str) -> Target:
    """The release ``text`` names, refused when it is withdrawn or not released."""
    releases.require_product(kb, product)
    rel = releases.find(kb, product, text)
    if rel is not None and rel.version == NEXT:
        known = releases.known_versions(kb, product)
        raise errors.UnknownName(f"release of {product}", text, known)
    if rel is None:
        if text == NEXT:
            parse_version(text)  # 'next' of a product without one: not a version (raises)
        raise errors.UnknownName(
            f"{product} release ({flag})", text, releases.nearest(kb, product, text)
        )
    if rel.withdrawn is not None:
        known = releases.known_versions(kb, product)
        raise errors.BadInput(
            f"{rel.key} was withdrawn ({rel.withdrawn.date}: {rel.withdrawn.reason})",
            hint=f"pick another release: {', '.join(known[-3:])}",
        )
    return Target(product, rel.version)


def _bom_components(kb: KnowledgeBase, state: State) -> set[str]:
    """Products that installed products publish in their BOM (they move in lockstep)."""
    out: set[str] = set()
    for product in kb.products:
        if state.installed(product) is None:
            continue
        for rel in kb.releases.get(product, ()):
            out.update(rel.bom)
    return out


def _bare_product(kb: KnowledgeBase, state: State, text: str) -> str:
    """The one product a bare ``--to VERSION`` names (installed, not a BOM component)."""
    wanted = Version.parse(text)
    having: list[tuple[str, str]] = []
    for product, rels in sorted(kb.releases.items()):
        for rel in rels:
            if rel.version != NEXT and Version.parse(rel.version) == wanted:
                having.append((product, rel.version))
                break
    if len(having) == 1:
        return having[0][0]
    if len(having) > 1:
        installed = [(p, v) for p, v in having if state.installed(p) is not None]
        bom = _bom_components(kb, state)
        chosen = [p for p, _v in installed if p not in bom]
        if len(chosen) == 1:
            return chosen[0]
        names = ", ".join(f"{p}={v}" for p, v in having)
        raise errors.BadInput(
            f"--to {text!r} is a release of several products: {names}",
            hint="name one with --to PRODUCT=VERSION",
        )
    known = sorted({r.version for rels in kb.releases.values() for r in rels if r.version != NEXT})
    raise errors.UnknownName("release (--to)", text, known)


def _latest_targets(kb: KnowledgeBase, state: State) -> list[Target]:
    bom = _bom_components(kb, state)
    out: list[Target] = []
    for product, spec in sorted(kb.products.items()):
        if spec.kind not in ("chart", "agent") or product in bom:
            continue
        if state.installed(product) is None:
            continue
        latest = releases.latest(kb, product)
        if latest is not None:
            out.append(Target(product, latest))
    if not out:
        raise errors.BadInput(
            "--to latest: no installed product to upgrade is known",
            hint="state one with --installed PRODUCT=VERSION",
        )
    return out


def check_resolved(kb: KnowledgeBase, targets: Sequence[Target]) -> None:
    """Refuse targets that :func:`resolve_targets` did not give (a caller's mistake)."""
    for t in targets:
        if not any(r.version == t.version for r in releases.planned(kb, t.product)):
            raise ValueError(
                f"target {t.product}={t.version} is not a resolved release; "
                "pass targets through planner.resolve_targets first"
            )


def current_version(state: State, product: str) -> str:
    installed = state.installed(product)
    key = f"installed.{product}"
    why = next((w for p, w in state.unreadable.items() if covers(p, key)), "")
    if installed is None and why:  # what runs was there to read and could not be read
        raise errors.Unread(
            f"the installed version of {product} could not be read ({why})",
            hint=f"state it with --installed {product}=VERSION",
        )
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
