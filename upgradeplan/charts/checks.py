"""The checks computed from two chart archives, without any written knowledge.

Four checks between the installed and the target version of a chart, each a finding of its own
id (docs/gitops.md, "Checks computed from the charts"):

- ``chart.crds-changed``: CustomResourceDefinitions the target adds, changes (a different
  spec) or removes, and whether the HelmRelease's CRD policy on upgrade
  (``helmrelease.<name>.crds``) applies them. Only ``crds/`` (the chart's and its subcharts')
  is subject to the policy; a CRD in ``templates/`` is applied by Helm with the rest of the
  release; a templated one is named as not compared. Helm and helm-controller never delete a
  CRD.
- ``chart.values-key-removed``: a values key the installation sets that the installed chart
  has (values.yaml or values.schema.json) and the target has not, with the nearest key of the
  target as a hint.
- ``chart.kube-version-raised``: the target's ``kubeVersion`` admits no Kubernetes version the
  installed one's lowest admitted minor, judged against ``installed.kubernetes``.
- ``chart.app-major-changed``: the ``appVersion`` major moved (a 0.x minor is not a major).

Each finding's evidence names both archives and where they were read.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from typing import Any

from msgspec import Struct

from upgradeplan import provenance, versions
from upgradeplan.charts.archive import Chart
from upgradeplan.errors import UpgradeplanError
from upgradeplan.model import (
    COMPUTED_CHECKS,
    Evidence,
    Fact,
    Finding,
    MissingFact,
    Severity,
    State,
    Status,
    Truth,
)
from upgradeplan.provenance import Source

CRDS, VALUES, KUBE, APP = COMPUTED_CHECKS
CHECKS: dict[str, tuple[str, Severity]] = {
    CRDS: ("the chart's CustomResourceDefinitions change", "warning"),
    VALUES: ("a values key the installation sets is gone from the chart", "warning"),
    KUBE: ("the chart requires a newer Kubernetes", "blocking"),
    APP: ("the application's major version changes", "notice"),
}


class Move(Struct, frozen=True):
    """One moved chart pin, with what the checks read of the installation."""

    chart: str
    before: str
    after: str
    release: str  # the HelmRelease whose values and CRD policy apply ("" when none is known)
    values: Mapping[str, Any] | None  # the values it passes (None: not known)
    values_why: str  # why the values are not known
    where: Source | None  # the pin's line


class Read(Struct, frozen=True):
    """One archive: the chart read, where from; or why it could not be."""

    version: str
    where: str
    chart: Chart | None = None
    problem: str = ""


def findings(move: Move, old: Read, new: Read, state: State) -> list[Finding]:
    """The four checks' findings for one moved pin (may apply, naming the archive, when
    either archive could not be read)."""
    sources = _sources(move, old, new)
    if old.chart is None or new.chart is None:
        bad = old if old.chart is None else new
        why = f"{move.chart} {bad.version}: {bad.problem}"
        return [
            _finding(
                move, check, "may-apply", f"the chart archive could not be read: {why}", sources
            )
            for check in CHECKS
        ]
    return [
        _crds(move, old.chart, new.chart, state, sources),
        _values(move, old.chart, new.chart, sources),
        _kube(move, old.chart, new.chart, state, sources),
        _app(move, old.chart, new.chart, sources),
    ]


def _sources(move: Move, old: Read, new: Read) -> Evidence:
    facts = tuple(
        Fact(
            f"chart.{move.chart}.{r.version}",
            r.version if r.chart else None,
            provenance.text(r.where),
        )
        for r in (old, new)
    )
    words = f"{move.chart} {old.version} ({old.where}) and {new.version} ({new.where})"
    ok = old.chart is not None and new.chart is not None
    return Evidence("chart archives", words, Truth.TRUE if ok else Truth.UNKNOWN, facts)


def _finding(
    move: Move,
    check: str,
    status: Status,
    reason: str,
    sources: Evidence,
    *,
    severity: Severity | None = None,
    evidence: tuple[Evidence, ...] = (),
    missing: tuple[MissingFact, ...] = (),
    avoid: str = "",
) -> Finding:
    title, default = CHECKS[check]
    return Finding(
        hazard=check,
        title=reason if status == "applies" else title,  # what the charts say, first screen
        severity=severity or default,
        scope="transition",
        status=status,
        product=move.chart,
        from_version=move.before,
        to_version=move.after,
        evidence=(sources, *evidence),
        missing=missing,
        location=move.where,
        reason=reason,
        avoid=avoid,
    )


# --------------------------------------------------------------------------- CRDs


def _crds(move: Move, old: Chart, new: Chart, state: State, sources: Evidence) -> Finding:
    added = sorted(set(new.crds) - set(old.crds))
    removed = sorted(set(old.crds) - set(new.crds))
    changed = sorted(
        n for n in set(old.crds) & set(new.crds) if old.crds[n].spec != new.crds[n].spec
    )
    governed_added = [n for n in added if not new.crds[n].file.startswith("templates/")]
    governed_changed = [n for n in changed if not new.crds[n].file.startswith("templates/")]
    words: list[str] = []
    if added:
        words.append("added " + ", ".join(added))
    if changed:
        words.append("changed " + ", ".join(_changed(old.crds[n], new.crds[n]) for n in changed))
    if removed:
        words.append("removed " + ", ".join(removed) + " (never deleted by Helm or Flux)")
    unrendered = [f"{f} (templated, not compared)" for f in new.unrendered]
    broken = [f"{c.version}: {p} (not compared)" for c in (old, new) for p in c.problems]
    said = "; ".join(words + unrendered + broken) or "no CustomResourceDefinition changes"
    if not governed_added and not governed_changed:
        unsure = (new.unrendered or broken) and not words
        status: Status = "may-apply" if unsure else "does-not-apply"
        if status == "may-apply":
            return _finding(move, CRDS, status, said, sources)
        return _finding(move, CRDS, status, said + "; nothing for the CRD policy to apply", sources)
    key = f"helmrelease.{move.release}.crds" if move.release else ""
    fact = state.get(key) if key else None
    policy = (
        fact.value.get("upgrade") if fact is not None and isinstance(fact.value, dict) else None
    )
    if not isinstance(policy, str):
        missing = (
            (MissingFact(key, f"--fact {key}=install=Create,upgrade=CreateReplace"),) if key else ()
        )
        why = said + "; the HelmRelease's CRD policy on upgrade is not known"
        return _finding(move, CRDS, "may-apply", why, sources, missing=missing)
    assert fact is not None
    seen = Evidence(
        "crd_policy",
        f"HelmRelease {move.release} applies CRDs on upgrade with {policy}",
        Truth.TRUE,
        (fact,),
    )
    left: list[str] = []
    if policy != "CreateReplace" and governed_changed:
        one = len(governed_changed) == 1
        stay = "stays as it is" if one else "stay as they are"
        left.append(f"{_them(governed_changed)} {stay} (not replaced)")
    if policy == "Skip" and governed_added:
        left.append(
            f"{_them(governed_added)} {'is' if len(governed_added) == 1 else 'are'} not created"
        )
    if not left:
        why = f"{said}; spec.upgrade.crds {policy} applies them"
        return _finding(move, CRDS, "does-not-apply", why, sources, evidence=(seen,))
    why = f"{said}; with spec.upgrade.crds {policy}: " + "; ".join(left)
    avoid = (
        f"apply the CRDs of {move.chart} {move.after} before the upgrade "
        f"(or set spec.upgrade.crds: CreateReplace on HelmRelease {move.release})"
    )
    return _finding(move, CRDS, "applies", why, sources, evidence=(seen,), avoid=avoid)


def _them(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"these {len(names)}"


def _changed(old: Any, new: Any) -> str:
    gone = [v for v in old.served if v not in new.served]
    fresh = [v for v in new.served if v not in old.served]
    parts = [f"+{v}" for v in fresh] + [f"-{v}" for v in gone]
    if old.storage != new.storage:
        parts.append(f"storage {old.storage}→{new.storage}")
    return f"{new.name} ({', '.join(parts)})" if parts else new.name


# --------------------------------------------------------------------------- values


def _values(move: Move, old: Chart, new: Chart, sources: Evidence) -> Finding:
    if move.values is None:
        why = f"the values the HelmRelease passes are not known ({move.values_why})"
        return _finding(move, VALUES, "may-apply", why, sources)
    target_keys = set(_paths(new.values)) | set(_schema_paths(new.schema))
    old_keys = set(_paths(old.values)) | set(_schema_paths(old.schema))
    gone: list[str] = []
    hints: list[str] = []
    for path in _paths(move.values):
        known = _longest_known(path, old_keys)
        if known is None or known in target_keys or _free_form(known, new.values):
            continue
        dotted = ".".join(known)
        if dotted in gone:
            continue
        gone.append(dotted)
        near = difflib.get_close_matches(dotted, [".".join(k) for k in target_keys], 1, 0.6)
        hints.append(f"{dotted} (nearest: {near[0]})" if near else dotted)
    if not gone:
        return _finding(
            move,
            VALUES,
            "does-not-apply",
            "every values key the installation sets is still in the chart",
            sources,
        )
    why = f"set by the installation, gone from {move.chart} {move.after}: " + ", ".join(hints)
    avoid = "move each value to its new key (or drop it) in the HelmRelease's values"
    return _finding(move, VALUES, "applies", why, sources, avoid=avoid)


def _paths(tree: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every key path of a values tree (maps only; a list is one value)."""
    for key, value in tree.items():
        path = (*prefix, str(key))
        yield path
        if isinstance(value, Mapping) and value:
            yield from _paths(value, path)


