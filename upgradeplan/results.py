"""What the library takes and returns: inputs, results of each verb, exit codes. Data only.

:mod:`upgradeplan.api` returns these; renderers read them; nothing here computes a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from msgspec import Struct, field
from msgspec.structs import fields

from upgradeplan import errors
from upgradeplan.model import (
    Action,
    Finding,
    Hazard,
    Migration,
    MissingFact,
    Plan,
    Product,
    Release,
    State,
    Step,
    Target,
    Verdict,
)
from upgradeplan.provenance import Source
from upgradeplan.unreadable import Unreadable
from upgradeplan.versions import Version

if TYPE_CHECKING:
    from upgradeplan.accept import Accepted
    from upgradeplan.patches.patchset import PatchSet

FailOn = Literal["blocking", "warning", "notice", "never"]
FAIL_ON_CHOICES: tuple[FailOn, ...] = ("blocking", "warning", "notice", "never")


class Inputs(Struct, frozen=True):
    """Where the current state comes from (the values of the shared state options)."""

    installed: tuple[str, ...] = ()
    pins: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    state_files: tuple[str, ...] = ()
    gitops: str | None = None
    base: str | None = None
    clusters: tuple[str, ...] = ()  # GitOps installations to read (--cluster)
    artifacts: tuple[str, ...] = ()  # NAME=DIR: an OCI artifact that is a directory (--gitops)
    kubeconfig: str | None = None
    contexts: tuple[str, ...] = ()
    all_contexts: bool = False
    request_timeout: float | None = None  # seconds per request (cluster reads)
    namespace: str | None = None  # cluster reads list namespaced kinds in this namespace only

    @property
    def cluster(self) -> bool:
        return bool(self.kubeconfig or self.contexts or self.all_contexts)

    @property
    def any(self) -> bool:
        return bool(
            self.installed
            or self.pins
            or self.facts
            or self.state_files
            or self.gitops
            or self.cluster
        )


class ValuesAside:
    """A pin record's ``values`` (a mapping) is neither compared, hashed nor shown: what the
    pin is, is the rest of its fields. A mixin of :class:`MovedPin` and the GitOps reader's
    ``ChartPin``."""

    __slots__ = ()
    __struct_fields__: ClassVar[tuple[str, ...]]  # msgspec's, of the Struct it is mixed into

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self.__struct_fields__ if f != "values")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ValuesAside)
            and type(other) is type(self)
            and (self._compared() == other._compared())
        )

    def __hash__(self) -> int:
        return hash(self._compared())

    def __repr__(self) -> str:
        shown = (f"{f}={getattr(self, f)!r}" for f in self.__struct_fields__ if f != "values")
        return f"{type(self).__name__}({', '.join(shown)})"


class MovedPin(ValuesAside, Struct, frozen=True):
    """A chart pin a change moves (``--base``), known to the knowledge or not: from ``before``
    to ``after`` (None: the change adds or removes it)."""

    chart: str
    key: str  # "HelmRelease ns/name", "OCIRepository ns/name"
    before: str | None
    after: str | None
    where: Source | None  # the new pin's line (the old one's when the change removes it)
    product: str | None = None  # the product of the knowledge it pins, when it is one
    # where its archives come from, for the checks computed from the charts (upgradeplan.charts)
    repository: str = ""  # a Helm repository's URL or oci://host/path/chart ("" unknown)
    insecure: bool = False  # the source's spec.insecure (an OCI registry over plain HTTP)
    release: str = ""  # the HelmRelease whose values and CRD policy apply ("" unknown)
    values: Mapping[str, Any] | None = None  # not compared, hashed or shown (below)
    values_why: str = ""  # why ``values`` is None

    def describe(self) -> str:
        """``cert-manager v1.16.0 → v1.16.1``."""
        if self.before is None:
            return f"{self.chart} {self.after} (added)"
        if self.after is None:
            return f"{self.chart} {self.before} (removed)"
        return f"{self.chart} {self.before} → {self.after}"


class Gathered(Struct, frozen=True):
    """One state to judge: the offline inputs merged, or one cluster context."""

    name: str
    state: State | None
    error: str | None = None
    targets: tuple[Target, ...] = ()  # asked for by the inputs (--gitops with --base)
    holds: tuple[str, ...] = ()  # pins the inputs keep where they are (--gitops with --base)
    relocate: Mapping[Source, Source] = field(default_factory=dict)  # base pin -> head's
    changed: Mapping[str, Source] = field(default_factory=dict)  # --base: product -> new pin
    moved_pins: tuple[MovedPin, ...] = ()  # --base: every chart pin the change moves
    set_aside: tuple[str, ...] = ()  # what was not read and is not needed for the verdict


class CheckResult(Struct, frozen=True):
    """``check`` for one state: the direct jump (or the state as it is) and its verdict."""

    name: str
    state: State | None
    plan: Plan | None  # direct jump + recommended path; state_findings when no target
    findings: tuple[Finding, ...] = ()  # what the verdict is judged on
    verdict: Verdict = "safe"
    exit_code: int = 0
    recommended: Plan | None = None  # the safe path when the jump (or state) is not safe
    error: str | None = None
    # what was read and what could not be (GitOps files): shown next to the verdict
    notes: tuple[str, ...] = ()
    unreadable: tuple[Unreadable, ...] = ()  # what could not be read (its facts are unknown)
    accepted: tuple[Accepted, ...] = ()  # findings accepted risks set aside (upgradeplan.accept)
    changed: Mapping[str, Source] = field(default_factory=dict)  # --base: product -> new pin
    # blocked only because held pins stay: the products whose pin moved in the same change
    # would make it safe (each failing finding has a pin-move fix naming a held product)
    fix_in_change: tuple[str, ...] = ()
    moved_pins: tuple[MovedPin, ...] = ()  # --base: every chart pin the change moves
    # product -> reviewed_through: the products the move takes above their reviewed knowledge
    reviewed: Mapping[str, str] = field(default_factory=dict)

    @property
    def shown_verdict(self) -> str:
        """The verdict every output prints: ``nothing-to-judge`` for the installation as it is
        when it holds no product of the knowledge base and nothing was found (exit 0 as for
        ``safe``, but "safe" would claim a judgement nobody made); ``no-known-hazards`` for a
        green verdict above a product's ``reviewed_through`` (exit 0 too: nobody looked
        there, so it is not called safe); else :attr:`verdict`."""
        if self.reviewed and self.verdict in ("safe", "safe-with-actions"):
            return NO_KNOWN_HAZARDS
        plan = self.plan
        if (
            plan is not None
            and not plan.targets
            and not any(plan.current.values())
            and not self.findings
            and self.verdict == "safe"
        ):
            return NOTHING_TO_JUDGE
        return self.verdict

    @property
    def verdict_text(self) -> str:
        """:attr:`shown_verdict` in words: ``no known hazards (knowledge reviewed through X)``
        for ``no-known-hazards``."""
        return shown_text(self.shown_verdict, self.reviewed)


class PlanResult(Struct, frozen=True):
    name: str
    state: State | None
    plan: Plan | None
    exit_code: int = 0
    # product -> reviewed_through: the products the path takes above their reviewed knowledge
    reviewed: Mapping[str, str] = field(default_factory=dict)
    error: str | None = None

    @property
    def shown_verdict(self) -> str:
        """The plan's verdict as every output prints it: ``no-known-hazards`` instead of a
        green verdict above a product's ``reviewed_through``."""
        verdict = self.plan.verdict if self.plan is not None else "undetermined"
        if self.reviewed and verdict in ("safe", "safe-with-actions"):
            return NO_KNOWN_HAZARDS
        return verdict

    @property
    def verdict_text(self) -> str:
        return shown_text(self.shown_verdict, self.reviewed)

    def step_verdict(self, step: Step) -> str:
        """A step's verdict as shown: ``no-known-hazards`` for a green step that moves a
        product above its ``reviewed_through``."""
        through = self.reviewed.get(step.product)
        if through is None or step.verdict not in ("safe", "safe-with-actions"):
            return step.verdict
        try:
            above = Version.parse(step.to_version) > Version.parse(through)
        except errors.InvalidVersion:
            return step.verdict
        return NO_KNOWN_HAZARDS if above else step.verdict

    def step_text(self, step: Step) -> str:
        return shown_text(
            self.step_verdict(step), {step.product: self.reviewed.get(step.product, "")}
        )


