"""Dynamic shell completion: names from the knowledge and the kubeconfig.

Each function has click's ``shell_complete`` signature ``(ctx, param, incomplete)`` and
returns the matching names; anything that cannot be read gives no candidates (a completion
must never print an error into the user's shell).

The bash script (:func:`bash_source`) splits the line at blanks itself, as
``_get_comp_words_by_ref -n "=:"`` does for kubectl's and git's completions: bash breaks words
at every character of ``COMP_WORDBREAKS`` (``=`` and ``:`` among them), so ``--to
agent-platform=4.8.`` reached click as three words and completed nothing. What click offers is
then cut back to the part after the last break, the word bash replaces (as
``__ltrim_colon_completions`` does). ``kubectl_complete-upgradeplan``, which kubectl (1.26
and later) runs to complete ``kubectl upgradeplan``, is
:func:`upgradeplan.__main__.kubectl_complete`.
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


def packs(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The names of the shipped knowledge packs."""
    from upgradeplan.kb.packs import names

    return _items(names(), incomplete, "knowledge pack")


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


# The bash script: click's protocol (COMP_WORDS, COMP_CWORD, _UPGRADEPLAN_COMPLETE) with the
# words taken from the line at blanks, and the answers trimmed to the word bash replaces.
BASH_SOURCE = """\
%(complete_func)s() {
    local IFS=$' \\t\\n'
    local line=${COMP_LINE:0:$COMP_POINT}
    local cur=${line##*[[:blank:]]}
    local -a words
    read -r -a words <<< "$line"
    local cword=$((${#words[@]} - 1))
    if [[ -z $cur ]]; then
        words+=("")
        cword=${#words[@]}
        cword=$((cword - 1))
    fi
    # bash replaces only what follows the last "=" or ":" of the word when COMP_WORDBREAKS
    # holds them (it does as distributed): the answers lose what precedes it
    local breaks="" prefix=""
    [[ $COMP_WORDBREAKS == *=* ]] && breaks+="="
    [[ $COMP_WORDBREAKS == *:* ]] && breaks+=":"
    if [[ -n $breaks && $cur == *[$breaks]* ]]; then
        prefix=${cur%%"${cur##*[$breaks]}"}
    fi
    local IFS=$'\\n'
    local response completion type value
    response=$(env COMP_WORDS="${words[*]}" COMP_CWORD=$cword \\
        %(complete_var)s=bash_complete $1)
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            [[ $value == "$prefix"* ]] && value=${value#"$prefix"}
            [[ $value == *= ]] && compopt -o nospace
            COMPREPLY+=("$value")
        fi
    done
    return 0
}

%(complete_func)s_setup() {
    complete -o nosort -F %(complete_func)s %(prog_name)s
}

%(complete_func)s_setup;
"""


def bash_class() -> type:
    """click's bash completion with :data:`BASH_SOURCE` as its script."""
    from click.shell_completion import BashComplete

    class Bash(BashComplete):
        source_template = BASH_SOURCE

    return Bash
