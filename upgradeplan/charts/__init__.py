"""Checks computed from the charts themselves: two chart archives compared, for any moved chart.

``check --gitops PATH --base REF`` hands every chart pin the change moves (from one exact
version to another) here: both archives are obtained (:mod:`upgradeplan.charts.fetch`: a
``--charts`` folder, else the HelmRepository or OCI registry the installation names, through
the user's network with a cache), read bounded (:mod:`upgradeplan.charts.archive`) and
compared (:mod:`upgradeplan.charts.checks`). When to run and what an archive that could not
be read does to the exit code: docs/exit-codes.md, "Checks computed from the charts".
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from msgspec import Struct
from msgspec.structs import replace

from upgradeplan import versions
from upgradeplan.charts.archive import BadArchive, read
from upgradeplan.charts.checks import Move, Read, findings
from upgradeplan.charts.fetch import Fetcher, NotRead, cache_dir, from_folder
from upgradeplan.errors import UpgradeplanError
from upgradeplan.model import Finding, State
from upgradeplan.planner.verdicts import verdict_of, worst
from upgradeplan.results import CheckResult, MovedPin, exit_of

Mode = Literal["auto", "require", "off"]
AUTO_TIMEOUT = 5.0  # seconds per request in the default mode
AUTO_DEADLINE = 20.0  # seconds for all the archives of one run in the default mode
REQUIRE_DEADLINE = 120.0


class Settings(Struct, frozen=True):
    """How the computed checks run (``check``'s ``--chart-checks``, ``--charts``)."""

    mode: Mode = "auto"
    folder: Path | None = None  # --charts DIR: archives only from here, no network
    timeout: float | None = None  # seconds per request (--request-timeout)

    @property
    def required(self) -> bool:
        """Asked for explicitly: an archive that cannot be read changes the exit code."""
        return self.mode == "require" or self.folder is not None


def judged(pin: MovedPin) -> bool:
    """Whether a moved pin gets the computed checks: from one exact version to another."""
    return bool(pin.before and pin.after and _exact(pin.before) and _exact(pin.after))


def computed(
    pins: Sequence[MovedPin],
    state: State,
    settings: Settings,
    environ: Mapping[str, str],
    fetcher: Fetcher | None = None,
) -> list[Finding]:
    """The computed findings of every moved pin that has two exact versions."""
    if settings.mode == "off":
        return []
    moves = [p for p in pins if judged(p)]
    if not moves:
        return []
    if fetcher is None:
        timeout = settings.timeout or (AUTO_TIMEOUT if not settings.required else 10.0)
        budget = REQUIRE_DEADLINE if settings.required else AUTO_DEADLINE
        fetcher = Fetcher(
            timeout=timeout,
            deadline=time.monotonic() + budget,
            cache=cache_dir(environ),
            environ=environ,
        )
    out: list[Finding] = []
    for pin in moves:
        assert pin.before is not None and pin.after is not None
        move = Move(
            chart=pin.chart,
            before=pin.before,
            after=pin.after,
            release=pin.release.rpartition("/")[2],
            values=pin.values,
            values_why=pin.values_why or "no HelmRelease installs it",
            where=pin.where,
        )
        old = _obtain(pin, pin.before, settings, fetcher)
        new = _obtain(pin, pin.after, settings, fetcher)
        found = findings(move, old, new, state)
        if not settings.required and (old.chart is None or new.chart is None):
            found = [replace(f, severity="notice") for f in found]  # said, never gating
        out += found
    return out


def with_checks(
    result: CheckResult, fail_on: str, settings: Settings, environ: Mapping[str, str]
) -> CheckResult:
    """``result`` with the computed findings of every pin it moved from one exact version to
    another, its verdict and exit code judged again with them (the same result when no pin
    did). An archive that could not be read makes its checks may apply: at notice severity
    (reported, never gating) unless the checks were asked for (``settings.required``)."""
    if result.state is None or not any(judged(p) for p in result.moved_pins):
        return result
    found = computed(result.moved_pins, result.state, settings, environ)
    if not found:
        return result
    verdict = worst([result.verdict, verdict_of(found, fail_on)])
    return replace(
        result,
        findings=(*result.findings, *found),
        verdict=verdict,
        exit_code=exit_of(verdict, fail_on),
    )


def _obtain(pin: MovedPin, version: str, settings: Settings, fetcher: Fetcher) -> Read:
    try:
        if settings.folder is not None:
            data, where = from_folder(settings.folder, pin.chart, version)
        elif not pin.repository:
            raise NotRead(f"no chart source for {pin.key} was read (its repository is not known)")
        else:
            data, where = fetcher.archive(pin.repository, pin.chart, version, pin.insecure)
    except NotRead as exc:
        return Read(version, "not read", problem=str(exc))
    try:
        chart = read(data, where)
    except BadArchive as exc:
        return Read(version, where, problem=str(exc))
    return Read(version, where, chart)


def _exact(text: str) -> bool:
    try:
        return versions.parse_constraint(text).is_exact
    except UpgradeplanError:
        return False


__all__ = ["Mode", "Settings", "computed", "judged", "with_checks"]
