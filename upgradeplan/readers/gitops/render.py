"""kustomize's build of a directory, as kustomize-controller runs it, keeping lines.

:class:`Renderer` turns a directory into the objects ``kustomize build`` would give: the
``kustomization.yaml`` (``resources``, ``components``, ``configMapGenerator`` /
``secretGenerator``, ``patches`` / ``patchesStrategicMerge`` / ``patchesJson6902`` with their
``target`` selectors, ``namespace``, ``namePrefix`` / ``nameSuffix``, ``images``,
``replacements``), or, without
one, the kustomization Flux generates (every manifest in and below the directory; a
subdirectory with its own kustomization is built by that one). Every value keeps the
``file:line`` it was written at: a patched value points at the patch.

What cannot be read is recorded, never fatal: a file that does not parse (its ``file:line``
and the problem), a remote or missing entry, ``helmCharts`` (rendered by kustomize's Helm
plugin, not from files). Generator files are data, never parsed as manifests.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct, field

from upgradeplan.errors import BadInput
from upgradeplan.filekind import describe
from upgradeplan.readers.gitops.docs import Doc, PathKey
from upgradeplan.readers.gitops.facts import NOT_FOUND, NOT_RENDERED, OUTSIDE, REMOTE, Unread
from upgradeplan.readers.gitops.patch import json6902, matches, self_target, strategic_merge
from upgradeplan.readers.gitops.replacements import apply as replace
from upgradeplan.readers.gitops.sourceignore import Artifact
from upgradeplan.readers.gitops.transform import (
    merge_generated,
    rename,
    set_image,
    set_namespace,
    sub_doc,
)
from upgradeplan.readers.gitops.trees import Tree, norm
from upgradeplan.readers.gitops.yamldocs import documents, parse
from upgradeplan.unreadable import PARSE_ERROR, Unreadable

YAML_SUFFIXES = (".yaml", ".yml")
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def is_manifest(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("kind"), str)
        and isinstance(data.get("apiVersion"), str)
    )


def _is_kustomization(data: Any) -> bool:
    api = data.get("apiVersion") if isinstance(data, dict) else None
    return not isinstance(api, str) or api.startswith("kustomize.config.k8s.io/")


class Renderer(Struct):
    """Builds directories of one tree; files are parsed once and shared between builds."""

    tree: Tree
    display: Callable[[str], str]
    # a directory read without Flux: its free-standing values files (not manifests) are read
    loose: bool = False
    unread: Unread = field(default_factory=Unread)  # "file X" -> why, and its record
    read_files: set[str] = field(default_factory=set)  # tree paths of every file read
    # the names of the GitRepository that is this repository (flux.find_entries says)
    own_sources: set[str] = field(default_factory=lambda: {"flux-system"})
    generators: list[Doc] = field(default_factory=list)  # ArtifactGenerators of the tree
    unapplied: list[str] = field(default_factory=list)  # directories no entry point applies
    # GitRepository objects that set spec.ignore: (tree path of the file, the object)
    git_repositories: list[tuple[str, Doc]] = field(default_factory=list)
    # the source artifact a Flux build reads (None: every file of the tree), and the files
    # that build needed but the artifact leaves out: (file, why)
    artifact: Artifact | None = None
    refused: list[tuple[str, str]] = field(default_factory=list)
    # shared between the renderers of one tree (one parse per file)
    _parsed: dict[str, list[Doc]] = field(default_factory=dict)
    _errors: dict[str, tuple[str, str, Unreadable]] = field(default_factory=dict)
    _texts: dict[str, str | None] = field(default_factory=dict)
    _binary: set[str] = field(default_factory=set)  # files that are not UTF-8 text
    _read: dict[str, bytes] = field(default_factory=dict)  # read, not parsed yet

    def read(self, rel: str) -> bytes:
        """A file's bytes, kept until it is parsed (a file is read from disk once)."""
        if rel not in self._read:
            self._read[rel] = self.tree.read(rel)
        return self._read[rel]

    def sibling(self, loose: bool = False) -> Renderer:
        """A renderer of the same tree with its own records and the same parsed files."""
        return Renderer(
            self.tree,
            self.display,
            loose,
            _parsed=self._parsed,
            _errors=self._errors,
            _texts=self._texts,
            _binary=self._binary,
            _read=self._read,
        )

    # ---------------------------------------------------------------- files

    def docs(self, rel: str) -> list[Doc]:
        """The YAML documents of a file; a file that does not parse is recorded and empty."""
        self.read_files.add(rel)
        if rel not in self._parsed:
            try:
                content = self._read.pop(rel, None)
                if content is None:
                    content = self.tree.read(rel)
                self._parsed[rel] = documents(content, self.display(rel))
            except BadInput as exc:
                where = exc.location or self.display(rel)
                key = f"file {where}"
                rec = _file_record(self.display(rel), PARSE_ERROR, where, exc, key)
                self._errors[rel] = (key, _reason(exc), rec)
                self._parsed[rel] = []
        if rel in self._errors:
            key, why, rec = self._errors[rel]
            self.unread.add(key, why, rec)
        return self._parsed[rel]

    def text(self, rel: str, *, binary: bool = False) -> str | None:
        """A file's text; None when it is not UTF-8 (recorded as unread unless ``binary``:
        a generator's file that kustomize puts in ``binaryData``, which holds no values)."""
        self.read_files.add(rel)
        if rel not in self._texts:
            try:
                self._texts[rel] = self.tree.read(rel).decode("utf-8-sig")
            except UnicodeDecodeError:
                self._texts[rel] = None
                self._binary.add(rel)
            except (OSError, KeyError):
                self._texts[rel] = None
        text = self._texts[rel]
        if text is None and not (binary and rel in self._binary):
            why = "not UTF-8 text; not read" if rel in self._binary else "could not be read"
            self._skip(self.display(rel), why, PARSE_ERROR)
        return text

    def _skip(self, what: str, why: str, cause: str, location: str = "") -> None:
        """``what`` (a file, an entry; ``location`` its file:line) was not read: ``why``."""
        key = f"file {location or what}"
        rec = Unreadable(what, cause, kind="file", location=location, detail=why, keys=(key,))
        self.unread.add(key, why, rec)

    # ---------------------------------------------------------------- builds

    def build(self, rel: str, components: tuple[str, ...] = ()) -> list[Doc]:
        """The objects of a directory (or kustomization file), as kustomize-controller builds it.

        ``components`` are directories of kustomize Components applied on top (a Flux
        Kustomization's ``spec.components``).
        """
        rel = norm(rel)
        if self.tree.is_dir(rel):
            kust = self._kustomization_in(rel)
            objs = self._kustomization(kust) if kust is not None else self._generated(rel)
        elif self.tree.is_file(rel):
            if posixpath.basename(rel) in KUSTOMIZATION_NAMES:
                objs = self._kustomization(rel)
            else:
                objs = self._resource_file(rel)
        else:
            self._skip(self.display(rel) or ".", "not found", NOT_FOUND)
            return []
        for comp in components:
            objs = self._component(comp, objs, "the Flux Kustomization")
        return objs

    def build_in(
        self, artifact: Artifact, rel: str, components: tuple[str, ...] = ()
    ) -> tuple[list[Doc], list[tuple[str, str]]]:
        """:meth:`build` as kustomize-controller runs it on a source's ``artifact``: the
        objects, or none and the files the build needs that the artifact leaves out (tree
        path, why): kustomize then fails."""
        gone = artifact.excluded(rel, is_dir=True)
        if gone is not None:
            return [], [(rel, f"spec.path, {Artifact.why(gone)}")]
        self.artifact, self.refused = artifact, []
        try:
            objs = self.build(rel, components)
        finally:
            self.artifact = None
        return ([], self.refused) if self.refused else (objs, [])

    def _kustomization_in(self, rel: str) -> str | None:
        for name in KUSTOMIZATION_NAMES:
            candidate = norm(posixpath.join(rel, name))
            if self.tree.is_file(candidate) and not self._left_out(candidate):
                return candidate
        return None

    def _generated(self, rel: str) -> list[Doc]:
        """The kustomization Flux generates: every manifest in and below ``rel``."""
        out: list[Doc] = []
        for name in self.tree.list_dir(rel):
            if name.startswith("."):
                continue
            child = norm(posixpath.join(rel, name))
            if self._left_out(child):
                continue  # not in the artifact: kustomize-controller never sees it
            if self.tree.is_dir(child):
                if self.tree.is_file(posixpath.join(child, "Chart.yaml")):
                    if self.loose:
                        why = "a Helm chart's sources (templates are not manifests)"
                        self.unread.add(f"file {self.display(child)}", why, None)
                    continue  # a Helm chart's sources: templates are not manifests
                kust = self._kustomization_in(child)
                out += self._kustomization(kust) if kust else self._generated(child)
            elif name.endswith(YAML_SUFFIXES) and name not in KUSTOMIZATION_NAMES:
                out += [d for d in self._objects_of(child) if self.loose or is_manifest(d.data)]
        return out

    def _objects_of(self, rel: str) -> list[Doc]:
        """Documents of a manifest file; a ``kind: List`` gives its items."""
        out: list[Doc] = []
        for doc in self.docs(rel):
            data = doc.data
            if isinstance(data, dict) and data.get("kind") == "List":
                for i, item in enumerate(data.get("items") or []):
                    if is_manifest(item):
                        out.append(sub_doc(doc, ("items", i)))
            elif isinstance(data, dict):
                out.append(doc)
        return out

    def _resource_file(self, rel: str) -> list[Doc]:
        # shared between builds: every transformer copies what it changes
        return [d for d in self._objects_of(rel) if self.loose or is_manifest(d.data)]

    def _entry(self, kust: str, entry: Any) -> str | None:
        """The tree path of an entry of ``kust``, or None (recorded) when it cannot be read."""
        if not isinstance(entry, str) or not entry.strip():
            return None
        entry = entry.strip()
        shown = self.display(kust)
        if "://" in entry or entry.startswith(("git@", "github.com/")):
            self._skip(entry, f"remote resource in {shown}; not read", REMOTE)
            return None
        target = norm(posixpath.join(posixpath.dirname(kust), entry))
        if not self.tree.contains(target):
            why = f"listed in {shown} but outside {self.tree.bound}; not read"
            self._skip(entry, why, OUTSIDE)
            return None
        if not (self.tree.is_dir(target) or self.tree.is_file(target)):
            self._skip(self.display(target), f"listed in {shown} but not found", NOT_FOUND)
            return None
        if self._left_out(target):
            assert self.artifact is not None
            pattern = self.artifact.excluded(target)
            assert pattern is not None
            why = f"listed in {shown}; {Artifact.why(pattern)}"
            self.refused.append((target, why))
            return None
        return target

    def _left_out(self, rel: str) -> bool:
        """Whether ``rel`` is a file of the tree that the artifact being built leaves out."""
        return (
            self.artifact is not None
            and self.tree.is_file(rel)
            and self.artifact.excluded(rel) is not None
        )

    def _kustomization(self, kust: str) -> list[Doc]:
        docs = self.docs(kust)
        if not docs or not isinstance(docs[0].data, dict):
            return []
        k = docs[0]
        _check_lists(k, self.display(kust))
        data: dict[Any, Any] = k.data
        objs: list[Doc] = []
        for key in ("resources", "bases"):
            for entry in _list(data.get(key)):
                target = self._entry(kust, entry)
                if target is not None:
                    objs += self.build(target)
        for entry in _list(data.get("components")):
            target = self._entry(kust, entry)
            if target is not None:
                objs = self._component(target, objs, self.display(kust))
        if data.get("helmCharts"):
            self._skip(
                self.display(kust),
                "helmCharts are rendered by kustomize's Helm support, not from files; not read",
                NOT_RENDERED,
                f"{self.display(kust)}:{k.line('helmCharts')}",
            )
        objs = self._generators(kust, k, objs)
        objs = self._patches(kust, k, objs)
        return self._transform(kust, k, objs)

    def _component(self, rel: str, objs: list[Doc], where: str) -> list[Doc]:
        """A kustomize Component: its resources join, its patches apply to everything so far."""
        kust = self._kustomization_in(rel) if self.tree.is_dir(rel) else rel
        if kust is None:
            why = f"component listed in {where} has no kustomization"
            self._skip(self.display(rel), why, NOT_FOUND)
            return objs
        docs = self.docs(kust)
        if not docs or not isinstance(docs[0].data, dict):
            return objs
        k = docs[0]
        _check_lists(k, self.display(kust))
        for key in ("resources", "bases"):
            for entry in _list(k.data.get(key)):
                target = self._entry(kust, entry)
                if target is not None:
                    objs = objs + self.build(target)
        for entry in _list(k.data.get("components")):
            target = self._entry(kust, entry)
            if target is not None:
                objs = self._component(target, objs, self.display(kust))
        objs = self._generators(kust, k, objs)
        objs = self._patches(kust, k, objs)
        return self._transform(kust, k, objs)

    # ---------------------------------------------------------------- generators

    def _generators(self, kust: str, k: Doc, objs: list[Doc]) -> list[Doc]:
        options = k.data.get("generatorOptions")
        no_hash = isinstance(options, dict) and options.get("disableNameSuffixHash") is True
        for key, kind in (("configMapGenerator", "ConfigMap"), ("secretGenerator", "Secret")):
            for i, gen in enumerate(_list(k.data.get(key))):
                if not isinstance(gen, dict) or not isinstance(gen.get("name"), str):
                    continue
                doc = self._generate(kust, k, (key, i), gen, kind, no_hash)
                _generator_metadata(doc, options, gen.get("options"))
                behavior = gen.get("behavior", "create")
                if behavior in ("merge", "replace"):
                    objs = merge_generated(objs, doc, behavior == "merge")
                else:
                    objs.append(doc)
        return objs

    def _generate(
        self, kust: str, k: Doc, at: PathKey, gen: dict[Any, Any], kind: str, no_hash: bool
    ) -> Doc:
        """A generated ConfigMap (its files as text data) or Secret (its name only)."""
        shown = self.display(kust)
        meta: dict[str, Any] = {"name": gen["name"]}
        if isinstance(gen.get("namespace"), str):
            meta["namespace"] = gen["namespace"]
        data: dict[str, Any] = {}
        out = Doc(data={"apiVersion": "v1", "kind": kind, "metadata": meta}, file=shown, index=0)
        out.lines[()] = k.line(*at)
        out.lines[("metadata", "name")] = k.line(*at, "name")
        options = gen.get("options")
        hashed = not no_hash and not (
            isinstance(options, dict) and options.get("disableNameSuffixHash") is True
        )
        if hashed:
            meta["annotations"] = {"upgradeplan.generated/name-hash": "true"}
        if kind == "Secret":
            return out  # a Secret's data is never read
        for j, item in enumerate(_list(gen.get("files"))):
            if not isinstance(item, str):
                continue
            dkey, _, path = item.partition("=") if "=" in item else ("", "", item)
            target = self._entry(kust, path)
            if target is None or not self.tree.is_file(target):
                continue
            text = self.text(target, binary=True)  # a binary file: binaryData, no values
            if text is None:
                continue
            dkey = dkey or posixpath.basename(target)
            data[dkey] = text
            out.lines[("data", dkey)] = k.line(*at, "files", j)
            out.key_lines[("data", dkey)] = k.line(*at, "files", j)
            out.embeds[("data", dkey)] = (self.display(target), 0)
        for j, item in enumerate(_list(gen.get("literals"))):
            if isinstance(item, str) and "=" in item:
                lk, _, lv = item.partition("=")
                data[lk] = lv
                out.lines[("data", lk)] = k.line(*at, "literals", j)
        for item in _list(gen.get("envs")) + (
            [gen["env"]] if isinstance(gen.get("env"), str) else []
        ):
            target = self._entry(kust, item)
            text = self.text(target) if target and self.tree.is_file(target) else None
            for n, line in enumerate((text or "").splitlines(), 1):
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    lk, _, lv = line.partition("=")
                    data[lk.strip()] = lv
                    out.lines[("data", lk.strip())] = n
                    out.files[("data", lk.strip())] = self.display(target or "")
        out.data["data"] = data
        return out

    # ---------------------------------------------------------------- patches

    def _patches(self, kust: str, k: Doc, objs: list[Doc]) -> list[Doc]:
        for i, _ in enumerate(_list(k.data.get("patchesStrategicMerge"))):
            objs = self.apply_patch(kust, k, ("patchesStrategicMerge", i), None, objs)
        for key in ("patches", "patchesJson6902"):
            for i, item in enumerate(_list(k.data.get(key))):
                if not isinstance(item, dict):
                    continue
                target = item.get("target") if isinstance(item.get("target"), dict) else None
                if isinstance(item.get("patch"), str):
                    objs = self.apply_patch(kust, k, (key, i, "patch"), target, objs)
                elif isinstance(item.get("path"), str):
                    objs = self.apply_patch(kust, k, (key, i, "path"), target, objs)
        return objs

    def apply_patch(
        self,
        kust: str,
        k: Doc,
        at: PathKey,
        target: Mapping[Any, Any] | None,
        objs: list[Doc],
    ) -> list[Doc]:
        """Apply the patch at ``at`` of document ``k`` (inline text or a file it names)."""
        value = k.get(*at)
        patch_docs = self._patch_docs(kust, k, at, value)
        for pdoc in patch_docs:
            if isinstance(pdoc.data, list):
                if target is None:
                    continue
                objs = [
                    json6902(o, pdoc) if matches(o, target) else o for o in objs
                ]  # a JSON 6902 patch needs a target
            elif isinstance(pdoc.data, dict):
                if pdoc.data.get("$patch") == "delete":
                    sel = target or self_target(pdoc)
                    objs = [o for o in objs if not matches(o, sel)]
                    continue
                sel = target if target is not None else self_target(pdoc)
                objs = [strategic_merge(o, pdoc) if matches(o, sel) else o for o in objs]
        return objs

    def _patch_docs(self, kust: str, k: Doc, at: PathKey, value: Any) -> list[Doc]:
        if not isinstance(value, str):
            return []
        text = value.strip()
        if at[-1] == "path" or (
            "\n" not in text and text.endswith(YAML_SUFFIXES) and at[0] == "patchesStrategicMerge"
        ):
            rel = self._entry(kust, text)
            return self.docs(rel) if rel is not None and self.tree.is_file(rel) else []
        file, key_line = k.loc(*at)
        key_line = k.key_lines.get(at, key_line)
        try:
            if k.styles.get(at) == "|":
                return parse(value, file, offset=key_line)
            docs = parse(value, file)
        except BadInput as exc:
            key = f"file {exc.location or file}"
            self.unread.add(
                key, _reason(exc), _file_record(file, PARSE_ERROR, exc.location, exc, key)
            )
            return []
        for d in docs:
            d.lines = dict.fromkeys(d.lines, key_line)
            d.key_lines = dict.fromkeys(d.key_lines, key_line)
        return docs

    # ---------------------------------------------------------------- transformers

    def _transform(self, kust: str, k: Doc, objs: list[Doc]) -> list[Doc]:
        data = k.data
        ns = data.get("namespace")
        shown = self.display(kust)
        if isinstance(ns, str) and ns:
            objs = [set_namespace(o, ns, shown, k.line("namespace")) for o in objs]
        prefix = data.get("namePrefix") if isinstance(data.get("namePrefix"), str) else ""
        suffix = data.get("nameSuffix") if isinstance(data.get("nameSuffix"), str) else ""
        if prefix or suffix:
            objs = [rename(o, prefix, suffix) for o in objs]
        for i, image in enumerate(_list(data.get("images"))):
            if isinstance(image, dict) and isinstance(image.get("name"), str):
                objs = [set_image(o, image, shown, k.line("images", i)) for o in objs]
        for item in _list(data.get("replacements")):  # last, as kustomize runs them
            for rep in self._replacements(kust, item):
                objs = replace(objs, rep)
        return objs

    def _replacements(self, kust: str, item: Any) -> list[dict[Any, Any]]:
        """One ``replacements`` entry: itself, or the list in the file its ``path`` names."""
        if not isinstance(item, dict):
            return []
        if not isinstance(item.get("path"), str):
            return [item]
        rel = self._entry(kust, item["path"])
        if rel is None or not self.tree.is_file(rel):
            return []
        out: list[dict[Any, Any]] = []
        for doc in self.docs(rel):
            items = doc.data if isinstance(doc.data, list) else [doc.data]
            out += [r for r in items if isinstance(r, dict)]
        return out


