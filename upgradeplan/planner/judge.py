"""Judging the move as asked (``check``): the direct jump and what the installation's state
adds, the verdict, the safe path when it is not safe, and the plan from a troubled state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from msgspec import Struct, field
from msgspec.structs import replace

from upgradeplan import errors, releases
from upgradeplan.model import (
    NEXT,
    SEVERITY_RANK,
    Finding,
    Jump,
    KnowledgeBase,
    Plan,
    State,
    Target,
    Verdict,
)
from upgradeplan.planner.assemble import plan as make_plan
from upgradeplan.planner.findings import current_findings
from upgradeplan.planner.scopes import judged_before, scope_of
from upgradeplan.planner.verdicts import threshold, verdict_of
from upgradeplan.provenance import Source
from upgradeplan.state.derive import resting_on_guesses
from upgradeplan.unreadable import Unreadable, depending, records
from upgradeplan.versions import Version, parse_constraint, parse_version


class Judgement(Struct, frozen=True):
    """The move as asked, judged: what ``check`` reports of one state. It carries no exit
    code: the command layer maps the verdict to one (:func:`upgradeplan.results.exit_of`)."""

    name: str
    state: State
    plan: Plan
    findings: tuple[Finding, ...]
    verdict: Verdict
    recommended: Plan | None = None  # the safe path when the jump (or state) is not safe
    notes: tuple[str, ...] = ()  # what was read and what could not be
    unreadable: tuple[Unreadable, ...] = ()
    changed: Mapping[str, Source] = field(default_factory=dict)  # --base: product -> new pin
    fix_in_change: tuple[str, ...] = ()  # held products whose pin move would make it safe
    # product -> reviewed_through, for the products the move takes above their reviewed
    # knowledge: a green verdict is then shown as "no known hazards", never "safe"
    reviewed: Mapping[str, str] = field(default_factory=dict)


def judge(findings: Sequence[Finding], fail_on: str, *, actions: bool = False) -> Verdict:
    """The verdict of the move as asked: every finding counts, fixable or not."""
    return verdict_of(findings, fail_on, actions, count_fixed=True)


def check(
    kb: KnowledgeBase,
    state: State,
    targets: Sequence[Target],
    *,
    holds: Sequence[str] = (),
    fail_on: str = "blocking",
    name: str = "",
    moved: Mapping[Source, Source] | None = None,
    changed: Mapping[str, Source] | None = None,
) -> Judgement:
    """The direct jump to resolved ``targets`` (without any: the installation as it is)."""
    if targets:
        require_installed(kb, state, targets)
        plan, findings, verdict = _judge_move(kb, state, targets, holds, fail_on)
        recommended = plan if verdict != "safe" and plan.steps else None
    else:
        plan, findings, verdict = _judge_as_is(kb, state, holds, fail_on)
        recommended = recommend_from_state(kb, state, findings, holds, fail_on)
    if verdict in ("safe", "safe-with-actions") and unread_sources(state):
        verdict = "undetermined"  # never safe because a file went unread
    unread = unreadable_of(state)
    if blind_spot(findings, unread, fail_on) and verdict in ("safe", "safe-with-actions"):
        verdict = "undetermined"
    if verdict in ("safe", "safe-with-actions") and unknown_versions(kb, state):
        verdict = "undetermined"  # the knowledge cannot vouch for a release it does not list
    unreviewed = beyond_review(kb, state, targets)
    ranged = ranged_running(kb, state) if not targets else []
    if ranged and verdict in ("safe", "safe-with-actions") and fail_on != "never":
        verdict = "undetermined"  # what a range installed may carry a hazard of its own
    guesses = resting_on_guesses(state, findings, [t.product for t in targets])
    if guesses and fail_on != "never":  # what runs was never read, only derived from a pin
        verdict, recommended = _undetermined(verdict), _undetermined_plan(recommended)
    return Judgement(
        name=name or state.name,
        state=state,
        plan=plan,
        findings=relocate(findings, moved or {}, changed),
        verdict=verdict,
        recommended=recommended,
        notes=(*review_notes(unreviewed), *read_notes(kb, state), *guesses, *ranged),
        unreadable=tuple(unread),
        changed=dict(changed or {}),
        fix_in_change=held_fixes(kb, findings, holds, fail_on) if verdict == "blocked" else (),
        reviewed={p: through for p, (_v, through) in unreviewed.items()},
    )


def _undetermined(verdict: Verdict) -> Verdict:
    return "undetermined" if verdict in ("safe", "safe-with-actions") else verdict


def _undetermined_plan(plan: Plan | None) -> Plan | None:
    if plan is None or plan.verdict not in ("safe", "safe-with-actions"):
        return plan
    return replace(plan, verdict="undetermined")


def held_fixes(
    kb: KnowledgeBase, findings: Sequence[Finding], holds: Sequence[str], fail_on: str
) -> tuple[str, ...]:
    """The held products whose pin move (a ``bom-pin`` migration of the hazard) fixes every
    finding that blocks; () when some blocking finding has no such fix."""
    limit = threshold(fail_on)
    held = set(holds)
    out: list[str] = []
    for f in findings:
        if f.status != "applies" or SEVERITY_RANK[f.severity] < limit:
            continue
        hazard = kb.hazards.get(f.hazard)
        named: set[str] = set()
        for mid in hazard.migrations if hazard is not None else ():
            m = kb.migrations.get(mid)
            if m is not None and m.kind == "bom-pin":
                named |= {str(m.target[k]) for k in ("component", "product") if m.target.get(k)}
        fix = sorted(named & held)
        if not fix:
            return ()
        out.extend(fix)
    return tuple(dict.fromkeys(out))


def _judge_move(
    kb: KnowledgeBase, state: State, targets: Sequence[Target], holds: Sequence[str], fail_on: str
) -> tuple[Plan, tuple[Finding, ...], Verdict]:
    """The direct jump's findings and the state hazards it does not already name."""
    plan = make_plan(kb, state, list(targets), holds=list(holds), fail_on=fail_on)
    seen = {f.hazard for f in plan.direct.findings}
    extra = tuple(f for f in plan.state_findings if f.scope == "state" and f.hazard not in seen)
    findings = tuple(plan.direct.findings) + extra
    verdict = judge(findings, fail_on)
    if plan.direct.verdict == "safe-with-actions" and verdict == "safe":
        verdict = "safe-with-actions"
    return plan, findings, verdict


