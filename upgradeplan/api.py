"""The library facade: one function per verb. Functions return objects and never print.

Heavy modules (the planner and its graph library, the kubernetes client, the GitOps reader)
are imported inside the functions that need them, so importing this module is cheap and an
offline check never imports kubernetes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from upgradeplan import errors, releases
from upgradeplan.model import (
    NEXT,
    SEVERITY_RANK,
    Evidence,
    Finding,
    Hazard,
    Jump,
    KnowledgeBase,
    Migration,
    MissingFact,
    Plan,
    Product,
    Release,
    State,
    Target,
    Truth,
    Verdict,
)
from upgradeplan.provenance import Source
from upgradeplan.releases import check_version, require_product
from upgradeplan.unreadable import Unreadable

if TYPE_CHECKING:
    from pathlib import Path

    from upgradeplan.accept import Accepted
    from upgradeplan.fleet.judge import Fleet

FailOn = Literal["blocking", "warning", "notice", "never"]
FAIL_ON_CHOICES: tuple[FailOn, ...] = ("blocking", "warning", "notice", "never")


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Inputs:
    """Where the current state comes from (the values of the shared state options)."""

    installed: tuple[str, ...] = ()
    pins: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    state_files: tuple[str, ...] = ()
    gitops: str | None = None
    base: str | None = None
    clusters: tuple[str, ...] = ()  # GitOps installations to read (--cluster)
    kubeconfig: str | None = None
    contexts: tuple[str, ...] = ()
    all_contexts: bool = False
    request_timeout: float | None = None  # seconds per request (cluster reads)

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


@dataclass(frozen=True)
class Gathered:
    """One state to judge: the offline inputs merged, or one cluster context."""

    name: str
    state: State | None
    error: str | None = None
    targets: tuple[Target, ...] = ()  # asked for by the inputs (--gitops with --base)
    holds: tuple[str, ...] = ()  # pins the inputs keep where they are (--gitops with --base)
    relocate: Mapping[Source, Source] = field(default_factory=dict)  # base pin -> head's
    changed: Mapping[str, Source] = field(default_factory=dict)  # --base: product -> new pin


def load_kb(extra_dirs: Sequence[str | Path] = ()) -> KnowledgeBase:
    """The bundled knowledge merged with ``extra_dirs``; raises errors.KnowledgeError."""
    from upgradeplan.kb.loader import load

    return load(list(extra_dirs))


def gather(kb: KnowledgeBase, inputs: Inputs) -> list[Gathered]:
    """Read every input. One entry for offline inputs; one per context for cluster inputs.

    Offline inputs merge in this order, later winning per fact: snapshot files, GitOps files,
    stated flags. Cluster contexts are each merged with the offline inputs (stated last).
    Installed versions are derived from exact pins where unknown.
    """
    from upgradeplan.readers import snapshot, stated

    offline: list[State] = [snapshot.read(path, kb=kb) for path in inputs.state_files]
    said = stated.from_flags(kb, inputs.installed, inputs.pins, inputs.facts)
    if inputs.base and not inputs.gitops:
        raise errors.BadInput("--base needs --gitops PATH", hint="e.g. --gitops . --base main")
    if inputs.clusters and not inputs.gitops:
        raise errors.BadInput(
            "--cluster needs --gitops PATH", hint="e.g. --gitops . --cluster prod"
        )
    if not inputs.gitops:
        return _gathered_with(kb, inputs, offline, said, [])
    from upgradeplan.readers import gitops

    repo = _chosen(gitops.read_installations(kb, inputs.gitops, ref=inputs.base), inputs)
    if not inputs.base:
        return _gathered_with(kb, inputs, offline, said, [(s, (), (), {}) for s in repo])
    from upgradeplan.readers.gitops import gate as gitops_gate

    heads = {s.name: s for s in _chosen(gitops.read_installations(kb, inputs.gitops), inputs)}
    judged: list[_RepoState] = []
    changed: dict[str, dict[str, Source]] = {}  # installation -> product -> its changed pin
    for base_state in repo:
        head = heads.get(base_state.name)
        if head is None and len(repo) == 1 and len(heads) == 1:
            head = next(iter(heads.values()))  # a directory read as one state: PATH@REF, PATH
        if head is None:
            judged.append((base_state, (), (), {}))
            continue
        changes = gitops_gate.pin_changes(kb, base_state, head)
        moved = _moved_pins(base_state, changes.locations)
        judged.append((base_state, tuple(changes.targets), tuple(changes.holds), moved))
        changed[base_state.name] = {p: w for p, w in changes.locations.items() if w is not None}
    out = _gathered_with(kb, inputs, offline, said, judged)
    only = next(iter(changed.values())) if len(changed) == 1 else None
    return [replace(g, changed=only if only is not None else changed.get(g.name, {})) for g in out]


_RepoState = tuple[State, tuple[Target, ...], tuple[str, ...], dict[Source, Source]]


def _chosen(states: list[State], inputs: Inputs) -> list[State]:
    """The installations ``--cluster`` asks for (all without it); an unknown name is bad input."""
    if not inputs.clusters:
        return states
    out: list[State] = []
    for wanted in inputs.clusters:
        found = [s for s in states if wanted.rstrip("/") in (s.name, s.name.rsplit("/", 1)[-1])]
        if not found:
            names = ", ".join(s.name for s in states)
            raise errors.BadInput(
                f"--cluster {wanted}: no such installation in --gitops {inputs.gitops}",
                hint=f"installations found: {names}",
            )
        out += [s for s in found if s not in out]
    return out


def _gathered_with(
    kb: KnowledgeBase,
    inputs: Inputs,
    offline: list[State],
    said: State,
    repo: Sequence[_RepoState],
) -> list[Gathered]:
    """One Gathered per GitOps installation (or one for the offline inputs), per context."""
    from upgradeplan.state.derive import derive
    from upgradeplan.state.merge import merge

    asked: tuple[Target, ...] = ()
    kept: tuple[str, ...] = ()
    moved: dict[Source, Source] = {}
    if not inputs.cluster:
        if not repo:
            merged = derive(merge(*offline, said))
            return [Gathered(name=merged.name, state=merged)]
        each: list[Gathered] = []
        for state, asked, kept, moved in repo:
            merged = derive(merge(*offline, state, said))
            named = _named(merged, state.name) if len(repo) > 1 else merged
            each.append(
                Gathered(name=named.name, state=named, targets=asked, holds=kept, relocate=moved)
            )
        return each
    if len(repo) > 1:
        raise errors.BadInput(
            f"--gitops {inputs.gitops} holds {len(repo)} installations "
            f"({', '.join(s.name for s, *_ in repo)}) and a cluster is read too",
            hint="choose the installation that cluster runs with --cluster NAME",
        )
    if repo:
        state, asked, kept, moved = repo[0]
        offline = [*offline, state]
    from upgradeplan.readers.kube import cluster

    results = cluster.read_contexts(
        kb,
        inputs.kubeconfig,
        list(inputs.contexts),
        inputs.all_contexts,
        timeout=inputs.request_timeout,
    )
    out: list[Gathered] = []
    for res in results:
        if res.state is None:
            out.append(Gathered(name=res.name, state=None, error=res.error or "unreadable"))
            continue
        merged = derive(merge(*offline, res.state, said))
        out.append(
            Gathered(
                name=res.name,
                state=_named(merged, res.name),
                targets=asked,
                holds=kept,
                relocate=moved,
            )
        )
    if out and all(g.state is None for g in out):
        names = ", ".join(f"{g.name} ({g.error})" for g in out)
        raise errors.ClusterUnreachable(f"no context could be read: {names}")
    return out


def _moved_pins(base: State, locations: Mapping[str, Source]) -> dict[Source, Source]:
    """Where each changed pin was at the base ref -> where it is in the working tree."""
    out: dict[Source, Source] = {}
    for product, where in locations.items():
        fact = base.get(f"pin.{product}")
        if fact is not None and where and fact.source != where:
            out[fact.source] = where
    return out


def relocate(findings: Sequence[Finding], moved: Mapping[Source, Source]) -> tuple[Finding, ...]:
    """Findings whose location is a pin at the base ref point at the pin's line in the tree."""
    if not moved:
        return tuple(findings)
    return tuple(
        replace(f, location=moved[f.location])
        if f.location is not None and f.location in moved
        else f
        for f in findings
    )


