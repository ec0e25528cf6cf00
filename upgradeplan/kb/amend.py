"""Entries with the same identity from several knowledge directories.

A later directory's entry either duplicates an earlier one (KB004, the first is kept) or, with
``amend: {reason, overrides}``, amends it: lists are appended, mappings merged, and a changed
field replaced only when ``amend.overrides`` names it with a reason (else KB028).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from msgspec.structs import replace

from upgradeplan import keypath
from upgradeplan.kb.documents import Document
from upgradeplan.kb.fields import Fields
from upgradeplan.model import Amendment, Hazard, Migration, Product, Release

E = TypeVar("E", Product, Release, Hazard, Migration)

# YAML keys that name an entry rather than set a field of it
_IDENTITY = frozenset({"schema_version", "kind", "id", "amend", "version"})
# YAML key -> the model attributes it sets (default: the attribute of the same name)
_ATTRS: dict[str, tuple[str, ...]] = {
    "type": ("kind",),
    "upgrade_doc": ("upgrade_doc_title", "upgrade_doc_intro"),
    "requires": ("requires", "requires_when"),
    "skip": ("stop", "to_range", "from_range"),
    "landing": ("to_range",),
    "transition": ("from_range", "to_range"),
    "state": ("from_range",),
}


def place(
    ctx: Fields, documents: Mapping[str, Document], what: str, name: str, earlier: E | None, new: E
) -> E | None:
    """The entry to keep: ``new``, ``earlier`` amended by it, or ``earlier`` (a duplicate)."""
    amend = ctx.data.get("amend")
    if amend is None:
        if earlier is not None:
            ctx.report(
                "KB004", (), f"{what} {name!r} is defined twice: here and at {earlier.location}"
            )
            return earlier
        return new
    if not isinstance(amend, dict):
        return earlier  # reported by the schema check
    reason = ctx.text_in(amend, "reason", ("amend",), required=True)
    overrides = ctx.strmap(amend, "overrides", ("amend",))
    if earlier is None:
        ctx.report(
            "KB028",
            ("amend",),
            f"amends {what} {name!r}, which no earlier knowledge directory defines; "
            "remove `amend:` to define it here",
        )
        return None
    first = documents.get(earlier.location.file)
    if first is not None and first.root == ctx.doc.root:
        ctx.report(
            "KB028",
            ("amend",),
            f"amends {what} {name!r} of the same knowledge directory ({earlier.location}); "
            "edit that file instead",
        )
        return earlier
    return amended(ctx, earlier, new, Amendment(ctx.where(), reason, overrides))


def amended(ctx: Fields, earlier: E, new: E, amendment: Amendment) -> E:
    """``earlier`` with what the amending file ``new`` adds: lists appended, mappings merged,
    other fields (and changed mapping entries) replaced only when ``amend.overrides`` names
    them with a reason."""
    changes: dict[str, Any] = {}
    overrides = amendment.overrides
    for key in ctx.data:
        if key in _IDENTITY or key == "inferred":
            continue
        override = key in overrides
        for attr in _ATTRS.get(str(key), (str(key),)):
            if not hasattr(earlier, attr):
                continue
            old, value = getattr(earlier, attr), getattr(new, attr)
            if override:
                changes[attr] = value
            elif isinstance(old, tuple) and isinstance(value, tuple):
                changes[attr] = old + tuple(v for v in value if v not in old)
            elif isinstance(old, dict) and isinstance(value, dict):
                clash = [k for k in value if k in old and old[k] != value[k]]
                if clash:
                    ctx.report(
                        "KB028",
                        (key, clash[0]),
                        f"{key}.{clash[0]} differs from {earlier.location}; to replace it add "
                        f"{key!r} to amend.overrides with the reason",
                    )
                changes[attr] = {**old, **{k: v for k, v in value.items() if k not in clash}}
            elif old != value:
                ctx.report(
                    "KB028",
                    (key,),
                    f"{key} differs from {earlier.location}; to replace it add {key!r} to "
                    "amend.overrides with the reason",
                )
    for key in overrides:
        if key not in ctx.data:
            ctx.report(
                "KB028",
                ("amend", "overrides", key),
                f"overrides {key!r}, which it does not set",
            )
    kept = {k: v for k, v in earlier.inferred.items() if keypath.split(k)[0] not in overrides}
    changes["inferred"] = {**kept, **new.inferred}
    changes["amendments"] = (*earlier.amendments, amendment)
    return replace(earlier, **changes)
