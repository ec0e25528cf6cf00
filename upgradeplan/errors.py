"""Exceptions that carry data and a remedy, and the exit-code table.

The core raises these; one boundary in :mod:`upgradeplan.cli` turns them into a one-line
message on stderr and an exit code. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum


class ExitCode(IntEnum):
    """The CI contract (docs/exit-codes.md)."""

    SAFE = 0
    ERROR = 1
    USAGE = 2
    HAZARD = 3
    UNDETERMINED = 4


class UpgradeplanError(Exception):
    """Base class. ``str(err)`` is the one-line message shown to the user."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str, *, hint: str = "") -> None:
        self.message = message
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        if self.hint:
            return f"{self.message}; {self.hint}"
        return self.message


class InvalidVersion(UpgradeplanError, ValueError):
    """A version string that Helm/Flux would not accept."""

    def __init__(self, text: str, reason: str, *, where: str = "") -> None:
        self.text = text
        self.reason = reason
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}invalid version {text!r}: {reason}")


class InvalidConstraint(UpgradeplanError, ValueError):
    """A version constraint that Masterminds semver (Helm/Flux) would reject."""

    def __init__(self, text: str, reason: str, *, where: str = "") -> None:
        self.text = text
        self.reason = reason
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}invalid version constraint {text!r}: {reason}")


class BadInput(UpgradeplanError):
    """A malformed file, flag or value. ``location`` is ``file:line`` when there is one."""

    def __init__(self, message: str, *, location: str = "", hint: str = "") -> None:
        self.location = location
        prefix = f"{location}: " if location else ""
        super().__init__(f"{prefix}{message}", hint=hint)


class Unread(BadInput):
    """A fact the judgement cannot do without was not read: its source answered 403, timed
    out, did not parse. Not the user's mistake: exit 4 (undetermined), naming the cause."""

    exit_code = ExitCode.UNDETERMINED


class UnknownName(UpgradeplanError):
    """An unknown product, release, hazard or migration, with the nearest known names."""

    def __init__(self, what: str, name: str, known: Sequence[str], *, nearest: int = 3) -> None:
        import difflib

        self.what = what
        self.name = name
        self.known = list(known)
        close = difflib.get_close_matches(name, self.known, n=nearest, cutoff=0.0)
        self.suggestions = close
        hint = f"known: {', '.join(close)}" if close else "none are known"
        super().__init__(f"unknown {what} {name!r}", hint=hint)


class KnowledgeError(UpgradeplanError):
    """The knowledge base has problems; ``problems`` holds every one of them."""

    def __init__(self, problems: Sequence[object]) -> None:
        self.problems = list(problems)
        first = str(self.problems[0]) if self.problems else "unknown problem"
        more = (
            f" (and {len(self.problems) - 1} more; run 'upgradeplan kb lint')"
            if len(self.problems) > 1
            else ""
        )
        super().__init__(f"knowledge base: {first}{more}")


class ClusterUnreachable(UpgradeplanError):
    """No context of the cluster could be read at all."""

    exit_code = ExitCode.ERROR


class MissingExtra(UpgradeplanError):
    """A feature needs an optional extra that is not installed: ``pip install 'upgradeplan[X]'``."""

    def __init__(self, message: str, *, extra: str) -> None:
        self.extra = extra
        super().__init__(message, hint=f"install it with: pip install 'upgradeplan[{extra}]'")
