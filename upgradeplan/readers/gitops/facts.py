"""Collecting GitOps facts: priorities between files, what was not read, pins Flux refuses.

Several files may state the same fact (a base and its overlay, a values file and the
Deployment rendered from it). Each statement has a priority; the higher wins and, on a tie,
the file read later (kustomize's order). A value Flux fills in at apply time (post-build
substitution, ``${var}``) stays unknown, with the reason, and a pin Flux would refuse is bad
input at its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from upgradeplan import versions
from upgradeplan.errors import BadInput, UpgradeplanError
from upgradeplan.model import Fact, FactValue, KnowledgeBase
from upgradeplan.provenance import Source
from upgradeplan.readers.recognise import Recogniser, image_repository
from upgradeplan.readers.recognise import image_tag as tag_of
from upgradeplan.unreadable import Unreadable

# causes of what the GitOps reader could not read (besides unreadable.PARSE_ERROR)
NOT_FOUND = "not found"
OUTSIDE = "outside the tree"
REMOTE = "remote"
OTHER_SOURCE = "not this repository"
NOT_RENDERED = "rendered at apply time"
UNRESOLVED = "unresolved substitution"
SECRET = "secret data not read"
NOT_A_VERSION = "not a version"


@dataclass
class Unread:
    """What could not be read: the index by key (``State.unreadable``: key -> why) and one
    :class:`~upgradeplan.unreadable.Unreadable` record per source (``State.unread``)."""

    index: dict[str, str] = field(default_factory=dict)
    records: dict[str, Unreadable] = field(default_factory=dict)

    def add(self, key: str, why: str, rec: Unreadable | None, *, first: bool = False) -> None:
        """Record ``key`` (``first``: keep an earlier reason). ``rec`` None: a note only."""
        if first and key in self.index:
            return
        self.index[key] = why
        if rec is not None:
            self.records[key] = rec
        else:
            self.records.pop(key, None)

    def update(self, other: Unread) -> None:
        self.index.update(other.index)
        self.records.update(other.records)

    def __bool__(self) -> bool:
        return bool(self.index)

    def without(self, known: set[str] | dict[str, Any]) -> Unread:
        """The entries whose key is not a fact that was read after all."""
        keys = [k for k in self.index if k not in known]
        return Unread(
            {k: self.index[k] for k in keys},
            {k: self.records[k] for k in keys if k in self.records},
        )


# Priorities when two files state the same fact: the higher wins, later wins on a tie.
DEFAULT = 0  # a value taken from a chart default or the release namespace
LOW = 1  # an indirect statement (gitops.namespace for every component, a Deployment's image)
NORMAL = 2  # the value itself
HIGH = 3  # a HelmRelease's own chart version


class FactSink:
    """Facts with priorities, the keys left unknown (and why), the knowledge's recognisers."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._facts: dict[str, tuple[int, Fact]] = {}
        self.unread = Unread()
        self.unresolved: dict[str, str] = {}  # ${VAR} post-build substitution left -> why
        # the products' recognisers, shared with the cluster reader (readers/recognise)
        self.recogniser = Recogniser(kb)
        self.by_release = self.recogniser.by_release
        self.by_chart = self.recogniser.by_chart
        self.by_bom = self.recogniser.by_bom
        self.images = self.recogniser.images
        self.values_keys = self.recogniser.values_keys

    def add(self, key: str, value: FactValue, source: Source, prio: int = NORMAL) -> None:
        current = self._facts.get(key)
        if current is not None and prio < current[0]:
            return
        if isinstance(value, str) and "${" in value:
            # Flux post-build substitution fills it in at apply time: not in the files.
            names = [n for n in self.unresolved if "${" + n in value]
            why = "; ".join(f"${{{n}}}: {self.unresolved[n]}" for n in names)
            detail = f"{value!r} is filled in by Flux post-build substitution" + (
                f" ({why})" if why else ""
            )
            rec = Unreadable(
                ", ".join(f"${{{n}}}" for n in names) or value,
                UNRESOLVED,
                kind="fact",
                location=str(source),
                detail=detail,
                keys=(key,),
                at=source.file_line,
            )
            self.unread.add(
                key, f"{source}: {detail}; state the value with --fact {key}=VALUE", rec
            )
            return
        if key.startswith("pin.") and isinstance(value, str):
            check_constraint(value, source, key[len("pin.") :])
        self._facts[key] = (prio, Fact(key, value, source))

    def not_a_version(self, pid: str, where: Source, why: str, *, first: bool = True) -> None:
        """The pin of ``pid`` is written but is no version (a digest, a tag like latest)."""
        rec = Unreadable(
            f"pin.{pid}",
            NOT_A_VERSION,
            kind="fact",
            location=str(where),
            detail=why,
            keys=(f"pin.{pid}",),
            at=where.file_line,
        )
        self.unread.add(f"pin.{pid}", f"{where}: {why}", rec, first=first)

    def facts(self) -> dict[str, Fact]:
        return {k: self._facts[k][1] for k in sorted(self._facts)}

    def pin_from_tag(self, pid: str, tag: str, where: Source, prio: int) -> None:
        version = tag[1:] if tag[:1] in ("v", "V") and tag[1:2].isdigit() else tag
        try:
            versions.parse_version(version)
        except UpgradeplanError:
            self.not_a_version(pid, where, f"image tag {tag!r} is not a version")
            return
        self.add(f"pin.{pid}", version, where, prio)


def check_constraint(text: str, where: Source, product: str) -> None:
    """A pin Flux would refuse is bad input at its line."""
    try:
        versions.parse_constraint(text)
    except UpgradeplanError as exc:
        reason = getattr(exc, "reason", str(exc))
        raise BadInput(
            f"the pin {text!r} of {product} is not a version constraint: {reason}",
            location=str(where),
            hint='write an exact version ("4.7.18") or a range (">=4.7.0 <5.0.0")',
        ) from None


def image_repo(image: Any) -> str | None:
    """The repository of an image reference (the parsing every reader shares)."""
    return image_repository(image) if isinstance(image, str) else None


def image_tag(image: Any) -> str | None:
    """The tag of an image reference, also before a digest (None without a tag)."""
    return (tag_of(image) or None) if isinstance(image, str) else None
