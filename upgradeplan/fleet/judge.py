"""Judging a fleet: one ``check`` per installation, rolled up per installation and per hazard.

Each installation is judged exactly as ``upgradeplan check`` judges it on its own (the same
:func:`upgradeplan.planner.judge.check` that :func:`upgradeplan.api.check` calls, the same
targets, holds and ``--fail-on``), so the roll-up is the sum of the one-by-one checks.
Three things make a fleet cheap:

- the knowledge is loaded once by the caller and shared;
- members are consumed one at a time and only a small summary of each is kept, so memory
  does not grow with the size of the snapshots (only with the number of rows);
- installations in the same state (the same facts with the same values, whatever their
  names and sources) share one judgement: the summary kept holds no source or name.

``--to`` values that name a product an installation does not run (``--to
agent-platform=4.8.1`` on a delegate-only cluster), or a version below the one it runs, do
not apply to it: it is judged against the other targets, or as it is, and its row names the
targets that did not apply.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any

from msgspec import Struct, field

from upgradeplan import errors
from upgradeplan.fleet.members import Member
from upgradeplan.model import NEXT, SEVERITY_RANK, KnowledgeBase, State, Target
from upgradeplan.planner import judge as judging
from upgradeplan.planner.targets import resolve_targets
from upgradeplan.planner.verdicts import threshold
from upgradeplan.releases import check_version, require_product, with_newer_of
from upgradeplan.results import checked, worst_exit
from upgradeplan.state.derive import derive
from upgradeplan.state.merge import merge
from upgradeplan.versions import Constraint, Version

UNREADABLE = "unreadable"
CACHE_SIZE = 1024  # distinct states whose judgement is kept for the installations that follow


class FindingRow(Struct, frozen=True):
    """A finding of one installation that applies or may apply."""

    hazard: str
    title: str
    severity: str
    status: str  # applies | may-apply
    product: str
    missing: tuple[str, ...] = ()  # fact keys that would settle it (may-apply)


class Installation(Struct, frozen=True):
    """One row of the roll-up."""

    name: str
    source: str
    verdict: str  # safe, safe-with-actions, blocked, undetermined, nothing-to-judge, unreadable
    exit_code: int
    current: tuple[tuple[str, str], ...] = ()  # product -> installed version
    targets: tuple[Target, ...] = ()
    path: tuple[tuple[str, tuple[str, ...]], ...] = ()  # the safe path: product -> versions
    path_verdict: str | None = None  # of the recommended path (None: the direct jump)
    blocked_by: tuple[str, ...] = ()  # hazards that leave no safe path
    blocking: tuple[FindingRow, ...] = ()  # at or above --fail-on, applying or may-apply
    findings: tuple[FindingRow, ...] = ()  # every finding that applies or may apply
    missing: tuple[str, ...] = ()  # facts that would settle a may-apply finding
    not_applied: tuple[str, ...] = ()  # --to values naming a product it does not run
    could_not_read: tuple[str, ...] = ()  # sources of it that could not be read (facts unknown)
    error: str | None = None  # why it could not be read or judged

    def status_of(self, hazard: str) -> str | None:
        for f in self.findings:
            if f.hazard == hazard:
                return f.status
        return None


class HazardHits(Struct, frozen=True):
    """A hazard and the installations (name, source) where it applies or may apply."""

    hazard: str
    title: str
    severity: str
    applies: tuple[tuple[str, str], ...] = ()
    may_apply: tuple[tuple[str, str], ...] = ()


class Fleet(Struct, frozen=True):
    installations: tuple[Installation, ...]  # sorted by name, then source; unreadable too
    hazards: tuple[HazardHits, ...]  # every hazard that applies or may apply somewhere
    exit_code: int
    to: tuple[str, ...] = ()
    fail_on: str = "blocking"
    hazard: str | None = None  # --hazard: the roll-up is about this hazard
    judged_states: int = 0  # distinct states judged (the rest shared a judgement)

    @property
    def unreadable(self) -> tuple[Installation, ...]:
        return tuple(i for i in self.installations if i.error is not None)

    @property
    def judged(self) -> tuple[Installation, ...]:
        return tuple(i for i in self.installations if i.error is None)

    def hits(self, hazard: str) -> HazardHits | None:
        for h in self.hazards:
            if h.hazard == hazard:
                return h
        return None

    def hit_installations(self) -> tuple[Installation, ...]:
        """With ``hazard``: the installations where it applies or may apply."""
        if self.hazard is None:
            return ()
        return tuple(i for i in self.judged if i.status_of(self.hazard) is not None)


def _canonical(value: Any) -> Any:
    """A hashable value equal only to the same value: maps sorted by key, and the types
    kept apart (``True``, ``1`` and ``1.0`` are equal in Python, not as facts; nor are a map
    and a list of pairs, or the keys ``1`` and ``"1"``)."""
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is dict:
        items = sorted((str(k), type(k).__name__, _canonical(v)) for k, v in value.items())
        return ("map", tuple(items))
    if kind is list or kind is tuple:
        return ("list", tuple([_canonical(v) for v in value]))
    return (kind.__name__, value)


# Source kinds the judgement branches on (the planner leaves a pin that only follows a
# release's published range to move with it; an installed version derived from a pin is a
# guess when what runs could not be read): a fact of one of these kinds is not shared with
# the same value read somewhere. Every other kind only says where a fact was read.
_INFERRED = frozenset({"plan", "derived", "moved", "default", "release-default"})


def state_key(state: State) -> tuple[Any, ...]:
    """What a judgement depends on: every fact's key, value and, for a fact that was
    inferred rather than read, its source's kind; and what could not be read (not names
    or where a fact was read)."""
    facts = tuple(
        sorted(
            (
                k,
                f.value if type(f.value) is str else _canonical(f.value),
                f.source.kind if f.source.kind in _INFERRED else "",
            )
            for k, f in state.facts.items()
        )
    )
    unread = tuple(sorted(str(u) for u in state.unread))
    return facts, tuple(sorted(state.unreadable.items())), unread


class Judgement(Struct, frozen=True):
    """What a row holds, apart from the installation's name and source."""

    verdict: str
    exit_code: int
    current: tuple[tuple[str, str], ...]
    targets: tuple[Target, ...]
    path: tuple[tuple[str, tuple[str, ...]], ...]
    path_verdict: str | None
    blocked_by: tuple[str, ...]
    blocking: tuple[FindingRow, ...]
    findings: tuple[FindingRow, ...]
    missing: tuple[str, ...]
    not_applied: tuple[str, ...]
    could_not_read: tuple[str, ...] = ()
    error: str | None = None