def _named(state: State, name: str) -> State:
    return State(facts=state.facts, name=name, unreadable=state.unreadable, unread=state.unread)


# --------------------------------------------------------------------------- targets


def latest_version(kb: KnowledgeBase, product: str) -> str | None:
    """The newest released, not withdrawn, version of ``product`` (releases.latest)."""
    return releases.latest(kb, product)


def resolve_targets(
    kb: KnowledgeBase, state: State, to: Sequence[str], given: Sequence[Target] = ()
) -> list[Target]:
    """``--to`` values and targets the inputs asked for, resolved (see planner.targets)."""
    from upgradeplan.planner.targets import resolve_targets as resolve

    return resolve(kb, state, to, given)


# --------------------------------------------------------------------------- verdicts


def threshold(fail_on: str) -> int:
    """The lowest severity rank that fails; above every rank for ``never``."""
    from upgradeplan import planner

    return planner.threshold(fail_on)


def judge(findings: Sequence[Finding], fail_on: str, *, actions: bool = False) -> Verdict:
    """The verdict of the move as asked: every finding counts, fixable or not."""
    from upgradeplan import planner

    return planner.verdict_of(findings, fail_on, actions, count_fixed=True)


EXIT_OF_VERDICT: dict[str, errors.ExitCode] = {
    "blocked": errors.ExitCode.HAZARD,
    "undetermined": errors.ExitCode.UNDETERMINED,
    "safe-with-actions": errors.ExitCode.SAFE,
    "safe": errors.ExitCode.SAFE,
}

