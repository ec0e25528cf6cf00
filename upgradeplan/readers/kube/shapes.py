"""The shape of the Kubernetes objects the readers act on: each field a map, a list or a scalar.

A snapshot, a cluster or a GitOps tree may hold an object whose field has the wrong type (a
scalar ``tolerations``, a list where ``spec.values`` belongs). The readers are written for
the types the API server enforces; :func:`check_shapes` refuses anything else first, naming
the object and the field (exit 2), so a wrong type is neither a crash nor read as "unset".
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from upgradeplan.errors import BadInput
from upgradeplan.readers.kube.fields import name_of, ns_of

# ------------------------------------------------------------------ the shape of what is read

# kind -> (field path, what it must be) for every field the readers act on: "map", "list" or
# "scalar" (a string, number or boolean); "*" is each entry of a list. A field that is absent
# or null is fine (unset); any other type is refused (:func:`check_shapes`), so a scalar
# ``tolerations`` is an error naming its field, not a crash, and a list where the values
# map belongs is not read as "no values".
_META: tuple[tuple[str, str], ...] = (
    ("metadata", "map"),
    ("metadata.name", "scalar"),
    ("metadata.namespace", "scalar"),
    ("metadata.labels", "map"),
    ("metadata.annotations", "map"),
)
_SPEC: tuple[tuple[str, str], ...] = (("spec", "map"), ("status", "map"))
_POD = "spec.template.spec"
_CONTAINER: tuple[tuple[str, str], ...] = (
    ("", "list"),
    ("*", "map"),
    ("*.name", "scalar"),
    ("*.image", "scalar"),
    ("*.args", "list"),
    ("*.args.*", "scalar"),
    ("*.env", "list"),
    ("*.env.*", "map"),
    ("*.env.*.name", "scalar"),
    ("*.env.*.valueFrom", "map"),
    ("*.env.*.valueFrom.secretKeyRef", "map"),
    ("*.env.*.valueFrom.secretKeyRef.name", "scalar"),
    ("*.envFrom", "list"),
    ("*.envFrom.*", "map"),
    ("*.envFrom.*.secretRef", "map"),
    ("*.envFrom.*.secretRef.name", "scalar"),
)
_WORKLOAD: tuple[tuple[str, str], ...] = (
    ("spec.template", "map"),
    ("spec.template.metadata", "map"),
    ("spec.template.metadata.labels", "map"),
    ("spec.template.metadata.annotations", "map"),
    (_POD, "map"),
    *((f"{_POD}.containers{'.' if p else ''}{p}", t) for p, t in _CONTAINER),
    *((f"{_POD}.initContainers{'.' if p else ''}{p}", t) for p, t in _CONTAINER),
    (f"{_POD}.tolerations", "list"),
    (f"{_POD}.tolerations.*", "map"),
    (f"{_POD}.tolerations.*.key", "scalar"),
    (f"{_POD}.tolerations.*.operator", "scalar"),
    (f"{_POD}.tolerations.*.effect", "scalar"),
    (f"{_POD}.volumes", "list"),
    (f"{_POD}.volumes.*", "map"),
    (f"{_POD}.volumes.*.persistentVolumeClaim", "map"),
    (f"{_POD}.volumes.*.persistentVolumeClaim.claimName", "scalar"),
    (f"{_POD}.volumes.*.ephemeral", "map"),
    (f"{_POD}.nodeSelector", "map"),
    ("spec.volumeClaimTemplates", "list"),
    ("spec.volumeClaimTemplates.*", "map"),
    ("spec.volumeClaimTemplates.*.spec", "map"),
    ("spec.volumeClaimTemplates.*.spec.storageClassName", "scalar"),
    ("spec.strategy", "map"),
    ("spec.strategy.rollingUpdate", "map"),
    ("spec.strategy.rollingUpdate.maxSurge", "scalar"),
    ("spec.replicas", "scalar"),
)
SHAPES: dict[str, tuple[tuple[str, str], ...]] = {
    "HelmRelease": (
        ("spec.chart", "map"),
        ("spec.chart.spec", "map"),
        ("spec.chart.spec.chart", "scalar"),
        ("spec.chart.spec.version", "scalar"),
        ("spec.chart.spec.sourceRef", "map"),
        ("spec.chartRef", "map"),
        ("spec.chartRef.kind", "scalar"),
        ("spec.chartRef.name", "scalar"),
        ("spec.chartRef.namespace", "scalar"),
        ("spec.values", "map"),
        ("spec.valuesFrom", "list"),
        ("spec.valuesFrom.*", "map"),
        ("spec.valuesFrom.*.kind", "scalar"),
        ("spec.valuesFrom.*.name", "scalar"),
        ("spec.valuesFrom.*.valuesKey", "scalar"),
        ("spec.valuesFrom.*.targetPath", "scalar"),
        ("spec.driftDetection", "map"),
        ("spec.driftDetection.mode", "scalar"),
        ("status.history", "list"),
        ("status.history.*", "map"),
        ("status.history.*.chartVersion", "scalar"),
        ("status.history.*.chartName", "scalar"),
        ("status.history.*.status", "scalar"),
        ("status.lastAppliedRevision", "scalar"),
    ),
    "OCIRepository": (
        ("spec.url", "scalar"),
        ("spec.ref", "map"),
        ("spec.ref.tag", "scalar"),
        ("spec.ref.semver", "scalar"),
        ("spec.ref.digest", "scalar"),
    ),
    "HelmChart": (("spec.chart", "scalar"), ("spec.version", "scalar")),
    "Deployment": _WORKLOAD,
    "StatefulSet": _WORKLOAD,
    "DaemonSet": _WORKLOAD,
    "PersistentVolumeClaim": (("spec.storageClassName", "scalar"),),
    "Secret": (("type", "scalar"),),
    "Node": (
        ("spec.providerID", "scalar"),
        ("spec.taints", "list"),
        ("spec.taints.*", "map"),
        ("spec.taints.*.key", "scalar"),
        ("spec.taints.*.value", "scalar"),
        ("spec.taints.*.effect", "scalar"),
    ),
    "CustomResourceDefinition": (
        ("status.storedVersions", "list"),
        ("status.storedVersions.*", "scalar"),
    ),
}
_TYPE_NAMES = {dict: "a map", list: "a list", str: "a string", bool: "a boolean"}


def _is(value: Any, shape: str) -> bool:
    if shape == "map":
        return isinstance(value, (dict, Mapping))  # a dict first: no ABC check
    if shape == "list":
        return isinstance(value, list)
    return isinstance(value, (str, int, float)) and not isinstance(value, list)


# The checks of a kind as a tree of keys, each path's keys walked once per object:
# key -> (what its value must be, or "" when only the fields below it are checked; the
# keys below it). "*" is each entry of a list.
_Tree = dict[str, tuple[str, "_Tree"]]


def _tree(checks: Iterable[tuple[str, str]]) -> _Tree:
    root: _Tree = {}
    for path, shape in checks:
        node, parts = root, path.split(".")
        for i, part in enumerate(parts):
            want, below = node.get(part, ("", {}))
            node[part] = (shape if i == len(parts) - 1 else want, below)
            node = below
    return root


_CHECKS: dict[str, tuple[tuple[tuple[str, ...], str], ...]] = {
    kind: tuple((tuple(path.split(".")), shape) for path, shape in (*_META, *_SPEC, *own))
    for kind, own in SHAPES.items()
}
_META_CHECKS = tuple((tuple(path.split(".")), shape) for path, shape in _META)
_TREES: dict[str, _Tree] = {kind: _tree((*_META, *_SPEC, *own)) for kind, own in SHAPES.items()}
_META_TREE = _tree(_META)


def _fits(node: Any, tree: _Tree) -> bool:
    """Whether every field of ``tree`` below ``node`` is absent, null or of its shape."""
    for key, (want, below) in tree.items():
        if key == "*":
            if not isinstance(node, list):
                continue
            values: Sequence[Any] = node  # a null entry is checked too
        elif isinstance(node, (dict, Mapping)):
            value = node.get(key)
            if value is None:
                continue
            values = (value,)
        else:
            continue
        for value in values:
            if want and not _is(value, want):
                return False
            if below and not _fits(value, below):
                return False
    return True


def _type_name(value: Any) -> str:
    for kind, name in _TYPE_NAMES.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, (int, float)) else f"a {type(value).__name__}"


def _at(
    node: Any, parts: Sequence[str], at: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every value at ``parts`` below ``node`` (``*``: each entry of a list) with its path."""
    if not parts:
        yield at, node
        return
    head, rest = parts[0], parts[1:]
    if head == "*":
        if isinstance(node, list):
            for i, item in enumerate(node):
                yield from _at(item, rest, (*at, i))
    elif isinstance(node, Mapping) and node.get(head) is not None:
        yield from _at(node[head], rest, (*at, head))


