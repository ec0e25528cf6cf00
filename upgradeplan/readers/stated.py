"""Facts stated on the command line: --installed, --pin, --fact (docs/state-format.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from upgradeplan import errors
from upgradeplan.model import Fact, FactValue, KnowledgeBase, State
from upgradeplan.provenance import Source, flag

SOURCE_INSTALLED = flag("--installed")
SOURCE_PIN = flag("--pin")
SOURCE_FACT = flag("--fact")

# the first segment of every fact key docs/state-format.md defines
KEY_PREFIXES: tuple[str, ...] = (
    "cloud",
    "cluster",
    "crd",
    "helmrelease",
    "installed",
    "namespace",
    "nodes",
    "object",
    "pin",
    "secret",
    "storageclass",
    "values",
    "workload",
)

_MAP_SUFFIXES = (".annotations", ".labels", ".pod-annotations", ".env-secret-refs")
_LIST_SUFFIXES = (
    ".harnesses",
    ".stored-versions",
    ".args",
    ".env-secrets",
    ".tolerations",
    ".storage-classes",
)
_LIST_KEYS = ("nodes.taints",)
_BOOL_SUFFIXES = (".exists",)
_BOOL_KEYS = ("cluster.autopilot",)


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
    """One ``--fact KEY=VALUE``: typed by the key, validated where the key is a version."""
    key, text = _split(raw, "--fact", "KEY=VALUE", allow_empty=True)
    if "." not in key:
        if key in kb.products:
            key = f"installed.{key}"
        else:
            raise errors.UnknownName(
                "product or fact key (--fact)",
                key,
                sorted(kb.products) + [f"{p}.…" for p in KEY_PREFIXES],
            )
    prefix, _, rest = key.partition(".")
    if prefix not in KEY_PREFIXES:
        raise errors.BadInput(
            f"--fact {raw!r}: unknown fact key {key!r}",
            hint=f"keys start with one of {', '.join(KEY_PREFIXES)} (docs/state-format.md)",
        )
    if prefix in ("installed", "pin"):
        _require_product(kb, rest, "--fact")
        if prefix == "installed":
            if text in ("", "null"):
                return Fact(key, None, source)
            _check_version(text, f"--fact {key}")
            return Fact(key, text, source)
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
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise errors.BadInput(
                f"{flag}: invalid JSON value {text!r}: {exc.msg} at column {exc.colno}"
            ) from None
        return _json_fact(loaded, flag, text)
    if key.endswith(_BOOL_SUFFIXES) or key in _BOOL_KEYS:
        lowered = text.strip().lower()
        if lowered in ("true", "yes", "1"):
            return True
        if lowered in ("false", "no", "0"):
            return False
        raise errors.BadInput(f"{flag}: expected true or false, got {text!r}")
    if key.endswith(_MAP_SUFFIXES):
        return _map(text, flag)
    if key.endswith(_LIST_SUFFIXES) or key in _LIST_KEYS:
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
    from upgradeplan.versions import Version

    try:
        Version.parse(text)
    except errors.InvalidVersion as exc:
        raise errors.InvalidVersion(text, exc.reason, where=where) from None


def _check_constraint(text: str, where: str) -> None:
    from upgradeplan.versions import Constraint

    try:
        Constraint.parse(text)
    except errors.InvalidConstraint as exc:
        raise errors.InvalidConstraint(text, exc.reason, where=where) from None
