"""What could not be read: one typed record per source a reader failed on.

Every reader records each source it could not read (a resource type of a cluster, a file, a
whole context) as an :class:`Unreadable` with its cause: an HTTP status, a timeout, a parse
error with ``file:line``. The facts it would have supplied are unknown (``keys``: fact-key
prefixes), so the findings depending on them "may apply" and never count as "safe"; every
output names the records (text, the ``unreadable`` field of JSON/YAML, SARIF tool
notifications, the GitHub summary).

``State.unreadable`` (fact-key prefix -> one line) is the index conditions and merges use;
``State.unread`` holds the records. :func:`records` gives both as records, so a reader that
only fills the index is still named.

Usage by a reader::

    rec = Unreadable("apps/bom.yaml", "parse error", kind="file", location="apps/bom.yaml:7",
                     detail="mapping values are not allowed here", keys=("pin.agent-platform",))
    note(index, recs, rec)          # index[key] = str(rec) for each key; recs.append(rec)

Nothing here reads, prints or imports the rest of the package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import Any, Literal

from msgspec import Struct
from msgspec.structs import astuple

Kind = Literal["resource", "file", "context", "fact"]
KINDS: tuple[Kind, ...] = ("resource", "file", "context", "fact")

# causes, as written in outputs (a status code is written as "403 Forbidden" and so on)
TIMEOUT = "timeout"
PARSE_ERROR = "parse error"
NOT_SERVED = "not served"
CUT_OFF = "cut off"
TOO_LARGE = "too large"
UNREACHABLE = "unreachable"


class Unreadable(Struct, frozen=True):
    """One source that could not be read, and why."""

    source: str  # "harnesses.kagent.dev", "/version", "apps/bom.yaml", "context prod"
    cause: str  # "403 Forbidden", "timeout", "parse error", "not served", ...
    kind: Kind = "resource"
    status: int = 0  # the HTTP status when there was one
    location: str = ""  # "file:line" of a parse error
    context: str = ""  # the kubeconfig context, for cluster sources
    detail: str = ""  # the server's or parser's message (already redacted)
    keys: tuple[str, ...] = ()  # fact-key prefixes left unknown
    # (file, line) of ``location`` where the reader had it typed (a fact's Source): outputs
    # locate the record by it without reading the text; not serialised (``location`` is)
    at: tuple[str, int] | None = None  # not compared (equal records from different readers)

    def _compared(self) -> tuple[Any, ...]:
        return astuple(self)[:-1]  # every field but ``at``

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    def __str__(self) -> str:
        where = f" in context {self.context}" if self.context else ""
        at = f" at {self.location}" if self.location and self.location != self.source else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.source}{where}{at}: {self.cause}{detail}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "kind": self.kind, "cause": self.cause}
        if self.status:
            out["status"] = self.status
        if self.location:
            out["location"] = self.location
        if self.context:
            out["context"] = self.context
        if self.detail:
            out["detail"] = self.detail
        out["unknown"] = list(self.keys)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Unreadable:
        kind = str(data.get("kind") or "resource")
        status = data.get("status") or 0
        keys = data.get("unknown") or ()
        return cls(
            source=str(data.get("source") or ""),
            cause=str(data.get("cause") or ""),
            kind=kind if kind in KINDS else "resource",
            status=status if isinstance(status, int) and not isinstance(status, bool) else 0,
            location=str(data.get("location") or ""),
            context=str(data.get("context") or ""),
            detail=str(data.get("detail") or ""),
            keys=tuple(str(k) for k in keys) if isinstance(keys, (list, tuple)) else (),
        )


def status_cause(status: int) -> str:
    """``403 Forbidden``, ``401 Unauthorized``, ... for an HTTP status."""
    from http import HTTPStatus

    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def covers(prefix: str, key: str) -> bool:
    """Whether the fact ``key`` lies under the unknown ``prefix``."""
    return key == prefix or key.startswith(prefix + ".")


def note(index: MutableMapping[str, str], recs: list[Unreadable], rec: Unreadable) -> Unreadable:
    """Record ``rec``: its keys into the prefix index (first reason kept), itself into recs."""
    for key in rec.keys:
        index.setdefault(key, str(rec))
    if rec not in recs:
        recs.append(rec)
    return rec


def records(unread: Iterable[Unreadable], index: Mapping[str, str]) -> list[Unreadable]:
    """The records, plus one per indexed prefix no record covers (readers that give text)."""
    out = list(dict.fromkeys(unread))
    named = {k for rec in out for k in rec.keys}
    for key in sorted(index):
        if key not in named:
            out.append(_from_text(key, index[key]))
    return out


def _from_text(key: str, why: str) -> Unreadable:
    if key.startswith("file "):
        source, _, detail = key[5:], "", why
        return Unreadable(source, PARSE_ERROR, kind="file", detail=detail, keys=(key,))
    return Unreadable(key, "could not be read", kind="fact", detail=why, keys=(key,))


def depending(recs: Iterable[Unreadable], missing: Iterable[str]) -> list[Unreadable]:
    """The records whose unknown keys cover one of the ``missing`` fact keys."""
    wanted = list(missing)
    return [r for r in recs if any(covers(p, k) for p in r.keys for k in wanted)]


def failures(recs: Iterable[Unreadable]) -> list[Unreadable]:
    """The records of reads that failed (an API the cluster does not serve is no failure)."""
    return [r for r in recs if r.cause != NOT_SERVED]


def kept(recs: Iterable[Unreadable], known: Iterable[str]) -> tuple[Unreadable, ...]:
    """The records still meaning something once the facts ``known`` are supplied elsewhere
    (a record is dropped when every key it names is itself a known fact)."""
    have = set(known)
    return tuple(r for r in dict.fromkeys(recs) if not r.keys or any(k not in have for k in r.keys))


def told(notes: Sequence[str], recs: Iterable[Unreadable]) -> tuple[str, ...]:
    """``notes`` and a "could not be read" line per record they do not already name."""
    said = " ".join(notes)
    return (*notes, *(f"could not be read: {r}" for r in recs if r.source not in said))
