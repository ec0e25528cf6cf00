"""Accepted risks: findings a team has looked at and decided to live with, for a while.

An acceptance names a hazard id and, optionally, where it applies (an installation or
context name, a product, a version range the hop's versions fall in); it carries why
(``reason``), who decided (``owner``) and until when (``expires``, a date). They come from a
file (``.upgradeplan.yaml``, found from the working directory upward, or ``--accept-file``)
and from ``--accept ID`` (for one run; the reason is the flag).

:func:`judge` applies them to one ``check`` result:

- a finding an acceptance matches is *accepted*: shown, but it no longer counts toward the
  verdict or the exit code;
- an acceptance past its expiry accepts nothing and is a finding of its own
  (:data:`EXPIRED_ID`, blocking, at the acceptance's ``file:line``), so the gate fails and
  names it until someone renews or removes it;
- an acceptance that matches no finding of any result is *stale* (:func:`stale`): reported,
  not failing.

An unknown hazard id, a missing field or a date that is not a date is bad input (exit 2)
naming the file and line.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import Struct
from msgspec.structs import replace

from upgradeplan import errors, versions
from upgradeplan.filekind import describe
from upgradeplan.kb.packs import find_config
from upgradeplan.model import COMPUTED_CHECKS, Finding, KnowledgeBase
from upgradeplan.provenance import Source, in_file
from upgradeplan.yamlload import LineDict, LineList, YamlError, line_of, load_lines

if TYPE_CHECKING:
    from pathlib import Path

EXPIRED_ID = "accepted-risk-expired"
REQUIRES_PREFIX = "requires:"  # requirement findings: requires:PRODUCT@VERSION

_FIELDS = ("hazard", "installation", "product", "versions", "reason", "owner", "expires")


class Acceptance(Struct, frozen=True):
    """One accepted risk."""

    hazard: str
    reason: str
    owner: str = ""
    expires: dt.date | None = None  # None: --accept (this run only)
    installation: str = ""  # a name or glob of the installation/context; "" = any
    product: str = ""  # "" = any
    versions: str = ""  # a version constraint the hop's from or to version satisfies
    source: str = ""  # file:line, or "--accept"
    at: Source | None = None  # the line of the accept file it is written at (typed)

    def expired(self, today: dt.date) -> bool:
        return self.expires is not None and today > self.expires

    @property
    def label(self) -> str:
        where = [w for w in (self.installation, self.product, self.versions) if w]
        scope = f" ({', '.join(where)})" if where else ""
        return f"{self.hazard}{scope}"

    def describe(self) -> str:
        """One line: what is accepted, why, by whom, until when, where it is written."""
        parts = [self.reason]
        if self.owner:
            parts.append(f"owner {self.owner}")
        if self.expires is not None:
            parts.append(f"until {self.expires.isoformat()}")
        if self.source and self.source != "--accept":
            parts.append(self.source)
        return "; ".join(p for p in parts if p)

    def matches(self, finding: Finding, installation: str) -> bool:
        if rule_id(finding.hazard) != rule_id(self.hazard) and finding.hazard != self.hazard:
            return False
        if self.product and finding.product != self.product:
            return False
        if self.installation and not _glob(installation, self.installation):
            return False
        if self.versions:
            hop = [v for v in (finding.from_version, finding.to_version) if v]
            if not any(versions.check(self.versions, v) for v in hop):
                return False
        return True


class Accepted(Struct, frozen=True):
    """A finding an acceptance matched (it does not count toward the verdict)."""

    finding: Finding
    acceptance: Acceptance


def _glob(name: str, pattern: str) -> bool:
    """fnmatch's case-sensitive match (imported when an acceptance names an installation)."""
    from fnmatch import fnmatchcase

    return fnmatchcase(name, pattern)


def rule_id(hazard: str) -> str:
    """The id that stays the same across targets: ``requires:P@V`` -> ``requires:P``."""
    if hazard.startswith(REQUIRES_PREFIX) and "@" in hazard:
        return hazard.rsplit("@", 1)[0]
    return hazard


# --------------------------------------------------------------------------- reading


