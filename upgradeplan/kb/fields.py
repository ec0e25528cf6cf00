"""Typed field access on one knowledge document.

:class:`Fields` reads strings, lists, mappings and choices from a parsed document and reports
every structural problem (KB002 wrong type or missing field, KB017, KB027) at the line of the
field, into the loader's shared problem list; a bad field yields its default, never an exception.
"""

from __future__ import annotations

from typing import Any

from upgradeplan import keypath
from upgradeplan.kb.documents import Document
from upgradeplan.kb.problems import Problem, problem
from upgradeplan.kb.schema import top_level_properties
from upgradeplan.model import Location, Withdrawn

DIRECTORIES: dict[str, str] = {
    "products": "product",
    "releases": "release",
    "hazards": "hazard",
    "migrations": "migration",
}


def plain(value: Any) -> Any:
    """``value`` as plain dicts and lists (the line-keeping YAML types dropped)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


class Fields:
    """Typed field access on one document; problems go to the shared list."""

    def __init__(self, doc: Document, problems: list[Problem]) -> None:
        self.doc = doc
        self.data = doc.data
        self.problems = problems
        # an amending file names its entry and sets only what it adds
        self.amending = isinstance(doc.data.get("amend"), dict)

    def inferred(self) -> dict[str, str]:
        """``inferred:`` field path -> reason; each path must name a field of this file."""
        marks = self.strmap(self.data, "inferred")
        for path in list(marks):
            if keypath.get(self.data, keypath.split(path)) is keypath.ABSENT:
                del marks[path]
                self.report(
                    "KB027",
                    ("inferred", path),
                    f"inferred: {path!r} names no field of this file "
                    "(keys joined by '.', a '.' inside a key written '\\.', list items by index)",
                )
        return marks

    def report(self, code: str, path: tuple[Any, ...], message: str) -> None:
        self.problems.append(problem(code, self.doc.at(*path), message))

    def where(self) -> Location:
        return Location(self.doc.file, self.data.line or 1)

    def header(self, kind: str) -> None:
        if self.data.get("schema_version") != 1:
            got = self.data.get("schema_version")
            what = "missing" if got is None else f"{got!r}"
            self.report("KB002", ("schema_version",), f"schema_version must be 1 ({what})")
        if "kind" not in self.data:
            self.report("KB002", (), f"missing required property 'kind' (kind: {kind})")
        elif self.data["kind"] not in DIRECTORIES.values():
            self.report(
                "KB002", ("kind",), f"kind must be one of {', '.join(DIRECTORIES.values())}"
            )
        allowed = top_level_properties(kind)
        for key in self.data:
            if key not in allowed:
                self.report("KB002", (key,), f"unknown property {key!r} for a {kind}")

    # scalar helpers: `d` is a mapping inside the document at `path`

    def text(self, key: str, *, required: bool = False, default: str = "") -> str:
        value = self.data.get(key)
        if value.__class__ is str:  # the usual case, without a second call
            return value
        return self.text_in(self.data, key, (), required=required, default=default)

    def text_in(
        self,
        d: Any,
        key: str,
        path: tuple[Any, ...],
        *,
        required: bool = False,
        default: str = "",
    ) -> str:
        value = d.get(key) if isinstance(d, dict) else None
        if value.__class__ is str:
            return value
        if value is None:
            if required and not (self.amending and not path):
                self.report("KB002", path, f"missing required property {key!r}")
            return default
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float, bool)):
            self.report(
                "KB002",
                (*path, key),
                f"{key}: {value!r} is not a string; quote it "
                f"(YAML read it as a {type(value).__name__})",
            )
        else:
            self.report("KB002", (*path, key), f"{key} must be a string")
        return default

    def ident(self, key: str, *, default: str | None = None) -> str:
        value = self.data.get(key)
        if value.__class__ is str:
            return value
        fallback = self.doc.stem if default is None else default
        return self.text_in(self.data, key, (), required=True, default=fallback)

    def choice(
        self, key: str, choices: tuple[str, ...], *, required: bool = False, default: str
    ) -> str:
        return self.choice_in(self.data, key, choices, (), required=required, default=default)

    def choice_in(
        self,
        d: Any,
        key: str,
        choices: tuple[str, ...],
        path: tuple[Any, ...],
        *,
        required: bool = False,
        default: str,
    ) -> str:
        value = self.text_in(d, key, path, required=required, default="")
        if not value:
            return default
        if value not in choices:
            self.report(
                "KB002", (*path, key), f"{key} {value!r} is not one of {', '.join(choices)}"
            )
            return default
        return value

    def mapping(self, key: str) -> dict[Any, Any] | None:
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            self.report("KB002", (key,), f"{key} must be a mapping")
            return None
        return value

    def strlist(self, d: Any, key: str, path: tuple[Any, ...] = ()) -> tuple[str, ...]:
        value = d.get(key) if isinstance(d, dict) else None
        if value is None:
            return ()
        if isinstance(value, str) or not isinstance(value, list):
            self.report("KB002", (*path, key), f"{key} must be a list of strings")
            return ()
        out = []
        for i, item in enumerate(value):
            if isinstance(item, str):
                out.append(item)
            else:
                self.report("KB002", (*path, key, i), f"{key}[{i}] must be a string (quote it)")
        return tuple(out)

    def strmap(self, d: Any, key: str, path: tuple[Any, ...] = ()) -> dict[str, str]:
        value = d.get(key) if isinstance(d, dict) else None
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.report("KB002", (*path, key), f"{key} must be a mapping")
            return {}
        out = {}
        for k, v in value.items():
            if isinstance(v, str) and isinstance(k, str):
                out[k] = v
            else:
                self.report(
                    "KB002",
                    (*path, key, k),
                    f"{key}.{k}: {v!r} must be a string; quote it",
                )
        return out

    def items(self, key: str) -> list[tuple[int, dict[Any, Any]]]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.report("KB002", (key,), f"{key} must be a list")
            return []
        out = []
        for i, item in enumerate(value):
            if isinstance(item, dict):
                out.append((i, item))
            else:
                self.report("KB002", (key, i), f"{key}[{i}] must be a mapping")
        return out

    def withdrawn(self) -> Withdrawn | None:
        value = self.data.get("withdrawn")
        if value is None:
            return None
        if not isinstance(value, dict):
            self.report("KB002", ("withdrawn",), "withdrawn is a mapping {date, reason}")
            return None
        if "date" not in value:
            self.report("KB017", ("withdrawn",), 'withdrawn without a date; add date: "YYYY-MM-DD"')
        date = self.text_in(value, "date", ("withdrawn",))
        reason = self.text_in(value, "reason", ("withdrawn",), required=True)
        return Withdrawn(date=date, reason=reason)
