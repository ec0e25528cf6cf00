"""A chart archive (``helm package``'s ``.tgz``) read bounded: metadata, values, schema, CRDs.

Only what the computed checks compare is read: ``Chart.yaml`` (name, version, appVersion,
kubeVersion), ``values.yaml``, ``values.schema.json``, every file of ``crds/`` (the chart's and its
subcharts', ``charts/<sub>/crds/``, which Helm applies with the chart's) and every template of
the chart that declares ``kind: CustomResourceDefinition``. Nothing else of a subchart is read
(its values, its templates), and a subchart's ``crds/`` is read whatever its ``condition``.
Templates are not rendered: a CRD template whose text has no ``{{`` is read as written; one
with template directives is named as not rendered.

Bounds (a hostile archive is refused, never unpacked): at most :data:`MAX_ARCHIVE` bytes
compressed, :data:`MAX_MEMBERS` members, :data:`MAX_FILE` bytes per file read and
:data:`MAX_TOTAL` bytes read in all; only regular files are read (links, devices skipped);
a member path that is absolute or climbs out with ``..`` is refused. Nothing is written to
disk.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
import zlib
from collections.abc import Mapping
from typing import Any

from msgspec import Struct, field

from upgradeplan import yamlload

MAX_ARCHIVE = 64 * 1024 * 1024  # bytes of the compressed archive
MAX_MEMBERS = 20_000
MAX_FILE = 16 * 1024 * 1024  # bytes of one file read from it
MAX_TOTAL = 128 * 1024 * 1024  # bytes read from it in all


class BadArchive(Exception):
    """An archive that is not a chart, or is past a bound: the message says which."""


class Crd(Struct, frozen=True):
    """One CustomResourceDefinition of a chart: its name, versions and the text it came from."""

    name: str
    versions: tuple[str, ...]
    served: tuple[str, ...]
    storage: str
    spec: str  # the spec as canonical JSON: two charts' CRDs differ when their specs differ
    file: str  # the member it was read from (crds/… or templates/…)


class Chart(Struct, frozen=True):
    """What one chart archive says."""

    name: str
    version: str
    app_version: str
    kube_version: str
    values: Mapping[str, Any]
    schema: Mapping[str, Any] | None
    crds: Mapping[str, Crd]
    unrendered: tuple[str, ...] = ()  # CRD templates with template directives (not read)
    problems: tuple[str, ...] = field(default=())  # files read but not understood


def read(data: bytes, label: str) -> Chart:
    """The chart in ``data`` (a gzipped tar); BadArchive naming ``label`` and why."""
    if len(data) > MAX_ARCHIVE:
        raise BadArchive(f"{label}: larger than {MAX_ARCHIVE} bytes")
    files = _members(data, label)
    top = _top(files, label)
    meta = _yaml_map(files.get(f"{top}/Chart.yaml"), f"{label}: Chart.yaml")
    if meta is None:
        raise BadArchive(f"{label}: no {top}/Chart.yaml")
    values = _yaml_map(files.get(f"{top}/values.yaml"), f"{label}: values.yaml") or {}
    schema = None
    raw_schema = files.get(f"{top}/values.schema.json")
    problems: list[str] = []
    if raw_schema is not None:
        try:
            loaded = json.loads(raw_schema)
            schema = loaded if isinstance(loaded, dict) else None
        except ValueError as exc:
            problems.append(f"values.schema.json is not JSON ({exc})")
    crds: dict[str, Crd] = {}
    unrendered: list[str] = []
    for path in sorted(files):
        rel = path[len(top) + 1 :]
        if not rel.endswith((".yaml", ".yml", ".json", ".tpl")):
            continue
        text = files[path].decode("utf-8", "replace")
        if _crds_dir(rel.split("/")):
            _crds_of(text, rel, crds, problems)
        elif rel.startswith("charts/"):
            continue
        elif rel.startswith("templates/") and "CustomResourceDefinition" in text:
            if "{{" in text:
                unrendered.append(rel)
            else:
                _crds_of(text, rel, crds, problems)
    return Chart(
        name=str(meta.get("name") or ""),
        version=str(meta.get("version") or ""),
        app_version=str(meta.get("appVersion") or ""),
        kube_version=str(meta.get("kubeVersion") or ""),
        values=values,
        schema=schema,
        crds=crds,
        unrendered=tuple(unrendered),
        problems=tuple(problems),
    )


def _members(data: bytes, label: str) -> dict[str, bytes]:
    """The regular files of the archive that the checks read, by path; bounded."""
    wanted: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for count, member in enumerate(tar, 1):
                if count > MAX_MEMBERS:
                    raise BadArchive(f"{label}: more than {MAX_MEMBERS} members")
                name = member.name
                parts = name.split("/")
                if name.startswith("/") or ".." in parts:
                    raise BadArchive(f"{label}: member {name!r} points outside the chart")
                if not member.isfile() or not _read_it(parts):
                    continue
                if member.size > MAX_FILE:
                    raise BadArchive(f"{label}: {name} is larger than {MAX_FILE} bytes")
                total += member.size
                if total > MAX_TOTAL:
                    raise BadArchive(f"{label}: more than {MAX_TOTAL} bytes to read")
                fh = tar.extractfile(member)
                if fh is not None:
                    wanted[name] = fh.read(MAX_FILE + 1)[:MAX_FILE]
    except (tarfile.TarError, OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise BadArchive(f"{label}: not a gzipped tar archive ({exc})") from None
    return wanted


def _read_it(parts: list[str]) -> bool:
    """Whether a member is one the checks read: the top folder's Chart.yaml, values, schema
    and templates/, and the crds/ of the chart and its subcharts."""
    if len(parts) == 2:
        return parts[1] in ("Chart.yaml", "values.yaml", "values.schema.json")
    return len(parts) >= 3 and (parts[1] == "templates" or _crds_dir(parts[1:]))


def _crds_dir(rel: list[str]) -> bool:
    """Whether a path inside the chart is in ``crds/`` of the chart or of a subchart
    (``charts/<sub>/crds/…``, nested as deep as subcharts go)."""
    i = 0
    while len(rel) - i >= 3 and rel[i] == "charts":
        i += 2
    return len(rel) - i >= 2 and rel[i] == "crds"


def _top(files: Mapping[str, bytes], label: str) -> str:
    tops = {p.split("/", 1)[0] for p in files if p.endswith("/Chart.yaml") and p.count("/") == 1}
    if len(tops) != 1:
        raise BadArchive(f"{label}: not one chart folder with a Chart.yaml at its top")
    return tops.pop()


def _yaml_map(raw: bytes | None, label: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = yamlload.load_one(raw.decode("utf-8", "replace"))
    except yamlload.YamlError as exc:
        raise BadArchive(f"{label} is not YAML ({exc.message})") from None
    return data if isinstance(data, dict) else {}


def _crds_of(text: str, rel: str, out: dict[str, Crd], problems: list[str]) -> None:
    try:
        docs = yamlload.load_all(text)
    except yamlload.YamlError as exc:
        problems.append(f"{rel} is not YAML ({exc.message})")
        return
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        meta = doc.get("metadata")
        spec = doc.get("spec")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(name, str) or not isinstance(spec, dict):
            problems.append(f"{rel}: a CustomResourceDefinition without a name or spec")
            continue
        versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
        names = tuple(str(v.get("name")) for v in versions)
        if not names and spec.get("version"):  # apiextensions v1beta1
            names = (str(spec["version"]),)
        served = tuple(str(v.get("name")) for v in versions if v.get("served"))
        storage = next((str(v.get("name")) for v in versions if v.get("storage")), "")
        canonical = json.dumps(spec, sort_keys=True, default=str)
        out[name] = Crd(
            name, names, served or names, storage or (names[0] if names else ""), canonical, rel
        )
