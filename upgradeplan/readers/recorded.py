"""What a state file read, and what it only records: an earlier version's file never turns
what could not be read into a reading (docs/state-format.md, "Sources").

A state document records its facts and what could not be read. On reading it:

- A file written before the readers named what a failed list leaves unknown records only the
  list (``unreadable: {helmrelease: …}``). Its records are widened the way the cluster reader
  widens them now (:mod:`upgradeplan.readers.kube.unknowns`): a HelmRelease list leaves the
  installed versions and values of the products it recognises unknown, a Deployment list
  their installed versions, unless another object of the file gave them; a Flux source list
  leaves unknown only the pins no other object gave.
- An installed version derived from an exact pin is no reading: typed
  (``from: {kind: derived}``), or a source recorded as text only that is exactly what the
  writer prints for the file's own pin (``derived: exact pin (<the pin's source>)``, compared
  whole: nothing is read out of the text). Where the file records it as unreadable it is
  dropped and derived again after merging, from the exact pin the merged inputs hold (a
  later input's pin, not the file's stale one); the record stays (the verdict says the
  version rests on a guess). Elsewhere it is taken back as the typed derived source.
- Any other installed version with a text-only source that the file also records as
  unreadable cannot say where it was read: it is dropped (unknown, or derived again from an
  exact pin) and named as what could not be read: "source recorded as text by an earlier
  version", take the snapshot again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, MutableMapping

from upgradeplan import provenance
from upgradeplan.model import Fact, KnowledgeBase
from upgradeplan.readers.kube import unknowns
from upgradeplan.unreadable import Unreadable, covers

TEXT_ONLY = "source recorded as text by an earlier version"
EARLIER = "recorded as unreadable by an earlier version"  # a list the file names, no record
# the keys of the lists whose failure leaves more unknown (readers.kube.unknowns)
_LISTS = frozenset({"helmrelease", "workload", "pin"})
_INSTALLED = "installed."


def as_read(
    facts: dict[str, Fact],
    index: MutableMapping[str, str],
    unread: tuple[Unreadable, ...],
    label: str,
    kb: Callable[[], KnowledgeBase],
) -> tuple[dict[str, Fact], tuple[Unreadable, ...]]:
    """The facts of a state document that are readings, and its records; ``index`` (its
    ``unreadable``) is widened in place. ``kb`` is called only when a list must be widened."""
    installed = [k for k in facts if k.startswith(_INSTALLED)]  # only these can be derived
    derived = {k for k in installed if _derived(k, facts[k], facts)}
    if _LISTS & {*index, *(k for r in unread for k in r.keys)}:
        unread = _widened(kb(), index, unread, [k for k in facts if k not in derived])
    out = facts
    told: list[Unreadable] = []
    for key in installed:
        fact = facts[key]
        if not any(covers(p, key) for p in index):
            if key in derived and fact.source.kind == "text":
                out = out if out is not facts else dict(facts)
                out[key] = _typed(fact, facts)
            continue
        if key not in derived and fact.source.kind != "text":
            continue  # typed where it was read (a person wrote it so): kept
        out = out if out is not facts else dict(facts)
        del out[key]  # derived again from the merged pin, or unknown
        if key not in derived:
            rec = Unreadable(
                key, TEXT_ONLY, kind="fact", location=label, keys=(key,),
                detail=f"the file records {fact.value} as read and also as unreadable; "
                "take the snapshot again",
            )  # fmt: skip
            index.setdefault(key, str(rec))
            told.append(rec)
    return out, (*unread, *told)


def _derived(key: str, fact: Fact, facts: dict[str, Fact]) -> bool:
    """Whether ``fact`` is an installed version derived from the file's exact pin."""
    if not key.startswith(_INSTALLED):
        return False
    if fact.source.kind == "derived":
        return True
    pin = facts.get("pin." + key[len(_INSTALLED) :])
    if fact.source.kind != "text" or pin is None:
        return False
    return fact.source == provenance.text(str(provenance.derived_from_pin(pin.source)))


def _typed(fact: Fact, facts: dict[str, Fact]) -> Fact:
    if fact.source.kind == "derived":
        return fact
    pin = facts["pin." + fact.key[len(_INSTALLED) :]]
    return Fact(fact.key, fact.value, provenance.derived_from_pin(pin.source))


def _widened(
    kb: KnowledgeBase,
    index: MutableMapping[str, str],
    unread: tuple[Unreadable, ...],
    read: Collection[str],
) -> tuple[Unreadable, ...]:
    """The records widened as the cluster reader widens them now, and the index entries no
    record names (a file written before records existed) widened with the same reason."""

    recs = list(unknowns.widen(kb, unread, index, read))
    named = {k for r in recs for k in r.keys}
    for key, why in list(index.items()):
        if key in named or key not in _LISTS:
            continue
        said = Unreadable(key, EARLIER, kind="fact", detail=why, keys=(key,))
        (wide,) = unknowns.widen(kb, [said], {}, read)
        if key not in wide.keys:  # a Flux source list: only the pins no other object gave
            del index[key]
        for extra in wide.keys:
            index.setdefault(extra, why)
        recs.append(wide)
    return tuple(recs)


__all__ = ["EARLIER", "TEXT_ONLY", "as_read"]