def shown(path: Sequence[str | int]) -> str:
    """``("spec", "containers", 0, "env")`` as ``spec.containers[0].env``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def shape_problem(obj: Mapping[str, Any]) -> tuple[tuple[str | int, ...], str] | None:
    """The first field of ``obj`` the readers act on that has the wrong type, as (its path,
    what is wrong); None when every such field is absent or of its type."""
    kind = obj.get("kind")
    tree = _TREES.get(kind, _META_TREE) if isinstance(kind, str) else _META_TREE
    if _fits(obj, tree):  # the common case, in one walk
        return None
    # the first wrong field in the order of the checks (each check's matches in turn)
    checks = _CHECKS.get(kind, _META_CHECKS) if isinstance(kind, str) else _META_CHECKS
    for path, shape in checks:
        for where, value in _at(obj, path, ()):
            if not _is(value, shape):
                want = {"map": "a map", "list": "a list", "scalar": "a string or number"}
                return where, f"is {_type_name(value)}, expected {want[shape]}"
    return None


def who(obj: Mapping[str, Any]) -> str:
    """``Kind ns/name`` of an object whose metadata may be of any type."""
    kind = obj.get("kind")
    meta = obj.get("metadata")
    name = name_of(obj) if isinstance(meta, Mapping) else ""
    ns = ns_of(obj) if isinstance(meta, Mapping) else ""
    return f"{kind} {ns}/{name}" if ns else f"{kind} {name}".rstrip()


def problem_message(obj: Mapping[str, Any], path: Sequence[str | int], what: str) -> str:
    return f"{who(obj)}: {shown(path)} {what}"


HINT = "fix the field (kubectl explain KIND.FIELD shows its type)"


def check_views(views: Iterable[Any]) -> None:
    """:func:`check_shapes` for the objects of a GitOps tree (``readers.gitops`` views, each
    with ``get()`` and ``where(*path)``): the error at the wrong field's file:line."""
    for view in views:
        obj = view.get()
        if not (isinstance(obj, Mapping) and isinstance(obj.get("apiVersion"), str)):
            continue
        found = shape_problem(obj)
        if found is not None:
            path, what = found
            where = str(view.where(*path))
            raise BadInput(problem_message(obj, path, what), location=where, hint=HINT)


def check_shapes(objects: Iterable[Any], where: str) -> None:
    """:class:`BadInput` (exit 2) naming the object and field of the first wrong type the
    readers would act on in ``objects`` (read from ``where``)."""
    for obj in objects:
        if not isinstance(obj, Mapping):
            continue
        found = shape_problem(obj)
        if found is not None:
            raise BadInput(problem_message(obj, *found), location=where, hint=HINT)


__all__ = [
    "HINT",
    "SHAPES",
    "check_shapes",
    "check_views",
    "problem_message",
    "shape_problem",
    "shown",
    "who",
]
