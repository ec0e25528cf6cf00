"""Gathering: every input (snapshots, GitOps files, stated flags, cluster contexts) read into
the states to judge, with the targets, holds and moved pins the GitOps gate asks for."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from upgradeplan import errors
from upgradeplan.model import KnowledgeBase, State, Target
from upgradeplan.provenance import Source
from upgradeplan.results import Gathered, Inputs


def gather(kb: KnowledgeBase, inputs: Inputs) -> list[Gathered]:
    """Read every input. One entry for offline inputs; one per context for cluster inputs.

    Offline inputs merge in this order, later winning per fact: snapshot files, GitOps files,
    stated flags. Cluster contexts are each merged with the offline inputs (stated last).
    Installed versions are derived from exact pins where unknown.
    """
    from upgradeplan.readers import stated

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

    repo = _chosen(gitops.read_installations(kb, inputs.gitops, ref=inputs.base), inputs)
    if not inputs.base:
        return _gathered_with(kb, inputs, offline, said, [(s, (), (), {}) for s in repo])
    from upgradeplan.readers.gitops import gate as gitops_gate
    from upgradeplan.state.changes import with_changes

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
        moved = moved_pins(base_state, changes.locations)
        judged_state = with_changes(base_state, head, changes.locations)  # change.<product>
        judged_state = gitops_gate.with_head_unread(judged_state, base_state, head)
        judged.append((judged_state, tuple(changes.targets), tuple(changes.holds), moved))
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

    if inputs.cluster:
        return _contexts(kb, inputs, offline, said, repo)
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
    from upgradeplan.state.derive import derive
    from upgradeplan.state.merge import merge

    if len(repo) > 1:
        raise errors.BadInput(
            f"--gitops {inputs.gitops} holds {len(repo)} installations "
            f"({', '.join(s.name for s, *_ in repo)}) and a cluster is read too",
            hint="choose the installation that cluster runs with --cluster NAME",
        )
    asked: tuple[Target, ...] = ()
    kept: tuple[str, ...] = ()
    moved: dict[Source, Source] = {}
    if repo:
        state, asked, kept, moved = repo[0]
        offline = [*offline, state]
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
        named = _named(merged, res.name)
        out.append(Gathered(name=res.name, state=named, targets=asked, holds=kept, relocate=moved))
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
