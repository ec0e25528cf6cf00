"""Where a fact came from: a typed :class:`Source`, whose text is what the outputs print.

Readers build Sources; the planner builds them for the facts it supposes (a landed release, a
pin it moves). Code that needs to know *where* (the patch builder editing a file line, SARIF
pointing at a line, the GitOps gate relocating a pin) reads the typed fields; ``str(source)`` is
only for people, and nothing reads a Source back from its text. A snapshot records the fields
(:func:`to_fields`) beside the text and reads them back (:func:`from_fields`); a source recorded
only as text stays text.

Kinds and their text:

- ``file``: ``clusters/prod/bom.yaml:12`` (``file``, ``line``; ``line`` 0 when unknown)
- ``flag``: ``flag --installed`` (``detail`` is the flag)
- ``object``: ``cluster prod: HelmRelease flux-giantswarm/kagent spec.driftDetection (unset)``
  (``origin`` the input it was read from, ``detail`` what was read; ``obj`` and ``path`` name
  the object and the field where a consumer needs them)
- ``plan``: ``plan: agent-platform@4.8.0``, ``effects of agent-platform@4.8.0 (file:line)``
  (what the planner supposes; ``detail`` is the text)
- ``derived``: ``derived: exact pin (<pin's source>)`` (``behind`` is the pin's source)
- ``moved``: ``<where it is written> (moved to 4.8.0 with agent-platform@4.8.0)`` (``behind``
  is where the pin is written, ``detail`` the version and release)
- ``default``: ``derived: bom.yaml:4 sets no driftDetection for kagent; <why>`` (``file``,
  ``line`` of the BOM entry, ``subject`` the component, ``detail`` the why)
- ``release-default``: ``default of agent-platform@4.8.0 (components.kagent.versionRange)``
  (``subject`` the release, ``path`` the field of it that gives the value, "" for a chart
  default of a value)
- ``text``: anything else, as recorded (``detail``)
"""

from __future__ import annotations

from typing import Literal, cast, get_args

from msgspec import Struct

SourceKind = Literal[
    "file", "flag", "object", "plan", "derived", "moved", "default", "release-default", "text"
]


class ObjectRef(Struct, frozen=True):
    """A Kubernetes object: kind, namespace ("" for cluster-scoped) and name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return (
            f"{self.kind} {self.namespace}/{self.name}"
            if self.namespace
            else (f"{self.kind} {self.name}")
        )


class Source(Struct, frozen=True):
    """Where a fact was read (or what the planner supposed); ``str()`` is the printed text."""

    kind: SourceKind
    file: str = ""
    line: int = 0
    detail: str = ""
    origin: str = ""  # object: the input it was read from ("cluster prod", a snapshot file)
    obj: ObjectRef | None = None  # object: the object read, where a consumer needs it
    path: str = ""  # object: the field read ("spec.values.image.tag"), where needed
    behind: Source | None = None  # derived / moved: the source this one stands on
    subject: str = ""  # default: the component whose value the default gives

    def __str__(self) -> str:
        if self.kind == "file":
            return f"{self.file}:{self.line}" if self.line else self.file
        if self.kind == "flag":
            return f"flag {self.detail}"
        if self.kind == "object":
            return f"{self.origin}: {self.detail}" if self.origin else self.detail
        if self.kind == "derived":
            return f"derived: exact pin ({self.behind})"
        if self.kind == "moved":
            return f"{self.behind} ({self.detail})"
        if self.kind == "default":
            return (
                f"derived: {self.file}:{self.line} sets no driftDetection for {self.subject}; "
                f"{self.detail}"
            )
        if self.kind == "release-default":
            return f"default of {self.subject}" + (f" ({self.path})" if self.path else "")
        return self.detail

    @property
    def file_line(self) -> tuple[str, int] | None:
        """``(file, line)`` when this source is a line of a file, else None."""
        if self.kind == "file" and self.line > 0:
            return self.file, self.line
        return None

    def unmoved(self) -> Source:
        """Where a pin is written, without the note that the plan moved it."""
        if self.kind == "moved" and self.behind is not None:
            return self.behind
        return self

    def underived(self) -> Source:
        """The pin's own source behind a ``derived: exact pin (…)`` source; else this one."""
        if self.kind == "derived" and self.behind is not None:
            return self.behind
        return self


# --------------------------------------------------------------------------- constructors


def in_file(file: str, line: int = 0) -> Source:
    """A value at a line of a file (``line`` 0 when unknown)."""
    return Source("file", file=file, line=line)


def flag(name: str) -> Source:
    """A value stated with a command-line flag (``--installed``)."""
    return Source("flag", detail=name)


def read_from(
    detail: str, origin: str = "", *, obj: ObjectRef | None = None, path: str = ""
) -> Source:
    """A value read from a Kubernetes object (a cluster, kubectl output)."""
    return Source("object", "", 0, detail, origin, obj, path)  # by position: built by the 10,000


def supposed(text: str) -> Source:
    """A value the planner supposes (a landed release, its BOM, its effects)."""
    return Source("plan", detail=text)


def derived_from_pin(pin: Source) -> Source:
    """The source of an installed version derived from an exact pin whose source is ``pin``."""
    return Source("derived", behind=pin)


