"""Facts stated on the command line: --installed, --pin, --fact (docs/state-format.md)."""

from __future__ import annotations

from collections.abc import Sequence

from upgradeplan import errors
from upgradeplan.model import Fact, FactValue, KnowledgeBase, State
from upgradeplan.provenance import Source, flag
from upgradeplan.state import keys
from upgradeplan.versions import Constraint, Version

SOURCE_INSTALLED = flag("--installed")
SOURCE_PIN = flag("--pin")
SOURCE_FACT = flag("--fact")


def from_flags(
    kb: KnowledgeBase,
    installed: Sequence[str] = (),
    pins: Sequence[str] = (),
    facts: Sequence[str] = (),
) -> State:
    """The state the flags describe. Later flags win over earlier ones for the same key."""
    out: dict[str, Fact] = {}
    for raw in installed:
        product, version = _split(raw, "--installed", "PRODUCT=VERSION")
        _require_product(kb, product, "--installed")
        _check_version(version, "--installed")
        out[f"installed.{product}"] = Fact(f"installed.{product}", version, SOURCE_INSTALLED)
    for raw in pins:
        product, constraint = _split(raw, "--pin", "PRODUCT=CONSTRAINT", allow_empty=True)
        _require_product(kb, product, "--pin")
        if constraint:
            _check_constraint(constraint, "--pin")
        value: FactValue = constraint or None
        out[f"pin.{product}"] = Fact(f"pin.{product}", value, SOURCE_PIN)
    for raw in facts:
        fact = parse_fact(kb, raw)
        out[fact.key] = fact
    return State(facts=out, name="stated" if out else "")


def parse_fact(kb: KnowledgeBase, raw: str, source: Source = SOURCE_FACT) -> Fact:
    """One ``--fact KEY=VALUE``: a key of the fact-key table, its value read by the key's type
    (a version or constraint is validated; a product must be known)."""
    key, text = _split(raw, "--fact", "KEY=VALUE", allow_empty=True)
    if "." not in key:
        if key in kb.products:
            key = f"installed.{key}"
        else:
            raise errors.UnknownName(
                "product or fact key (--fact)",
                key,
                sorted(kb.products) + [f"{p}.…" for p in keys.prefixes()],
            )
    found = keys.match(key)
    if found is None:
        prefix = key.partition(".")[0]
        documented = keys.keys_with_prefix(prefix)
        raise errors.BadInput(
            f"--fact {raw!r}: unknown fact key {key!r}",
            hint=f"{prefix} keys are {', '.join(documented)} (docs/state-format.md)"
            if documented
            else f"keys start with one of {', '.join(keys.prefixes())} (docs/state-format.md)",
        )
    if found.product is not None and found.row.type in ("version", "constraint"):
        _require_product(kb, found.product, "--fact")
    if found.row.type == "version":
        if text in ("", "null"):
            return Fact(key, None, source)
        _check_version(text, f"--fact {key}")
        return Fact(key, text, source)
    if found.row.type == "constraint":
        if text in ("", "null"):
            return Fact(key, None, source)
        _check_constraint(text, f"--fact {key}")
        return Fact(key, text, source)
    return Fact(key, typed_value(key, text, flag=f"--fact {key}"), source)


def typed_value(key: str, text: str, *, flag: str = "--fact") -> FactValue:
    """Read a stated value by the key's type (bool, map, list, JSON, null, string)."""
    if text == "null":
        return None
    if text[:1] in ("[", "{"):
        import json

        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise errors.BadInput(
                f"{flag}: invalid JSON value {text!r}: {exc.msg} at column {exc.colno}"
            ) from None
        return _json_fact(loaded, flag, text)
    found = keys.match(key)
    kind = found.row.type if found is not None else "text"
    if kind == "bool":
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise errors.BadInput(f"{flag}: expected true or false, got {text!r}")
    if kind == "map":
        return _map(text, flag)
    if kind == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def _map(text: str, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise errors.BadInput(
                f"{flag}: map entry {item!r} is not key=value",
                hint="write maps as a=b,c=d (empty for an empty map)",
            )
        out[k.strip()] = v.strip()
    return out


def _json_fact(loaded: object, flag: str, text: str) -> FactValue:
    if isinstance(loaded, list) and all(isinstance(i, str) for i in loaded):
        return [str(i) for i in loaded]
    if isinstance(loaded, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in loaded.items()
    ):
        return {str(k): str(v) for k, v in loaded.items()}
    raise errors.BadInput(
        f"{flag}: JSON value {text!r} must be a list of strings or a string-to-string map"
    )


def _split(raw: str, flag: str, shape: str, *, allow_empty: bool = False) -> tuple[str, str]:
    key, sep, value = raw.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or (not value and not allow_empty):
        raise errors.BadInput(f"{flag} {raw!r} is not {shape}", hint=f"use {flag} {shape}")
    return key, value


def _require_product(kb: KnowledgeBase, product: str, flag: str) -> None:
    if product not in kb.products:
        raise errors.UnknownName(f"product ({flag})", product, sorted(kb.products))


def _check_version(text: str, where: str) -> None:
    try:
        Version.parse(text)
    except errors.InvalidVersion as exc:
        raise errors.InvalidVersion(text, exc.reason, where=where) from None


def _check_constraint(text: str, where: str) -> None:
    try:
        Constraint.parse(text)
    except errors.InvalidConstraint as exc:
        raise errors.InvalidConstraint(text, exc.reason, where=where) from None