class Judge(Struct):
    """Judges installations one by one with the same knowledge, targets and threshold."""

    kb: KnowledgeBase
    to: Sequence[str] = ()
    holds: Sequence[str] = ()
    fail_on: str = "blocking"
    stated: State | None = None  # facts stated for every installation (merged last)
    cache_size: int = CACHE_SIZE
    computed: int = 0  # judgements computed (the others were shared)
    shared: MutableMapping[bytes, Judgement] | None = None  # judgements of other processes
    asked: bool = False  # a hazard was asked about (--hazard): an empty member is undetermined
    _cache: OrderedDict[tuple[Any, ...], tuple[bytes, Judgement]] = field(
        default_factory=OrderedDict
    )

    def __post_init__(self) -> None:
        threshold(self.fail_on)
        for product in self.holds:
            require_product(self.kb, product)
        for raw in self.to:
            _validate_target(self.kb, raw)

    def state_of(self, member: Member) -> State:
        assert member.state is not None
        parts = [member.state] if self.stated is None else [member.state, self.stated]
        merged = derive(merge(*parts))
        return State(
            facts=merged.facts,
            name=member.name,
            unreadable=merged.unreadable,
            unread=merged.unread,
        )

    def judge(self, member: Member) -> Installation:
        return row_of(member.name, member.source, self.judgement(member)[1])

    def judgement(self, member: Member) -> tuple[bytes, Judgement]:
        """The judgement of a member and its digest (equal digests: the same judgement),
        computed, or shared with an installation judged before in the same state (in
        ``shared`` too, when set: the cache of the other worker processes)."""
        if member.state is None:
            error = member.error or "could not be read"
            return _digest(("unreadable", error)), _empty(UNREADABLE, error)
        if (self.to or self.asked) and _empty_state(member.state):
            # nothing in it was read: what was asked of it cannot be answered, never "safe"
            error = f"nothing read from {member.source}"
            return _digest(("empty", error)), _empty("undetermined", error)
        state = self.state_of(member)
        to, not_applied = self._applicable(state)
        key = (state_key(state), tuple(to))
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        digest = _digest(key)
        judged: Judgement | None = None
        if self.shared is not None:
            judged = self.shared.get(digest)
        if judged is None:
            judged = self._judge(state, to, tuple(not_applied))
            self.computed += 1
            if self.shared is not None and self.computed <= self.cache_size:
                self.shared[digest] = judged
        self._cache[key] = digest, judged
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return digest, judged

    def _applicable(self, state: State) -> tuple[list[str], list[str]]:
        """The --to values that apply to this installation, and those that do not."""
        keep: list[str] = []
        skipped: list[str] = []
        for raw in self.to:
            text = raw.strip()
            if text == "latest":
                runs = any(
                    state.installed(p) is not None
                    for p, spec in self.kb.products.items()
                    if spec.kind in ("chart", "agent")
                )
                (keep if runs else skipped).append(raw)
            elif "=" in text:
                product, _, version = (p.strip() for p in text.partition("="))
                installed = state.installed(product)
                known = installed is not None or state.value(f"pin.{product}")
                (keep if known and not _past(installed, version) else skipped).append(raw)
            else:
                keep.append(raw)
        return keep, skipped

    def _judge(self, state: State, to: Sequence[str], not_applied: tuple[str, ...]) -> Judgement:
        current = tuple(
            (p, v) for p in sorted(self.kb.products) if (v := state.installed(p)) is not None
        )
        try:
            kb = with_newer_of(self.kb, state, to)
            resolved = resolve_targets(kb, state, to)
            judged = judging.check(kb, state, resolved, holds=self.holds, fail_on=self.fail_on)
            result = checked(judged)
        except errors.UpgradeplanError as exc:
            error = f"cannot be judged: {exc.one_line()}"
            return _empty("undetermined", error, current=current, not_applied=not_applied)
        bar = threshold(self.fail_on)
        rows = tuple(
            FindingRow(
                hazard=f.hazard,
                title=f.title,
                severity=f.severity,
                status=f.status,
                product=f.product,
                missing=tuple(sorted({m.key for m in f.missing}))
                if f.status == "may-apply"
                else (),
            )
            for f in result.findings
            if f.status != "does-not-apply"
        )
        blocking = tuple(r for r in rows if SEVERITY_RANK[r.severity] >= bar)
        missing = tuple(sorted({k for r in rows for k in r.missing}))
        plan = result.plan
        targets = tuple(plan.targets) if plan is not None else ()
        rec = result.recommended
        if rec is not None:
            path = tuple((p, tuple(v)) for p, v in sorted(rec.path.items()))
            path_verdict: str | None = rec.verdict
            blocked_by = tuple(rec.blocked_by)
        else:
            installed = dict(current)
            path = tuple(
                (t.product, (installed[t.product], t.version))
                for t in targets
                if t.product in installed and installed[t.product] != t.version
            )
            path_verdict, blocked_by = None, ()
        return Judgement(
            verdict=result.shown_verdict,
            exit_code=result.exit_code,
            current=current,
            targets=targets,
            path=path,
            path_verdict=path_verdict,
            blocked_by=blocked_by,
            blocking=blocking,
            findings=rows,
            missing=missing,
            not_applied=not_applied,
            could_not_read=tuple(str(u) for u in result.unreadable),
        )


