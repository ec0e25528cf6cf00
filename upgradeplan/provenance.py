"""Where a fact came from: a typed :class:`Source`, whose text is what the outputs print.

Readers build Sources; the planner builds them for the facts it supposes (a landed release, a
pin it moves). Code that needs to know *where* (the patch builder editing a file line, SARIF
pointing at a line, the GitOps gate relocating a pin) reads the typed fields; ``str(source)`` is
only for people. The one way back from text is :func:`recorded`, for sources a snapshot file
recorded as text (it is the inverse of ``str``).

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

from typing import Literal

from upgradeplan.frozen import frozen

SourceKind = Literal[
    "file", "flag", "object", "plan", "derived", "moved", "default", "release-default", "text"
]


@frozen
class ObjectRef:
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


@frozen
class Source:
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
    return Source("object", detail=detail, origin=origin, obj=obj, path=path)


def supposed(text: str) -> Source:
    """A value the planner supposes (a landed release, its BOM, its effects)."""
    return Source("plan", detail=text)


def derived_from_pin(pin: Source) -> Source:
    """The source of an installed version derived from an exact pin whose source is ``pin``."""
    return Source("derived", behind=pin)


def moved(written: Source | None, version: str, release: str) -> Source:
    """The source of a pin the plan moved: where it is written, and that the plan moved it."""
    where = written.unmoved() if written is not None else supposed(release)
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


# --------------------------------------------------------------------------- text -> Source

_DERIVED_PIN = "derived: exact pin ("
_DEFAULT = "derived: "
_NO_DRIFT = " sets no driftDetection for "
_RELEASE_DEFAULT = "default of "


def recorded(raw: str) -> Source:
    """The Source whose text a snapshot file recorded: the inverse of ``str(source)``.

    A snapshot is serialised state, so it records sources as the text the outputs print;
    reading it back gives file lines (and what stands on them) their kind again. Everything
    else stays text. This is the only place a source's text is read.
    """
    body = raw.strip()
    if body.startswith(_DERIVED_PIN) and body.endswith(")"):
        return derived_from_pin(recorded(body[len(_DERIVED_PIN) : -1]))
    if body.startswith(_DEFAULT) and _NO_DRIFT in body:
        where, _, rest = body[len(_DEFAULT) :].partition(_NO_DRIFT)
        component, sep, why = rest.partition("; ")
        at = _file_line(where)
        if at is not None and sep and component and " " not in component:
            return default_of(at[0], at[1], component, why)
    at = _file_line(body)
    if at is not None:
        return in_file(*at)
    if (
        body.startswith(_RELEASE_DEFAULT)
        and " " not in body[len(_RELEASE_DEFAULT) :].split(" (")[0]
    ):
        release, _, rest = body[len(_RELEASE_DEFAULT) :].partition(" (")
        if not rest or rest.endswith(")"):
            return release_default(release, rest[:-1])
    if body.startswith("flag ") and " " not in body[len("flag ") :]:
        return flag(body[len("flag ") :])
    origin, sep, detail = body.partition(": ")
    if not sep:
        origin, detail = "", body
    obj, path = _object(detail)
    if obj is not None:
        return read_from(detail, origin, obj=obj, path=path)
    return text(raw)


def _object(detail: str) -> tuple[ObjectRef | None, str]:
    """The object and field of ``Kind namespace/name field`` (as :func:`read_from` prints)."""
    kind, _, rest = detail.partition(" ")
    ref, _, path = rest.partition(" ")
    namespace, sep, name = ref.partition("/")
    if not (kind[:1].isupper() and kind.isalnum() and sep and namespace and name):
        return None, ""
    return ObjectRef(kind, namespace, name), path


def _file_line(body: str) -> tuple[str, int] | None:
    """``file:line`` with a file name that has no ``:`` and does not start with a blank."""
    file, sep, line = body.rpartition(":")
    if not sep or not file or not line.isascii() or not line.isdigit():
        return None
    if ":" in file or file[0].isspace() or body.startswith(("flag ", "cluster ", "snapshot ")):
        return None
    return file, int(line)


__all__ = [
    "ObjectRef",
    "Source",
    "SourceKind",
    "default_of",
    "derived_from_pin",
    "flag",
    "in_file",
    "moved",
    "read_from",
    "recorded",
    "release_default",
    "supposed",
    "text",
]
