"""Renovate ``packageRules`` from the knowledge, for a GitOps tree: only safe hops proposed.

For every product the tree pins (an OCIRepository ``spec.ref.semver``, a HelmRelease chart
version, a BOM ``versionRange``):

- **one group per meta chart**: the meta chart and the components its BOM publishes (pinned in
  the tree) get one ``groupName``, so Renovate proposes them in one pull request — moving them
  apart is what the second-owner hazard punishes;
- **the next stop**: ``allowedVersions`` stops a bump at the first hop of the safe path from
  the version the tree pins now to the newest release (the planner's path, so a required stop
  such as 4.7.19 is never jumped over); a component's limit is the version the meta chart's
  next stop publishes for it, or the version pinned now when that stop publishes none.
  Rerun after each merge: the limit moves on.
- Renovate's Flux manager skips an OCIRepository pinned with ``ref.semver``
  (``unversioned-reference``: it reads ``ref.tag`` and ``ref.digest`` only), so such a meta
  chart pin gets a regex ``customManagers`` entry of its own.
- Renovate's Flux manager reads only ``gotk-components.yaml`` by default, so ``flux``
  ``managerFilePatterns`` names the files that hold the meta charts' pins.
- BOM pins are not something Renovate's Flux manager reads, so each gets a regex
  ``customManagers`` entry for its ``versionRange`` line; the package it looks up is the meta
  chart's OCI repository with the component's name as the last path segment (an assumption
  stated in the entry's description: check it against your registry).

``upgradeplan renovate`` prints the result as JSON (``renovate.json`` or a preset).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from upgradeplan import api
from upgradeplan.model import NEXT, KnowledgeBase, State
from upgradeplan.provenance import Source
from upgradeplan.render.sarif import file_line

SCHEMA = "https://docs.renovatebot.com/renovate-schema.json"
_OCI_URL = re.compile(r"^\s*url:\s*[\"']?oci://(?P<url>[^\s\"']+)", re.M)


class Pin(Struct, frozen=True):
    product: str
    version: str  # the version the tree pins now
    where: tuple[str, int] | None  # file, line of the pin
    dep_names: tuple[str, ...]  # how Renovate names the dependency


class Group(Struct, frozen=True):
    """A meta chart and the pinned components its BOM publishes; their next stops."""

    name: str
    installation: str
    pins: tuple[Pin, ...]
    next_stop: Mapping[str, str] = field(default_factory=dict)  # product -> limit
    path: tuple[str, ...] = ()  # the meta chart's safe path to the newest release
    verdict: str = ""


def _where(source: Source | None) -> tuple[str, int] | None:
    return file_line(source)


def _oci_url(where: tuple[str, int] | None) -> str:
    """The OCI repository (without ``oci://``) of the OCIRepository that holds a pin line."""
    if where is None:
        return ""
    try:
        text = Path(where[0]).read_text(encoding="utf-8")
    except OSError:
        return ""
    # the url of the YAML document the pin line is in
    lines = text.splitlines()
    start = max((i for i in range(where[1]) if i < len(lines) and lines[i] == "---"), default=0)
    end = next((i for i in range(where[1], len(lines)) if lines[i] == "---"), len(lines))
    m = _OCI_URL.search("\n".join(lines[start:end]))
    return m.group("url") if m else ""


def _pins(kb: KnowledgeBase, state: State) -> dict[str, Pin]:
    out: dict[str, Pin] = {}
    for product in sorted(kb.products):
        fact = state.get(f"pin.{product}")
        installed = state.installed(product)
        if fact is None or installed is None or not isinstance(fact.value, str):
            continue
        where = _where(fact.source)
        url = _oci_url(where)
        names = (product, url) if url and url != product else (product,)
        out[product] = Pin(product, installed, where, names)
    return out


def _published(kb: KnowledgeBase, product: str) -> set[str]:
    out: set[str] = set()
    for rel in kb.releases.get(product, ()):
        out.update(rel.bom)
        out.update(rel.components)
    return out


def groups(kb: KnowledgeBase, state: State) -> list[Group]:
    """The groups of one installation, meta charts first by name."""
    pins = _pins(kb, state)
    components = {c for p in pins for c in _published(kb, p) if c != p}
    out: list[Group] = []
    for product in sorted(pins):
        if product in components or kb.products[product].kind not in ("chart", "agent"):
            continue
        members = [pins[product]] + [
            pins[c] for c in sorted(_published(kb, product)) if c in pins and c != product
        ]
        latest = api.latest_version(kb, product)
        limits: dict[str, str] = {}
        path: tuple[str, ...] = ()
        verdict = ""
        if latest is not None and latest != pins[product].version:
            result = api.plan(kb, state, [f"{product}={latest}"], fail_on="blocking")
            planned = result.plan
            if planned is not None and planned.steps:
                path = tuple(planned.path.get(product, ()))
                verdict = planned.verdict
                first = next((s for s in planned.steps if s.product == product), None)
                if first is not None:
                    limits[product] = first.to_version
                    rel = kb.release(product, first.to_version)
                    for member in members[1:]:
                        version = rel.bom.get(member.product) if rel is not None else None
                        # a component the next stop does not publish stays where it is: the
                        # group moves only what the knowledge says moves with the meta chart
                        published = version if version and version != NEXT else None
                        limits[member.product] = published or member.version
        out.append(Group(product, state.name, tuple(members), limits, path, verdict))
    return out


def _custom_manager(group: Group, pin: Pin) -> dict[str, Any] | None:
    if pin.where is None or not pin.where[0].endswith((".yaml", ".yml")):
        return None
    meta = group.pins[0]
    url = meta.dep_names[1] if len(meta.dep_names) > 1 else ""
    if not url:
        return None
    package = url.rsplit("/", 1)[0] + "/" + pin.product
    name = re.sub(r"([.+*?()\[\]{}|^$\\])", r"\\\1", pin.product)  # plain in JS and RE2
    return {
        "customType": "regex",
        "description": (
            f"{pin.product}: the BOM's versionRange ({pin.where[0]}:{pin.where[1]}); the package "
            f"is assumed to be {package} (the meta chart's repository, the component's name)"
        ),
        "managerFilePatterns": [f"/(^|/){re.escape(Path(pin.where[0]).name)}$/"],
        "matchStrings": [
            r"\n\s*" + name + r":\s*\n(?:\s*#.*\n)*\s*versionRange:\s*"
            "[\"']?(?<currentValue>[^\"'\\s]+)"
        ],
        "depNameTemplate": pin.product,
        "packageNameTemplate": package,
        "datasourceTemplate": "docker",
        "versioningTemplate": "semver",
    }


def _js_escape(text: str) -> str:
    """``text`` as a literal in a regular expression both JavaScript (``u`` flag) and RE2 read:
    only the characters that are special there are escaped (``re.escape`` escapes ``-`` too,
    which a ``u`` pattern refuses)."""
    return re.sub(r"([.+*?()\[\]{}|^$\\/])", r"\\\1", text)


def _semver_manager(pin: Pin) -> dict[str, Any] | None:
    """A regex manager for an OCIRepository pinned with ``ref.semver``: Renovate's Flux manager
    skips such a reference (``skipReason: unversioned-reference``; it reads ``ref.tag`` and
    ``ref.digest`` only), so without this nothing bumps the meta chart."""
    if pin.where is None or len(pin.dep_names) < 2:
        return None
    try:
        line = Path(pin.where[0]).read_text(encoding="utf-8").splitlines()[pin.where[1] - 1]
    except (OSError, IndexError):
        return None
    if not re.match(r"\s*semver:", line):
        return None  # a ref.tag: the Flux manager reads it
    url = _js_escape(pin.dep_names[1])
    # one YAML document: no line of the way starts with "-" (a "---" separator)
    same_doc = r"(?:[^-\n][^\n]*\n|\n)*?"
    value = "[ \\t]*[\"']?(?<currentValue>[^\"'\\s]+)"
    return {
        "customType": "regex",
        "description": (
            f"{pin.product}: the OCIRepository's ref.semver ({pin.where[0]}:{pin.where[1]}); "
            "Renovate's Flux manager skips a semver reference (unversioned-reference)"
        ),
        "managerFilePatterns": [f"/(^|/){re.escape(Path(pin.where[0]).name)}$/"],
        "matchStrings": [
            f"oci://{url}[\"']?[ \\t]*\\n{same_doc}[ \\t]+semver:{value}",
            f"semver:{value}[\"']?[ \\t]*\\n{same_doc}[ \\t]*url:[ \\t]*[\"']?oci://{url}[\"'\\s]",
        ],
        "depNameTemplate": pin.product,
        "packageNameTemplate": pin.dep_names[1],
        "datasourceTemplate": "docker",
        "versioningTemplate": "semver",
    }


_SOURCE_KIND = re.compile(r"^kind:\s*[\"']?HelmRepository[\"']?\s*$", re.M)


def flux_sources(root: str) -> list[str]:
    """The YAML files under ``root`` that define a HelmRepository: Renovate's Flux manager
    resolves a HelmRelease's chart through the HelmRepository it names, and only in the files
    it reads."""
    base = Path(root)
    files = [base] if base.is_file() else sorted(base.rglob("*.y*ml"))
    out = []
    for path in files:
        try:
            if _SOURCE_KIND.search(path.read_text(encoding="utf-8")):
                out.append(str(path))
        except (OSError, UnicodeDecodeError):
            continue
    return out


def rules(
    kb: KnowledgeBase, states: Sequence[State], sources: Sequence[str] = ()
) -> dict[str, Any]:
    """The Renovate configuration (``packageRules`` and ``customManagers``) for ``states``;
    ``sources``: the files that define the HelmRepositories the HelmReleases name."""
    package_rules: list[dict[str, Any]] = []
    managers: list[dict[str, Any]] = []
    seen_managers: set[str] = set()
    for state in states:
        for group in groups(kb, state):
            names = sorted({n for p in group.pins for n in p.dep_names})
            where = f" in {group.installation}" if len(states) > 1 and group.installation else ""
            package_rules.append(
                {
                    "description": (
                        f"{group.name} and the pins its BOM publishes"
                        f" ({', '.join(p.product for p in group.pins[1:]) or 'none pinned'})"
                        f" move together{where}"
                    ),
                    "matchDepNames": names,
                    "groupName": group.name,
                }
            )
            for pin in group.pins:
                limit = group.next_stop.get(pin.product)
                if limit is None:
                    continue
                path = " → ".join(group.path)
                package_rules.append(
                    {
                        "description": (
                            f"{pin.product} {pin.version}{where}: next stop {limit} "
                            f"(safe path {path}, {group.verdict})"
                        ),
                        "matchDepNames": sorted(pin.dep_names),
                        "allowedVersions": f"<={limit}",
                    }
                )
            for pin in group.pins:
                manager = _semver_manager(pin) if pin is group.pins[0] else None
                manager = manager or _custom_manager(group, pin)
                if manager is not None and manager["description"] not in seen_managers:
                    seen_managers.add(manager["description"])
                    managers.append(manager)
    out: dict[str, Any] = {"$schema": SCHEMA, "packageRules": package_rules}
    flux_files = sorted(
        {
            f"/(^|/){re.escape(Path(p.where[0]).name)}$/"
            for state in states
            for group in groups(kb, state)
            for p in group.pins[:1]
            if p.where is not None
        }
        | {f"/(^|/){re.escape(Path(path).name)}$/" for path in sources}
    )
    if flux_files:  # Renovate's Flux manager reads only gotk-components.yaml unless told
        out["flux"] = {"managerFilePatterns": flux_files}
    if managers:
        out["customManagers"] = managers
    return out
