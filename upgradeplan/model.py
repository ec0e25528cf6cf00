"""Frozen model records: knowledge (products, releases, hazards, migrations), state, plans.

Plain data, as msgspec Structs. Knowledge remembers where it was defined (:class:`Location`),
facts where they were read (:attr:`Fact.source`, a :class:`~upgradeplan.provenance.Source`).
Nothing in this module reads files, talks to a cluster or prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from enum import Enum
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, Literal

from msgspec import Struct, field
from msgspec.structs import astuple, force_setattr, replace

from upgradeplan.provenance import Source
from upgradeplan.unreadable import Unreadable

# --------------------------------------------------------------------------- locations


class Location(Struct, frozen=True, order=True):
    """Where something was defined: a file and a 1-based line (0 when unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


NOWHERE = Location("<inline>", 0)

# --------------------------------------------------------------------------- knowledge

Severity = Literal["blocking", "warning", "notice"]
SEVERITIES: tuple[Severity, ...] = ("blocking", "warning", "notice")
SEVERITY_RANK: dict[str, int] = {"notice": 1, "warning": 2, "blocking": 3}

Scope = Literal["skip", "landing", "transition", "state"]
SCOPES: tuple[Scope, ...] = ("skip", "landing", "transition", "state")

ProductKind = Literal["chart", "agent", "platform", "environment"]

NEXT = "next"  # the version of an unreleased knowledge entry


class Amendment(Struct, frozen=True):
    """A file of a later knowledge directory that adds to an entry (``amend:``)."""

    location: Location
    reason: str
    overrides: Mapping[str, str] = field(default_factory=dict)  # field -> why it replaces it


class Recognise(Struct, frozen=True):
    """How readers find a product in a cluster or in GitOps files."""

    helmrelease: tuple[str, ...] = ()  # HelmRelease / OCIRepository names
    chart: tuple[str, ...] = ()  # chart names (spec.chart.spec.chart, history chartName)
    deployment_labels: tuple[tuple[str, str], ...] = ()  # label key/value on a Deployment
    image: tuple[str, ...] = ()  # image repositories (without tag)
    values_keys: tuple[str, ...] = ()  # dotted keys in values files (e.g. delegateVersion)
    bom_component: str = ""  # name under components.<name> in a BOM
    chart_source: tuple[str, ...] = ()  # OCI (oci://…/name) or HelmRepository URLs it comes from


class ChartSource(Struct, frozen=True):
    """One place a product's chart was published over its history, and the versions there."""

    url: str  # the chart's OCI URL (oci://registry/path/name) or a HelmRepository URL
    versions: str = ""  # a Masterminds constraint of the versions served there ("": any)
    era: str = ""  # what the source calls that line ("the 0.x wrapper"), for messages


class ObjectKind(Struct, frozen=True):
    """A custom-resource kind a product's hazards read: readers make ``object.<kind>`` (every
    object, ``namespace/name``) and ``object.<kind>.<namespace>.<name>.<field>`` per field."""

    kind: str
    api_version: str  # group/version to list it with ("ate.dev/v1alpha1")
    plural: str  # the resource name in the API path ("workerpools")
    fields: tuple[str, ...] = ()  # field paths (keys joined by '.', '\\.' inside a key)

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]


class Product(Struct, frozen=True):
    id: str
    name: str
    kind: ProductKind
    description: str
    recognise: Recognise
    location: Location = NOWHERE
    objects: Mapping[str, ObjectKind] = field(default_factory=dict)  # kind -> what is read
    charts: tuple[ChartSource, ...] = ()  # where its chart is published, by era
    reviewed_through: str = ""  # newest version reviewed: above it, no known hazard is not "safe"
    upgrade_doc_title: str = ""  # H1 of the generated UPGRADE.md ("Upgrading agent-platform")
    upgrade_doc_intro: str = ""  # the one line under it
    inferred: Mapping[str, str] = field(default_factory=dict)  # field path -> why inferred
    amendments: tuple[Amendment, ...] = ()  # what later directories added to it
    stepping: Stepping | None = None  # the stepping rule the sources give, if any
    crossing_notes: tuple[CrossingNote, ...] = ()  # what a path through a range meets


class Stepping(Struct, frozen=True):
    """A product's stepping rule (``stepping:``): each hop moves at most one ``line``."""

    line: Literal["minor", "major"]
    at: Literal["latest-patch", "any"] = "latest-patch"
    source: str = ""  # where the sources give it (section or changelog entry)
    quote: str = ""  # the sentence it rests on
    references: tuple[str, ...] = ()  # the pages that give it; its hazards cite them


