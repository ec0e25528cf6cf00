"""The fact-key vocabulary (docs/state-format.md, "Fact keys"): one row per key.

Each row says what a key looks like (``pattern``; group ``p`` is a product id), what its value
is (``type``), how a user supplies it (``supply``, a template of ``{key}`` and ``{p}``; empty
means ``--fact KEY=VALUE``), whether only a person can state it (``stated_only``), and a kubectl
command that shows it where there is a simple one. Everything that needs to know a fact key
asks this table: ``kb lint`` (KB024, KB005), ``--fact`` (which keys, typed how), the snapshot
reader (which keys, versions quoted) and the "missing fact" hint.

Lookups read :data:`KEYS` when they are called, so the table is the only source.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal

from msgspec import Struct
from msgspec.structs import force_setattr

ValueType = Literal["version", "constraint", "text", "bool", "list", "map", "values"]

READERS_HINT = "or read it with --kubeconfig/--snapshot/--gitops"


_SPECIAL = frozenset("^$.*+?{}[]()|\\")
_QUANTIFIERS = frozenset("*+?{")


def literal_prefix(pattern: str) -> str:
    """The text every string ``pattern`` matches (with ``re.match``) starts with.

    The literal characters after a leading ``^`` up to the first special one (``\\.`` is a
    ``.``); the last of them is dropped when a quantifier follows it. "" (no filter) when the
    pattern does not start with ``^`` or has an alternation anywhere.
    """
    if not pattern.startswith("^") or "|" in pattern:
        return ""
    out: list[str] = []
    i = 1
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and pattern[i + 1] == ".":
            out.append(".")
            i += 2
            continue
        if ch in _SPECIAL:
            if ch in _QUANTIFIERS and out:
                out.pop()
            break
        out.append(ch)
        i += 1
    return "".join(out)


# The pieces the table's patterns are written in, and what each is to shape_of.
_PIECES = (
    ("(?P<p>[^.]+)", "p"),  # a segment, the product id
    ("[A-Za-z][A-Za-z0-9]*", "ident"),  # a Kind
    ("[^.]+", "seg"),  # a segment
    (".+", "any"),  # anything, at least one character
    ("\\.", "."),  # a literal dot
)


def shape_of(pattern: str) -> tuple[tuple[str, str], ...] | None:
    """``^…$`` written only in the pieces of :data:`_PIECES` and literal text, as a sequence of
    (kind, literal text) tests that :func:`match` runs with string methods, to the same answer
    as the regular expression (compiling one costs more than a check of a key): a segment or a
    Kind is followed by a dot or the end, ``.+`` only by literal text to the end. Anything else:
    None (the regex decides)."""
    if not (pattern.startswith("^") and pattern.endswith("$")):
        return None
    body, out = pattern[1:-1], list[tuple[str, str]]()
    while body:
        for text, kind in _PIECES:
            if body.startswith(text):
                body = body[len(text) :]
                if kind == ".":
                    kind, text = "lit", "."
                break
        else:
            kind, text = "lit", body[0]
            if text in _SPECIAL:
                return None
            body = body[1:]
        if kind == "lit" and out and out[-1][0] == "lit":
            out[-1] = ("lit", out[-1][1] + text)
        else:
            out.append((kind, text if kind == "lit" else ""))
    for i, (kind, _) in enumerate(out):
        after = out[i + 1] if i + 1 < len(out) else None
        segment = kind in ("p", "seg", "ident")
        if segment and after is not None and (after[0] != "lit" or not after[1].startswith(".")):
            return None
        if kind == "any" and not (after is None or (after[0] == "lit" and i + 2 == len(out))):
            return None
    return tuple(out)


def _shape_match(shape: tuple[tuple[str, str], ...], key: str) -> tuple[bool, str | None]:
    """Does ``key`` (no newline in it) match the shape, and its product (group ``p``)."""
    pos, product, end = 0, None, len(key)
    for i, (kind, text) in enumerate(shape):
        if kind == "lit":
            if not key.startswith(text, pos):
                return False, None
            pos += len(text)
        elif kind == "any":
            rest = shape[i + 1][1] if i + 1 < len(shape) else ""
            return (end - pos > len(rest) and key.endswith(rest)), product
        else:
            stop = key.find(".", pos)
            stop = end if stop < 0 else stop
            if stop == pos:
                return False, None
            if kind == "ident":
                word = key[pos:stop]
                if not (word.isascii() and word.isalnum() and word[0].isalpha()):
                    return False, None
            elif kind == "p":
                product = key[pos:stop]
            pos = stop
    return pos == end, product


class KeyRow(Struct, frozen=True, dict=True):  # its cached properties need a __dict__
    """One fact key of the vocabulary."""

    key: str  # as documented: installed.<product>
    pattern: str  # a regular expression for the whole key; group "p" is a product id
    type: ValueType
    supply: str = ""  # how to state it: "--installed {p}=VERSION"; "" = "--fact {key}=VALUE"
    stated_only: bool = False  # no reader can establish it
    kubectl: str = ""  # a command that shows it, where there is a simple one
    # what every key of the row starts with, read off the pattern (see literal_prefix; set
    # from it, never passed)
    literal: str = ""

    def __post_init__(self) -> None:
        force_setattr(self, "literal", literal_prefix(self.pattern))

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        """``pattern`` compiled, when a key first gets past ``literal`` (not at import)."""
        return re.compile(self.pattern)

    @cached_property
    def shape(self) -> tuple[tuple[str, str], ...] | None:
        """``pattern`` read as a few string tests (:func:`shape_of`), or None: use the regex."""
        return shape_of(self.pattern)

    @property
    def prefix(self) -> str:
        """The first segment every key of this row starts with."""
        return self.key.partition(".")[0]


_OBJ = r"^object\.[A-Za-z][A-Za-z0-9]*\.[^.]+\..+\."
_WORKLOAD = r"^workload\.(?P<p>[^.]+)\."
_HR = "kubectl get helmrelease -A -o yaml"
_DEPLOY = "kubectl get deployment -A -o yaml"
_OBJECT = "kubectl get <Kind> <name> -n <namespace> -o yaml"
_NODES = "kubectl get nodes -o yaml"


def _workload(field: str, type: ValueType) -> KeyRow:
    return KeyRow(f"workload.<product>.{field}", rf"{_WORKLOAD}{field}$", type, kubectl=_DEPLOY)


KEYS: tuple[KeyRow, ...] = (
    KeyRow(
        "installed.<product>",
        r"^installed\.(?P<p>[^.]+)$",
        "version",
        "--installed {p}=VERSION",
        kubectl=f"{_HR} (status.history[0].chartVersion); kubectl version -o json (kubernetes)",
    ),
    KeyRow(
        "pin.<product>",
        r"^pin\.(?P<p>[^.]+)$",
        "constraint",
        "--pin {p}=CONSTRAINT",
        kubectl="kubectl get ocirepository,helmrelease -A -o yaml (spec.ref, spec.chart.spec)",
    ),
    KeyRow("helmrelease.<name>.namespace", r"^helmrelease\.[^.]+\.namespace$", "text", kubectl=_HR),
    KeyRow(
        "helmrelease.<name>.drift-detection",
        r"^helmrelease\.[^.]+\.drift-detection$",
        "text",
        kubectl=f"{_HR} (spec.driftDetection.mode)",
    ),
    KeyRow(
        "helmrelease.<name>.crds",
        r"^helmrelease\.[^.]+\.crds$",
        "map",
        kubectl=f"{_HR} (spec.install.crds, spec.upgrade.crds)",
    ),
    KeyRow("object.<Kind>.<namespace>.<name>.exists", _OBJ + r"exists$", "bool", kubectl=_OBJECT),
    KeyRow(
        "object.<Kind>.<namespace>.<name>.annotations",
        _OBJ + r"annotations$",
        "map",
        kubectl=_OBJECT,
    ),
    KeyRow("object.<Kind>.<namespace>.<name>.labels", _OBJ + r"labels$", "map", kubectl=_OBJECT),
    KeyRow(
        "object.AgentTemplate.<namespace>.<name>.harnesses",
        _OBJ + r"harnesses$",
        "list",
        kubectl=f"{_OBJECT} (status.harnesses)",
    ),
    KeyRow(
        "object.<Kind>.<namespace>.<name>.<field>",
        r"^object\.[A-Za-z][A-Za-z0-9]*\.[^.]+\.[^.]+\..+$",
        "values",
        kubectl=f"{_OBJECT} (a field a product declares under objects:)",
    ),
    KeyRow(
        "object.<Kind>",
        r"^object\.[A-Za-z][A-Za-z0-9]*$",
        "list",
        kubectl="kubectl get <Kind> -A (every object of a declared kind, namespace/name)",
    ),
    KeyRow(
        "crd.<name>.stored-versions",
        r"^crd\..+\.stored-versions$",
        "list",
        kubectl="kubectl get crd <name> -o jsonpath='{.status.storedVersions}'",
    ),
    _workload("namespace", "text"),
    _workload("name", "text"),
    _workload("image", "text"),
    _workload("args", "list"),
    _workload("env-secrets", "list"),
    _workload("env-secret-refs", "map"),
    _workload("pod-annotations", "map"),
    _workload("tolerations", "list"),
    _workload("max-surge", "text"),
    _workload("storage-classes", "list"),
    KeyRow(
        "secret.<namespace>.<name>.type",
        r"^secret\.[^.]+\..+\.type$",
        "text",
        kubectl="kubectl get secret <name> -n <namespace> -o jsonpath='{.type}'",
    ),
    KeyRow(
        "values.<product>.<key>",
        r"^values\.(?P<p>[^.]+)\..+$",
        "values",
        kubectl=f"{_HR} (spec.values)",
    ),
    KeyRow("values.<product>", r"^values\.(?P<p>[^.]+)$", "values", kubectl=f"{_HR} (spec.values)"),
    KeyRow(
        "namespace.<name>.labels",
        r"^namespace\.[^.]+\.labels$",
        "map",
        kubectl="kubectl get namespace <name> --show-labels",
    ),
    KeyRow("nodes.taints", r"^nodes\.taints$", "list", kubectl=f"{_NODES} (spec.taints)"),
    KeyRow(
        "nodes.provider",
        r"^nodes\.provider$",
        "text",
        kubectl=f"{_NODES} (spec.providerID, metadata.labels)",
    ),
    KeyRow("cluster.autopilot", r"^cluster\.autopilot$", "bool", kubectl=f"{_NODES} (labels)"),
    KeyRow(
        "storageclass.<name>.exists",
        r"^storageclass\..+\.exists$",
        "bool",
        kubectl="kubectl get storageclass <name>",
    ),
    KeyRow(
        "change.<product>",
        r"^change\.(?P<p>[^.]+)$",
        "text",
        "check --gitops PATH --base REF (or --fact {key}=moved|kept)",
        stated_only=True,
    ),
    KeyRow(
        "prerequisite.<product>.<id>",
        r"^prerequisite\.(?P<p>[^.]+)\..+$",
        "bool",
        "--fact {key}=true once it is in place (prerequisites can only be stated)",
        stated_only=True,
    ),
    KeyRow(
        "cloud.<topic>",
        r"^cloud\..+$",
        "text",
        "--fact {key}=VALUE (cloud facts can only be stated)",
        stated_only=True,
    ),
)


class Match(Struct, frozen=True):
    """The row a key belongs to, and the product it names (None when the row names none)."""

    row: KeyRow
    product: str | None


def match(key: str) -> Match | None:
    """The row of ``key`` (the first whose pattern matches), or None for no fact key."""
    for row in KEYS:
        if not key.startswith(row.literal):
            continue  # the pattern cannot match (literal_prefix)
        shape = row.shape
        if shape is not None and "\n" not in key:  # ("$" also matches before a last newline)
            found, product = _shape_match(shape, key)
            if found:
                return Match(row, product)
            continue
        m = row.compiled.match(key)
        if m is not None:
            return Match(row, m.groupdict().get("p"))
    return None


def prefixes() -> tuple[str, ...]:
    """The first segments of the keys, sorted (``cloud``, ``cluster``, ``crd``…)."""
    return tuple(sorted({row.prefix for row in KEYS}))


def keys_with_prefix(prefix: str) -> tuple[str, ...]:
    """The documented keys that start with ``prefix.`` (for hints)."""
    return tuple(row.key for row in KEYS if row.prefix == prefix)


def how_to_supply(key: str) -> str:
    """How a user supplies the fact ``key`` (the "missing fact" hint)."""
    found = match(key)
    row = found.row if found is not None else None
    template = row.supply if row is not None and row.supply else "--fact {key}=VALUE"
    how = template.format(key=key, p=found.product if found is not None else "")
    return how if row is not None and row.stated_only else f"{how}, {READERS_HINT}"


__all__ = [
    "KEYS",
    "READERS_HINT",
    "KeyRow",
    "Match",
    "ValueType",
    "how_to_supply",
    "keys_with_prefix",
    "match",
    "prefixes",
]
