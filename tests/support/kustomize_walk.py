"""A model of kustomize-controller built on the real kustomize, to check the GitOps reader.

For one installation (an entry directory of a repository) the walk does what Flux does on a
cluster, step by step, with ``kubectl kustomize`` doing every build:

* The sources are laid out as source-controller packs them: a copy of the directory without
  what its ignore rules leave out (``.git/`` always; the default list ``.github/``,
  ``*.png``, ``.sops.yaml`` … unless the repository's ``.sourceignore`` files or its
  GitRepository's ``spec.ignore``, found here by scanning the files, replace it; the
  matching is the reader's, upgradeplan/readers/gitops/sourceignore.py, so both read one
  model). An ``ExternalArtifact`` that an ``ArtifactGenerator`` found on the way makes is
  laid out by its ``copy`` rules from that artifact, with the
  ``cp``-like meaning Flux documents (``@src/dir/**`` copies what is in ``dir``;
  ``@src/dir/`` copies ``dir`` itself into the destination; a file copies to a file or into
  a directory).
* Each Flux ``Kustomization`` is built as kustomize-controller builds it: the
  ``kustomization.yaml`` of ``spec.path`` (or one generated from every YAML file below it, a
  subdirectory with its own kustomization listed as a whole) gets ``spec.targetNamespace`` as
  its ``namespace``, ``spec.patches``, ``spec.components`` and ``spec.images`` added, is
  written back into the copy, and built.
* Post-build substitution runs over the text of each object built: variables from
  ``substituteFrom`` ConfigMaps (found among what the installation applies, in the
  Kustomization's namespace; a Secret is never read, so its variables stay unset) overridden
  by ``substitute``; ``${VAR}``, ``${VAR:=default}``, ``${VAR:-default}`` and ``${VAR=default}``
  are replaced, ``$$`` writes one ``$``, and nothing happens when no variable is set (unless
  ``substituteStrategy: Always``). An object labelled or annotated
  ``kustomize.toolkit.fluxcd.io/substitute: disabled`` is left as built.
* Every Flux Kustomization in what was built is followed in turn; a Kustomization whose
  ``substituteFrom`` ConfigMap is not found yet waits until the others are built (on a cluster
  it is retried until the ConfigMap exists).

What it returns is the HelmReleases applied (namespace/name, the namespace as built) and the
builds that failed, with kustomize's reason. Both tests/test_gitops_kustomize_differential.py
and bench/kustomize_walk.py use it; nothing here reads the repository through the reader
except which installations there are and which sources are the repository's own.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
FLUX_KS = "kustomize.toolkit.fluxcd.io/"
SUBSTITUTE_KEY = "kustomize.toolkit.fluxcd.io/substitute"
_EXPR = re.compile(r"\$\$|\$\{([^{}]*)\}")
_VAR = re.compile(r"([_A-Za-z][_A-Za-z0-9]*)(.*)", re.S)
_DOC_SPLIT = re.compile(r"^---[ \t]*$", re.M)
_KLOG = re.compile(r'[EW]\d{4} [\d:.]+\s+\d+ \S+\] "command failed" err=<?|^Error: ')


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, reading a plain ``=`` as text (as Go's YAML reader does)."""