class CrossingNote(Struct, frozen=True):
    id: str  # a change whose release the sources do not name (kb/crossing.py)
    shipped: str  # a constraint: the releases that may have shipped the change
    title: str
    text: str
    source: str = ""  # the source file, the section it is under, the sentence it rests on
    section: str = ""
    quote: str = ""
    hazards: tuple[str, ...] = ()  # hazards of the same change: UPGRADE.md renders them with it
    location: Location = NOWHERE


class Prerequisite(Struct, frozen=True):
    """What any path crossing a release's version needs (``crossing:``, kb/crossing.py)."""

    id: str
    at: Literal["leaving", "entering"]
    title: str
    text: str
    unmet: Condition | None = None  # TRUE where not in place (None: prerequisite.<product>.<id>)
    severity: Severity = "blocking"
    source: str = ""  # the section or changelog entry it comes from
    quote: str = ""  # the sentence it rests on


class Note(Struct, frozen=True):
    """One operator-action bullet: a bold condition and what to do."""

    condition: str
    text: str
    commands: tuple[str, ...] = ()


class Change(Struct, frozen=True):
    """A structured change a release makes (kind from a fixed list, free details)."""

    kind: str  # ownership-moved | annotation-added | flag-renamed | values-key-removed | ...
    summary: str
    details: Mapping[str, Any] = field(default_factory=dict)


class Withdrawn(Struct, frozen=True):
    date: str
    reason: str


class Release(Struct, frozen=True):
    product: str
    version: str  # a chart version, or NEXT for unreleased knowledge
    title: str
    location: Location = NOWHERE
    date: str | None = None
    summary: str = ""
    references: tuple[str, ...] = ()
    bom: Mapping[str, str] = field(default_factory=dict)  # component product -> exact version
    requires: Mapping[str, str] = field(default_factory=dict)  # product -> constraint
    upgrade_from: str | None = None  # constraint: which versions may upgrade to this one
    changes: tuple[Change, ...] = ()
    effects: Mapping[str, Any] = field(default_factory=dict)  # facts set once this runs
    notes: tuple[Note, ...] = ()  # operator-action bullets for UPGRADE.md
    verify: tuple[str, ...] = ()  # commands that show the upgrade worked
    withdrawn: Withdrawn | None = None
    from_label: str = ""  # the <from> of the UPGRADE.md heading ("" = the previous release)
    # components.<name>.versionRange: component product -> the range this release publishes
    components: Mapping[str, str] = field(default_factory=dict)
    built_against: Mapping[str, str] = field(default_factory=dict)  # product -> exact version
    defaults: Mapping[str, Any] = field(default_factory=dict)  # chart defaults (nested values)
    requires_when: Mapping[str, Condition] = field(default_factory=dict)  # conditional requires
    inferred: Mapping[str, str] = field(default_factory=dict)  # field path -> why inferred
    amendments: tuple[Amendment, ...] = ()  # what later directories added to it
    crossing: tuple[Prerequisite, ...] = ()  # prerequisites of every path crossing it
    app_version: str = ""  # the chart's appVersion (Chart.yaml), as written; "" = not known
    kube_version: str = ""  # the chart's kubeVersion constraint (Chart.yaml), as written

    @property
    def unreleased(self) -> bool:
        return self.version == NEXT

    @property
    def key(self) -> str:
        return f"{self.product}@{self.version}"


class Condition(Struct, frozen=True):
    """A node of a declarative condition tree.

    ``op`` is ``all``, ``any`` or ``not`` (with ``children``) or ``pred`` (with
    ``predicate`` and ``args``). Predicates come from the fixed vocabulary in
    :mod:`upgradeplan.conditions`; there is no code and no eval.
    """

    op: Literal["all", "any", "not", "pred"]
    children: tuple[Condition, ...] = ()
    predicate: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    location: Location = NOWHERE


class Symptom(Struct, frozen=True):
    pattern: str  # an RE2 regular expression, matched case-insensitively on whole messages
    where: Literal["logs", "events", "status", "any"] = "any"
    example: str = ""
    # a line any chart or cluster prints: alone it is a low-confidence hint, never a match
    generic: bool = False
    # patterns of which one must also show in the paste for more than a hint
    needs: tuple[str, ...] = ()
    # the charts, releases or objects the message is about: a message naming only others is
    # another chart's (lower case names, compared with the names read in the paste)
    names: tuple[str, ...] = ()
    # the event or condition reasons it is printed under; a message read with another is not it
    reasons: tuple[str, ...] = ()