def _empty_state(state: State) -> bool:
    """Whether nothing at all was read into ``state`` (``items: []``, an empty document)."""
    return not state.facts and not state.unread and not state.unreadable


def _digest(key: Any) -> bytes:
    """A short digest of a judgement's key (the repr of str, int, bool, None and tuples of
    them is exact), to share the judgement between processes."""
    import hashlib

    return hashlib.blake2b(repr(key).encode(), digest_size=16).digest()


def _empty(
    verdict: str,
    error: str,
    *,
    current: tuple[tuple[str, str], ...] = (),
    not_applied: tuple[str, ...] = (),
) -> Judgement:
    """A judgement of nothing (exit 4): ``error`` says why the installation could not be read
    or judged; ``current`` what it was read to run, ``not_applied`` the targets skipped."""
    return Judgement(
        verdict=verdict,
        exit_code=int(errors.ExitCode.UNDETERMINED),
        current=current,
        targets=(),
        path=(),
        path_verdict=None,
        blocked_by=(),
        blocking=(),
        findings=(),
        missing=(),
        not_applied=not_applied,
        error=error,
    )


def row_of(name: str, source: str, judged: Judgement) -> Installation:
    """The roll-up's row of an installation: its name and source, and its judgement."""
    return Installation(
        name=name,
        source=source,
        verdict=judged.verdict,
        exit_code=judged.exit_code,
        current=judged.current,
        targets=judged.targets,
        path=judged.path,
        path_verdict=judged.path_verdict,
        blocked_by=judged.blocked_by,
        blocking=judged.blocking,
        findings=judged.findings,
        missing=judged.missing,
        not_applied=judged.not_applied,
        could_not_read=judged.could_not_read,
        error=judged.error,
    )


def _past(installed: str | None, version: str) -> bool:
    """The installation already runs a version above the target (nothing to upgrade)."""
    if installed is None or version in ("latest", NEXT):
        return False
    try:
        return Version.parse(installed) > Version.parse(version)
    except errors.InvalidVersion:
        return False


