"""Which ``--gitops`` files to read, in kustomize's order.

A ``kustomization.yaml`` is followed through ``resources``, ``components``, ``bases`` and the
files of ``configMapGenerator`` (values files for ``valuesFrom``), then its patches
(``patches``, ``patchesStrategicMerge``, ``patchesJson6902``), which change what the
resources say. A directory without a kustomization contributes every ``*.yaml`` / ``*.yml``
file in it and below it, except dot-directories and Helm chart sources. Entries outside the
tree's boundary and remote ones are reported, not read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from upgradeplan.readers.gitops.trees import Tree, norm
from upgradeplan.readers.gitops.yamldocs import PathKey, documents

YAML_SUFFIXES = (".yaml", ".yml")
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


@dataclass(frozen=True)
class Source:
    """One thing to read: a file, or a patch written inline in a kustomization."""

    rel: str  # the file, relative to the --gitops directory
    namespace: str | None = None  # the kustomization's namespace for objects without one
    patch: bool = False  # a kustomize patch: what it leaves out stays as it is
    target: Mapping[str, str] | None = None  # a patch's target (kind, name, namespace, group)
    inline: PathKey | None = None  # the patch text is this value of the kustomization


@dataclass
class Walk:
    """The sources to read, in order, and the entries that were not read (with why)."""

    sources: list[Source] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def walk(tree: Tree, start: str, display: Callable[[str], str]) -> Walk:
    """The sources under ``start`` (a file or directory relative to the tree's root)."""
    out = Walk()
    _Walker(tree, display, out).visit(norm(start), None, where="")
    return out


@dataclass
class _Walker:
    tree: Tree
    display: Callable[[str], str]
    out: Walk
    seen: set[str] = field(default_factory=set)

    def visit(self, rel: str, namespace: str | None, where: str) -> None:
        if rel in self.seen:
            return
        self.seen.add(rel)
        tree = self.tree
        if tree.is_dir(rel):
            kust = self._kustomization_in(rel)
            if kust is not None:
                self.kustomization(kust, namespace)
                return
            if rel and tree.is_file(posixpath.join(rel, "Chart.yaml")):
                self.out.skipped[rel] = "a Helm chart's sources (templates are not manifests)"
                return
            for name in tree.list_dir(rel):
                child = norm(posixpath.join(rel, name))
                if name.startswith("."):
                    continue  # .git, .github and other tools' directories
                if tree.is_dir(child) or name.endswith(YAML_SUFFIXES):
                    self.visit(child, namespace, where)
            return
        if not tree.is_file(rel):
            self.out.skipped[rel or "."] = (
                f"listed in {where} but not found" if where else "not found"
            )
            return
        if posixpath.basename(rel) in KUSTOMIZATION_NAMES:
            self.kustomization(rel, namespace)
            return
        self.out.sources.append(Source(rel, namespace))

    def _kustomization_in(self, rel: str) -> str | None:
        for name in KUSTOMIZATION_NAMES:
            candidate = norm(posixpath.join(rel, name))
            if self.tree.is_file(candidate):
                return candidate
        return None

    def _local(self, kust: str, entry: str) -> str | None:
        """The tree path of a kustomization entry, or None (reported) when it is not local."""
        if "://" in entry or entry.startswith(("git@", "github.com/")):
            self.out.skipped[entry] = f"remote resource in {self.display(kust)}; not read"
            return None
        target = norm(posixpath.join(posixpath.dirname(kust), entry))
        if not self.tree.contains(target):
            self.out.skipped[entry] = (
                f"listed in {self.display(kust)} but outside {self.tree.bound}; not read"
            )
            return None
        return target

    def kustomization(self, kust: str, namespace: str | None) -> None:
        self.seen.add(kust)
        for doc in documents(self.tree.read(kust), self.display(kust)):
            data = doc.data
            if not isinstance(data, dict):
                continue
            ns = data.get("namespace")
            own_ns = ns if isinstance(ns, str) and ns else namespace
            for entry in _entries(data):
                target = self._local(kust, entry)
                if target is not None:
                    self.visit(target, own_ns, where=self.display(kust))
            for i, patch in enumerate(_list(data.get("patchesStrategicMerge"))):
                self._patch(kust, own_ns, patch, None, ("patchesStrategicMerge", i))
            for key in ("patches", "patchesJson6902"):
                for i, item in enumerate(_list(data.get(key))):
                    if not isinstance(item, dict):
                        continue
                    aim = item.get("target")
                    aim = aim if isinstance(aim, dict) else None
                    if isinstance(item.get("path"), str):
                        self._patch(kust, own_ns, item["path"], aim, None)
                    elif isinstance(item.get("patch"), str):
                        self._patch(kust, own_ns, item["patch"], aim, (key, i, "patch"))

    def _patch(
        self,
        kust: str,
        namespace: str | None,
        value: Any,
        target: Mapping[str, Any] | None,
        inline: PathKey | None,
    ) -> None:
        tgt = {str(k): str(v) for k, v in (target or {}).items() if isinstance(v, str | int)}
        if inline is not None and isinstance(value, str) and "\n" in value.strip():
            self.out.sources.append(Source(kust, namespace, True, tgt or None, inline))
            return
        if not isinstance(value, str):
            return
        if inline is not None and not value.strip().endswith(YAML_SUFFIXES):
            self.out.sources.append(Source(kust, namespace, True, tgt or None, inline))
            return
        rel = self._local(kust, value.strip())
        if rel is None:
            return
        if not self.tree.is_file(rel):
            self.out.skipped[value] = f"patch listed in {self.display(kust)} but not found"
            return
        self.out.sources.append(Source(rel, namespace, True, tgt or None))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _entries(data: dict[Any, Any]) -> list[str]:
    """Resource-like entries of a kustomization: resources, components, bases, generator files."""
    out: list[str] = []
    for key in ("resources", "components", "bases"):
        out += [i for i in _list(data.get(key)) if isinstance(i, str)]
    for gen in _list(data.get("configMapGenerator")):
        files = gen.get("files") if isinstance(gen, dict) else None
        out += [f.split("=", 1)[-1] for f in _list(files) if isinstance(f, str)]
    return out
