"""The library facade: one function per verb, composition only. Functions never print.

Every name of :mod:`upgradeplan.results` is re-exported here.

Each verb hands its inputs to the module that owns the rule (readers.gather, planner.targets,
planner.judge, planner.explain, symptoms, patches) and returns an object from
:mod:`upgradeplan.results`. Heavy modules (the planner and its graph library, the kubernetes
client, the GitOps reader) are imported inside the functions that need them, so importing
this module is cheap and an offline check never imports kubernetes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from upgradeplan import errors, planner, releases
from upgradeplan.kb.crossing import with_notes
from upgradeplan.kb.loader import load
from upgradeplan.model import Action, Finding, KnowledgeBase, Plan, State, Target, Verdict
from upgradeplan.planner import judge as judging
from upgradeplan.planner.anymove import on_any_move
from upgradeplan.planner.judge import judge as verdict
from upgradeplan.planner.targets import resolve_targets as resolve
from upgradeplan.planner.verdicts import threshold as rank
from upgradeplan.provenance import Source
from upgradeplan.readers import stated
from upgradeplan.readers.gather import gather as read
from upgradeplan.releases import check_version as check_version
from upgradeplan.releases import latest
from upgradeplan.releases import require_product as require_product
from upgradeplan.results import EXIT_OF_VERDICT as EXIT_OF_VERDICT
from upgradeplan.results import FAIL_ON_CHOICES as FAIL_ON_CHOICES
from upgradeplan.results import CheckResult as CheckResult
from upgradeplan.results import ConditionResult as ConditionResult
from upgradeplan.results import Diagnosis as Diagnosis
from upgradeplan.results import Explanation as Explanation
from upgradeplan.results import FailOn as FailOn
from upgradeplan.results import Gathered as Gathered
from upgradeplan.results import GraphResult as GraphResult
from upgradeplan.results import Inputs as Inputs
from upgradeplan.results import PatchResult as PatchResult
from upgradeplan.results import PlanResult as PlanResult
from upgradeplan.results import SnapshotResult as SnapshotResult
from upgradeplan.results import SymptomMatch as SymptomMatch
from upgradeplan.results import checked
from upgradeplan.results import exit_of as exit_of
from upgradeplan.results import worst_exit as worst_exit

if TYPE_CHECKING:
    from pathlib import Path

    from upgradeplan.fleet.judge import Fleet


def load_kb(extra_dirs: Sequence[str | Path] = ()) -> KnowledgeBase:
    """The bundled knowledge merged with ``extra_dirs``; raises errors.KnowledgeError."""

    return load(list(extra_dirs))


def gather(kb: KnowledgeBase, inputs: Inputs) -> list[Gathered]:
    """Read every input: one entry for offline inputs (or per GitOps installation), one per
    cluster context. See :func:`upgradeplan.readers.gather.gather`."""

    return read(kb, inputs)


def resolve_targets(
    kb: KnowledgeBase, state: State, to: Sequence[str], given: Sequence[Target] = ()
) -> list[Target]:
    """``--to`` values and targets the inputs asked for, resolved (see planner.targets)."""

    return resolve(kb, state, to, given)


def latest_version(kb: KnowledgeBase, product: str) -> str | None:
    """The newest released, not withdrawn, version of ``product`` (releases.latest)."""

    return latest(kb, product)


def threshold(fail_on: str) -> int:
    """The lowest severity rank that fails; above every rank for ``never``."""

    return rank(fail_on)


def judge(findings: Sequence[Finding], fail_on: str, *, actions: bool = False) -> Verdict:
    """The verdict of the move as asked: every finding counts, fixable or not."""

    return verdict(findings, fail_on, actions=actions)


def _validated(
    kb: KnowledgeBase,
    state: State,
    to: Sequence[str],
    given: Sequence[Target],
    holds: Sequence[str],
) -> tuple[KnowledgeBase, list[Target]]:
    for product in holds:
        require_product(kb, product)
    kb = releases.with_newer_of(kb, state, to, given)  # versions released after the knowledge
    return kb, resolve_targets(kb, state, to, given)


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

    ``targets`` are targets the inputs asked for (the GitOps gate); ``to`` adds to them.
    """

    threshold(fail_on)
    kb, resolved = _validated(kb, state, to, targets, holds)
    judged = judging.check(
        kb, state, resolved, holds=holds, fail_on=fail_on, name=name, moved=moved, changed=changed
    )
    if not resolved:
        judged = on_any_move(kb, judged, fail_on)
    return checked(judged)


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
    kb, resolved = _validated(kb, state, to, targets, holds)
    if not resolved:
        raise errors.BadInput(
            "plan needs a target", hint="use --to PRODUCT=VERSION, --to VERSION or --to latest"
        )
    result = with_notes(kb, planner.plan(kb, state, resolved, holds=list(holds), fail_on=fail_on))
    code = exit_of(result.verdict, fail_on)
    return PlanResult(
        name or state.name, state, result, code, judging.reviewed_of(kb, state, resolved)
    )


def now_actions(kb: KnowledgeBase, plan: Plan, state: State) -> tuple[Action, ...]:
    """The fixes for the installation as it is that ``plan``'s first step does not give."""
    from upgradeplan.planner.fixes import now_actions as fixes

    return fixes(kb, plan, state)