# how bad an exit code is when several results are combined (higher is worse)
_EXIT_RANK = {0: 0, 4: 1, 3: 2, 1: 3, 2: 4}


def worst_exit(codes: Sequence[int]) -> int:
    """The code of several results: 3 over 4 over 0 (errors 1/2 over all)."""
    if not codes:
        return int(errors.ExitCode.SAFE)
    return max(codes, key=lambda c: _EXIT_RANK.get(c, 5))


# --------------------------------------------------------------------------- check / plan


@dataclass(frozen=True)
class CheckResult:
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


@dataclass(frozen=True)
class PlanResult:
    name: str
    state: State | None
    plan: Plan | None
    exit_code: int = 0
    error: str | None = None


def _planner_plan(
    kb: KnowledgeBase,
    state: State,
    targets: Sequence[Target],
    holds: Sequence[str],
    fail_on: str,
) -> Plan:
    from upgradeplan import planner

    return planner.plan(kb, state, list(targets), holds=list(holds), fail_on=fail_on)


def _validate_holds(kb: KnowledgeBase, holds: Sequence[str]) -> None:
    for product in holds:
        require_product(kb, product)


def check(
    kb: KnowledgeBase,
    state: State,
    to: Sequence[str] = (),
    *,
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
    name: str = "",
    targets: Sequence[Target] = (),
    moved: Mapping[Source, Source] | None = None,
    changed: Mapping[str, Source] | None = None,
) -> CheckResult:
    """Judge the direct jump to ``to`` (or, without a target, the installation as it is).

    ``targets`` are targets already resolved (the GitOps gate); ``to`` adds to them.
    """
    from upgradeplan import planner

    threshold(fail_on)
    _validate_holds(kb, holds)
    targets = resolve_targets(kb, state, to, targets)
    if targets:
        _require_installed(kb, state, targets)
        plan = _planner_plan(kb, state, targets, holds, fail_on)
        seen = {f.hazard for f in plan.direct.findings}
        extra = tuple(f for f in plan.state_findings if f.scope == "state" and f.hazard not in seen)
        findings = tuple(plan.direct.findings) + extra
        verdict = judge(findings, fail_on)
        if plan.direct.verdict == "safe-with-actions" and verdict == "safe":
            verdict = "safe-with-actions"
        recommended = plan if verdict != "safe" and plan.steps else None
    else:
        findings = tuple(planner.current_findings(kb, state))
        verdict = judge(findings, fail_on)
        current = {p: state.installed(p) for p in sorted(kb.products) if state.installed(p)}
        plan = Plan(
            schema_version=1,
            targets=(),
            current=current,
            direct=Jump(findings=(), verdict="safe"),
            steps=(),
            verdict=verdict,
            state_findings=findings,
            held=tuple(holds),
            state_name=state.name,
        )
        recommended = _recommend_from_state(kb, state, findings, holds, fail_on)
    notes = read_notes(kb, state)
    if verdict in ("safe", "safe-with-actions") and unread_sources(state):
        verdict = "undetermined"  # never safe because a file went unread
    unread = unreadable_of(state)
    if blind_spot(findings, unread, fail_on) and verdict in ("safe", "safe-with-actions"):
        verdict = "undetermined"
    if verdict in ("safe", "safe-with-actions") and unknown_versions(kb, state):
        verdict = "undetermined"  # the knowledge cannot vouch for a release it does not list
    return CheckResult(
        name=name or state.name,
        state=state,
        plan=plan,
        findings=relocate(findings, moved or {}),
        verdict=verdict,
        exit_code=int(EXIT_OF_VERDICT[verdict]),
        recommended=recommended,
        notes=notes,
        unreadable=tuple(unread),
        changed=dict(changed or {}),
    )


