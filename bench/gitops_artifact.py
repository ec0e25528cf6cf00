"""What modelling source-controller's artifact costs the GitOps reader, on real clones.

For each repository given (clones outside the project, e.g. under /tmp/field)::

    python bench/gitops_artifact.py /tmp/field/joryirving+home-ops /tmp/field/szinn+k8s-homelab

prints, in CPU milliseconds: reading the ignore rules (``Artifact(WorkTree(repo), "")``),
testing every file of the clone against them, and the whole read (``find_entries`` and
``Applier.apply`` of every installation, best of ``--runs``). Run with ``PYTHONPATH`` set to
a checkout of an older build to time its whole read (the rule rows are then left out when it
has no ``sourceignore`` module).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def _read(repo: Path) -> None:
    from upgradeplan.readers.gitops.flux import Applier, find_entries
    from upgradeplan.readers.gitops.render import Renderer
    from upgradeplan.readers.gitops.trees import open_path

    tree, _, _ = open_path(str(repo), None)
    renderer = Renderer(tree, lambda rel: rel)
    applier = Applier(tree, renderer, lambda rel: rel)
    for name, root in find_entries(tree, "", renderer):
        applier.apply(name, root)


def _files(repo: Path) -> list[str]:
    out: list[str] = []
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        out += [os.path.relpath(os.path.join(folder, f), repo).replace(os.sep, "/") for f in files]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("repos", type=Path, nargs="+")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args(argv)
    print("| repository | files | rules read | every file tested | whole read (best) |")
    print("|---|---|---|---|---|")
    for repo in args.repos:
        files = _files(repo)
        rules = tested = "—"
        try:
            from upgradeplan.readers.gitops.sourceignore import Artifact
            from upgradeplan.readers.gitops.trees import WorkTree
        except ImportError:
            pass
        else:
            start = time.process_time()
            artifact = Artifact(WorkTree(repo), "")
            built = time.process_time()
            for rel in files:
                artifact.excluded(rel)
            done = time.process_time()
            rules, tested = f"{(built - start) * 1e3:.0f} ms", f"{(done - built) * 1e3:.0f} ms"
        best = float("inf")
        for _ in range(args.runs):
            start = time.process_time()
            _read(repo)
            best = min(best, time.process_time() - start)
        print(f"| {repo.name} | {len(files)} | {rules} | {tested} | {best * 1e3:.0f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
