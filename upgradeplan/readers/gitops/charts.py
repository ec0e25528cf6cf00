"""Every chart pin an installation's files write, whether the knowledge knows the chart or not.

The PR gate names each pin a change moves, so that a reviewer sees the gate saw the bump
even when the chart is not in the knowledge (``cert-manager v1.16.0 → v1.16.1: not in the
knowledge, no known hazards``). A pin is where Flux takes a chart's version from:

- a ``HelmRelease``'s ``spec.chart.spec.version`` (the chart named by ``spec.chart.spec.chart``);
- an ``OCIRepository``'s ``spec.ref`` (as source-controller picks it), the chart named by the
  last segment of ``spec.url``;
- a ``HelmChart``'s ``spec.version``.

Each is keyed by kind, namespace and name, so two releases of one chart stay two pins. Where a
version is written is :mod:`upgradeplan.readers.recognise`'s to say, as for every reader.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from msgspec import Struct

from upgradeplan.provenance import Source
from upgradeplan.readers.gitops.docs import View
from upgradeplan.readers.recognise import Pin, chart_ref, release_pin, source_pin
from upgradeplan.results import MovedPin, ValuesAside

__all__ = ["ChartPin", "MovedPin", "chart_pins", "moved_pins"]

_SOURCE_GROUP = "source.toolkit.fluxcd.io"
_HELM_GROUP = "helm.toolkit.fluxcd.io"


class ChartPin(ValuesAside, Struct, frozen=True):
    """One chart version as a file writes it."""

    key: str  # "HelmRelease ns/name", "OCIRepository ns/name"
    chart: str  # the chart's name (the OCI repository's last segment for an OCIRepository)
    version: str  # as written ("v1.16.0", ">=4.7 <5", "sha256:…")
    where: Source
    repository: str = ""  # where its archives are: a Helm repository URL, or oci://…/chart
    insecure: bool = False  # the source's spec.insecure
    release: str = ""  # "ns/name" of the HelmRelease that installs it ("" when none is read)
    values: Mapping[str, Any] | None = None  # not compared, hashed or shown (below)
    values_why: str = ""


Values = Mapping[tuple[str, str], tuple[Mapping[str, Any] | None, str]]


def chart_pins(
    views: Iterable[View], default_ns: str | None = None, values: Values | None = None
) -> dict[str, ChartPin]:
    """The chart pins of an installation's objects, by key; each with where its archives
    are and the HelmRelease that installs it (``values``: the values each HelmRelease passes,
    by namespace and name, or None and why they are not known)."""
    out: dict[str, ChartPin] = {}
    views = list(views)
    sources = _sources(views, default_ns)
    for v in views:
        kind, api = v.get("kind"), v.get("apiVersion")
        name = v.text("metadata", "name")
        if not isinstance(kind, str) or not isinstance(api, str) or not name:
            continue
        group = api.split("/", 1)[0]
        ns = v.text("metadata", "namespace") or default_ns or "default"
        pin: tuple[str, tuple[Any, ...]] | None = None
        obj = v.get()
        if kind == "HelmRelease" and group == _HELM_GROUP:
            found = release_pin(obj)  # as every reader reads it
            chart = v.text("spec", "chart", "spec", "chart")
            if isinstance(found, Pin) and found.value is not None and chart:
                pin = (chart, found.path)
        elif kind in ("OCIRepository", "HelmChart") and group == _SOURCE_GROUP:
            written = source_pin(obj)
            if kind == "OCIRepository":
                chart = (v.text("spec", "url") or "").rstrip("/").rsplit("/", 1)[-1]
            else:
                chart = v.text("spec", "chart") or ""
            if chart and v.text(*written.path):
                pin = (chart, written.path)
        if pin is None:
            continue
        version = (v.text(*pin[1]) or "").strip()
        key = f"{kind} {ns}/{name}"
        repo, insecure = "", False
        release = f"{ns}/{name}" if kind == "HelmRelease" else sources.users.get(key, "")
        if kind == "OCIRepository":
            repo, insecure = v.text("spec", "url") or "", v.get("spec", "insecure") is True
        else:
            ref_ns = v.text("spec", "chart", "spec", "sourceRef", "namespace") or ns
            ref_name = v.text("spec", "chart", "spec", "sourceRef", "name") or ""
            if kind == "HelmChart":
                ref_ns = v.text("spec", "sourceRef", "namespace") or ns
                ref_name = v.text("spec", "sourceRef", "name") or ""
            repo, insecure = sources.repositories.get((ref_ns, ref_name), ("", False))
            if repo.startswith("oci://"):
                repo = f"{repo.rstrip('/')}/{pin[0]}"
        rel_ns, _, rel_name = release.partition("/")
        told = (values or {}).get((rel_ns, rel_name), (None, "")) if release else None
        known, why = told if told is not None else (None, "no HelmRelease installs it")
        out[key] = ChartPin(
            key, pin[0], version, v.where(*pin[1]), repo, insecure, release, known, why
        )
    return out


class _Sources(Struct):
    repositories: dict[tuple[str, str], tuple[str, bool]]  # HelmRepository -> url, insecure
    users: dict[str, str]  # "OCIRepository ns/name" -> the HelmRelease "ns/name" using it


def _sources(views: list[View], default_ns: str | None) -> _Sources:
    out = _Sources({}, {})
    for v in views:
        kind, api = v.get("kind"), v.get("apiVersion")
        name = v.text("metadata", "name")
        if not isinstance(api, str) or not name:
            continue
        ns = v.text("metadata", "namespace") or default_ns or "default"
        group = api.split("/", 1)[0]
        if kind == "HelmRepository" and group == _SOURCE_GROUP:
            url = v.text("spec", "url") or ""
            if v.text("spec", "type") == "oci" and not url.startswith("oci://"):
                url = ""
            out.repositories[(ns, name)] = (url, v.get("spec", "insecure") is True)
        elif kind == "HelmRelease" and group == _HELM_GROUP:
            ref = chart_ref(v.get())  # as every reader reads it
            if ref is not None and ref.name:
                key = f"{ref.kind} {ref.namespace or ns}/{ref.name}"
                out.users.setdefault(key, f"{ns}/{name}")
    return out


def moved_pins(
    before: Mapping[str, ChartPin],
    after: Mapping[str, ChartPin],
    products: Mapping[str, str] | None = None,
) -> list[MovedPin]:
    """The pins whose version differs between two readings (added and removed ones too),
    sorted by chart; ``products`` maps a pin's key to the product of the knowledge it pins."""
    out: list[MovedPin] = []
    known = products or {}
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is not None and new is not None and old.version == new.version:
            continue
        shown = new or old
        assert shown is not None
        out.append(
            MovedPin(
                chart=shown.chart,
                key=key,
                before=old.version if old is not None else None,
                after=new.version if new is not None else None,
                where=shown.where,
                product=known.get(key),
                repository=shown.repository,
                insecure=shown.insecure,
                release=shown.release,
                values=shown.values,
                values_why=shown.values_why,
            )
        )
    return sorted(out, key=lambda m: (m.chart, m.key))
