"""Flux manifests as text, for the trees GitOps tests and benches write.

Each one lives in ``flux-system`` and reads the ``flux-system`` GitRepository, as a
``flux bootstrap`` repository has it; what differs between trees is a parameter.
"""

from __future__ import annotations


def kustomization(name: str, path: str, *, interval: str = "", target_namespace: str = "") -> str:
    """A Flux Kustomization applying ``path`` (``interval`` and ``targetNamespace`` if given)."""
    spec = [f"  interval: {interval}"] if interval else []
    spec.append(f"  path: {path}")
    if target_namespace:
        spec.append(f"  targetNamespace: {target_namespace}")
    return _lines(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1",
        "kind: Kustomization",
        *_metadata(name),
        "spec:",
        *spec,
        "  sourceRef:",
        "    kind: GitRepository",
        "    name: flux-system",
    )


def git_repository(url: str, *, interval: str = "", branch: str = "") -> str:
    """The ``flux-system`` GitRepository at ``url`` (``interval`` and ``ref.branch`` if given)."""
    spec = [f"  interval: {interval}"] if interval else []
    spec.append(f"  url: {url}")
    if branch:
        spec += ["  ref:", f"    branch: {branch}"]
    return _lines(
        "apiVersion: source.toolkit.fluxcd.io/v1",
        "kind: GitRepository",
        *_metadata("flux-system"),
        "spec:",
        *spec,
    )


def stream(*documents: str) -> str:
    """Documents as one YAML stream, ``---`` between them."""
    return "---\n".join(documents)


def _metadata(name: str) -> tuple[str, ...]:
    return ("metadata:", f"  name: {name}", "  namespace: flux-system")


def _lines(*lines: str) -> str:
    return "\n".join(lines) + "\n"
