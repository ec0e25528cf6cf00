"""Whether what could not be read can change the verdict (docs/exit-codes.md, "What could not
be read").

A source the reader could not follow changes a verdict only when it could hold a fact that a
judged hazard or requirement needs: it belongs to the installation judged (each state is one
installation) and it could carry an object of a judged product. Three kinds of source are
known to hold less than anything:

- Flux's own controllers (the ``flux-manifests`` artifact, ``fluxcd/flux2`` manifests):
  only the ``flux`` product's objects;
- CustomResourceDefinitions (a name or URL saying ``crd``): only the CRDs of a CRD chart;
- a project's released manifest (``github.com/<owner>/<project>/releases/download/…``):
  only that project's objects (a remote kustomize base or a file of another repository could
  hold anything, a fleet's HelmReleases included).

Any other source (another GitRepository, a Bucket, an OCI artifact of manifests, a URL that
names no project) could hold anything, and is needed whenever some product is judged. A file
of the repository that does not parse, a missing directory, a substitution nobody can
resolve: always needed (they could hold any product, the judged ones included). What is not
needed is set aside, reported once as "not read, not needed for this verdict", and leaves the
exit code alone; it never turns a needed unknown into "safe".
"""

from __future__ import annotations

import re
from collections.abc import Collection

from upgradeplan.model import KnowledgeBase, State
from upgradeplan.readers.gitops.facts import NOT_VALUES, OTHER_SOURCE, REMOTE
from upgradeplan.unreadable import Unreadable

__all__ = ["NOT_NEEDED", "judged_products", "needed", "set_aside"]

NOT_NEEDED = "not read, not needed for this verdict"

_FLUX = re.compile(r"flux-manifests|fluxcd/flux2")
_PROJECT = re.compile(
    r"(?:github\.com|raw\.githubusercontent\.com|gitlab\.com)/[^/\s]+/([^/\s?#]+)", re.I
)


def judged_products(kb: KnowledgeBase, present: Collection[str]) -> set[str]:
    """``present`` and what they depend on: the components their releases publish, the meta
    charts that publish them, and what their releases require (Kubernetes, Flux)."""
    out = set(present)
    todo = list(present)
    while todo:
        product = todo.pop()
        linked: set[str] = set()
        for rel in kb.releases.get(product, ()):
            linked |= set(rel.bom) | set(rel.requires) | set(rel.components)
        for meta, rels in kb.releases.items():
            if any(product in rel.bom or product in rel.components for rel in rels):
                linked.add(meta)
        for p in linked - out:
            out.add(p)
            todo.append(p)
    return out


def needed(rec: Unreadable, judged: Collection[str]) -> bool:
    """Whether ``rec`` could hold a fact of a product in ``judged``."""
    if rec.cause == NOT_VALUES:
        return False  # a ConfigMap's data no release reads, that no YAML reader takes
    if rec.cause not in (REMOTE, OTHER_SOURCE):
        return True  # a file of the repository: it could hold anything
    if not judged:
        return False
    text = rec.source.lower()  # the URL or "OCIRepository name" (not who applies it)
    if _FLUX.search(text):
        return any(p == "flux" or p.startswith("flux-") for p in judged)
    project = _PROJECT.search(rec.source)
    if rec.cause == REMOTE and project is not None and "/releases/download/" in rec.source:
        # a project's released manifest, CRDs or not: that project's objects only
        name = project.group(1).lower().removesuffix(".git")
        return any(p in name or name in p for p in judged)
    if "crd" in text:
        return any("crd" in p for p in judged)
    return True


def set_aside(state: State, judged: Collection[str]) -> tuple[State, tuple[str, ...]]:
    """``state`` without the sources that cannot change its verdict, and one line for each."""
    keep: list[Unreadable] = []
    notes: list[str] = []
    dropped: set[str] = set()
    for rec in state.unread:
        if needed(rec, judged):
            keep.append(rec)
            continue
        dropped.update(rec.keys)
        where = f"{rec.location}: " if rec.location else ""
        notes.append(f"{NOT_NEEDED}: {where}{rec.source}: {rec.detail or rec.cause}")
    if not dropped:
        return state, ()
    index = {k: v for k, v in state.unreadable.items() if k not in dropped}
    out = State(facts=state.facts, name=state.name, unreadable=index, unread=tuple(keep))
    return out, tuple(dict.fromkeys(notes))