def unread_sources(state: State) -> list[str]:
    """Files and sources the GitOps reader reached and could not read, each with why."""
    out: list[str] = []
    for key in sorted(state.unreadable):
        if key.startswith("file "):
            out.append(f"{key[len('file ') :]}: {state.unreadable[key]}")
        elif key.startswith("source "):
            out.append(state.unreadable[key])
    return out


def _helmreleases(state: State) -> list[str]:
    return sorted(
        {
            f.key.split(".")[1]
            for f in state
            if f.key.startswith("helmrelease.") and f.key.endswith(".drift-detection")
        }
    )


def _files_read(state: State) -> list[str]:
    files = set()
    for fact in state:
        where = getattr(fact.source, "file_line", None)
        if where is not None:
            files.add(where[0])
    return sorted(files)


def read_notes(kb: KnowledgeBase, state: State) -> tuple[str, ...]:
    """What a GitOps state holds when it has nothing to judge, and what could not be read."""
    notes: list[str] = []
    known = any(state.installed(p) is not None or f"pin.{p}" in state for p in kb.products)
    releases = _helmreleases(state)
    if not known and (releases or unread_sources(state) or state.name):
        where = f" in {state.name}" if state.name else ""
        notes.append(
            f"{len(releases)} HelmRelease{'s' if len(releases) != 1 else ''} read{where}; "
            "none of a product in the knowledge base (nothing to judge)"
        )
    notes += [f"could not be read: {line}" for line in unread_sources(state)]
    notes += [f"{p} {v} is not in the knowledge base" for p, v in unknown_versions(kb, state)]
    return tuple(notes)