def moved(written: Source | None, version: str, release: str) -> Source:
    """The source of a pin the plan moved: where it is written, and that the plan moved it."""
    where = written.unmoved() if written is not None else supposed(release)
    return moved_behind(where, version, release)


def moved_behind(where: Source, version: str, release: str) -> Source:
    """``moved`` where the pin is written at ``where`` (already ``unmoved``)."""
    return Source("moved", behind=where, detail=f"moved to {version} with {release}")


def default_of(file: str, line: int, component: str, why: str) -> Source:
    """A value a chart's defaults give ``component``, whose BOM entry at file:line sets none."""
    return Source("default", file=file, line=line, subject=component, detail=why)


def release_default(release: str, field: str = "") -> Source:
    """A value the knowledge of ``release`` gives by default (its published component range
    ``components.X.versionRange``, or a chart default when ``field`` is empty)."""
    return Source("release-default", subject=release, path=field)


def text(detail: str) -> Source:
    """A source known only by its text."""
    return Source("text", detail=detail)


# --------------------------------------------------------------------------- fields

_STRINGS = ("file", "detail", "origin", "path", "subject")
_FIELDS = frozenset(("kind", "line", "obj", "behind", *_STRINGS))
_KINDS: tuple[str, ...] = get_args(SourceKind)
# what a kind's text is made of: a recorded source without it would print a broken sentence
_NEEDS: dict[str, tuple[str, ...]] = {
    "file": ("file",),
    "flag": ("detail",),
    "object": ("detail",),
    "plan": ("detail",),
    "derived": ("behind",),
    "moved": ("behind", "detail"),
    "default": ("file", "subject"),
    "release-default": ("subject",),
    "text": (),
}
_DEPTH = 8  # sources standing on sources: a moved pin of a derived value is two deep


def to_fields(source: Source) -> dict[str, object]:
    """The typed fields of ``source`` as plain data, the inverse of :func:`from_fields`:
    ``kind`` and every field that is set (``obj`` as kind/namespace/name, ``behind`` nested).
    A snapshot records them beside the text, so reading it back needs no text read."""
    # field by field, in this order (a scan writes it for each of thousands of facts)
    out: dict[str, object] = {"kind": source.kind}
    if source.origin:
        out["origin"] = source.origin
    if source.file:
        out["file"] = source.file
    if source.line:
        out["line"] = source.line
    obj = source.obj
    if obj is not None:
        out["obj"] = {"kind": obj.kind, "namespace": obj.namespace, "name": obj.name}
    if source.path:
        out["path"] = source.path
    if source.subject:
        out["subject"] = source.subject
    if source.detail:
        out["detail"] = source.detail
    if source.behind is not None:
        out["behind"] = to_fields(source.behind)
    return out


def from_fields(fields: object, _depth: int = 0) -> Source:
    """The Source :func:`to_fields` recorded (or a person wrote: ``kind`` may be left out
    when ``file`` is given). Raises ValueError saying what is wrong with ``fields``."""
    if not isinstance(fields, dict):
        raise ValueError(f"expected a mapping of source fields, got {type(fields).__name__}")
    unknown = sorted(str(k) for k in fields if k not in _FIELDS)
    if unknown:
        known = ", ".join(sorted(_FIELDS))
        raise ValueError(f"unknown source field {unknown[0]!r} (the fields are {known})")
    kind = fields.get("kind", "file" if "file" in fields else None)
    if kind not in _KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(_KINDS)}")
    strings = {name: _string(fields, name) for name in _STRINGS}
    line = fields.get("line", 0)
    if not isinstance(line, int) or isinstance(line, bool) or line < 0:
        raise ValueError(f"line {line!r} must be a whole number, 0 or more")
    behind = None
    if fields.get("behind") is not None:
        if _depth >= _DEPTH:
            raise ValueError(f"sources nested more than {_DEPTH} deep")
        behind = from_fields(fields["behind"], _depth + 1)
    source = Source(
        cast(SourceKind, kind), line=line, obj=_object(fields.get("obj")), behind=behind,
        file=strings["file"], detail=strings["detail"], origin=strings["origin"],
        path=strings["path"], subject=strings["subject"],
    )  # fmt: skip
    missing = [n for n in _NEEDS[kind] if not getattr(source, n)]
    if missing:
        raise ValueError(f"a {kind} source needs {' and '.join(missing)}")
    return source


def _string(fields: dict[object, object], name: str) -> str:
    value = fields.get(name, "")
    if not isinstance(value, str):
        raise ValueError(f"{name} {value!r} must be a string")
    return value


def _object(raw: object) -> ObjectRef | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) - {"kind", "namespace", "name"}:
        raise ValueError("obj must be a mapping of kind, namespace and name")
    kind, namespace, name = (raw.get(k, "") for k in ("kind", "namespace", "name"))
    if not (isinstance(kind, str) and isinstance(namespace, str) and isinstance(name, str)):
        raise ValueError("obj kind, namespace and name must be strings")
    if not kind or not name:
        raise ValueError("obj needs kind and name")
    return ObjectRef(kind, namespace, name)


__all__ = [
    "ObjectRef",
    "Source",
    "SourceKind",
    "default_of",
    "derived_from_pin",
    "flag",
    "from_fields",
    "in_file",
    "moved",
    "read_from",
    "release_default",
    "supposed",
    "text",
    "to_fields",
]