def _schema_paths(
    schema: Mapping[str, Any] | None, prefix: tuple[str, ...] = (), depth: int = 0
) -> Iterator[tuple[str, ...]]:
    if not isinstance(schema, Mapping) or depth > 30:
        return
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return
    for key, sub in props.items():
        path = (*prefix, str(key))
        yield path
        yield from _schema_paths(sub, path, depth + 1)


def _longest_known(path: tuple[str, ...], keys: set[tuple[str, ...]]) -> tuple[str, ...] | None:
    for n in range(len(path), 0, -1):
        if path[:n] in keys:
            return path[:n]
    return None


def _free_form(path: tuple[str, ...], values: Mapping[str, Any]) -> bool:
    """Whether the target takes any key under the parent of ``path`` (an empty map there)."""
    node: Any = values
    for key in path[:-1]:
        if not isinstance(node, Mapping) or key not in node:
            return False
        node = node[key]
    return isinstance(node, Mapping) and not node and len(path) > 1


# --------------------------------------------------------------------------- kubeVersion


def _kube(move: Move, old: Chart, new: Chart, state: State, sources: Evidence) -> Finding:
    if not new.kube_version:
        return _finding(
            move, KUBE, "does-not-apply", f"{move.chart} {move.after} sets no kubeVersion", sources
        )
    low_new = _lowest(new.kube_version)
    low_old = _lowest(old.kube_version) if old.kube_version else (0, 0)
    if low_new is None or (low_old is not None and low_new <= low_old):
        why = f"kubeVersion {new.kube_version!r} (was {old.kube_version or 'unset'!r}): not raised"
        return _finding(move, KUBE, "does-not-apply", why, sources)
    said = (
        f"kubeVersion {old.kube_version or 'unset'} → {new.kube_version} "
        f"(lowest {low_new[0]}.{low_new[1]})"
    )
    fact = state.get("installed.kubernetes")
    if fact is None or not isinstance(fact.value, str):
        missing = (MissingFact("installed.kubernetes", "--fact kubernetes=VERSION"),)
        return _finding(
            move,
            KUBE,
            "may-apply",
            said + "; the cluster's Kubernetes version is not known",
            sources,
            missing=missing,
        )
    try:
        ok = versions.parse_constraint(new.kube_version).check(
            versions.parse_version(fact.value.removeprefix("v"))
        )
    except UpgradeplanError as exc:
        why = f"{said}; it cannot be compared: {exc}"
        return _finding(move, KUBE, "may-apply", why, sources)
    seen = Evidence("kube_version", f"Kubernetes {fact.value}", Truth.TRUE, (fact,))
    if ok:
        why = f"{said}; Kubernetes {fact.value} satisfies it"
        return _finding(move, KUBE, "does-not-apply", why, sources, evidence=(seen,))
    why = f"{said}; Kubernetes {fact.value} does not satisfy it: Helm refuses the upgrade"
    avoid = f"upgrade Kubernetes to satisfy {new.kube_version} first"
    return _finding(move, KUBE, "applies", why, sources, evidence=(seen,), avoid=avoid)


