"""What the knowledge checks share: the loaded documents, locations, parsed versions.

A check reports at the line of the field it judges; :data:`Where` lets it pass a function that
computes that location, so line numbers are looked up only for problems actually found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from upgradeplan.kb.documents import Document, Loaded
from upgradeplan.kb.problems import Problem, problem
from upgradeplan.model import NEXT, Condition, Hazard, KnowledgeBase, Location, Release
from upgradeplan.versions import parse_constraint, parse_version

HOP_VARIABLES = ("$from", "$to")
REFERENCE = re.compile(
    r"^(?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+|https?://\S+|doc:[a-z0-9][a-z0-9._-]*)$"
)


class Ctx:
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


def resolve(where: Where) -> Location:
    return where if isinstance(where, Location) else where()


def version_problem(text: str, where: Where, what: str) -> Problem | None:
    try:
        parse_version(text)
    except ValueError as exc:
        return problem("KB008", resolve(where), f"{what}: {exc}")
    return None


def constraint(text: str, where: Where, what: str, out: list[Problem]) -> Any:
    try:
        return parse_constraint(text)
    except ValueError as exc:
        out.append(problem("KB009", resolve(where), f"{what}: {exc}"))
        return None


def walk_conditions(cond: Condition | None) -> Iterator[Condition]:
    """Every node of a condition tree, parents before their children."""
    if cond is None:
        return
    yield cond
    for child in cond.children:
        yield from walk_conditions(child)


def all_hazards(kb: KnowledgeBase) -> Iterable[Hazard]:
    return kb.hazards.values()


def all_releases(kb: KnowledgeBase) -> Iterable[Release]:
    for rels in kb.releases.values():
        yield from rels
