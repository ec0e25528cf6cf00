"""Knowledge packs: opt-in knowledge directories shipped with the package (``upgradeplan.packs``).

A pack is a directory of ``packs/`` in the repository (``<name>/``, package data
``upgradeplan.packs``) in the knowledge format, plus ``pack.yaml``: its ``name``, ``version``,
``description``, ``products`` (each with ``reviewed_through``) and ``sources``. A run enables
packs by name (``--pack``, ``UPGRADEPLAN_PACKS``, ``packs:`` in ``.upgradeplan.yaml``); each
enabled pack is one more knowledge root after the bundled one. Finding a pack's directory reads
no YAML; :func:`available` reads every ``pack.yaml`` (``kb packs``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from msgspec import Struct

from upgradeplan.errors import BadInput
from upgradeplan.suggest import nearest
from upgradeplan.versions import parse_version
from upgradeplan.yamlload import LineDict, YamlError, line_of, load_lines

MANIFEST = "pack.yaml"
CONFIG = ".upgradeplan.yaml"  # accepted risks are read from it too (upgradeplan.accept)
ENV = "UPGRADEPLAN_PACKS"


class PackProduct(Struct, frozen=True):
    """A product a pack describes, and the newest release its sources were reviewed through."""

    id: str
    reviewed_through: str


class Pack(Struct, frozen=True):
    """One pack, as its ``pack.yaml`` describes it."""

    name: str
    version: str
    description: str
    products: tuple[PackProduct, ...]
    sources: tuple[str, ...]
    path: str

    def release_count(self) -> int:
        """Release files under ``releases/`` (each file one release)."""
        count = 0
        for _folder, _dirs, files in os.walk(os.path.join(self.path, "releases")):
            count += sum(1 for f in files if f.endswith((".yaml", ".yml")))
        return count


def packs_path() -> str:
    """The directory of the shipped packs (package ``upgradeplan.packs``); "" when missing."""
    from importlib.util import find_spec

    spec = find_spec("upgradeplan.packs")
    if spec is None or not spec.submodule_search_locations:
        return ""
    return str(next(iter(spec.submodule_search_locations)))


def names(root: str | None = None) -> list[str]:
    """The names of the shipped packs: directories of the packs root with a ``pack.yaml``."""
    base = packs_path() if root is None else root
    if not base or not os.path.isdir(base):
        return []
    return sorted(
        entry.name
        for entry in os.scandir(base)
        if entry.is_dir()
        and not entry.name.startswith((".", "_"))
        and os.path.isfile(os.path.join(entry.path, MANIFEST))
    )


def split(text: str) -> list[str]:
    """Pack names from a comma-separated text (``UPGRADEPLAN_PACKS``): blanks dropped."""
    return [n.strip() for n in text.split(",") if n.strip()]


def env_names() -> list[str]:
    """The packs ``UPGRADEPLAN_PACKS`` enables."""
    return split(os.environ.get(ENV, ""))


def directories(wanted: Iterable[str], root: str | None = None) -> list[str]:
    """The directory of each pack named, in order, each once; BadInput naming an unknown one
    and listing the known ones."""
    base = packs_path() if root is None else root
    known = names(base)
    out: list[str] = []
    for name in dict.fromkeys(wanted):
        if name not in known:
            near = nearest(name, known)
            guess = f"did you mean {near[0]}? " if near else ""
            raise BadInput(
                f"unknown pack {name!r}; the known packs are {', '.join(known) or 'none'}",
                hint=f"{guess}'upgradeplan kb packs' lists them with their products",
            )
        out.append(os.path.join(base, name))
    return out


def find_config(start: str | None = None) -> str | None:
    """``.upgradeplan.yaml`` in ``start`` (default: the working directory) or the nearest parent
    that has one, or None: the file packs and accepted risks (upgradeplan.accept) are read from."""
    folder = os.path.realpath(start or os.getcwd())
    while True:
        candidate = os.path.join(folder, CONFIG)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def configured(start: str | None = None) -> list[str]:
    """The packs ``packs:`` of ``.upgradeplan.yaml`` (found from the working directory upward)
    enables; the file is parsed only when it has a ``packs:`` line."""
    found = find_config(start)
    return [] if found is None else _packs_of(found)


def _packs_of(path: str) -> list[str]:
    shown = os.path.relpath(path) if not path.startswith("..") else path
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(1024 * 1024)
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"config file {shown}: cannot read it ({exc})") from None
    if not any(line.startswith("packs:") for line in text.splitlines()):
        return []

    try:
        root = load_lines(text)
    except YamlError as exc:
        raise BadInput(
            exc.message if exc.refused else f"not valid YAML: {exc.problem}",
            location=f"{shown}:{exc.line or 1}",
        ) from None
    value = root.get("packs") if isinstance(root, LineDict) else None
    if value is None:
        return []
    if isinstance(value, str):
        return split(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadInput(
            "'packs' must be a list of pack names",
            location=f"{shown}:{line_of(root, ['packs'])}",
            hint="write packs: [kube-prometheus-stack, cert-manager]",
        )
    return [v.strip() for v in value if v.strip()]


def available(root: str | None = None) -> list[Pack]:
    """Every shipped pack, read from its ``pack.yaml``; BadInput naming a broken one."""
    base = packs_path() if root is None else root
    return [read(os.path.join(base, name)) for name in names(base)]


def read(path: str) -> Pack:
    """The pack in directory ``path`` (its ``pack.yaml``)."""

    manifest = os.path.join(path, MANIFEST)
    try:
        with open(manifest, encoding="utf-8") as f:
            data = load_lines(f.read(1024 * 1024))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"pack manifest {manifest}: cannot read it ({exc})") from None
    except YamlError as exc:
        raise BadInput(exc.message, location=f"{manifest}:{exc.line or 1}") from None
    if not isinstance(data, LineDict):
        raise BadInput("a pack manifest is a mapping (name, version, …)", location=manifest)
    products = tuple(
        PackProduct(str(p.get("id", "")), str(p.get("reviewed_through", "")))
        for p in data.get("products") or ()
        if isinstance(p, dict)
    )
    return Pack(
        name=str(data.get("name", os.path.basename(path))),
        version=str(data.get("version", "")),
        description=" ".join(str(data.get("description", "")).split()),
        products=products,
        sources=tuple(str(s) for s in data.get("sources") or ()),
        path=path,
    )


def manifest_problems(pack: Pack, product_ids: Sequence[str]) -> list[str]:
    """What is wrong with a pack's manifest, in words (empty when nothing): the fields it
    needs, its name against its directory, its products against the knowledge it loads."""

    out: list[str] = []
    if pack.name != os.path.basename(pack.path):
        out.append(f"name {pack.name!r} is not the directory's name")
    try:
        parse_version(pack.version)
    except ValueError:
        out.append(f"version {pack.version!r} is not a version (semver: 1.0.0)")
    if not pack.description:
        out.append("description is empty")
    if not pack.products:
        out.append("products is empty")
    for p in pack.products:
        if p.id not in product_ids:
            out.append(f"product {p.id!r} has no products/{p.id}.yaml in the pack")
        if not p.reviewed_through:
            out.append(f"product {p.id!r} has no reviewed_through")
    if not pack.sources or not all(s.startswith(("https://", "http://")) for s in pack.sources):
        out.append("sources must list the URLs of the notes the pack cites")
    return out
