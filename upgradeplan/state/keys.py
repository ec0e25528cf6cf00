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

ValueType = Literal["version", "constraint", "text", "bool", "list", "map", "values"]

READERS_HINT = "or read it with --kubeconfig/--snapshot/--gitops"


class KeyRow(Struct, frozen=True, dict=True):  # its cached property needs a __dict__
    """One fact key of the vocabulary."""

    key: str  # as documented: installed.<product>
    pattern: str  # a regular expression for the whole key; group "p" is a product id
    type: ValueType
    supply: str = ""  # how to state it: "--installed {p}=VERSION"; "" = "--fact {key}=VALUE"
    stated_only: bool = False  # no reader can establish it
    kubectl: str = ""  # a command that shows it, where there is a simple one

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        """``pattern`` compiled, once, when a lookup first reaches this row."""
        return re.compile(self.pattern)

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