class PatchResult(Struct, frozen=True):
    """``patch`` for one state: the patch set and the plan it comes from (None: as it is)."""

    patchset: PatchSet
    plan: Plan | None
    now_actions: tuple[Action, ...] = ()


class GraphResult(Struct, frozen=True):
    """``graph``: the upgrade edges of a product, and the plan of a path when one was asked."""

    product: str
    plan: Plan | None
    allowed: tuple[tuple[str, str], ...] = ()


class SnapshotResult(Struct, frozen=True):
    """``snapshot``: the states of the contexts read, and the contexts that failed."""

    states: tuple[State, ...]
    failed: tuple[tuple[str, str], ...] = ()  # (context, why)


class ConditionResult(Struct, frozen=True):
    """One predicate of a hazard's condition, evaluated on a state."""

    predicate: str
    description: str
    result: str  # true / false / unknown
    observed: tuple[tuple[str, str, str], ...]  # (key, value, source as printed)
    missing: tuple[MissingFact, ...] = ()
    negated: bool = False


class Explanation(Struct, frozen=True):
    kind: Literal["hazard", "release", "migration", "product"]
    id: str
    hazard: Hazard | None = None
    release: Release | None = None
    migration: Migration | None = None
    product: Product | None = None
    finding: Finding | None = None  # with a state: the hazard on the state (or the hop)
    conditions: tuple[ConditionResult, ...] = ()
    hop: tuple[str | None, str | None] = (None, None)
    related: tuple[str, ...] = ()  # hazard ids of a release/product, migrations' hazards
    truth: str = ""  # with a state: the hazard's condition as a whole (true/false/unknown)