class Hazard(Struct, frozen=True):
    id: str
    title: str
    product: str
    severity: Severity
    scope: Scope
    consequence: str
    location: Location = NOWHERE
    # scope parameters (constraints are Masterminds strings):
    stop: str | None = None  # skip: the required stop S
    to_range: str | None = None  # skip/transition: where the hop lands; landing: the range
    # transition/skip: where the hop starts (optional for skip); state: installed range
    from_range: str | None = None
    when: Condition | None = None  # None means "always" within the scope
    description: str = ""
    symptoms: tuple[Symptom, ...] = ()
    avoid: str = ""
    recover: str = ""
    recover_commands: tuple[str, ...] = ()
    migrations: tuple[str, ...] = ()  # migration ids that fix it
    verify: tuple[str, ...] = ()  # commands that show it is fixed / did not happen
    references: tuple[str, ...] = ()
    withdrawn: Withdrawn | None = None
    inferred: Mapping[str, str] = field(default_factory=dict)  # field path -> why inferred
    amendments: tuple[Amendment, ...] = ()  # what later directories added to it
    # chart defaults of the keys its condition reads: (constraint, nested values), folded into
    # the releases of its product in range by the loader (a release's own defaults win)
    defaults: tuple[tuple[str, Mapping[str, Any]], ...] = ()


MigrationKind = Literal[
    "bom-pin",  # move components.<name>.versionRange in a BOM values file
    "helmrelease-patch",  # kustomize strategic-merge patch of a HelmRelease
    "json6902",  # JSON 6902 patch of a workload (e.g. container args, env)
    "values-edit",  # set a key in a values file
    "manifest",  # a new object to apply (e.g. an Opaque Secret)
    "command",  # a shell command; every substituted value is shell-quoted
]


class Migration(Struct, frozen=True):
    id: str
    title: str
    kind: MigrationKind
    product: str
    template: str  # jinja2 source, rendered sandboxed with StrictUndefined
    location: Location = NOWHERE
    description: str = ""
    target: Mapping[str, Any] = field(default_factory=dict)  # kind/name/namespace/path/key…
    params: Mapping[str, Any] = field(default_factory=dict)  # param -> {fact:, placeholder:}
    when: Literal["before", "after"] = "before"  # relative to the step it belongs to
    references: tuple[str, ...] = ()  # the issues, pull requests or documents it rests on
    inferred: Mapping[str, str] = field(default_factory=dict)  # field path -> why inferred
    amendments: tuple[Amendment, ...] = ()  # what later directories added to it


class KnowledgeBase(Struct, frozen=True, weakref=True, dict=True):  # weakref: planner/index.py
    products: Mapping[str, Product]
    releases: Mapping[str, tuple[Release, ...]]  # product -> releases, oldest first, next last
    hazards: Mapping[str, Hazard]
    migrations: Mapping[str, Migration]
    roots: tuple[str, ...] = ()  # the directories it was loaded from

    @cached_property  # in ``__dict__`` (dict=True): not a field, out of == and repr
    def _index(self) -> dict[str, dict[str, Release]]:
        return {}

    def release(self, product: str, version: str) -> Release | None:
        if product not in self._index:  # filled on first use: a pack's line has 1,000+ releases
            self._index[product] = {r.version: r for r in reversed(self.releases.get(product, ()))}
        return self._index[product].get(version)

    def object_kinds(self) -> dict[str, ObjectKind]:
        """The custom-resource kinds the products declare (fields of the same kind united)."""
        out: dict[str, ObjectKind] = {}
        for product in self.products.values():
            for kind, decl in product.objects.items():
                first = out.get(kind)
                if first is None:
                    out[kind] = decl
                else:
                    fields = first.fields + tuple(f for f in decl.fields if f not in first.fields)
                    out[kind] = ObjectKind(kind, first.api_version, first.plural, fields)
        return out

    def hazards_for(self, product: str) -> tuple[Hazard, ...]:
        """The product's hazards as the knowledge files state them, not those kb/crossing.py
        derives (which ``hazards`` holds too, by their ``crossing:``/``stepping:`` ids)."""
        return tuple(
            h
            for h in self.hazards.values()
            if h.product == product and not h.id.startswith(("crossing:", "stepping:"))
        )


# --------------------------------------------------------------------------- state