def patch(
    kb: KnowledgeBase,
    state: State,
    to: Sequence[str] = (),
    *,
    holds: Sequence[str] = (),
    files: Mapping[str, str] | None = None,
) -> PatchResult:
    """The migration patches for ``state``: of the plan to ``to``; without a target, the
    fixes for the installation as it is and, when it is in trouble, the plan to the newest
    release. ``files`` (path -> text) default to the files the facts were read from."""
    from upgradeplan.patches import build
    from upgradeplan.patches import files as disk
    from upgradeplan.planner.fixes import current_actions

    kb = releases.with_newer_of(kb, state, to)
    if to:
        found = plan(kb, state, to, holds=holds).plan
        now = found.state_findings if found is not None else ()
    else:
        checked = check(kb, state, (), holds=holds)
        found, now = checked.recommended, checked.findings
    planned = {a.migration for s in found.steps[:1] for a in s.actions} if found else set()
    fixes = current_actions(kb, state, now, holds=holds, skip=sorted(planned))
    texts = dict(files) if files is not None else disk.read_named(found, state)
    patchset = build.build(found, state, files=texts, current_actions=fixes, kb=kb)
    return PatchResult(patchset=patchset, plan=found, now_actions=fixes)


def write_patches(result: PatchResult, steps: int = 1) -> list[str]:
    """Write the file changes of steps 1..``steps`` in place, all or nothing; the paths written.

    Every file is checked (unchanged since read, writable, a regular file) before the first
    write, so one that is not stops all writing (errors.BadInput).
    """
    from upgradeplan.patches import files as disk

    return disk.write_changes(result.patchset.file_changes(steps))


def fleet(
    kb: KnowledgeBase,
    sources: Sequence[str] = (),
    to: Sequence[str] = (),
    *,
    installed: Sequence[str] = (),
    pins: Sequence[str] = (),
    facts: Sequence[str] = (),
    **options: Any,
) -> Fleet:
    """Judge many installations (snapshot files, directories, globs, ``s3://`` prefixes, the
    contexts of a kubeconfig, GitOps trees) one at a time and roll them up
    (:mod:`upgradeplan.fleet`). Stated flags apply to every installation; ``options`` are
    those of :func:`upgradeplan.fleet.run.judge_sources` (kubeconfig, contexts, gitops,
    holds, fail_on, hazard, workers: processes judging many local snapshot files)."""
    from upgradeplan.fleet import run

    said = stated.from_flags(kb, installed, pins, facts) if installed or pins or facts else None
    return run.judge_sources(kb, sources, to, stated=said, **options)


def explain(
    kb: KnowledgeBase, ident: str, state: State | None = None, *, to: Sequence[str] = ()
) -> Explanation:
    """A hazard, release (``product@version``), migration or product; with a state, evidence."""
    from upgradeplan.planner.explain import explain as explained

    return explained(kb, ident, state, to=to)


def diagnose(kb: KnowledgeBase, text: str) -> list[Diagnosis]:
    """Every hazard whose symptoms match a line of ``text``; best match first."""
    from upgradeplan.symptoms import diagnose as matched

    return matched(kb, text)


def graph(kb: KnowledgeBase, product: str, path: tuple[str, str] | None = None) -> GraphResult:
    """The upgrade edges of ``product``; with ``path`` (from, to), the plan of a bare
    installation of it (no other facts) between them."""
    from upgradeplan.planner.graph import release_graph

    require_product(kb, product)
    found = None
    if path is not None:
        state = stated.from_flags(kb, [f"{product}={path[0]}"], [], [])
        found = plan(kb, state, [f"{product}={path[1]}"], fail_on="never").plan
    edges = tuple((str(a), str(b)) for a, b in release_graph(kb, product).edges())
    return GraphResult(product=product, plan=found, allowed=edges)


def state_document(state: State) -> dict[str, object]:
    """The state as its snapshot document (what ``scan -o json`` prints)."""
    from upgradeplan.readers.snapshot import to_document

    return to_document(state)


def contexts(kubeconfig: str | None = None) -> list[str]:
    """The context names of ``kubeconfig`` (else $KUBECONFIG, ~/.kube/config), in merge order."""
    from upgradeplan.readers.kube.cluster import list_contexts

    return list_contexts(kubeconfig)[0]


def snapshot(
    kb: KnowledgeBase,
    kubeconfig: str | None,
    contexts: Sequence[str] = (),
    *,
    all_contexts: bool = False,
    timeout: float | None = None,
    namespace: str | None = None,
) -> SnapshotResult:
    """The redacted states of the contexts read, and the contexts that could not be
    (``namespace``: namespaced kinds are listed in it alone)."""
    from upgradeplan.readers.kube import cluster

    results = cluster.read_contexts(
        kb, kubeconfig, list(contexts), all_contexts, timeout=timeout, namespace=namespace
    )
    states = tuple(r.state for r in results if r.state is not None)
    failed = tuple((r.name, str(r.error)) for r in results if r.state is None)
    return SnapshotResult(states=states, failed=failed)


def snapshot_text(states: Sequence[State], fmt: str = "yaml") -> str:
    """The snapshot file of ``states`` (one document per state) as YAML or JSON."""
    from upgradeplan.readers import snapshot as snapshot_format

    if len(states) == 1:
        return snapshot_format.dump(states[0], fmt)
    return snapshot_format.write_all(states, fmt)
