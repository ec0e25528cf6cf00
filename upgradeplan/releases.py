"""Release queries over the knowledge: released, latest, nearest, what a pin selects.

Each question about "which release" is answered here once, so the planner, the GitOps gate,
the condition predicates and the facade agree. Pure functions over model objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from msgspec.structs import replace

from upgradeplan import errors
from upgradeplan.model import NEXT, KnowledgeBase, Product, Release, State, Target
from upgradeplan.versions import Version, parse_constraint, parse_version, select, sort_versions


def require_product(kb: KnowledgeBase, product: str) -> Product:
    """The product ``product``; errors.UnknownName with the known ones otherwise."""
    found = kb.products.get(product)
    if found is None:
        raise errors.UnknownName("product", product, sorted(kb.products))
    return found


def check_version(text: str, flag: str) -> None:
    """Raise errors.InvalidVersion naming ``flag`` when ``text`` is not a chart version."""

    if text == NEXT:
        return
    try:
        Version.parse(text)
    except errors.InvalidVersion as exc:
        raise errors.InvalidVersion(text, exc.reason, where=flag) from None


def planned(kb: KnowledgeBase, product: str) -> list[Release]:
    """Released, non-withdrawn releases of ``product``, ascending by version."""

    rels = [r for r in kb.releases.get(product, ()) if r.version != NEXT and r.withdrawn is None]
    return sorted(rels, key=lambda r: parse_version(r.version))


def known_versions(kb: KnowledgeBase, product: str) -> list[str]:
    """The versions of :func:`planned`, oldest first."""
    return [r.version for r in planned(kb, product)]


def latest(kb: KnowledgeBase, product: str) -> str | None:
    """The newest released, non-withdrawn version of ``product``; None when it has none."""
    rels = planned(kb, product)
    return rels[-1].version if rels else None


def find(kb: KnowledgeBase, product: str, text: str) -> Release | None:
    """The release of ``product`` that ``text`` names (its spelling, else an equal version).

    Withdrawn and unreleased releases are found too: what to do with them is the caller's
    question. An unparsable ``text`` finds only a release spelled exactly so.
    """

    rels = kb.releases.get(product, ())
    for rel in rels:
        if rel.version == text:
            return rel
    try:
        wanted = Version.parse(text)
    except errors.InvalidVersion:
        return None
    for rel in rels:
        if rel.version != NEXT and Version.parse(rel.version) == wanted:
            return rel
    return None


def nearest(kb: KnowledgeBase, product: str, text: str, n: int = 3) -> list[str]:
    """The known releases next to ``text`` in version order (below first, then above)."""

    known = sort_versions(r.version for r in kb.releases.get(product, ()) if r.version != NEXT)
    try:
        wanted = Version.parse(text)
    except errors.InvalidVersion:
        return known[-n:]
    below = [v for v in known if Version.parse(v) < wanted]
    above = [v for v in known if Version.parse(v) > wanted]
    out: list[str] = []
    while len(out) < n and (below or above):
        if below:
            out.append(below.pop())
        if above and len(out) < n:
            out.append(above.pop(0))
    return out


def may_hop(release: Release, from_version: str) -> bool:
    """May ``from_version`` upgrade straight to ``release`` (its ``upgrade_from``)?"""
    if release.upgrade_from is None:
        return True

    return parse_constraint(release.upgrade_from).check(from_version)


def selects(kb: KnowledgeBase, product: str, pin: str) -> str | None:
    """The version a pin selects, the way Flux resolves it against the knowledge's releases.

    An exact pin selects the version it names (the knowledge's spelling when it knows the
    release, withdrawn or not); a range selects the highest released, non-withdrawn release it
    allows (an exact string match first), None when it allows none. An invalid pin raises
    errors.InvalidConstraint.
    """

    exact = parse_constraint(pin or "*").exact_version
    if exact is not None:
        rel = find(kb, product, str(exact))
        return rel.version if rel is not None else str(exact)
    return select(pin, known_versions(kb, product), flavour="flux")


NEWER = "newer than the knowledge"  # Release.inferred["version"] of a release it does not list


def newer_than_known(kb: KnowledgeBase, product: str, text: str) -> bool:
    """Whether ``text`` is an exact version of a chart or agent product the knowledge knows,
    newer than every release it lists (pre-releases included: ``0.11.0-gs.6`` is a release);
    for a pack's product (its releases generated from the chart's index, so complete when the
    pack was made) it is enough to be newer than the releases it lists of the same
    ``major.minor`` line, the stable ones for a stable version: a patch of a maintained older
    line released after (cilium 1.20.1 beside a listed 1.21.0-pre.0). A release
    the knowledge lists, a version below or between what it lists (hand-written knowledge
    lists some releases only, so 4.8.2 beside 4.8.1 and 4.9.1 may be a typo), and a malformed
    version are not."""
    found = kb.products.get(product)
    if found is None or found.kind not in ("chart", "agent") or text == NEXT:
        return False
    try:
        wanted = Version.parse(text)
    except errors.InvalidVersion:
        return False
    listed = [Version.parse(r.version) for r in kb.releases.get(product, ()) if r.version != NEXT]
    if not listed or any(v == wanted for v in listed):
        return False
    if _of_pack(kb, product):  # the stable releases of its line, when the index has any
        line = [
            v
            for v in listed
            if (v.major, v.minor) == (wanted.major, wanted.minor)
            and (wanted.prerelease or not v.prerelease)
        ]
        if line:
            return all(wanted > v for v in line)
    return all(wanted > v for v in listed)


def _of_pack(kb: KnowledgeBase, product: str) -> bool:
    """Whether a pack defines ``product``: a directory the knowledge was loaded from holds
    ``pack.yaml`` and ``products/PRODUCT.yaml``."""
    from pathlib import Path

    return any(
        (Path(root) / "pack.yaml").is_file()
        and (Path(root) / "products" / f"{product}.yaml").is_file()
        for root in kb.roots
    )


def with_newer(kb: KnowledgeBase, versions: Iterable[tuple[str, str]]) -> KnowledgeBase:
    """``kb`` with a bare release for each (product, version) newer than every release it
    lists (:func:`newer_than_known`): what came out after the knowledge (or a pack) was
    written. Nothing is known of it, so its product's ``reviewed_through`` (its newest listed
    release when it states none) makes the verdict "no known hazards", never "safe"
    (planner.judge.beyond_review). ``kb`` itself when there is none."""
    added: dict[str, list[str]] = {}
    for product, version in versions:
        if newer_than_known(kb, product, version) and version not in added.get(product, []):
            added.setdefault(product, []).append(version)
    if not added:
        return kb
    releases = dict(kb.releases)
    products = dict(kb.products)
    for product, extra in added.items():
        nxt = [r for r in releases[product] if r.version == NEXT]
        through = products[product].reviewed_through or (latest(kb, product) or "")
        products[product] = replace(products[product], reviewed_through=through)
        rels = [r for r in releases[product] if r.version != NEXT]
        for version in extra:
            rels.append(
                Release(
                    product=product,
                    version=version,
                    title=f"{product} {version}: {NEWER}",
                    summary=f"Not in the knowledge (reviewed through {through}).",
                    inferred={"version": NEWER},
                )
            )
        rels.sort(key=lambda r: parse_version(r.version))
        releases[product] = (*rels, *nxt)
    return replace(kb, products=products, releases=releases)


def with_newer_of(
    kb: KnowledgeBase,
    state: State,
    to: Sequence[str] = (),
    targets: Sequence[Target] = (),
) -> KnowledgeBase:
    """``kb`` with a bare release (:func:`with_newer`) for each version newer than the
    knowledge that the state runs or pins exactly, a ``--to PRODUCT=VERSION`` names, or a
    target asks for: a pin bumped past the knowledge is judged, not refused."""
    wanted: list[tuple[str, str]] = [(t.product, t.version) for t in targets]
    for raw in to:
        product, sep, version = raw.strip().partition("=")
        if sep:
            wanted.append((product.strip(), version.strip()))
    for product in kb.products:
        installed = state.installed(product)
        if isinstance(installed, str):
            wanted.append((product, installed))
        pin = state.pin(product)
        if pin is not None and isinstance(pin.value, str):
            try:
                exact = parse_constraint(pin.value).exact_version
            except errors.InvalidConstraint:
                exact = None
            if exact is not None:
                wanted.append((product, pin.value.strip().lstrip("=").strip()))
    return with_newer(kb, wanted)


__all__ = [
    "check_version",
    "find",
    "known_versions",
    "latest",
    "may_hop",
    "nearest",
    "newer_than_known",
    "planned",
    "require_product",
    "selects",
    "with_newer",
    "with_newer_of",
]