# values facts may hold the structured values of a chart (nested maps and lists)
FactValue = str | bool | int | None | list[str] | dict[str, str] | list[Any] | dict[str, Any]


class Fact(Struct, frozen=True):
    """One observed fact. ``source`` says where it came from (:class:`Source`), and prints as
    ``flag --installed``, ``clusters/prod/bom.yaml:12``,
    ``cluster prod: HelmRelease flux-giantswarm/kagent``, ``derived: exact pin (…)``.
    ``value`` None means "known to be absent" (e.g. no pin), which is different from
    the fact not being in the state at all (unknown).
    """

    key: str
    value: FactValue
    source: Source


class State(Struct, frozen=True):
    """What an installation runs and pins: facts by key (see docs/state-format.md)."""

    facts: Mapping[str, Fact] = field(default_factory=dict)
    name: str = ""  # e.g. the context name, or the GitOps path
    unreadable: Mapping[str, str] = field(default_factory=dict)  # key prefix -> why unknown
    unread: tuple[Unreadable, ...] = ()  # the sources not read (upgradeplan.unreadable)

    def get(self, key: str) -> Fact | None:
        return self.facts.get(key)

    def value(self, key: str, default: Any = None) -> Any:
        fact = self.facts.get(key)
        return default if fact is None else fact.value

    def __contains__(self, key: object) -> bool:
        return key in self.facts

    def __iter__(self) -> Iterator[Fact]:
        return iter(self.facts[k] for k in sorted(self.facts))

    def with_facts(self, *facts: Fact) -> State:
        merged = dict(self.facts)
        for f in facts:
            merged[f.key] = f
        return State(facts=merged, name=self.name, unreadable=self.unreadable, unread=self.unread)

    def installed(self, product: str) -> str | None:
        v = self.value(f"installed.{product}")
        return v if isinstance(v, str) else None

    def pin(self, product: str) -> Fact | None:
        return self.facts.get(f"pin.{product}")


# --------------------------------------------------------------------------- evaluation


class Truth(Enum):
    """Kleene three-valued truth."""

    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"

    def __and__(self, other: Truth) -> Truth:
        if Truth.FALSE in (self, other):
            return Truth.FALSE
        if Truth.UNKNOWN in (self, other):
            return Truth.UNKNOWN
        return Truth.TRUE

    def __or__(self, other: Truth) -> Truth:
        if Truth.TRUE in (self, other):
            return Truth.TRUE
        if Truth.UNKNOWN in (self, other):
            return Truth.UNKNOWN
        return Truth.FALSE

    def __invert__(self) -> Truth:
        if self is Truth.UNKNOWN:
            return Truth.UNKNOWN
        return Truth.FALSE if self is Truth.TRUE else Truth.TRUE


class Evidence(Struct, frozen=True):
    """One predicate's evaluation: what it asked, what was observed, from where."""

    predicate: str
    description: str  # human sentence, e.g. "HelmRelease kagent has drift detection enabled"
    result: Truth
    facts: tuple[Fact, ...] = ()  # the facts it read (with their sources)
    missing: tuple[str, ...] = ()  # fact keys it needed and did not have
    negated: bool = False  # inside an odd number of `not`s


Status = Literal["applies", "may-apply", "does-not-apply"]

# the checks computed from chart archives (upgradeplan.charts): accepted risks may name them
_CHECKS = "crds-changed values-key-removed kube-version-raised app-major-changed"
COMPUTED_CHECKS = tuple(f"chart.{name}" for name in _CHECKS.split())


class MissingFact(Struct, frozen=True):
    key: str
    how: str  # how to supply it: "--fact KEY=VALUE" or a reader that provides it


class Finding(Struct, frozen=True):
    hazard: str
    title: str
    severity: Severity
    scope: Scope
    status: Status
    product: str
    from_version: str | None
    to_version: str | None
    evidence: tuple[Evidence, ...] = ()
    missing: tuple[MissingFact, ...] = ()
    consequence: str = ""
    recover: str = ""
    avoid: str = ""
    location: Source | None = None  # the file line of the fact that makes it apply (pin)
    reason: str = ""  # one line: why it applies / may apply / does not apply
    fixed_by: tuple[str, ...] = ()  # migration ids whose actions (in this step) fix it