def find_file(start: Path | None = None) -> Path | None:
    """``.upgradeplan.yaml`` in ``start`` (default: the working directory) or a parent
    (:func:`upgradeplan.kb.packs.find_config`); a check that finds none imports no pathlib."""
    found = find_config(None if start is None else os.fspath(start))
    if found is None:
        return None
    from pathlib import Path

    return Path(found)


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def load_file(path: Path, kb: KnowledgeBase) -> list[Acceptance]:
    """The acceptances of ``path`` (key ``accept``: a list); BadInput naming file:line."""

    shown = _display(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise errors.BadInput(
            f"accept file {shown} not found", hint="pass an existing file to --accept-file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise errors.BadInput(f"accept file {shown}: cannot read it ({exc})") from None
    try:
        root = load_lines(text, dates=True)
    except YamlError as exc:
        raise errors.BadInput(
            exc.message if exc.refused else f"not valid YAML: {exc.problem}",
            location=f"{shown}:{exc.line or 1}",
            hint=exc.hint,
        ) from None
    if root is None:
        return []
    if isinstance(root, LineDict) and "accept" not in root and "packs" in root:
        return []  # the file enables knowledge packs only (upgradeplan.kb.packs)
    if not isinstance(root, LineDict) or "accept" not in root:  # not an accept file
        raise errors.BadInput(
            f"not an accept file: it is {describe(root)}; expected a mapping with a list "
            "of acceptances under 'accept'",
            location=f"{shown}:{getattr(root, 'line', 1)}",
            hint="see docs/ci.md, or pass the right file to --accept-file ('' for none)",
        )
    entries = root["accept"]
    if entries is None:
        return []  # 'accept:' with nothing under it
    if not isinstance(entries, LineList):
        raise errors.BadInput(
            "'accept' must be a list of entries", location=f"{shown}:{line_of(root, ['accept'])}"
        )
    out: list[Acceptance] = []
    for data, line in zip(entries, entries.lines, strict=True):
        at = in_file(shown, line)
        out.append(replace(_entry(data, str(at), kb), at=at))
    return out


def _entry(data: Any, where: str, kb: KnowledgeBase) -> Acceptance:
    if not isinstance(data, Mapping):
        raise errors.BadInput(
            "an acceptance must be a mapping (hazard, reason, owner, expires, …)", location=where
        )
    unknown = sorted(str(k) for k in data if k not in _FIELDS)
    if unknown:
        raise errors.BadInput(
            f"unknown field {unknown[0]!r} in an acceptance",
            location=where,
            hint=f"the fields are {', '.join(_FIELDS)}",
        )
    for required in ("hazard", "reason", "owner", "expires"):
        if data.get(required) in (None, ""):
            raise errors.BadInput(
                f"the acceptance has no {required!r}",
                location=where,
                hint="every entry needs hazard, reason, owner and expires (YYYY-MM-DD)",
            )
    expires = data["expires"]
    if isinstance(expires, dt.datetime):
        expires = expires.date()
    if not isinstance(expires, dt.date):
        try:
            expires = dt.date.fromisoformat(str(expires))
        except ValueError:
            raise errors.BadInput(
                f"expires {data['expires']!r} is not a date", location=where, hint="use YYYY-MM-DD"
            ) from None
    hazard = str(data["hazard"])
    check_id(kb, hazard, where)
    product = str(data.get("product") or "")
    if product and product not in kb.products:
        raise errors.UnknownName(f"product ({where})", product, sorted(kb.products))
    versions_text = str(data.get("versions") or "")
    if versions_text:
        try:
            versions.parse_constraint(versions_text)
        except errors.InvalidConstraint as exc:
            raise errors.BadInput(exc.message, location=where) from None
    return Acceptance(
        hazard=hazard,
        reason=" ".join(str(data["reason"]).split()),
        owner=str(data["owner"]),
        expires=expires,
        installation=str(data.get("installation") or ""),
        product=product,
        versions=versions_text,
        source=where,
    )


def check_id(kb: KnowledgeBase, hazard: str, where: str) -> None:
    """UnknownName (exit 2) unless ``hazard`` is a hazard of the knowledge or a requirement."""
    if hazard in kb.hazards or hazard == EXPIRED_ID or hazard in COMPUTED_CHECKS:
        return
    if hazard.startswith(REQUIRES_PREFIX):
        product = hazard[len(REQUIRES_PREFIX) :].partition("@")[0]
        if product in kb.products:
            return
    known = sorted(kb.hazards)
    raise errors.UnknownName(f"hazard id ({where})", hazard, known)


def from_flags(kb: KnowledgeBase, ids: Sequence[str]) -> list[Acceptance]:
    """``--accept ID`` (repeatable): accepted for this run only."""
    out: list[Acceptance] = []
    for raw in ids:
        hazard = raw.strip()
        check_id(kb, hazard, "--accept")
        out.append(Acceptance(hazard=hazard, reason="accepted with --accept", source="--accept"))
    return out


def gather(
    kb: KnowledgeBase,
    accept_file: str | None,
    ids: Sequence[str],
    *,
    search_from: Path | None = None,
) -> list[Acceptance]:
    """The acceptances of a run: ``--accept-file`` (else ``.upgradeplan.yaml`` found from the
    working directory upward; ``--accept-file ''`` reads none), then ``--accept``."""
    out: list[Acceptance] = []
    if accept_file is None:
        found = find_file(search_from)
        if found is not None:
            out.extend(load_file(found, kb))
    elif accept_file:
        from pathlib import Path

        out.extend(load_file(Path(accept_file), kb))
    out.extend(from_flags(kb, ids))
    return out


# --------------------------------------------------------------------------- judging


def expired_finding(acc: Acceptance) -> Finding:
    """The finding an expired acceptance becomes: blocking, at the acceptance's line."""
    assert acc.expires is not None
    return Finding(
        hazard=EXPIRED_ID,
        title=f"the accepted risk {acc.label} expired on {acc.expires.isoformat()}",
        severity="blocking",
        scope="state",
        status="applies",
        product=acc.product or "",
        from_version=None,
        to_version=None,
        consequence=(
            f"The acceptance of {acc.hazard} ({acc.reason}; owner {acc.owner}) no longer "
            "holds, so the finding counts again."
        ),
        avoid=f"Fix what {acc.hazard} is about, or renew the acceptance with a new expiry date.",
        location=acc.at,
        reason=f"applies: {acc.source or 'the acceptance'} expired on {acc.expires.isoformat()}",
    )


def to_dict(acc: Acceptance) -> dict[str, Any]:
    out: dict[str, Any] = {"hazard": acc.hazard, "reason": acc.reason}
    for key in ("installation", "product", "versions", "owner"):
        value = getattr(acc, key)
        if value:
            out[key] = value
    out["expires"] = acc.expires.isoformat() if acc.expires is not None else None
    out["source"] = acc.source
    return out