def unknown_versions(kb: KnowledgeBase, state: State) -> list[tuple[str, str]]:
    """Installed versions of known products that the knowledge base does not list."""
    from upgradeplan.versions import Version

    out: list[tuple[str, str]] = []
    for product in sorted(kb.products):
        installed = state.installed(product)
        if installed is None or not kb.releases.get(product):
            continue
        if kb.products[product].kind not in ("chart", "agent"):
            continue  # an environment (Kubernetes): its versions are not all listed
        try:
            wanted = Version.parse(installed)
        except errors.InvalidVersion:
            continue
        known = [r.version for r in kb.releases[product] if r.version != NEXT]
        if not any(Version.parse(k) == wanted for k in known):
            out.append((product, installed))
    return out


def _require_installed(kb: KnowledgeBase, state: State, targets: Sequence[Target]) -> None:
    """A target product the GitOps files do not hold: say what was read instead."""
    for t in targets:
        if state.installed(t.product) is not None or not _helmreleases(state):
            continue
        if any(
            state.installed(meta) is not None and any(t.product in rel.bom for rel in rels)
            for meta, rels in kb.releases.items()
        ):
            continue  # a component of an installed meta chart: its release decides
        files = _files_read(state)
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        raise errors.BadInput(
            f"--to {t.product}={t.version}: {t.product} is not installed in "
            f"{state.name or 'the input'} (read {len(_helmreleases(state))} HelmReleases "
            f"from {shown or 'no file'}; none is {t.product})",
            hint=f"check that --gitops points at the repository that installs {t.product}, "
            f"choose the installation with --cluster, or state it with --installed "
            f"{t.product}=VERSION",
        )


def unreadable_of(state: State) -> list[Unreadable]:
    """What could not be read for ``state``: its records, and its index entries as records."""
    from upgradeplan.unreadable import records

    return records(state.unread, state.unreadable)


def blind_spot(findings: Sequence[Finding], unread: Sequence[Unreadable], fail_on: str) -> bool:
    """Whether a finding (of any severity) may apply because a source could not be read.

    A fact nobody stated is judged by ``--fail-on``; a source the reader was asked to read
    and could not (a 403, a timeout, a file that does not parse) is a blind spot: the move is
    not called safe while a finding depends on it (unless ``--fail-on never``)."""
    from upgradeplan.unreadable import depending

    if fail_on == "never" or not unread:
        return False
    missing = [m.key for f in findings if f.status == "may-apply" for m in f.missing]
    return bool(depending(unread, missing))


def _recommend_from_state(
    kb: KnowledgeBase,
    state: State,
    findings: Sequence[Finding],
    holds: Sequence[str],
    fail_on: str,
) -> Plan | None:
    """When the installation as it is has applying findings: the plan to the newest release."""
    troubled = sorted({f.product for f in findings if f.status != "does-not-apply"})
    targets: list[Target] = []
    for product in troubled:
        current = state.installed(product)
        latest = releases.latest(kb, product)
        if current is None or latest is None or current == latest:
            continue
        if kb.products.get(product) is None or kb.products[product].kind not in ("chart", "agent"):
            continue
        targets.append(Target(product, latest))
    if not targets:
        return None
    plan = _planner_plan(kb, state, targets, holds, fail_on)
    return plan if plan.steps else None


def plan(
    kb: KnowledgeBase,
    state: State,
    to: Sequence[str],
    *,
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
    name: str = "",
    targets: Sequence[Target] = (),
) -> PlanResult:
    """The recommended path to ``to``; exit 3 when no safe path, 4 when undetermined."""
    threshold(fail_on)
    _validate_holds(kb, holds)
    targets = resolve_targets(kb, state, to, targets)
    if not targets:
        raise errors.BadInput(
            "plan needs a target", hint="use --to PRODUCT=VERSION, --to VERSION or --to latest"
        )
    result = _planner_plan(kb, state, targets, holds, fail_on)
    code = int(EXIT_OF_VERDICT[result.verdict]) if fail_on != "never" else 0
    return PlanResult(name=name or state.name, state=state, plan=result, exit_code=code)


# --------------------------------------------------------------------------- fleet