def _judge_as_is(
    kb: KnowledgeBase, state: State, holds: Sequence[str], fail_on: str
) -> tuple[Plan, tuple[Finding, ...], Verdict]:
    findings = tuple(current_findings(kb, state))
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
    return plan, findings, verdict


def recommend_from_state(
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
    plan = make_plan(kb, state, targets, holds=list(holds), fail_on=fail_on)
    return plan if plan.steps else None


def relocate(
    findings: Sequence[Finding],
    moved: Mapping[Source, Source],
    changed: Mapping[str, Source] | None = None,
) -> tuple[Finding, ...]:
    """Findings whose location is a pin at the base ref point at the pin's line in the tree.

    With ``--base`` (``changed``: product -> the pin line the pull request changed), a finding
    the change brings about (on the move, applying or possibly applying) points at the line
    the pull request changed: its product's changed pin, else the first changed pin. The fact
    that makes it apply keeps its own file:line in the finding's evidence.
    """
    out = [
        replace(f, location=moved[f.location])
        if f.location is not None and f.location in moved
        else f
        for f in findings
    ]
    lines = {p: w for p, w in sorted((changed or {}).items()) if w.file_line is not None}
    if not lines:
        return tuple(out)
    first = next(iter(lines.values()))

    def at_change(f: Finding) -> Finding:
        if f.scope == "state" or f.status not in ("applies", "may-apply"):
            return f
        if f.location is not None and f.location in lines.values():
            return f
        return replace(f, location=lines.get(f.product, first))

    return tuple(at_change(f) for f in out)


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


def beyond_review(
    kb: KnowledgeBase, state: State, targets: Sequence[Target]
) -> dict[str, tuple[str, str]]:
    """Product -> (version, reviewed_through) for each product the move takes above the newest
    version its knowledge was reviewed through: the targets' versions when there are targets
    (a product the move leaves alone does not colour its verdict), else what is installed. No
    hazard known there is not the same as none: a green verdict is shown as "no known
    hazards (knowledge reviewed through X)", never "safe", and exits 0 as for a chart the
    knowledge does not know (docs/exit-codes.md)."""
    out: dict[str, tuple[str, str]] = {}
    if targets:
        asked: list[tuple[str, str | None]] = [(t.product, t.version) for t in targets]
    else:
        asked = [(p, state.installed(p)) for p in sorted(kb.products)]
    for product, version in sorted(asked):
        through = kb.products[product].reviewed_through if product in kb.products else ""
        if not through or not isinstance(version, str) or version == NEXT:
            continue
        try:
            above = Version.parse(version) > Version.parse(through)
        except errors.InvalidVersion:
            continue
        rel = kb.release(product, version)
        if above or (rel is not None and rel.inferred.get("version") == releases.NEWER):
            out[product] = (version, through)  # or released after the knowledge was written
    return out


def reviewed_of(kb: KnowledgeBase, state: State, targets: Sequence[Target]) -> dict[str, str]:
    """Product -> ``reviewed_through`` for the products of :func:`beyond_review`."""
    return {p: through for p, (_v, through) in beyond_review(kb, state, targets).items()}


def review_notes(unreviewed: Mapping[str, tuple[str, str]]) -> list[str]:
    """One line per product above its reviewed knowledge."""
    return [
        f"{product} {version}: no known hazards (knowledge reviewed through {through})"
        for product, (version, through) in sorted(unreviewed.items())
    ]


def ranged_running(kb: KnowledgeBase, state: State) -> list[str]:
    """One line per product pinned by a range whose running version nobody read, when a
    release the range admits runs into a landing or state hazard: what runs may carry it."""
    out: list[str] = []
    for product in sorted(kb.products):
        pin = state.pin(product)
        if pin is None or not isinstance(pin.value, str) or state.installed(product):
            continue
        try:
            admits = parse_constraint(pin.value)
        except errors.InvalidConstraint:
            continue
        hazards = [
            h for h in kb.hazards.values()
            if h.product == product and h.withdrawn is None and not judged_before(h)
        ]  # fmt: skip
        hit = next(
            (
                (h.id, r.version)
                for r in kb.releases.get(product, ())
                if r.version != NEXT and admits.check(parse_version(r.version))
                for h in hazards
                if (scope := scope_of(h)) is not None and scope.lands(parse_version(r.version))
            ),
            None,
        )
        if hit is not None:
            out.append(
                f"{product} is pinned by the range {pin.value} ({pin.source}): which release "
                f"runs is not read, and {hit[0]} concerns {product} {hit[1]}, which the range "
                f"admits; state it with --installed {product}=VERSION"
            )
    return out


def require_installed(kb: KnowledgeBase, state: State, targets: Sequence[Target]) -> None:
    """A target product the GitOps files do not hold: say what was read instead."""
    for t in targets:
        if state.installed(t.product) is not None or not _helmreleases(state):
            continue
        if state.pin(t.product) is not None:
            continue  # installed by these files under a range: its version is what is unknown
        if f"installed.{t.product}" in state.unreadable:
            continue  # a release that may be it (a chart at a place the knowledge does not list)
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
    return records(state.unread, state.unreadable)


def blind_spot(findings: Sequence[Finding], unread: Sequence[Unreadable], fail_on: str) -> bool:
    """Whether a finding (of any severity) may apply because a source could not be read.

    A fact nobody stated is judged by ``--fail-on``; a source the reader was asked to read
    and could not (a 403, a timeout, a file that does not parse) is a blind spot: the move is
    not called safe while a finding depends on it (unless ``--fail-on never``)."""
    if fail_on == "never" or not unread:
        return False
    missing = [m.key for f in findings if f.status == "may-apply" for m in f.missing]
    return bool(depending(unread, missing))


__all__ = [
    "blind_spot",
    "check",
    "judge",
    "read_notes",
    "recommend_from_state",
    "relocate",
    "unknown_versions",
    "unread_sources",
    "unreadable_of",
]