class Action(Struct, frozen=True, dict=True):  # a deferred content waits in ``__dict__``
    """A rendered migration or command an operator runs before/after a step.

    The planner makes its actions with :meth:`deferred`: ``content`` is then rendered when it
    is first read (by an output that shows it, or by comparing, hashing or printing the
    action), not for every step of every plan; the value and any error are the same.
    """

    migration: str
    title: str
    kind: MigrationKind
    when: Literal["before", "after"]
    content: str  # the rendered patch / manifest / command
    target: Mapping[str, Any] = field(default_factory=dict)
    fixes: tuple[str, ...] = ()  # hazard ids
    placeholders: tuple[str, ...] = ()  # params that had no fact and were left as placeholders

    @classmethod
    def deferred(cls, render: Callable[[], str], **fields: Any) -> Action:
        """An action whose ``content`` is ``render()``, called once when it is first read.

        ``render`` must pickle (a module-level function or a ``functools.partial`` of one).
        """
        action = cls(content="", **fields)
        force_setattr(action, "_render", render)
        _CONTENT.__delete__(action)  # unset: the first read goes to __getattr__
        return action

    def _others(self) -> dict[str, Any]:  # the fields but ``content``, as keywords
        return {f: getattr(self, f) for f in self.__struct_fields__ if f != "content"}

    def with_fixes(self, fixes: tuple[str, ...]) -> Action:
        """The same action fixing ``fixes`` (a deferred content stays deferred)."""
        render = self.__dict__.get("_render")
        if render is None:
            return replace(self, fixes=fixes)
        return Action.deferred(render, **{**self._others(), "fixes": fixes})

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle keep a deferred content deferred
        render = self.__dict__.get("_render")
        if render is None:
            return Action, astuple(self)
        return partial(Action.deferred, render, **self._others()), ()

    def _values(self) -> tuple[Any, ...]:  # every field, a deferred content rendered
        return tuple(getattr(self, f) for f in self.__struct_fields__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__struct_fields__)
        return f"Action({shown})"

    def __copy__(self) -> Action:  # msgspec's would read the slots, an unset content too
        return self.with_fixes(self.fixes)

    if not TYPE_CHECKING:  # type checkers keep seeing only the fields

        def __getattr__(self, name: str) -> Any:
            render = self.__dict__.get("_render") if name == "content" else None
            if render is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            text = render()
            force_setattr(self, "content", text)
            del self.__dict__["_render"]
            return text


_CONTENT: Any = vars(Action)["content"]  # the slot's descriptor: deferred() unsets it


class Move(Struct, frozen=True):
    """A version or pin change in one step."""

    kind: Literal["installed", "pin"]
    product: str
    before: str | None
    after: str | None
    source: Source | None = None  # where the pin is written, when known


Verdict = Literal["safe", "safe-with-actions", "blocked", "undetermined"]


class Step(Struct, frozen=True):
    product: str
    from_version: str
    to_version: str
    moves: tuple[Move, ...] = ()
    findings: tuple[Finding, ...] = ()
    actions: tuple[Action, ...] = ()
    verify: tuple[str, ...] = ()
    verdict: Verdict = "safe"
    notes: tuple[str, ...] = ()  # the crossing notes the step meets (kb/crossing.py)


class Target(Struct, frozen=True):
    product: str
    version: str


class Jump(Struct, frozen=True):
    """The move as asked: every target in one step from the current state."""

    findings: tuple[Finding, ...]
    verdict: Verdict


class Plan(Struct, frozen=True):
    schema_version: int
    targets: tuple[Target, ...]
    current: Mapping[str, str | None]  # product -> installed version (None when unknown)
    direct: Jump
    steps: tuple[Step, ...]
    verdict: Verdict  # of the recommended path
    blocked_by: tuple[str, ...] = ()  # hazard ids that leave no safe path
    state_findings: tuple[Finding, ...] = ()  # state/landing hazards on the state as it is
    held: tuple[str, ...] = ()
    state_name: str = ""

    @property
    def path(self) -> dict[str, list[str]]:
        """Per product, the versions visited in order (current first)."""
        out: dict[str, list[str]] = {}
        for step in self.steps:
            seq = out.setdefault(step.product, [step.from_version])
            seq.append(step.to_version)
        return out

    @property
    def pin_path(self) -> dict[str, list[str | None]]:
        """Per product, the pin values visited along the steps (current first)."""
        out: dict[str, list[str | None]] = {}
        for step in self.steps:
            for move in (m for m in step.moves if m.kind == "pin"):
                seq = out.setdefault(move.product, [move.before])
                if seq[-1] != move.after:
                    seq.append(move.after)
        return out
