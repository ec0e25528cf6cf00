"""What a parsed input file looks like, in words.

For the message when a file of one kind is given where another is expected (a snapshot as
``--accept-file``, a BOM as ``--snapshot``).

Imports nothing; works on plain parsed data (mappings, lists, scalars).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_STATE_KIND = "upgradeplan-state"
_KB_KEYS = ("hazards", "releases", "migrations", "products")


def is_kubeconfig(doc: Any) -> bool:
    """Whether ``doc`` is a kubeconfig (``kind: Config`` with clusters, users or contexts)."""
    return (
        isinstance(doc, Mapping)
        and doc.get("kind") == "Config"
        and any(k in doc for k in ("clusters", "users", "contexts"))
    )


def describe(doc: Any) -> str:
    """``doc`` in a few words: ``an upgradeplan snapshot``, ``a Kubernetes HelmRelease``,
    ``a list of 3 entries``, ``a mapping with the keys a, b, c``, ``a string``."""
    if doc is None:
        return "empty"
    if isinstance(doc, Mapping):
        kind = doc.get("kind")
        if kind == _STATE_KIND:
            return "an upgradeplan snapshot"
        if is_kubeconfig(doc):
            return "a kubeconfig"
        if isinstance(kind, str) and "apiVersion" in doc:
            kind = kind if len(kind) <= 40 else kind[:37] + "..."
            return f"Kubernetes {kind} output" if kind.endswith("List") else f"a Kubernetes {kind}"
        if "serverVersion" in doc:
            return "kubectl version output"
        if any(k in doc for k in _KB_KEYS) or ("id" in doc and "title" in doc):
            return "a knowledge base entry"
        keys = [str(k) if len(str(k)) <= 40 else str(k)[:37] + "..." for k in list(doc)[:5]]
        more = ", …" if len(doc) > 5 else ""
        return f"a mapping with the keys {', '.join(keys)}{more}" if keys else "an empty mapping"
    if isinstance(doc, list):
        return f"a list of {len(doc)} entr{'y' if len(doc) == 1 else 'ies'}"
    if isinstance(doc, bool):
        return "a boolean"
    if isinstance(doc, (int, float)):
        return "a number"
    return "a string" if isinstance(doc, str) else f"a {type(doc).__name__}"


__all__ = ["describe", "is_kubeconfig"]