class SymptomMatch(Struct, frozen=True):
    pattern: str
    line: str  # the message as matched (joined, unescaped, shortened)
    line_number: int  # its first line in the original paste
    where: str  # where the symptom says it shows
    lines: tuple[int, ...] = ()  # every line of the message in the original paste
    confidence: str = "high"  # high | medium | low (a hint)
    read_as: str = "any"  # what the message was read as: logs | events | status | any


class Diagnosis(Struct, frozen=True):
    """A hazard whose symptoms match the text, with the recovery to run."""

    hazard: Hazard
    matches: tuple[SymptomMatch, ...]
    score: int  # specificity: literal characters of the distinct patterns that matched
    patterns: int  # number of distinct patterns that matched
    # high: the message and what must go with it; medium: it cannot tell the chart; low: a
    # generic line alone, a hint only
    confidence: str = "high"
    names_agree: bool = False  # a chart or release the symptom is about is named in the paste
    # the facts that would confirm it: (fact key, how to read it)
    confirm: tuple[tuple[str, str], ...] = ()


NOTHING_TO_JUDGE = "nothing-to-judge"  # CheckResult.shown_verdict; exit 0
NO_KNOWN_HAZARDS = "no-known-hazards"  # shown above reviewed_through; exit 0


def reviewed_words(reviewed: Mapping[str, str]) -> str:
    """``no known hazards (knowledge reviewed through 1.17.0)``; with several products, each
    named: ``(knowledge reviewed through cilium 1.17.0, cert-manager v1.19.0)``."""
    if len(reviewed) == 1:
        through = next(iter(reviewed.values()))
    else:
        through = ", ".join(f"{p} {v}" for p, v in sorted(reviewed.items()))
    return f"no known hazards (knowledge reviewed through {through})"


def shown_text(verdict: str, reviewed: Mapping[str, str]) -> str:
    """A shown verdict in words: the token, or for ``no-known-hazards`` its sentence."""
    return reviewed_words(reviewed) if verdict == NO_KNOWN_HAZARDS else verdict


# how a diagnosis fits the installation's state (triage's fit), in words
FIT_WORDS = {2: "fits the state", 1: "the state cannot tell", 0: "the state rules it out"}

EXIT_OF_VERDICT: dict[str, errors.ExitCode] = {
    "blocked": errors.ExitCode.HAZARD,
    "undetermined": errors.ExitCode.UNDETERMINED,
    "safe-with-actions": errors.ExitCode.SAFE,
    "safe": errors.ExitCode.SAFE,
}


def checked(judged: Struct) -> CheckResult:
    """The result of ``check`` for a judgement of the planner (planner/judge.py ``Judgement``,
    which has no exit code): its fields and the exit code of its verdict (``--fail-on never``
    does not change ``check``'s code, as it never did)."""
    values = {f.name: getattr(judged, f.name) for f in fields(judged)}
    return CheckResult(**values, exit_code=exit_of(values["verdict"]))


def exit_of(verdict: str, fail_on: str = "blocking") -> int:
    """The exit code of a verdict: the one place verdicts become exit codes (0 safe, 3 a
    hazard applies or no safe path, 4 undetermined); ``fail_on="never"`` exits 0."""
    return 0 if fail_on == "never" else int(EXIT_OF_VERDICT[verdict])


# how bad an exit code is when several results are combined (higher is worse)
_EXIT_RANK = {0: 0, 4: 1, 3: 2, 1: 3, 2: 4}


def worst_exit(codes: Sequence[int]) -> int:
    """The code of several results: 3 over 4 over 0 (errors 1/2 over all)."""
    if not codes:
        return int(errors.ExitCode.SAFE)
    return max(codes, key=lambda c: _EXIT_RANK.get(c, 5))


__all__ = [
    "EXIT_OF_VERDICT",
    "FAIL_ON_CHOICES",
    "NOTHING_TO_JUDGE",
    "NO_KNOWN_HAZARDS",
    "CheckResult",
    "ConditionResult",
    "Diagnosis",
    "Explanation",
    "FailOn",
    "Gathered",
    "GraphResult",
    "Inputs",
    "PatchResult",
    "PlanResult",
    "SnapshotResult",
    "SymptomMatch",
    "ValuesAside",
    "checked",
    "exit_of",
    "reviewed_words",
    "shown_text",
    "worst_exit",
]