def fleet(
    kb: KnowledgeBase,
    sources: Sequence[str] = (),
    to: Sequence[str] = (),
    *,
    kubeconfig: str | None = None,
    contexts: Sequence[str] = (),
    gitops: Sequence[str] = (),
    installed: Sequence[str] = (),
    pins: Sequence[str] = (),
    facts: Sequence[str] = (),
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
    hazard: str | None = None,
    workers: int = 1,
) -> Fleet:
    """Judge many installations (snapshot files, directories, globs, ``s3://`` prefixes, the
    contexts of a kubeconfig, GitOps trees) one at a time and roll them up
    (:mod:`upgradeplan.fleet`). Stated flags apply to every installation; ``workers``
    processes judge many local snapshot files."""
    from upgradeplan.fleet import judge
    from upgradeplan.readers import stated

    said = stated.from_flags(kb, installed, pins, facts) if installed or pins or facts else None
    return judge.judge_sources(
        kb,
        sources,
        to,
        kubeconfig=kubeconfig,
        contexts=contexts,
        gitops=gitops,
        holds=holds,
        fail_on=fail_on,
        stated=said,
        hazard=hazard,
        workers=workers,
    )


# --------------------------------------------------------------------------- explain


@dataclass(frozen=True)
class ConditionResult:
    """One predicate of a hazard's condition, evaluated on a state."""

    predicate: str
    description: str
    result: str  # true / false / unknown
    observed: tuple[tuple[str, str, str], ...]  # (key, value, source as printed)
    missing: tuple[MissingFact, ...] = ()
    negated: bool = False


@dataclass(frozen=True)
class Explanation:
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


def _missing(keys: Sequence[str]) -> tuple[MissingFact, ...]:
    from upgradeplan.conditions import missing_fact_hint

    return tuple(MissingFact(k, missing_fact_hint(k)) for k in keys)


def _value_text(value: object) -> str:
    import json

    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _condition_results(evidence: Sequence[Evidence]) -> tuple[ConditionResult, ...]:
    out: list[ConditionResult] = []
    for ev in evidence:
        out.append(
            ConditionResult(
                predicate=ev.predicate,
                description=ev.description,
                result=ev.result.value,
                observed=tuple((f.key, _value_text(f.value), str(f.source)) for f in ev.facts),
                missing=_missing(ev.missing),
                negated=ev.negated,
            )
        )
    return tuple(out)


def explain(
    kb: KnowledgeBase,
    ident: str,
    state: State | None = None,
    *,
    to: Sequence[str] = (),
) -> Explanation:
    """A hazard, release (``product@version``), migration or product; with a state, evidence."""
    if ident in kb.hazards:
        return _explain_hazard(kb, kb.hazards[ident], state, to)
    if ident in kb.migrations:
        mig = kb.migrations[ident]
        fixes = tuple(sorted(h.id for h in kb.hazards.values() if ident in h.migrations))
        return Explanation(kind="migration", id=ident, migration=mig, related=fixes)
    if "@" in ident:
        product, _, version = ident.partition("@")
        require_product(kb, product)
        rel = kb.release(product, version)
        if rel is None:
            raise errors.UnknownName(
                f"{product} release", version, releases.nearest(kb, product, version)
            )
        related = tuple(sorted(h.id for h in kb.hazards_for(product)))
        return Explanation(kind="release", id=ident, release=rel, related=related)
    if ident in kb.products:
        related = tuple(sorted(h.id for h in kb.hazards_for(ident)))
        return Explanation(kind="product", id=ident, product=kb.products[ident], related=related)
    known = sorted(kb.hazards) + sorted(kb.migrations) + sorted(kb.products)
    raise errors.UnknownName("hazard, migration, product or release", ident, known)


