"""Collecting GitOps facts: priorities between files, what was not read, pins Flux refuses.

Several files may state the same fact (a base and its overlay, a values file and the
Deployment rendered from it). Each statement has a priority; the higher wins and, on a tie,
the file read later (kustomize's order). A value post-build substitution leaves unknown
(``${var}`` nobody sets in the files) stays unknown, with the reason; a pin that is text after
it (``$${var}``, Flux's escape) is no version; a pin Flux would refuse is bad input at its line.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct, field

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
SUBSTITUTION_FAILS = "post-build substitution fails"
MAY_FAIL = "post-build substitution may fail"
# a Flux Kustomization whose build needs a file source-controller leaves out of the artifact
NOT_IN_ARTIFACT = "not in the source artifact"
SECRET = "secret data not read"
NOT_A_VERSION = "not a version"
# data of a ConfigMap no HelmRelease reads, refused by the YAML loader: no chart's values
NOT_VALUES = "not values"


class Unread(Struct):
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
        # post-build substitution: expression -> why its value is unknown / why it is text
        self.unresolved: dict[str, str] = {}
        self.literal: dict[str, str] = {}
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
        if isinstance(value, str) and "$" in value and self._substituted(key, value, source):
            return
        if key.startswith("pin.") and isinstance(value, str):
            check_constraint(value, source, key[len("pin.") :])
        self._facts[key] = (prio, Fact(key, value, source))

    def _substituted(self, key: str, value: str, source: Source) -> bool:
        """Whether ``value`` is left to post-build substitution (recorded unknown) or is a
        pin that is text Flux applies as written (recorded: not a version)."""
        unknown = [e for e in self.unresolved if e in value]
        if not unknown and "${" not in value:
            return False
        if unknown:
            why = "; ".join(self.unresolved[e] for e in unknown)
            detail = f"{value!r} is not known after Flux's post-build substitution ({why})"
        elif any(e in value for e in self.literal):
            if not key.startswith("pin."):
                return False  # a text like any other
            why = "; ".join(self.literal[e] for e in self.literal if e in value)
            self.not_a_version(key[len("pin.") :], source, f"{value!r} is no version ({why})")
            return True
        else:  # no Kustomization of these files substitutes it: one elsewhere may
            detail = (
                f"{value!r} may be filled in by the post-build substitution of a Flux "
                "Kustomization these files do not hold"
            )
        rec = Unreadable(
            ", ".join(unknown) or value,
            UNRESOLVED,
            kind="fact",
            location=str(source),
            detail=detail,
            keys=(key,),
            at=source.file_line,
        )
        self.unread.add(key, f"{source}: {detail}; state the value with --fact {key}=VALUE", rec)
        return True

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
        if "$" in tag and self._substituted(f"pin.{pid}", tag, where):
            return
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
        hint = 'write an exact version ("4.7.18") or a range (">=4.7.0 <5.0.0")'
        if re.search(r"\$[A-Za-z_]", text):
            hint = "Flux's post-build substitution fills in ${VAR} only, never $VAR: " + hint
        raise BadInput(
            f"the pin {text!r} of {product} is not a version constraint: {reason}",
            location=str(where),
            hint=hint,
        ) from None


def image_repo(image: Any) -> str | None:
    """The repository of an image reference (the parsing every reader shares)."""
    return image_repository(image) if isinstance(image, str) else None


def image_tag(image: Any) -> str | None:
    """The tag of an image reference, also before a digest (None without a tag)."""
    return (tag_of(image) or None) if isinstance(image, str) else None