def _text(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:value", _text)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


@dataclass
class Walked:
    """What one installation applies, as the walk found it."""

    releases: set[str] = field(default_factory=set)  # namespace/name of each HelmRelease
    # what Kustomizations with spec.kubeConfig apply to other clusters: cluster -> releases
    remotes: dict[str, set[str]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # "Kustomization ns/name: why"
    other: list[str] = field(default_factory=list)  # sources that are not this repository


def substitute(text: str, env: dict[str, str]) -> str:
    """``text`` with the post-build expressions the walk models replaced from ``env``."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        inner = _VAR.fullmatch(m.group(1))
        if inner is None:
            return m.group(0)
        name, rest = inner.groups()
        value = env.get(name, "")
        if rest == "":
            return value
        for op in (":=", ":-", "="):
            if rest.startswith(op):
                return value or rest[len(op) :]
        return m.group(0)  # a form the walk does not model: left as written

    return _EXPR.sub(one, text)


def _copy_tree(src: Path, dst: Path, ignore: str | None = None, *, packed: bool = False) -> None:
    """Copy ``src`` to ``dst``; ``packed``: as source-controller archives it (its default
    exclusions, or the ``.sourceignore`` files and ``ignore`` (``spec.ignore``) that replace
    them; the reader's model in upgradeplan/readers/gitops/sourceignore.py)."""
    if not packed:
        shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
        return
    from upgradeplan.readers.gitops.sourceignore import Artifact
    from upgradeplan.readers.gitops.trees import WorkTree

    artifact = Artifact(WorkTree(src), "", ignore)
    for folder, dirs, files in os.walk(src):
        here = Path(folder).relative_to(src)
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [*files, *(d for d in dirs if (Path(folder) / d).is_symlink())]:
            rel = (here / name).as_posix()
            if artifact.excluded(rel) is not None:
                continue
            target = dst / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if (Path(folder) / name).is_symlink():
                target.symlink_to(os.readlink(Path(folder) / name))
            else:
                shutil.copy2(Path(folder) / name, target)


def own_ignore(root: Path, own: set[str]) -> str | None:
    """The ``spec.ignore`` of the GitRepository that is this repository, when the files
    under ``root`` define it (one text, however many copies); None otherwise."""
    texts: set[str] = set()
    for path in root.rglob("*.y*ml"):
        if ".git" in path.parts or not path.is_file():
            continue
        raw = path.read_bytes()
        if b"GitRepository" not in raw or b"ignore" not in raw:
            continue
        try:
            docs = list(yaml.load_all(raw, Loader=_Loader))
        except yaml.YAMLError:
            continue
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "GitRepository":
                continue
            meta, spec = _meta(doc), doc.get("spec")
            ignore = spec.get("ignore") if isinstance(spec, dict) else None
            in_flux = (meta.get("namespace") or "flux-system") == "flux-system"
            if meta.get("name") in own and in_flux and isinstance(ignore, str):
                texts.add(ignore)
    return texts.pop() if len(texts) == 1 else None


def _kustomization_file(folder: Path) -> Path | None:
    return next((folder / k for k in KUSTOMIZATION_FILES if (folder / k).is_file()), None)


def _scan(folder: Path) -> list[str]:
    """The resources of the kustomization Flux generates for ``folder``: every YAML file
    below it, and each subdirectory that has its own kustomization as a whole."""
    out: list[str] = []

    def visit(d: Path) -> None:
        for p in sorted(d.iterdir()):
            rel = "./" + p.relative_to(folder).as_posix()
            if p.is_dir():
                if _kustomization_file(p) is not None:
                    out.append(rel)
                else:
                    visit(p)
            elif p.suffix in (".yaml", ".yml"):
                out.append(rel)

    visit(folder)
    return out


def _reason(stderr: str) -> str:
    """kubectl's message without its log prefix, cut to what a table row can hold."""
    text = " ".join(ln.strip() for ln in stderr.splitlines() if ln.strip())
    text = _KLOG.sub("", text).strip(" <>")
    return text[:160]


def _docs(text: str) -> Iterator[str]:
    for part in _DOC_SPLIT.split(text):
        if part.strip():
            yield part


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _is_flux_ks(obj: dict[str, Any]) -> bool:
    return obj.get("kind") == "Kustomization" and str(obj.get("apiVersion", "")).startswith(FLUX_KS)


def _remote(obj: dict[str, Any]) -> str | None:
    """The cluster an object with ``spec.kubeConfig`` applies to, named as the reader names
    it (its namespace, else the kubeconfig Secret's name); None for its own cluster."""
    spec = obj.get("spec")
    config = spec.get("kubeConfig") if isinstance(spec, dict) else None
    if not isinstance(config, dict):
        return None
    ref = config.get("secretRef") or config.get("configMapRef") or {}
    ns = _meta(obj).get("namespace")
    if ns and ns != "flux-system":
        return str(ns)
    return str((ref.get("name") if isinstance(ref, dict) else None) or "remote")


def _key(obj: dict[str, Any]) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'flux-system'}/{meta.get('name')}"


class Walk:
    """kustomize-controller's view of one repository's installations.

    ``own``: names of the GitRepository that is this repository; ``root``: the directory
    its artifact holds; ``pushed``: a directory the repository's CI pushes as the cluster's
    OCI artifact (an OCIRepository is read from it), or None.
    """

    def __init__(
        self, root: Path, own: set[str], pushed: Path | None = None, ignore: str | None = None
    ) -> None:
        self.root = root
        self.own = own
        self.pushed = pushed
        self.ignore = ignore  # the own GitRepository's spec.ignore
        self.tmp = Path(tempfile.mkdtemp(prefix="kustomize-walk-"))
        self.copies: dict[Path, Path] = {}
        self.generators: list[dict[str, Any]] = []
        self.made: dict[str, Path] = {}  # ExternalArtifact name -> its directory

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> Walk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- sources -------------------------------------------------------------------------

    def _copy_of(self, src: Path) -> Path:
        if src not in self.copies:
            dst = self.tmp / f"source-{len(self.copies)}"
            _copy_tree(src, dst, self.ignore if src == self.root else None, packed=True)
            self.copies[src] = dst
        return self.copies[src]

    def _source(self, ref: dict[str, Any], path: str, walked: Walked, label: str) -> Path | None:
        kind, name = ref.get("kind"), ref.get("name")
        if kind == "GitRepository" and name in self.own:
            return self._copy_of(self.root)
        if kind == "OCIRepository" and self.pushed is not None and (self.pushed / path).is_dir():
            return self._copy_of(self.pushed)
        if kind == "ExternalArtifact" and isinstance(name, str):
            made = self._artifact(name)
            if made is not None:
                return made
        walked.other.append(f"{label}: {kind} {name}")
        return None

    def _alias(self, gen: dict[str, Any], alias: str) -> Path | None:
        for src in (gen.get("spec") or {}).get("sources") or []:
            if not isinstance(src, dict) or src.get("alias") != alias:
                continue
            if src.get("kind") == "GitRepository" and src.get("name") in self.own:
                return self._copy_of(self.root)  # the generator reads the source's artifact
            if src.get("kind") == "OCIRepository" and self.pushed is not None:
                return self._copy_of(self.pushed)
        return None

    def _artifact(self, name: str) -> Path | None:
        """The directory of the ExternalArtifact ``name`` as an ArtifactGenerator makes it."""
        for gen in self.generators:
            for art in (gen.get("spec") or {}).get("artifacts") or []:
                if not isinstance(art, dict) or art.get("name") != name:
                    continue
                if name in self.made:
                    return self.made[name]
                out = Path(tempfile.mkdtemp(prefix="artifact-", dir=self.tmp))
                self.made[name] = out
                for rule in art.get("copy") or []:
                    if not self._copy_rule(gen, rule, out):
                        return None
                return out
        return None

    def _copy_rule(self, gen: dict[str, Any], rule: Any, out: Path) -> bool:
        if not isinstance(rule, dict):
            return False
        frm, to = str(rule.get("from", "")), str(rule.get("to", ""))
        m = re.fullmatch(r"@([A-Za-z0-9_-]+)/?(.*)", frm)
        if m is None or not to.startswith("@artifact"):
            return False
        base = self._alias(gen, m.group(1))
        if base is None:
            return False
        pattern, dest_rel = m.group(2), to[len("@artifact") :].lstrip("/")
        dest = out / dest_rel
        into = to.endswith("/") or dest_rel == ""
        if pattern.endswith("/**") or pattern == "**":  # the contents, recursively
            src = base / pattern[: -len("**")].rstrip("/")
            if not src.is_dir():
                return bool(rule.get("optional"))
            _copy_tree(src, dest)
            return True
        if any(c in pattern for c in "*?["):  # files matching a glob in one directory
            folder = base / posixpath.dirname(pattern)
            hits = [p for p in sorted(folder.glob(posixpath.basename(pattern))) if p.is_file()]
            dest.mkdir(parents=True, exist_ok=True)
            for p in hits:
                shutil.copy2(p, dest / p.name)
            return bool(hits) or bool(rule.get("optional"))
        src = base / pattern.rstrip("/")
        if src.is_dir():  # the directory itself, into the destination
            _copy_tree(src, dest / src.name if into else dest)
            return True
        if src.is_file():
            target = dest / src.name if into else dest
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
            return True
        return bool(rule.get("optional"))

    # --- builds --------------------------------------------------------------------------

    def build(self, folder: Path, spec: dict[str, Any]) -> tuple[list[str], str]:
        """The object texts kustomize builds from ``folder`` (a directory of a copy) with
        ``spec``'s additions, or ([], why) when the build fails."""
        kfile = _kustomization_file(folder)
        original = kfile.read_bytes() if kfile is not None else None
        data: dict[str, Any]
        if kfile is None:
            data = {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": _scan(folder),
            }
        else:
            loaded = yaml.safe_load(original or b"")
            data = loaded if isinstance(loaded, dict) else {}
        changed = kfile is None
        tns = spec.get("targetNamespace")
        if isinstance(tns, str) and tns:
            data["namespace"], changed = tns, True
        for item in spec.get("patches") or []:
            if isinstance(item, dict):
                data.setdefault("patches", []).append(item)
                changed = True
        for comp in spec.get("components") or []:
            data.setdefault("components", []).append(comp)
            changed = True
        for image in spec.get("images") or []:
            if isinstance(image, dict):
                images = [i for i in data.get("images") or [] if i.get("name") != image.get("name")]
                data["images"], changed = [*images, image], True
        target = kfile or folder / "kustomization.yaml"
        if changed:
            target.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        try:
            done = subprocess.run(
                ["kubectl", "kustomize", "--load-restrictor=LoadRestrictionsNone", str(folder)],
                capture_output=True,
                text=True,
                check=False,
                timeout=120,
            )
        finally:
            if original is not None:
                target.write_bytes(original)
            elif changed:
                target.unlink()
        if done.returncode != 0:
            return [], _reason(done.stderr) or f"kustomize exit {done.returncode}"
        return list(_docs(done.stdout)), ""

    # --- one installation ----------------------------------------------------------------

    def installation(self, entry: str) -> Walked:
        """What Flux applies from ``entry`` (a directory relative to the source's root)."""
        walked = Walked()
        self.generators = []  # an installation's generators make its own artifacts
        self.made = {}
        top_dir = self._copy_of(self.root) / entry
        texts, why = self.build(top_dir, {})
        if why:
            walked.failed.append(f"entry {entry or '.'}: {why}")
            return walked
        top = [d for d in (_load(t) for t in texts) if isinstance(d, dict)]
        self.generators += [d for d in top if d.get("kind") == "ArtifactGenerator"]
        configmaps = [d for d in top if d.get("kind") == "ConfigMap"]
        sync = next((d for d in top if _is_flux_ks(d) and self._applies(d, entry)), None)
        queue = [sync] if sync is not None else [d for d in top if _is_flux_ks(d)]
        if sync is None:
            self._collect(top, walked, None)
        remote_of: dict[str, str | None] = {}  # Kustomization -> the cluster it applies to
        seen: set[str] = set()
        waited: set[str] = set()
        while queue:
            ks = queue.pop(0)
            key = _key(ks)
            if key in seen:
                continue
            spec = ks.get("spec") if isinstance(ks.get("spec"), dict) else {}
            assert isinstance(spec, dict)
            env, missing = self._variables(spec, _meta(ks).get("namespace"), configmaps)
            if missing and key not in waited:
                waited.add(key)
                queue.append(ks)  # its ConfigMap may come from a Kustomization still queued
                continue
            seen.add(key)
            objs = self._apply(ks, spec, env, walked)
            configmaps += [d for d in objs if d.get("kind") == "ConfigMap"]
            self.generators += [d for d in objs if d.get("kind") == "ArtifactGenerator"]
            remote = _remote(ks) or remote_of.get(key)
            self._collect(objs, walked, remote)
            for child in (d for d in objs if _is_flux_ks(d)):
                remote_of.setdefault(_key(child), remote)
                queue.append(child)
        return walked

    def _applies(self, ks: dict[str, Any], entry: str) -> bool:
        spec = ks.get("spec") or {}
        ref = spec.get("sourceRef") or {}
        path = posixpath.normpath(str(spec.get("path") or ".").lstrip("/"))
        return (
            ref.get("kind") == "GitRepository"
            and ref.get("name") in self.own
            and path == posixpath.normpath(entry or ".")
        )

    def _apply(
        self, ks: dict[str, Any], spec: dict[str, Any], env: dict[str, str] | None, walked: Walked
    ) -> list[dict[str, Any]]:
        label = f"Kustomization {_key(ks)}"
        path = posixpath.normpath(str(spec.get("path") or ".").lstrip("/"))
        ref = spec.get("sourceRef") if isinstance(spec.get("sourceRef"), dict) else {}
        assert isinstance(ref, dict)
        base = self._source(ref, path, walked, label)
        if base is None:
            return []
        folder = base / path
        if not folder.is_dir():
            walked.failed.append(f"{label}: spec.path {path} is not a directory")
            return []
        texts, why = self.build(folder, spec)
        if why:
            walked.failed.append(f"{label}: {why}")
            return []
        out: list[dict[str, Any]] = []
        for text in texts:
            obj = _load(text)
            if not isinstance(obj, dict):
                continue
            meta = _meta(obj)
            off = any(
                isinstance(meta.get(k), dict) and meta[k].get(SUBSTITUTE_KEY) == "disabled"
                for k in ("labels", "annotations")
            )
            if env is not None and not off:
                obj = _load(substitute(text, env))
            if isinstance(obj, dict):
                out.append(obj)
        return out

    @staticmethod
    def _variables(
        spec: dict[str, Any], namespace: Any, configmaps: list[dict[str, Any]]
    ) -> tuple[dict[str, str] | None, bool]:
        """The post-build variables (None: no substitution) and whether a ConfigMap that
        ``substituteFrom`` needs was not found."""
        post = spec.get("postBuild")
        if not isinstance(post, dict):
            return None, False
        env: dict[str, str] = {}
        missing = False
        ns = namespace or "flux-system"
        for ref in post.get("substituteFrom") or []:
            if not isinstance(ref, dict) or ref.get("kind") != "ConfigMap":
                continue  # a Secret's data is never read: its variables stay unset
            cm = next(
                (
                    c
                    for c in configmaps
                    if _meta(c).get("name") == ref.get("name")
                    and _meta(c).get("namespace") in (None, ns)
                ),
                None,
            )
            if cm is None:
                missing = missing or not ref.get("optional")
                continue
            for k, v in (cm.get("data") or {}).items():
                env[str(k)] = str(v).replace("\n", "")
        for k, v in (post.get("substitute") or {}).items():
            env[str(k)] = str(v).replace("\n", "")
        if not env and post.get("substituteStrategy") != "Always":
            return None, missing
        return env, missing

    @staticmethod
    def _collect(objs: list[dict[str, Any]], walked: Walked, remote: str | None) -> None:
        for obj in objs:
            if obj.get("kind") == "HelmRelease" and str(obj.get("apiVersion", "")).startswith(
                "helm.toolkit.fluxcd.io/"
            ):
                meta = _meta(obj)
                name = f"{meta.get('namespace') or ''}/{meta.get('name')}"
                where = remote or _remote(obj)
                if where is None:
                    walked.releases.add(name)
                else:
                    walked.remotes.setdefault(where, set()).add(name)


@dataclass
class Row:
    """One installation: the HelmReleases the reader finds and those the walk finds."""

    installation: str
    reader: set[str]
    walk: Walked


def compare(repo: Path) -> list[Row]:
    """Per installation of ``repo``: the reader's HelmReleases beside the walk's."""
    from upgradeplan.readers.gitops.flux import Applier, find_entries
    from upgradeplan.readers.gitops.render import Renderer
    from upgradeplan.readers.gitops.trees import open_path

    tree, _, _ = open_path(str(repo), None)
    renderer = Renderer(tree, lambda rel: rel)
    entries = find_entries(tree, "", renderer)
    applier = Applier(tree, renderer, lambda rel: rel)
    pushed = applier._pushed()
    source_root = repo / tree.repo_rel if tree.repo_rel else repo
    rows: list[Row] = []
    own = set(renderer.own_sources)
    with Walk(
        source_root, own, source_root / pushed[0] if pushed else None, own_ignore(repo, own)
    ) as walk:
        for name, root in entries:
            inst = applier.apply(name, root)
            rel = posixpath.relpath(root or ".", tree.repo_rel or ".") if tree.repo_rel else root
            walked = walk.installation("" if rel == "." else rel)
            rows.append(Row(name, _releases(inst.objects), walked))
            for spoke in sorted(set(inst.remotes) | set(walked.remotes)):
                objs = inst.remotes[spoke].objects if spoke in inst.remotes else []
                theirs = Walked(walked.remotes.get(spoke, set()))
                rows.append(Row(spoke, _releases(objs), theirs))
    return rows


def _releases(objects: list[Any]) -> set[str]:
    """namespace/name of the HelmReleases among the reader's objects."""
    return {
        f"{(d.get('metadata') or {}).get('namespace') or ''}/"
        f"{(d.get('metadata') or {}).get('name')}"
        for d in objects
        if d.get("kind") == "HelmRelease"
        and str(d.get("apiVersion") or "").startswith("helm.toolkit.fluxcd.io/")
    }