def _explain_hazard(
    kb: KnowledgeBase, hazard: Hazard, state: State | None, to: Sequence[str]
) -> Explanation:
    if state is None:
        return Explanation(kind="hazard", id=hazard.id, hazard=hazard, related=hazard.migrations)
    from upgradeplan import conditions, planner
    from upgradeplan.planner.scopes import judged_before

    targets = resolve_targets(kb, state, to) if to else []
    from_version = state.installed(hazard.product)
    to_version = next((t.version for t in targets if t.product == hazard.product), None)
    if to_version is None and not judged_before(hazard):
        to_version = from_version
    finding: Finding | None = None
    if from_version is not None and to_version is not None:
        finding = planner.evaluate_hazard(kb, hazard, state, from_version, to_version)
    results: tuple[ConditionResult, ...] = ()
    truth = Truth.TRUE
    if hazard.when is not None:
        truth, evidence = conditions.evaluate(
            hazard.when, state, kb, hop=(from_version, to_version)
        )
        if finding is not None and finding.evidence:
            evidence = finding.evidence
        results = _condition_results(evidence)
    return Explanation(
        kind="hazard",
        id=hazard.id,
        hazard=hazard,
        finding=finding,
        conditions=results,
        hop=(from_version, to_version),
        truth=truth.value,
        related=hazard.migrations,
    )


# --------------------------------------------------------------------------- diagnose


@dataclass(frozen=True)
class SymptomMatch:
    pattern: str
    line: str
    line_number: int
    where: str


@dataclass(frozen=True)
class Diagnosis:
    """A hazard whose symptoms match the text, with the recovery to run."""

    hazard: Hazard
    matches: tuple[SymptomMatch, ...]
    score: int  # specificity: literal characters of the distinct patterns that matched
    patterns: int  # number of distinct patterns that matched


_REGEX_SYNTAX = re.compile(r"\\[dDwWsSbB]|\\.|[.^$*+?{}\[\]|()]")


def specificity(pattern: str) -> int:
    """How much literal text a pattern demands (escapes count as one character)."""
    literal = 0
    for token in re.findall(r"\\.|.", pattern, flags=re.S):
        if token.startswith("\\"):
            literal += 0 if token[1] in "dDwWsSbB" else 1
        elif not _REGEX_SYNTAX.fullmatch(token):
            literal += 1
    return literal


def diagnose(kb: KnowledgeBase, text: str) -> list[Diagnosis]:
    """Match every line of ``text`` against every hazard's symptoms; best match first.

    Ranking: total specificity of the distinct patterns that matched, then how many patterns
    matched, then severity, then the hazard id (for a stable order).
    """
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    out: list[Diagnosis] = []
    for hazard in kb.hazards.values():
        if hazard.withdrawn is not None:
            continue
        matches: list[SymptomMatch] = []
        matched_patterns: set[str] = set()
        for symptom in hazard.symptoms:
            try:
                rx = re.compile(symptom.pattern, re.IGNORECASE)
            except re.error:
                continue
            for number, line in enumerate(lines, start=1):
                if rx.search(line):
                    matches.append(
                        SymptomMatch(symptom.pattern, line.strip(), number, symptom.where)
                    )
                    matched_patterns.add(symptom.pattern)
        if matches:
            score = sum(specificity(p) for p in matched_patterns)
            out.append(Diagnosis(hazard, tuple(matches), score, len(matched_patterns)))
    out.sort(key=lambda d: (-d.score, -d.patterns, -SEVERITY_RANK[d.hazard.severity], d.hazard.id))
    return out


__all__ = [
    "FAIL_ON_CHOICES",
    "CheckResult",
    "ConditionResult",
    "Diagnosis",
    "Explanation",
    "Gathered",
    "Inputs",
    "PlanResult",
    "SymptomMatch",
    "check",
    "check_version",
    "diagnose",
    "explain",
    "fleet",
    "gather",
    "judge",
    "latest_version",
    "load_kb",
    "plan",
    "relocate",
    "require_product",
    "resolve_targets",
    "specificity",
    "worst_exit",
]
