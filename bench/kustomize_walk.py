"""HelmReleases per installation: the GitOps reader against kustomize-controller's walk.

The walk (tests/support/kustomize_walk.py, the same code the differential test runs) models
kustomize-controller with the real kustomize: each source laid out as source-controller
archives it (its default exclusions, or the repository's ``.sourceignore`` files and its
GitRepository's ``spec.ignore``), every Flux Kustomization built with its
``spec.targetNamespace``, ``spec.patches``, ``spec.components`` and ``spec.images`` written
into the kustomization as Flux writes them, post-build substitution from ``substitute`` and
``substituteFrom`` ConfigMaps (a Secret is never read), ExternalArtifacts laid out by their
ArtifactGenerator's copy rules. Run against clones outside the project::

    python bench/kustomize_walk.py /tmp/field

prints, per repository and installation, the HelmReleases (namespace/name) each side finds
and whether the two sets are equal (the rows of docs/gitops.md, "Field counts").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.kustomize_walk import compare  # type: ignore[import-not-found,unused-ignore]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("root", type=Path)
    p.add_argument("--only", default="", help="a repository directory name to run alone")
    args = p.parse_args(argv)
    version = subprocess.run(
        ["kubectl", "version", "--client"], capture_output=True, text=True, check=False
    ).stdout.split("\n")
    print(f"<!-- {'; '.join(v.strip() for v in version if v.strip())} -->")
    print("| repository | commit | installation | reader | walk | equal |")
    print("|---|---|---|---|---|---|")
    for repo in sorted(d for d in args.root.iterdir() if (d / ".git").exists()):
        if args.only and repo.name != args.only:
            continue
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        for row in compare(repo):
            ours, theirs = row.reader, row.walk.releases
            notes = []
            if ours - theirs:
                notes.append(f"reader only: {', '.join(sorted(ours - theirs)[:3])}")
            if theirs - ours:
                notes.append(f"walk only: {', '.join(sorted(theirs - ours)[:3])}")
            if row.walk.failed:
                notes.append(f"{len(row.walk.failed)} builds failed: {row.walk.failed[0]}")
            same = "yes" if ours == theirs else "no"
            note = f" ({'; '.join(notes)})" if notes else ""
            print(
                f"| {repo.name} | {head} | {row.installation} | {len(ours)} | {len(theirs)} "
                f"| {same}{note} |"
            )
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