# --------------------------------------------------------------------------- helpers


def _reason(exc: BadInput) -> str:
    """The problem of a parse error, without the location it starts with."""
    prefix = f"{exc.location}: "
    text = exc.message
    return (text[len(prefix) :] if exc.location and text.startswith(prefix) else text) + (
        "; the facts it could hold are unknown"
    )


def _file_record(file: str, cause: str, where: str, exc: BadInput, key: str) -> Unreadable:
    """The record of a file that does not parse (``where``: its file:line)."""
    detail = exc.message.removeprefix(f"{exc.location}: ") if exc.location else exc.message
    return Unreadable(file, cause, kind="file", location=where, detail=detail, keys=(key,))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# the fields of a kustomization that hold lists (kustomize refuses any other type)
_LIST_FIELDS = (
    "resources",
    "bases",
    "components",
    "configMapGenerator",
    "secretGenerator",
    "patches",
    "patchesStrategicMerge",
    "patchesJson6902",
    "images",
)


def _check_lists(k: Doc, display: str) -> None:
    """BadInput at its line when a list field of a kustomization holds something else (as
    kustomize refuses it): read as an empty list, the build would silently lose files."""

    for key in _LIST_FIELDS:
        value = k.data.get(key)
        if value is not None and not isinstance(value, list):
            raise BadInput(
                f"{key} is {describe(value)}, expected a list (kustomize refuses it too)",
                location=f"{display}:{k.line(key)}",
                hint=f"write {key} as a YAML list ('- entry' lines)",
            )


def _generator_metadata(doc: Doc, common: Any, own: Any) -> None:
    """The labels and annotations kustomize gives a generated object: ``generatorOptions``'s,
    then the generator's own ``options`` (which win)."""
    meta = doc.data["metadata"]
    for part in ("labels", "annotations"):
        merged: dict[str, Any] = {}
        for options in (common, own):
            values = options.get(part) if isinstance(options, dict) else None
            if isinstance(values, dict):
                merged.update({str(k): v for k, v in values.items()})
        if merged:
            meta[part] = {**merged, **(meta.get(part) or {})}
