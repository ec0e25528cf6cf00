"""What an unreadable resource type leaves unknown beyond its own facts.

A HelmRelease list says what each chart runs (``status.history``) and what it sets
(``spec.values``); a Deployment list says what each agent runs (its image tag). When such a
list cannot be read, the installed versions it would have given are unknown too: an exact
pin then still derives one (Flux installs what it names), but a verdict resting on it
rests on a guess, and the outputs say so. The records of the list are widened here with
those keys, for the products the knowledge recognises through that kind.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, MutableMapping

from msgspec.structs import replace

from upgradeplan.model import KnowledgeBase, Product
from upgradeplan.unreadable import NOT_SERVED, Unreadable

# the key a resource type's record names -> what it also leaves unknown, per product
_HELMRELEASE, _WORKLOAD, _PIN = "helmrelease", "workload", "pin"


def _by_helmrelease(p: Product) -> bool:
    return bool(p.recognise.helmrelease or p.recognise.chart)


def _by_deployment(p: Product) -> bool:
    return bool(p.recognise.deployment_labels or p.recognise.image)


def lost_keys(kb: KnowledgeBase, rec: Unreadable, read: Collection[str]) -> tuple[str, ...]:
    """The keys ``rec`` leaves unknown besides its own: installed versions (unless another
    object gave them, ``read``) and, for HelmReleases, each product's values."""
    extra: list[str] = []
    products = [kb.products[k] for k in sorted(kb.products)]
    if _HELMRELEASE in rec.keys:
        for p in filter(_by_helmrelease, products):
            extra += [f"installed.{p.id}", f"values.{p.id}"]
    if _WORKLOAD in rec.keys:
        extra += [f"installed.{p.id}" for p in filter(_by_deployment, products)]
    return tuple(k for k in dict.fromkeys(extra) if k not in read and k not in rec.keys)


def pins_left(kb: KnowledgeBase, read: Collection[str]) -> tuple[str, ...]:
    """``pin.<product>`` of each product a Flux source could pin that no other object pinned:
    a failed OCIRepository or HelmChart list leaves only those unknown, not the pins read."""
    products = [kb.products[k] for k in sorted(kb.products)]
    return tuple(
        f"pin.{p.id}" for p in filter(_by_helmrelease, products) if f"pin.{p.id}" not in read
    )


def widen(
    kb: KnowledgeBase,
    unread: Iterable[Unreadable],
    index: MutableMapping[str, str],
    read: Collection[str],
) -> tuple[Unreadable, ...]:
    """``unread`` with each record's lost keys added (and indexed, first reason kept), and a
    source list's ``pin`` narrowed to the pins no other object gave."""
    out: list[Unreadable] = []
    for rec in unread:
        if _PIN in rec.keys:
            index.pop(_PIN, None)
            narrowed = tuple(k for k in rec.keys if k != _PIN) + pins_left(kb, read)
            rec = replace(rec, keys=narrowed)
            for key in narrowed:
                index.setdefault(key, str(rec))
        # an API the cluster does not serve holds no object: nothing more is unknown
        extra = lost_keys(kb, rec, read) if rec.cause != NOT_SERVED else ()
        if extra:
            rec = replace(rec, keys=(*rec.keys, *extra))
            for key in extra:
                index.setdefault(key, str(rec))
        out.append(rec)
    return tuple(out)


__all__ = ["lost_keys", "pins_left", "widen"]
