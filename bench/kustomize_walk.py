"""HelmReleases per installation: the GitOps reader against a walk with ``kubectl kustomize``.

The walk does what kustomize-controller does, with the real kustomize: from each
installation's entry directory, build it (``kubectl kustomize``, or every YAML file below it
where there is no kustomization, as Flux generates one), and follow every Flux Kustomization it
finds whose source is the repository (``spec.path`` from the repository root), building that
in turn. Post-build substitution is left out: names are compared with their ``${VAR}`` as
written. Run against clones outside the project::

    python bench/kustomize_walk.py /tmp/field

prints, per repository and installation, the HelmReleases each side finds and whether the
two sets are equal (the rows of docs/gitops.md, "Field counts").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def _docs(text: str) -> list[dict[str, Any]]:
    """Every mapping document of ``text``; one that does not parse is left out alone."""
    out: list[dict[str, Any]] = []
    for part in ("\n" + text).split("\n---"):
        try:
            doc = yaml.load(part, Loader=yaml.CSafeLoader)
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict):
            out.append(doc)
    return out


def build(folder: Path) -> list[dict[str, Any]] | None:
    """The objects Flux builds from ``folder``; None when kustomize fails. Without a
    kustomization, Flux generates one: every YAML file of the folder, and each subfolder
    built the same way (a subfolder with a kustomization by kustomize)."""
    if any((folder / k).is_file() for k in KUSTOMIZATIONS):
        done = subprocess.run(
            ["kubectl", "kustomize", "--load-restrictor=LoadRestrictionsNone", str(folder)],
            capture_output=True,
            text=True,
            check=False,
        )
        return _docs(done.stdout) if done.returncode == 0 else None
    out: list[dict[str, Any]] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            sub = build(path)
            if sub is None:
                return None
            out += sub
        elif path.suffix in (".yaml", ".yml"):
            out += _docs(path.read_text(encoding="utf-8", errors="replace"))
    return out


def walk(repo: Path, entry: Path, pushed: Path | None = None) -> tuple[set[str], int]:
    """HelmRelease names applied from ``entry``, and how many builds failed."""
    releases: set[str] = set()
    failed = 0
    queue = [entry]
    seen: set[Path] = set()
    while queue:
        folder = queue.pop()
        if folder in seen or not folder.is_dir():
            continue
        seen.add(folder)
        objs = build(folder)
        if objs is None:
            failed += 1
            continue
        for obj in objs:
            kind = obj.get("kind")
            api = str(obj.get("apiVersion", ""))
            if kind == "HelmRelease" and api.startswith("helm.toolkit.fluxcd.io/"):
                releases.add(str((obj.get("metadata") or {}).get("name")))
            if kind == "Kustomization" and api.startswith("kustomize.toolkit.fluxcd.io/"):
                spec = obj.get("spec") or {}
                ref = spec.get("sourceRef") or {}
                path = str(spec.get("path") or "").lstrip("./").rstrip("/")
                if ref.get("kind") == "GitRepository" and ref.get("name") == "flux-system":
                    queue.append(repo / path)
                elif ref.get("kind") in ("OCIRepository", "ExternalArtifact") and pushed:
                    queue.append(pushed / path)
    return releases, failed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", type=Path)
    args = p.parse_args(argv)
    from upgradeplan.readers import gitops

    print("| repository | installation | reader | kubectl kustomize walk | equal |")
    print("|---|---|---|---|---|")
    for repo in sorted(d for d in args.root.iterdir() if (d / ".git").exists()):
        tree, _, _ = gitops.open_path(str(repo), None)
        from upgradeplan.readers.gitops.flux import Applier, find_entries
        from upgradeplan.readers.gitops.render import Renderer

        renderer = Renderer(tree, lambda rel: rel)
        entries = find_entries(tree, "", renderer)
        applier = Applier(tree, renderer, lambda rel: rel)
        pushed = applier._pushed()
        for name, root in entries:
            inst = applier.apply(name, root)
            ours = {
                str((d.get("metadata") or {}).get("name"))
                for d in inst.objects
                if d.get("kind") == "HelmRelease"
            }
            for spoke in inst.remotes.values():
                ours |= {
                    str((d.get("metadata") or {}).get("name"))
                    for d in spoke.objects
                    if d.get("kind") == "HelmRelease"
                }
            theirs, failed = walk(repo, repo / root, repo / pushed[0] if pushed else None)
            note = f" ({failed} builds failed)" if failed else ""
            only = [f"reader only: {', '.join(sorted(ours - theirs)[:3])}"] if ours - theirs else []
            only += [f"walk only: {', '.join(sorted(theirs - ours)[:3])}"] if theirs - ours else []
            same = "yes" if ours == theirs else "no (" + "; ".join(only) + ")"
            print(f"| {repo.name} | {name} | {len(ours)} | {len(theirs)}{note} | {same} |")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
