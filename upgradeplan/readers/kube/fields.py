"""Fields of Kubernetes object dicts: names, paths, image references, the fact builder.

Every object reader adds its facts to a :class:`Builder`, so each fact's source names the
object and the field read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from msgspec import Struct, field

from upgradeplan.model import Fact, FactValue
from upgradeplan.provenance import ObjectRef, read_from
from upgradeplan.readers.recognise import image_repository as _shared_image_repository
from upgradeplan.readers.recognise import image_tag as _shared_image_tag

# a tag or pin that reads as a version (v-prefixed or not), as charts and images write them
VERSION_LIKE = re.compile(r"^v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.+-]*)?$")


# ``type(x) is dict`` before ``isinstance(x, Mapping)``: parsed JSON is plain dicts, and the
# ABC check is most of the cost of these helpers on a list of thousands of objects.


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    found = obj.get("metadata")
    return found if type(found) is dict or isinstance(found, Mapping) else {}


def name_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("name", ""))


def ns_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("namespace", "") or "")


def get(obj: Any, *path: str) -> Any:
    for part in path:
        if type(obj) is not dict and not isinstance(obj, Mapping):
            return None
        obj = obj.get(part)
    return obj


def str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {
        str(k): "" if v is None else str(v)
        for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
    }


def ref_of(kind: str, obj: Mapping[str, Any]) -> str:
    ns = ns_of(obj)
    return f"{kind} {ns}/{name_of(obj)}" if ns else f"{kind} {name_of(obj)}"


def group_of(obj: Mapping[str, Any]) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[0]


# The image-reference parsing every reader shares (readers/recognise): a digest-pinned
# ``repo:25.01.1@sha256:…`` keeps its tag.
image_repository = _shared_image_repository
image_tag = _shared_image_tag


def strip_v(version: str) -> str:
    return version[1:] if version[:1] in ("v", "V") and version[1:2].isdigit() else version


class Builder(Struct):
    prefix: str
    facts: dict[str, Fact] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    def add(
        self,
        key: str,
        value: FactValue,
        where: str,
        *,
        replace: bool = False,
        obj: ObjectRef | None = None,
        path: str = "",
    ) -> None:
        if key in self.facts and not replace:
            return
        self.facts[key] = Fact(key, value, read_from(where, self.prefix, obj=obj, path=path))

    def put(self, fact: Fact) -> None:
        """A fact built already (its source under this prefix); the first of a key stays."""
        if fact.key not in self.facts:
            self.facts[fact.key] = fact


# --------------------------------------------------------------------------- products


def containers_of(dep: Mapping[str, Any], *, init: bool = False) -> list[Mapping[str, Any]]:
    spec = get(dep, "spec", "template", "spec") or {}
    keys = ("initContainers", "containers") if init else ("containers",)
    out: list[Mapping[str, Any]] = []
    for key in keys:
        items = spec.get(key) if isinstance(spec, Mapping) else None
        if isinstance(items, list):
            out.extend(c for c in items if isinstance(c, Mapping))
    return out