def _lowest(constraint: str) -> tuple[int, int] | None:
    """The lowest Kubernetes minor (1.x) a chart's kubeVersion admits, trying 1.0 … 1.60 (a
    prerelease of each too, as ``>=1.25.0-0`` asks), or None when it admits none or does not
    parse."""
    try:
        parsed = versions.parse_constraint(constraint)
    except UpgradeplanError:
        return None
    for minor in range(61):
        for text in (f"1.{minor}.0-0", f"1.{minor}.0", f"1.{minor}.99"):
            try:
                if parsed.check(versions.parse_version(text)):
                    return (1, minor)
            except UpgradeplanError:
                continue
    return None


# --------------------------------------------------------------------------- appVersion

_MAJOR = re.compile(r"^v?(\d+)")


def _app(move: Move, old: Chart, new: Chart, sources: Evidence) -> Finding:
    a, b = _MAJOR.match(old.app_version), _MAJOR.match(new.app_version)
    said = f"appVersion {old.app_version or 'unset'} → {new.app_version or 'unset'}"
    if a is None or b is None:
        return _finding(move, APP, "does-not-apply", said + " (no major to compare)", sources)
    if int(a.group(1)) == int(b.group(1)):
        return _finding(move, APP, "does-not-apply", said, sources)
    avoid = f"read the application's notes for {new.app_version} before the upgrade"
    return _finding(move, APP, "applies", said + ": a new major", sources, avoid=avoid)
