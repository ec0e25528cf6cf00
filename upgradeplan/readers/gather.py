"""Gathering: every input (snapshots, GitOps files, stated flags, cluster contexts) read into
the states to judge, with the targets, holds and moved pins the GitOps gate asks for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from msgspec.structs import replace

from upgradeplan import errors
from upgradeplan.model import KnowledgeBase, State, Target
from upgradeplan.provenance import Source
from upgradeplan.readers import stated
from upgradeplan.results import Gathered, Inputs, MovedPin
from upgradeplan.state.changes import with_changes
from upgradeplan.state.derive import derive
from upgradeplan.state.merge import merge

if TYPE_CHECKING:
    from upgradeplan.readers.gitops import Read


def gather(kb: KnowledgeBase, inputs: Inputs) -> list[Gathered]:
    """Read every input. One entry for offline inputs; one per context for cluster inputs.

    Offline inputs merge in this order, later winning per fact: snapshot files, GitOps files,
    stated flags. Cluster contexts are each merged with the offline inputs (stated last).
    Installed versions are derived from exact pins where unknown.
    """

    offline: list[State] = []
    if inputs.state_files:
        from upgradeplan.readers import snapshot

        offline = [snapshot.read(path, kb=kb) for path in inputs.state_files]
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
    from upgradeplan.readers.gitops.relevance import judged_products, set_aside

    artifacts = _artifacts(inputs.artifacts)
    reads = _chosen(
        gitops.read_pins(
            kb, inputs.gitops, ref=inputs.base, artifacts=artifacts, pins=bool(inputs.base)
        ),
        inputs,
    )  # the chart pins only tell what a change moves: with --base
    if not inputs.base:
        every = set(kb.products)  # without a change, any product may be judged
        asis = [(*set_aside(r.state, every), r.notes) for r in reads]
        return _gathered_with(
            kb, inputs, offline, said, [(s, (), (), {}, (), (*o, *n)) for s, n, o in asis]
        )
    from upgradeplan.readers.gitops import gate as gitops_gate

    heads = {
        r.state.name: r
        for r in _chosen(gitops.read_pins(kb, inputs.gitops, artifacts=artifacts), inputs)
    }
    judged: list[_RepoState] = []
    changed: dict[str, dict[str, Source]] = {}  # installation -> product -> its changed pin
    for base_read in reads:
        base_state = base_read.state
        head_read = heads.get(base_state.name)
        if head_read is None and len(reads) == 1 and len(heads) == 1:
            head_read = next(iter(heads.values()))  # a directory read as one state: PATH@REF
        if head_read is None:
            present = _present(kb, base_state)
            aside, notes = set_aside(base_state, judged_products(kb, present))
            judged.append((aside, (), (), {}, (), notes))
            continue
        head = head_read.state
        changes = gitops_gate.pin_changes(kb, base_state, head)
        moved = moved_pins(base_state, changes.locations)
        pins = _moved_charts(base_read, head_read)
        shown = {m.product for m in pins}
        pins += tuple(  # a product's pin that is no chart version (a BOM's versionRange)
            MovedPin(c.product, f"pin {c.product}", c.before, c.after, c.source, c.product)
            for c in changes.changes
            if c.product not in shown
        )
        judged_state = with_changes(base_state, head, changes.locations)  # change.<product>
        judged_state = gitops_gate.with_head_unread(judged_state, base_state, head)
        present = _present(kb, head) | {c.product for c in changes.changes}
        judged_state, notes = set_aside(judged_state, judged_products(kb, present))
        notes = (*head_read.notes, *notes)
        judged.append((judged_state, changes.targets, changes.holds, moved, pins, notes))
        changed[base_state.name] = {p: w for p, w in changes.locations.items() if w is not None}
    based = {r.state.name for r in reads}
    for name, head_read in heads.items():
        if name in based or (len(reads) == 1 and len(heads) == 1):
            continue
        # an installation the change adds: every pin it writes moves from nothing
        present = judged_products(kb, _present(kb, head_read.state))
        state, notes = set_aside(head_read.state, present)
        judged.append((state, (), (), {}, _moved_charts(None, head_read), notes))
    out = _gathered_with(kb, inputs, offline, said, judged)
    only = next(iter(changed.values())) if len(changed) == 1 else None
    return [replace(g, changed=only if only is not None else changed.get(g.name, {})) for g in out]


def _artifacts(given: Sequence[str]) -> dict[str, str]:
    """``--gitops-artifact NAME=DIR`` values as a mapping; a malformed one is bad input."""
    out: dict[str, str] = {}
    for text in given:
        name, sep, folder = text.partition("=")
        if not sep or not name.strip() or not folder.strip():
            raise errors.BadInput(
                f"--gitops-artifact {text!r}: expected NAME=DIR",
                hint="e.g. --gitops-artifact flux-system=kubernetes",
            )
        out[name.strip()] = folder.strip().removeprefix("./").rstrip("/")
    return out


def _present(kb: KnowledgeBase, state: State) -> set[str]:
    """The products of the knowledge a state pins or runs."""
    return {p for p in kb.products if f"pin.{p}" in state or state.installed(p) is not None}


def _moved_charts(base: Read | None, head: Read) -> tuple[MovedPin, ...]:
    """Every chart pin that differs between the base and the working tree, each with the
    product of the knowledge it pins when it is one (its pin fact is written on that line)."""
    from upgradeplan.readers.gitops.charts import moved_pins as moved

    products: dict[str, str] = {}
    for read in (base, head):
        if read is None:
            continue
        lines = {f.source: f.key[len("pin.") :] for f in read.state if f.key.startswith("pin.")}
        for key, pin in read.pins.items():
            if pin.where in lines:
                products.setdefault(key, lines[pin.where])
    return tuple(moved(base.pins if base is not None else {}, head.pins, products))


# state, targets, holds, base pin -> head pin, chart pins moved, what was set aside
_RepoState = tuple[
    State,
    tuple[Target, ...],
    tuple[str, ...],
    dict[Source, Source],
    tuple[MovedPin, ...],
    tuple[str, ...],
]


def _chosen(reads: list[Read], inputs: Inputs) -> list[Read]:
    """The installations ``--cluster`` asks for (all without it); an unknown name is bad input."""
    if not inputs.clusters:
        return reads
    out: list[Read] = []
    for wanted in inputs.clusters:
        found = [
            r
            for r in reads
            if wanted.rstrip("/") in (r.state.name, r.state.name.rsplit("/", 1)[-1])
        ]
        if not found:
            names = ", ".join(r.state.name for r in reads)
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

    if inputs.cluster:
        return _contexts(kb, inputs, offline, said, repo)
    if not repo:
        merged = derive(merge(*offline, said))
        return [Gathered(name=merged.name, state=merged)]
    each: list[Gathered] = []
    for one in repo:
        merged = derive(merge(*offline, one[0], said))
        named = _named(merged, one[0].name) if len(repo) > 1 else merged
        each.append(_judged(named.name, named, one))
    return each


def _judged(name: str, state: State, repo: _RepoState | None) -> Gathered:
    """``state`` to judge under ``name``, with what its GitOps installation (if any) asks."""
    if repo is None:
        return Gathered(name=name, state=state)
    _, asked, kept, moved, pins, aside = repo
    return Gathered(
        name=name,
        state=state,
        targets=asked,
        holds=kept,
        relocate=moved,
        moved_pins=pins,
        set_aside=aside,
    )


def _contexts(
    kb: KnowledgeBase,
    inputs: Inputs,
    offline: list[State],
    said: State,
    repo: Sequence[_RepoState],
) -> list[Gathered]:
    """One Gathered per cluster context read, each merged with the offline inputs and the one
    GitOps installation (if any) that cluster runs."""
    from upgradeplan.readers.kube import cluster

    if len(repo) > 1:
        raise errors.BadInput(
            f"--gitops {inputs.gitops} holds {len(repo)} installations "
            f"({', '.join(s.name for s, *_ in repo)}) and a cluster is read too",
            hint="choose the installation that cluster runs with --cluster NAME",
        )
    installation = repo[0] if repo else None
    if installation is not None:
        offline = [*offline, installation[0]]
    results = cluster.read_contexts(
        kb, inputs.kubeconfig, list(inputs.contexts), inputs.all_contexts,
        timeout=inputs.request_timeout,
        namespace=inputs.namespace,
        beside=[*offline, said],
    )  # fmt: skip
    out: list[Gathered] = []
    for res in results:
        if res.state is None:
            out.append(Gathered(name=res.name, state=None, error=res.error or "unreadable"))
            continue
        merged = derive(merge(*offline, res.state, said))
        out.append(_judged(res.name, _named(merged, res.name), installation))
    if out and all(g.state is None for g in out):
        names = ", ".join(f"{g.name} ({g.error})" for g in out)
        raise errors.ClusterUnreachable(f"no context could be read: {names}")
    return out


def moved_pins(base: State, locations: Mapping[str, Source]) -> dict[Source, Source]:
    """Where each changed pin was at the base ref -> where it is in the working tree."""
    out: dict[Source, Source] = {}
    for product, where in locations.items():
        fact = base.get(f"pin.{product}")
        if fact is not None and where and fact.source != where:
            out[fact.source] = where
    return out


def _named(state: State, name: str) -> State:
    return State(facts=state.facts, name=name, unreadable=state.unreadable, unread=state.unread)


__all__ = ["gather", "moved_pins"]