def _validate_target(kb: KnowledgeBase, raw: str) -> None:
    """Bad --to values are usage errors for the whole run (exit 2), found before reading."""
    text = raw.strip()
    if text == "latest":
        return
    if "=" in text:
        product, _, version = text.partition("=")
        if version.strip() == "latest":
            require_product(kb, product.strip())
            return
        resolve_targets(kb, State(), [text])  # unknown product, release, withdrawn, bad version
        return
    check_version(text, "--to")


def hazard_exit(installations: Iterable[Installation], hazard: str, fail_on: str) -> int:
    """With --hazard: 3 when it applies somewhere, 4 when it may apply somewhere or an
    installation could not be read, else 0; 0 with --fail-on never."""
    if fail_on == "never":
        return int(errors.ExitCode.SAFE)
    code = int(errors.ExitCode.SAFE)
    for inst in installations:
        status = inst.status_of(hazard)
        if status == "applies":
            return int(errors.ExitCode.HAZARD)
        if status == "may-apply" or inst.error is not None:
            code = int(errors.ExitCode.UNDETERMINED)
    return code


def landing_target(kb: KnowledgeBase, product: str, to_range: str | None) -> str:
    """``PRODUCT=VERSION``: the newest release a skip or transition hazard lands on (the move
    that crosses it); ``latest`` when its range holds no released version."""
    if to_range:
        allowed = Constraint.parse(to_range)
        for rel in reversed(kb.releases.get(product, ())):
            if rel.version != NEXT and rel.withdrawn is None and allowed.check(rel.version):
                return f"{product}={rel.version}"
    return f"{product}=latest"


def resolve_to(kb: KnowledgeBase, to: Sequence[str], hazard: str | None) -> tuple[str, ...]:
    """The targets of the run. With ``hazard`` (which must be in the knowledge), a skip or
    transition hazard without ``to`` is judged against the newest release it lands on."""
    if hazard is None:
        return tuple(to)
    found = kb.hazards.get(hazard)
    if found is None:
        raise errors.UnknownName("hazard", hazard, sorted(kb.hazards))
    if not to and found.scope in ("skip", "transition"):
        return (landing_target(kb, found.product, found.to_range),)
    return tuple(to)


def roll_up(
    kb: KnowledgeBase,
    rows: list[Installation],
    *,
    to: Sequence[str] = (),
    fail_on: str = "blocking",
    hazard: str | None = None,
    judged_states: int = 0,
) -> Fleet:
    """The fleet of these rows: sorted, hazards counted, the exit code.

    The exit code is the worst of the fleet (3 over 4 over 0; an installation that could not
    be read or judged counts as 4); ``--fail-on never`` gives 0; with ``hazard``, the code is
    about that hazard alone (:func:`hazard_exit`).
    """
    hits: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {}
    first: dict[str, FindingRow] = {}  # title and severity as the findings give them
    for inst in rows:
        for f in inst.findings:
            applies, may = hits.setdefault(f.hazard, ([], []))
            first.setdefault(f.hazard, f)
            (applies if f.status == "applies" else may).append((inst.name, inst.source))
    rows = sorted(rows, key=lambda i: (i.name, i.source))
    hazards = tuple(
        HazardHits(
            hazard=h,
            title=first[h].title,
            severity=first[h].severity,
            applies=tuple(sorted(a)),
            may_apply=tuple(sorted(m)),
        )
        for h, (a, m) in sorted(hits.items())
    )
    if hazard is not None:
        code = hazard_exit(rows, hazard, fail_on)
    elif fail_on == "never":
        code = int(errors.ExitCode.SAFE)
    else:
        code = worst_exit([i.exit_code for i in rows])
    return Fleet(
        installations=tuple(rows),
        hazards=hazards,
        exit_code=code,
        to=tuple(to),
        fail_on=fail_on,
        hazard=hazard,
        judged_states=judged_states,
    )


def judge_fleet(
    kb: KnowledgeBase,
    members: Iterable[Member],
    to: Sequence[str] = (),
    *,
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
    stated: State | None = None,
    hazard: str | None = None,
) -> Fleet:
    """Judge every member (consumed one at a time, in this process) and roll them up."""
    to = resolve_to(kb, to, hazard)
    judge = Judge(
        kb, to=to, holds=tuple(holds), fail_on=fail_on, stated=stated, asked=hazard is not None
    )
    rows = [judge.judge(m) for m in members]
    return roll_up(kb, rows, to=to, fail_on=fail_on, hazard=hazard, judged_states=judge.computed)
