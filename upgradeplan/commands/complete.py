"""Dynamic shell completion: names from the knowledge and the kubeconfig.

Each function has click's ``shell_complete`` signature ``(ctx, param, incomplete)`` and
returns the matching names; anything that cannot be read gives no candidates (a completion
must never print an error into the user's shell).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # imported when completing: every command's options name these functions
    from click.shell_completion import CompletionItem

    from upgradeplan.model import KnowledgeBase


def _kb(ctx: click.Context) -> KnowledgeBase | None:
    from upgradeplan import api

    root = ctx.find_root()
    dirs = [d for d in os.environ.get("UPGRADEPLAN_KB", "").split(os.pathsep) if d]
    dirs.extend(root.params.get("kb_dirs") or ())
    dirs.extend((root.obj or {}).get("kb_dirs") or ())
    try:
        return api.load_kb(list(dict.fromkeys(dirs)))
    except Exception:
        return None


def _items(names: Any, incomplete: str, help: str = "") -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    return [
        CompletionItem(n, help=help or None)
        for n in dict.fromkeys(names)
        if n.startswith(incomplete)
    ]


def contexts(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Kubeconfig context names (of --kubeconfig when given on the line, else $KUBECONFIG)."""
    from upgradeplan import api

    kubeconfig = None
    for c in (ctx, ctx.find_root()):
        kubeconfig = kubeconfig or c.params.get("kubeconfig")
    kubeconfig = kubeconfig or (ctx.find_root().obj or {}).get("kubeconfig")
    try:
        names = api.contexts(kubeconfig)
    except Exception:
        return []
    return _items(names, incomplete, "kubeconfig context")


def products(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Product ids."""
    kb = _kb(ctx)
    return [] if kb is None else _items(sorted(kb.products), incomplete, "product")


def product_versions(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """``PRODUCT=`` first, then ``PRODUCT=VERSION`` once the product is typed (and 'latest')."""
    kb = _kb(ctx)
    if kb is None:
        return []
    if "=" not in incomplete:
        names = [f"{p}=" for p in sorted(kb.products)]
        if param.name == "to":
            names.append("latest")
        return _items(names, incomplete, "product")
    product = incomplete.split("=", 1)[0]
    versions = [f"{product}={r.version}" for r in reversed(kb.releases.get(product, ()))]
    return _items(versions, incomplete, "release")


def versions(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Versions of every product (for options that take a bare VERSION)."""
    kb = _kb(ctx)
    if kb is None:
        return []
    found = [r.version for rels in kb.releases.values() for r in reversed(rels)]
    return _items(found, incomplete, "release")


def identifiers(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """What explain takes: hazard and migration ids, products, PRODUCT@VERSION releases."""
    kb = _kb(ctx)
    if kb is None:
        return []
    out = _items(sorted(kb.hazards), incomplete, "hazard")
    out += _items(sorted(kb.migrations), incomplete, "migration")
    if "@" in incomplete:
        product = incomplete.split("@", 1)[0]
        rels = [f"{product}@{r.version}" for r in reversed(kb.releases.get(product, ()))]
        out += _items(rels, incomplete, "release")
    else:
        out += _items(sorted(kb.products), incomplete, "product")
    return out


def hazards(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Hazard ids."""
    kb = _kb(ctx)
    return [] if kb is None else _items(sorted(kb.hazards), incomplete, "hazard")
