"""A repository read the way Flux applies it: entry points, the Kustomization graph.

An *entry point* is where a cluster's Flux starts: a Flux ``Kustomization`` whose ``spec.path``
holds its own file (the bootstrap sync, ``flux-system/gotk-sync.yaml``) or a FluxInstance's
sync; without either, a directory holding Flux Kustomizations that no other Kustomization
applies. Where Flux's own entry points exist, such a directory (an ``archive/`` of old
``ks.yaml`` files) is applied by nothing: it is reported, not read as an installation. Each
entry point is one installation. From it, every Flux ``Kustomization`` found in what it applies
is followed: ``spec.path`` (relative to the repository root) built as kustomize-controller
builds it, with ``spec.components``, ``spec.patches``, ``spec.targetNamespace`` and
``spec.postBuild`` substitution (``substitute``, and ``substituteFrom`` ConfigMaps of the tree;
a Secret's variables stay unknown), in ``dependsOn`` order. A Kustomization whose source is not
this repository (another GitRepository, an OCIRepository, a Bucket, an ExternalArtifact that no
ArtifactGenerator of this repository copies) is recorded as unreadable, with its name.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator

from msgspec import Struct, field

from upgradeplan.readers.gitops.docs import Doc
from upgradeplan.readers.gitops.facts import (
    MAY_FAIL,
    NOT_FOUND,
    OTHER_SOURCE,
    SUBSTITUTION_FAILS,
    Unread,
)
from upgradeplan.readers.gitops.postbuild import post_build, postbuild_line
from upgradeplan.readers.gitops.render import YAML_SUFFIXES, Renderer
from upgradeplan.readers.gitops.sourceignore import Archives, refusal
from upgradeplan.readers.gitops.transform import identity, set_namespace
from upgradeplan.readers.gitops.trees import Tree, norm
from upgradeplan.unreadable import Unreadable

FLUX_KS_GROUP = "kustomize.toolkit.fluxcd.io"
# a workflow step that pushes a directory of the repository as the cluster's OCI artifact
_PUSH = re.compile(r"flux\s+push\s+artifact\b[^\n]*(?:\\\n[^\n]*)*?--path[=\s]+(\S+)")
SOURCE_GROUP = "source.toolkit.fluxcd.io"


def is_flux_kustomization(doc: Doc) -> bool:
    group, kind, _, name = identity(doc)
    return kind == "Kustomization" and group == FLUX_KS_GROUP and bool(name)


class Installation(Struct):
    """One cluster entry point: its name, where it starts, and what it applies."""

    name: str
    root: str  # tree path of the entry directory
    objects: list[Doc] = field(default_factory=list)
    unread: Unread = field(default_factory=Unread)
    # post-build substitution: expression -> why its value is unknown / why it is text
    unresolved: dict[str, str] = field(default_factory=dict)
    literal: dict[str, str] = field(default_factory=dict)
    kustomizations: list[str] = field(default_factory=list)  # namespace/name, in apply order
    # what Kustomizations (or HelmReleases) with spec.kubeConfig apply to other clusters: one
    # installation per cluster, named after their namespace (else the kubeconfig Secret)
    remotes: dict[str, Installation] = field(default_factory=dict)


class _Ks(Struct):
    doc: Doc
    key: str  # namespace/name
    parent: str | None


def _flux_candidates(tree: Tree, start: str) -> Iterator[str]:
    """YAML files under ``start`` that mention Flux Kustomizations (others are not parsed)."""
    stack = [start]
    while stack:
        rel = stack.pop()
        for name in tree.list_dir(rel):
            if name.startswith("."):
                continue
            child = norm(posixpath.join(rel, name))
            if tree.is_dir(child):
                stack.append(child)
            elif name.endswith(YAML_SUFFIXES):
                yield child


def find_entries(tree: Tree, start: str, renderer: Renderer) -> list[tuple[str, str]]:
    """The entry directories under ``start``: (name, tree path), or [] without Flux objects."""
    ks: list[tuple[str, Doc]] = []
    syncs: set[int] = set()  # indexes in ks of the Kustomizations a FluxInstance's sync makes
    for rel in _flux_candidates(tree, start):
        try:
            head = renderer.read(rel)
        except OSError:
            continue
        instance = b"sync" in head and (b"FluxInstance" in head or b"flux-instance" in head)
        if b"ArtifactGenerator" in head:
            renderer.generators += [
                d for d in renderer.docs(rel) if identity(d)[1] == "ArtifactGenerator"
            ]
        if b"GitRepository" in head and b"ignore" in head:  # spec.ignore: what it archives
            renderer.git_repositories += [
                (rel, d) for d in renderer.docs(rel) if identity(d)[1] == "GitRepository"
            ]
        if FLUX_KS_GROUP.encode() not in head and not instance:
            continue
        for doc in renderer.docs(rel):
            if is_flux_kustomization(doc):
                ks.append((rel, doc))
            elif instance and (sync := _instance_sync(doc)) is not None:
                syncs.add(len(ks))
                ks.append((rel, sync))
    if not ks:
        # an overlay listing Flux Kustomizations from other directories (../base/…): what
        # its build reaches is what Flux applies from here
        built = [d for d in renderer.sibling(loose=True).build(start) if is_flux_kustomization(d)]
        if not built:
            return []
        tree.repo_rel = _source_root(tree, built)
        renderer.own_sources = _own_sources(tree, built)
        return _names([start])
    tree.repo_rel = _source_root(tree, [doc for _, doc in ks])
    own_sources = _own_sources(tree, [doc for _, doc in ks])
    renderer.own_sources = own_sources
    # What each Kustomization applies (the files its build reads), to find those no other
    # Kustomization applies.
    reached: dict[str, set[str]] = {}
    paths: dict[int, str] = {}  # index in ks -> the directory it applies
    for i, (_, doc) in enumerate(ks):
        path = _spec_path(doc) if doc.get("spec", "path") is not None else None
        if path is None or doc.get("spec", "sourceRef", "name") not in own_sources:
            continue
        path = norm(posixpath.join(tree.repo_rel, path))
        if not tree.is_dir(path):
            continue
        paths[i] = path
        if path not in reached:
            before = set(renderer.read_files)
            renderer.read_files = set()
            renderer.build(path)
            reached[path] = renderer.read_files
            renderer.read_files = before | reached[path]
    entries: dict[str, str] = {}
    strong: set[str] = set()  # entries Flux itself starts from: a bootstrap or instance sync
    # When some Kustomizations read the cluster's own source (flux-system), entries are among
    # them: the others are applied by a Kustomization whose source is not read here.
    synced = [i for i, (_, d) in enumerate(ks) if d.get("spec", "sourceRef", "name") in own_sources]
    for i in synced or range(len(ks)):
        rel = ks[i][0]
        own = paths.get(i)
        if i in syncs and own is not None:  # where a FluxInstance's sync starts
            entries[own] = own
            strong.add(own)
            continue
        # paths of the Kustomizations written in other files
        elsewhere = [p for j, p in paths.items() if ks[j][0] != rel]
        # the bootstrap sync: its path applies its own file
        if own is not None and rel in reached.get(own, set()):
            if not any(rel in reached[p] for p in elsewhere if p != own):
                entries[own] = own
                strong.add(own)
            continue
        if any(rel in files for p, files in reached.items() if p != own):
            continue
        if any(_under(rel, p) for p in elsewhere):
            continue  # in a directory Flux applies but left out of its kustomization
        entries.setdefault(posixpath.dirname(rel), posixpath.dirname(rel))
    roots = sorted(entries)
    # an entry inside another entry's directory is that entry's
    roots = [r for r in roots if not any(o != r and _under(r, o) for o in roots)]
    if strong:  # Flux starts only from these: the other directories are applied by nothing
        renderer.unapplied = [r for r in roots if r not in strong]
        roots = [r for r in roots if r in strong]
    return _names(roots)


def _instance_sync(doc: Doc) -> Doc | None:
    """The Kustomization a flux-operator ``FluxInstance`` makes of its ``spec.sync`` (also as
    the values ``instance.sync`` of a ``flux-instance`` HelmRelease): one more entry point."""
    group, kind, _, _ = identity(doc)
    if kind == "FluxInstance" and group == "fluxcd.controlplane.io":
        at: tuple[str, ...] = ("spec", "sync")
    elif kind == "HelmRelease" and group == "helm.toolkit.fluxcd.io":
        at = ("spec", "values", "instance", "sync")
    else:
        return None
    sync = doc.get(*at)
    if not isinstance(sync, dict) or not isinstance(sync.get("path"), str):
        return None
    name = str(sync.get("name") or "flux-system")
    data = {
        "apiVersion": f"{FLUX_KS_GROUP}/v1",
        "kind": "Kustomization",
        "metadata": {"name": name, "namespace": "flux-system"},
        "spec": {
            "path": sync["path"],
            "sourceRef": {"kind": str(sync.get("kind") or "GitRepository"), "name": name},
        },
    }
    out = Doc(data=data, file=doc.file, index=doc.index)
    out.lines[()] = out.lines[("spec", "sourceRef")] = doc.line(*at)
    out.lines[("spec", "path")] = doc.line(*at, "path")
    return out


def _own_sources(tree: Tree, ks: list[Doc]) -> set[str]:
    """The names of the GitRepository that is this repository: ``flux-system`` (what
    bootstrap and a FluxInstance's sync make) when Kustomizations use it, else the one most
    Kustomizations whose ``spec.path`` is a directory of the tree use (a repository whose own
    GitRepository has another name)."""
    used: dict[str, int] = {}
    for doc in ks:
        ref = doc.get("spec", "sourceRef")
        if not isinstance(ref, dict) or ref.get("kind") != "GitRepository":
            continue
        path = norm(posixpath.join(tree.repo_rel, _spec_path(doc) or ""))
        if isinstance(ref.get("name"), str) and tree.is_dir(path):
            used[ref["name"]] = used.get(ref["name"], 0) + 1
    if not used or "flux-system" in used:
        return {"flux-system"}
    return {max(sorted(used), key=lambda n: used[n])}


def _source_root(tree: Tree, ks: list[Doc]) -> str:
    """Where the repository's own source (its GitRepository) has its root.

    Flux resolves ``spec.path`` against the root of the source's artifact. That root is the
    ``--gitops`` directory when the Kustomizations' paths are directories there (a repository
    read from its root, or a tree of Flux files inside another repository); otherwise the top
    of the git work tree holding it (``--gitops`` pointed at a directory inside a repository).
    """
    candidates = list(dict.fromkeys(["", tree.repo_rel]))
    paths = [
        _spec_path(doc) or ""
        for doc in ks
        if doc.get("spec", "sourceRef", "kind") in ("GitRepository", None)
        and isinstance(doc.get("spec", "path"), str)
    ]

    def resolved(root: str) -> int:
        return sum(1 for p in paths if tree.is_dir(norm(posixpath.join(root, p))))

    return max(candidates, key=resolved)  # the first (the directory given) on a tie


def _under(rel: str, directory: str) -> bool:
    return directory == "" or rel == directory or rel.startswith(directory + "/")


def _names(roots: list[str]) -> list[tuple[str, str]]:
    """Each entry's name: its directory's name, or the part of the paths that differs
    (``kubernetes/main/cluster`` and ``kubernetes/staging/cluster`` are ``main``, ``staging``)."""
    base = [posixpath.basename(r) or "." for r in roots]
    if len(set(base)) == len(base):
        return list(zip(base, roots, strict=True))
    parts = [r.split("/") for r in roots]
    head = 0
    while all(len(p) > head + 1 and p[head] == parts[0][head] for p in parts):
        head += 1
    tail = 0
    while all(len(p) > head + tail + 1 and p[-1 - tail] == parts[0][-1 - tail] for p in parts):
        tail += 1
    names = ["/".join(p[head : len(p) - tail]) or "." for p in parts]
    if len(set(names)) != len(names):
        names = [r or "." for r in roots]
    return list(zip(names, roots, strict=True))


def _spec_path(doc: Doc) -> str | None:
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return None
    path = spec.get("path")
    return norm(path.strip().lstrip("/")) if isinstance(path, str) else ""


class Applier:
    """Everything one entry point applies, Kustomization by Kustomization."""

    def __init__(
        self,
        tree: Tree,
        renderer: Renderer,
        display: Callable[[str], str],
        artifacts: dict[str, str] | None = None,
    ) -> None:
        self.tree = tree
        self.base = renderer
        self.renderer = renderer
        self.display = display
        self.generators: list[Doc] = []
        self.pushed: list[str] | None = None  # directories the repository's CI pushes
        self.artifacts = artifacts or {}  # --gitops-artifact: source name -> directory
        self.archives = Archives(tree, display)  # what each source's artifact holds

    def apply(self, name: str, root: str) -> Installation:
        inst = Installation(name, root)
        self.renderer = self.base.sibling()
        top = self.renderer.build(root)
        self.generators = [
            *self.base.generators,
            *(d for d in top if identity(d)[1] == "ArtifactGenerator"),
        ]
        order: list[tuple[_Ks, list[Doc]]] = []
        seen: set[str] = set()
        configmaps = [d for d in top if identity(d)[1] == "ConfigMap"]
        sync = self._sync_of(top, root)
        queue: list[tuple[Doc, str | None]] = [(sync, None)] if sync is not None else []
        if sync is None:
            queue = [(d, None) for d in top if is_flux_kustomization(d)]
            inst.objects += [d for d in top if not is_flux_kustomization(d)]
        while queue:
            doc, parent = queue.pop(0)
            _, _, ns, ks_name = identity(doc)
            key = f"{ns or 'flux-system'}/{ks_name}"
            if key in seen:
                continue
            seen.add(key)
            # substituted before its children are followed: their spec.path may hold ${VAR}
            objs = self._post_build(doc, self._build(doc, inst), configmaps, inst)
            configmaps += [d for d in objs if identity(d)[1] == "ConfigMap"]
            order.append((_Ks(doc, key, parent), objs))
            queue += [(d, key) for d in objs if is_flux_kustomization(d)]
        target_of: dict[str, str | None] = {}  # Kustomization -> the remote cluster it applies to
        for ks, objs in _depends_order(order):
            remote = _remote(ks.doc) or target_of.get(ks.parent or "")
            target_of[ks.key] = remote
            inst.kustomizations.append(ks.key)
            for o in objs:
                if is_flux_kustomization(o):
                    continue
                where = remote or (_remote(o) if identity(o)[1] == "HelmRelease" else None)
                if where is None:
                    inst.objects.append(o)
                else:  # applied to another cluster through spec.kubeConfig: its installation
                    inst.remotes.setdefault(where, Installation(where, root)).objects.append(o)
        inst.unread.update(self.renderer.unread)
        return inst

    def _sync_of(self, top: list[Doc], root: str) -> Doc | None:
        """The Kustomization of ``top`` that applies ``root`` itself from this repository (the
        bootstrap sync): what it applies carries its patches and substitution, so the entry
        is read through it."""
        for doc in top:
            ref = doc.get("spec", "sourceRef")
            if not is_flux_kustomization(doc) or not isinstance(ref, dict):
                continue
            if ref.get("kind") != "GitRepository" or ref.get("name") not in self.base.own_sources:
                continue
            if norm(posixpath.join(self.tree.repo_rel, _spec_path(doc) or "")) == root:
                return doc
        return None

    @staticmethod
    def _post_build(
        ks: Doc, objs: list[Doc], configmaps: list[Doc], inst: Installation
    ) -> list[Doc]:
        """``objs`` as Flux applies them after ``ks``'s post-build substitution; a build that
        fails (or fails with strict substitution) is recorded against the Kustomization."""
        done = post_build(ks, objs, configmaps)
        inst.unresolved.update({k: v for k, v in done.unknown.items() if k not in inst.unresolved})
        inst.literal.update({k: v for k, v in done.literal.items() if k not in inst.literal})
        why = done.fails or done.may_fail
        if why:
            _, _, ns, name = identity(ks)
            source = f"Kustomization {ns or 'flux-system'}/{name}"
            cause, detail = (
                (SUBSTITUTION_FAILS, f"{why}; Flux applies none of it")
                if done.fails
                else (
                    MAY_FAIL,
                    f"{why}: with strict substitution (kustomize-controller's default from "
                    "v1.9.0) Flux applies none of it",
                )
            )
            where = f"{ks.file}:{postbuild_line(ks)}"
            key = f"source {source}"
            rec = Unreadable(
                source, cause, kind="resource", location=where, detail=detail, keys=(key,)
            )
            inst.unread.add(key, f"{where}: {detail}", rec)
        return done.objects

    def _source_root(self, doc: Doc, inst: Installation) -> str | None:
        """The tree path ``spec.path`` is relative to, or None (recorded) for another source."""
        ref = doc.get("spec", "sourceRef")
        kind = ref.get("kind") if isinstance(ref, dict) else None
        src = ref.get("name") if isinstance(ref, dict) else None
        shown = f"{doc.file}:{doc.line('spec', 'sourceRef')}"
        _, _, ns, ks_name = identity(doc)
        label = f"Kustomization {ns or 'flux-system'}/{ks_name}"
        if kind == "GitRepository" and src in self.base.own_sources:
            return self.tree.repo_rel
        if kind == "GitRepository" and isinstance(src, str):
            why = f"{label} applies another repository (GitRepository {src}); not read"
            self._other_source(inst, f"GitRepository {src}", shown, why)
            return None
        if kind in ("OCIRepository", "ExternalArtifact") and src in self.artifacts:
            return norm(posixpath.join(self.tree.repo_rel, self.artifacts[str(src)]))
        if kind == "ExternalArtifact" and isinstance(src, str):
            mapped = self._artifact(src, doc)
            if mapped is not None:
                return mapped
        if kind == "OCIRepository" and isinstance(src, str):
            for pushed in self._pushed():  # the repository's CI pushes it from a directory
                root = norm(posixpath.join(self.tree.repo_rel, pushed))
                if self.tree.is_dir(norm(posixpath.join(root, _spec_path(doc) or ""))):
                    return root
        why = f"{label} applies {kind} {src}, which is not this repository; not read"
        self._other_source(inst, f"{kind} {src}", shown, why)
        return None

    @staticmethod
    def _other_source(inst: Installation, source: str, where: str, why: str) -> None:
        key = f"source {source}"
        rec = Unreadable(
            source, OTHER_SOURCE, kind="resource", location=where, detail=why, keys=(key,)
        )
        inst.unread.add(key, f"{where}: {why}", rec)

    def _pushed(self) -> list[str]:
        """The directories a workflow of the repository pushes as an OCI artifact
        (``flux push artifact … --path=./kubernetes``): an OCIRepository a Kustomization
        applies is read from the one its ``spec.path`` is a directory of."""
        if self.pushed is None:
            self.pushed = []
            folder = norm(posixpath.join(self.tree.repo_rel, ".github/workflows"))
            names = self.tree.list_dir(folder) if self.tree.is_dir(folder) else []
            for name in sorted(names):
                if not name.endswith(YAML_SUFFIXES):
                    continue
                try:
                    text = self.tree.read(norm(posixpath.join(folder, name))).decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                for m in _PUSH.finditer(text):
                    path = norm(m.group(1).strip("'\"").lstrip("./") or "")
                    if path not in self.pushed:
                        self.pushed.append(path)
        return self.pushed

    def _artifact(self, name: str, doc: Doc) -> str | None:
        """The tree path an ExternalArtifact that an ArtifactGenerator copies from this
        repository has its root at, or None.

        Two copy forms are followed: one directory to the artifact's root (``@src/dir/**`` to
        ``@artifact/``, as flux2-kustomize-helm-example writes it), and directories copied to
        the same path (``@repo/apps/x/app/`` to ``@artifact/apps/x/app/``): the artifact is
        then laid out as the source is. The source is this repository, or an OCI artifact its
        CI pushes from one of its directories. Anything else is not read.
        """
        for gen in self.generators:
            for art in gen.get("spec", "artifacts") or []:
                if not isinstance(art, dict) or art.get("name") != name:
                    continue
                roots: dict[str, str] = {}
                alias = ""
                for c in art.get("copy") or []:
                    if not isinstance(c, dict):
                        continue
                    frm, to = str(c.get("from", "")), str(c.get("to", ""))
                    m = re.fullmatch(r"@([^/]+)/(.*?)/?(\*\*)?", frm)
                    t = re.fullmatch(r"@artifact/(.*?)/?(\*\*)?", to)
                    if m is None or t is None:
                        return None
                    alias = m.group(1)
                    roots[norm(t.group(1))] = norm(m.group(2))
                base = self._alias_root(gen, alias, doc)
                if base is None:
                    return None
                if "" in roots:
                    return norm(posixpath.join(base, roots[""]))
                if roots and all(k == v for k, v in roots.items()):
                    return base  # copied to the same paths: the artifact is laid out as the source
                # base/ and staging/ copied side by side: their common parent in the repository
                parents = {
                    posixpath.dirname(v) for k, v in roots.items() if posixpath.basename(v) == k
                }
                if len(parents) == 1 and len(roots) == sum(
                    1 for k, v in roots.items() if posixpath.basename(v) == k
                ):
                    return norm(posixpath.join(base, parents.pop()))
        return None

    def _alias_root(self, gen: Doc, alias: str, doc: Doc) -> str | None:
        """The tree path of a generator's source ``alias``: this repository, or an OCI
        artifact the repository's CI pushes (whose directory holds ``doc``'s path)."""
        for src in gen.get("spec", "sources") or []:
            if not isinstance(src, dict) or src.get("alias") != alias:
                continue
            if src.get("kind") == "GitRepository" and src.get("name") in self.base.own_sources:
                return self.tree.repo_rel
            if src.get("kind") == "OCIRepository" and src.get("name") in self.artifacts:
                return norm(posixpath.join(self.tree.repo_rel, self.artifacts[src["name"]]))
            if src.get("kind") == "OCIRepository":
                for pushed in self._pushed():
                    root = norm(posixpath.join(self.tree.repo_rel, pushed))
                    if self.tree.is_dir(norm(posixpath.join(root, _spec_path(doc) or ""))):
                        return root
            return None
        return self.tree.repo_rel if not alias else None

    def _build(self, doc: Doc, inst: Installation) -> list[Doc]:
        spec = doc.get("spec")
        if not isinstance(spec, dict):
            return []
        base = self._source_root(doc, inst)
        if base is None:
            return []
        path = norm(posixpath.join(base, _spec_path(doc) or ""))
        if not self.tree.is_dir(path):
            key = f"file {self.display(path) or '.'}"
            where = f"{doc.file}:{doc.line('spec', 'path')}"
            why = f"spec.path {spec.get('path')!r} is not a directory of this repository"
            rec = Unreadable(
                self.display(path) or ".",
                NOT_FOUND,
                kind="file",
                location=where,
                detail=why,
                keys=(key,),
            )
            inst.unread.add(key, f"{where}: {why}", rec)
            return []
        comps = tuple(
            norm(posixpath.join(path, c))
            for c in spec.get("components") or []
            if isinstance(c, str)
        )
        archive = self.archives.of(doc, base, inst.root, self.base)
        objs, refused = self.renderer.build_in(archive, path, comps)
        if refused:  # kustomize fails: Flux applies none of it
            rec = refusal(doc, refused, self.display)
            inst.unread.add(rec.keys[0], f"{rec.location}: {rec.detail}", rec)
            return []
        for i, item in enumerate(spec.get("patches") or []):
            if isinstance(item, dict) and isinstance(item.get("patch"), str):
                target = item.get("target") if isinstance(item.get("target"), dict) else None
                objs = self.renderer.apply_patch(
                    "", doc, ("spec", "patches", i, "patch"), target, objs
                )
        tns = spec.get("targetNamespace")
        if isinstance(tns, str) and tns:
            objs = [
                set_namespace(o, tns, doc.file, doc.line("spec", "targetNamespace")) for o in objs
            ]
        return objs


def _remote(doc: Doc) -> str | None:
    """The cluster a Kustomization or HelmRelease applies to through ``spec.kubeConfig``: the
    namespace it is in (hub-and-spoke repositories keep one per spoke), else the Secret's
    name; None when it applies to its own cluster."""
    config = doc.get("spec", "kubeConfig")
    if not isinstance(config, dict):
        return None
    ref = config.get("secretRef") or config.get("configMapRef") or {}
    secret = ref.get("name") if isinstance(ref, dict) else None
    _, _, ns, _ = identity(doc)
    if ns and ns != "flux-system":
        return str(ns)
    return str(secret or "remote")


def _depends_order(order: list[tuple[_Ks, list[Doc]]]) -> list[tuple[_Ks, list[Doc]]]:
    """The Kustomizations in ``dependsOn`` order (a stable topological sort; cycles kept)."""
    by_key = {ks.key: (ks, objs) for ks, objs in order}
    names: dict[str, str] = {}
    for ks, _ in order:
        names.setdefault(ks.key.split("/", 1)[1], ks.key)
    done: list[str] = []
    visiting: set[str] = set()

    def visit(key: str) -> None:
        if key in done or key in visiting:
            return
        visiting.add(key)
        ks, _ = by_key[key]
        _, _, ns, _ = identity(ks.doc)
        for dep in ks.doc.get("spec", "dependsOn") or []:
            if not isinstance(dep, dict) or not isinstance(dep.get("name"), str):
                continue
            dep_key = f"{dep.get('namespace') or ns or 'flux-system'}/{dep['name']}"
            if dep_key not in by_key:
                dep_key = names.get(dep["name"], dep_key)
            if dep_key in by_key:
                visit(dep_key)
        visiting.discard(key)
        done.append(key)

    for ks, _ in order:
        visit(ks.key)
    return [by_key[k] for k in done]
