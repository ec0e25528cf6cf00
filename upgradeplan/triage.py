"""After the symptoms matched: rank the candidates by a state, fill placeholders, pick fixes.

``diagnose`` matches text against the knowledge's symptom patterns (:func:`upgradeplan.api.
diagnose`). What the pasted text and an optional state tell beyond that lives here:

- :func:`rank`: with a state (``--installed``, ``--snapshot``…) the hazards whose scope holds
  the running version and whose conditions are not false come first: a landing or state scope
  the state settles outranks a skip or transition scope (the version before the hop is not in
  a state); a hazard the state rules out is dropped (:attr:`Triage.ruled_out`);
- :func:`confirm`: the facts that would confirm a match, and how to read each;
- :func:`placeholders`: ``<gitops-namespace>`` from what the text names (a HelmRelease's
  ``"namespace":"flux-giantswarm"`` in a helm-controller log line, ``-n NS`` of a pasted
  command, ``NS/kagent`` references, ``HelmRelease/kagent.NS`` of ``flux logs`` and Flux
  alerts, the namespace column of ``kubectl get events -A``) or from the state's HelmRelease
  namespace;
- :func:`provider`: the cloud (aks, eks, gke) from ``nodes.provider`` or from node labels and
  provider IDs in the text; :func:`commands_for` keeps the recovery commands of that cloud's
  CLI (``az``, ``aws``/``eksctl``, ``gcloud``) and every other command, all when unknown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from msgspec import Struct
from msgspec.structs import replace

from upgradeplan import conditions
from upgradeplan.conditions.evaluate import facts_read
from upgradeplan.conditions.hints import missing_fact_hint
from upgradeplan.linear import compile_pattern
from upgradeplan.model import KnowledgeBase, State, Truth
from upgradeplan.planner.scopes import judged_before, scope_of
from upgradeplan.symptoms import CONFIDENCE_RANK
from upgradeplan.versions import parse_version

if TYPE_CHECKING:
    from upgradeplan.results import Diagnosis

PROVIDER_CLIS: dict[str, str] = {"az": "aks", "aws": "eks", "eksctl": "eks", "gcloud": "gke"}

# the same clues the cluster reader reads nodes.provider from, as they show in pasted text
_PROVIDER_CLUES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rx), name)
    for rx, name in (
        (r"azure:///", "aks"),
        (r"kubernetes\.azure\.com/", "aks"),
        (r"\baks-[a-z0-9]+-\d+-vmss", "aks"),
        (r"aws:///", "eks"),
        (r"eks\.amazonaws\.com/", "eks"),
        (r"\.eks\.amazonaws\.com\b", "eks"),
        (r"gce://", "gke"),
        (r"cloud\.google\.com/gke-", "gke"),
    )
)

# where a HelmRelease's namespace shows, in the shapes the tools print it:
_HR_NAMESPACE = (
    # a controller's JSON log line: "HelmRelease":{"name":"kagent","namespace":"flux-giantswarm"}
    re.compile(r'"HelmRelease"\s*:\s*\{[^}]*"namespace"\s*:\s*"(?P<ns>[a-z0-9-]+)"'),
    # a pasted command: kubectl get hr kagent -n NS, kubectl -n NS describe helmrelease kagent
    re.compile(r"\b(?:hr|helmreleases?)\b.*\s(?:-n|--namespace)[ =](?P<ns>[a-z0-9-]+)"),
    re.compile(r"(?:-n|--namespace)[ =](?P<ns>[a-z0-9-]+)\s.*\b(?:hr|helmreleases?)\b"),
    # kind/namespace/name, or a report's "HelmRelease NS/name"
    re.compile(r"\bHelmRelease[/ ](?P<ns>[a-z0-9-]+)/[a-z0-9-]+"),
    # `flux logs` (HelmRelease/name.NS - message) and Flux alerts (helmrelease/name.NS): a
    # namespace holds no dot, so it is the part after the last one
    re.compile(
        r"(?:^|[\s\"'(\[])[Hh]elm[Rr]elease/[a-z0-9][a-z0-9.-]*\."
        r"(?!(?:ya?ml|json)\b)(?P<ns>[a-z0-9-]+)(?=$|[\s\"',:;)\]])"
    ),
    # a row of `kubectl get events -A`: NAMESPACE LAST-SEEN TYPE REASON helmrelease/name …
    re.compile(r"^(?P<ns>[a-z0-9-]+)\s+\S+\s+(?:Normal|Warning)\s+\w+\s+helmrelease/"),
)


_LINE_CHARS = 4096  # of a longer line, only its start is searched for a namespace


class Found(Struct, frozen=True):
    """A value the pasted text (or the state) gave, and where."""

    value: str
    where: str  # "line 3" or the fact's source


def provider(text: str, state: State | None = None) -> Found | None:
    """The cloud the nodes run on: the state's nodes.provider, else one clue in the text."""
    if state is not None:
        value = state.value("nodes.provider")
        if isinstance(value, str) and value in PROVIDER_CLIS.values():
            fact = state.get("nodes.provider")
            return Found(value, str(fact.source) if fact is not None else "nodes.provider")

    seen: dict[str, int] = {}
    for rx, name in _PROVIDER_CLUES:  # one pass of each clue over the whole text, on RE2
        m = compile_pattern(rx.pattern, case_sensitive=True).search(text)
        if m is not None:
            number = text.count("\n", 0, m.start()) + 1
            seen[name] = min(seen.get(name, number), number)
    if len(seen) != 1:
        return None  # none, or clues of two clouds: unknown
    name, number = next(iter(seen.items()))
    return Found(name, f"line {number}")


def commands_for(commands: Sequence[str], cloud: str | None) -> list[str]:
    """The recovery commands for ``cloud`` (others' cloud CLIs dropped); all when unknown."""
    if cloud is None:
        return list(commands)
    out = []
    for cmd in commands:
        tool = cmd.split(None, 1)[0] if cmd.strip() else ""
        if PROVIDER_CLIS.get(tool, cloud) == cloud:
            out.append(cmd)
    return out


def placeholders(text: str, state: State | None = None) -> dict[str, Found]:
    """Placeholder -> value for what the text (first) or the state names."""
    out: dict[str, Found] = {}
    for number, whole in enumerate(text.splitlines(), start=1):
        # every shape names a HelmRelease (or hr) within a line's first few KiB
        line = whole[:_LINE_CHARS]
        if not any(word in line for word in ("elm", "ELM", "hr", "HR", "Hr")):
            continue
        for rx in _HR_NAMESPACE:
            m = rx.search(line)
            if m is not None:
                out.setdefault("<gitops-namespace>", Found(m.group("ns"), f"line {number}"))
                break
        if out:
            break
    if "<gitops-namespace>" not in out and state is not None:
        for key in ("helmrelease.kagent.namespace", *(f.key for f in state)):
            fact = state.get(key)
            ok = fact is not None and key.startswith("helmrelease.") and key.endswith(".namespace")
            if ok and fact is not None and isinstance(fact.value, str) and fact.value:
                out["<gitops-namespace>"] = Found(fact.value, str(fact.source))
                break
    return out


def fill(command: str, values: dict[str, Found]) -> str:
    """``command`` with each known placeholder replaced (shell-quoted where needed)."""
    import shlex

    for place, found in values.items():
        command = command.replace(place, shlex.quote(found.value))
    return command


def fit(kb: KnowledgeBase, hazard_id: str, state: State) -> int:
    """2: the state settles the scope (landing, state) and the conditions are not false;
    1: cannot tell (no version of the product, a skip or transition scope whose start a state
    does not hold); 0: the state rules the hazard out (outside its scope, a condition false)."""

    hazard = kb.hazards[hazard_id]
    running = state.installed(hazard.product)
    scope = scope_of(hazard)
    if running is None or scope is None:
        return 1
    try:
        landed = scope.lands(parse_version(running))
    except ValueError:
        return 1
    if not landed:
        return 0
    if judged_before(hazard):
        return 1
    if hazard.when is None:
        return 2
    truth = conditions.truth(hazard.when, state, kb, hop=(running, running))
    return {Truth.FALSE: 0, Truth.TRUE: 2}.get(truth, 2)


class Ranked(Struct, frozen=True):
    diagnosis: Diagnosis
    fit: int | None  # None without a state


def rank(kb: KnowledgeBase, diagnoses: Sequence[Diagnosis], state: State | None) -> list[Ranked]:
    """The diagnoses, best first: by confidence, then fit to ``state`` (when given), then as
    matched. Those the state rules out come last (:func:`triage` drops them)."""

    if state is None:
        return [Ranked(d, None) for d in diagnoses]
    ranked = [Ranked(d, fit(kb, d.hazard.id, state)) for d in diagnoses]

    def key(p: tuple[int, Ranked]) -> tuple[int, int, int]:
        r = p[1]
        ruled_out = int(r.fit == 0)
        return (ruled_out, -CONFIDENCE_RANK[r.diagnosis.confidence] * 3 - (r.fit or 0), p[0])

    return [r for _, r in sorted(enumerate(ranked), key=key)]


def confirm(kb: KnowledgeBase, hazard_id: str) -> tuple[tuple[str, str], ...]:
    """The facts that would confirm ``hazard_id`` on an installation, and how to read each:
    the version of its product, then every fact its condition reads."""

    hazard = kb.hazards[hazard_id]
    keys = [f"installed.{hazard.product}"] if hazard.product else []
    keys += [k for k in facts_read(hazard.when) if k not in keys]
    out = []
    for key in keys:
        try:
            how = missing_fact_hint(key)
        except (KeyError, ValueError):
            how = ""
        out.append((key, how))
    return tuple(out)


class Triage(Struct, frozen=True):
    """The diagnoses to show, best first, with their recovery adjusted; what was inferred."""

    diagnoses: tuple[Diagnosis, ...]
    fits: tuple[int | None, ...]  # per diagnosis; None without a state
    notes: tuple[str, ...]  # what was filled in or chosen, and from where
    ruled_out: tuple[Diagnosis, ...] = ()  # matched, but the state rules them out


def triage(
    kb: KnowledgeBase, text: str, diagnoses: Sequence[Diagnosis], state: State | None = None
) -> Triage:
    """Rank by ``state``; fill placeholders and choose the cloud's commands from text/state."""
    ranked = rank(kb, diagnoses, state)
    cloud = provider(text, state)
    values = placeholders(text, state)
    notes = [f"{place} = {f.value} (from {f.where})" for place, f in values.items()]
    if cloud is not None:
        notes.append(
            f"provider {cloud.value} (from {cloud.where}): other clouds' commands left out"
        )
    out: list[Diagnosis] = []
    dropped: list[Diagnosis] = []
    for r in ranked:
        if r.fit == 0:
            dropped.append(r.diagnosis)
            continue
        h = r.diagnosis.hazard
        commands = [
            fill(c, values)
            for c in commands_for(h.recover_commands, cloud.value if cloud else None)
        ]
        verify = [fill(c, values) for c in h.verify]
        hazard = replace(h, recover_commands=tuple(commands), verify=tuple(verify))
        out.append(replace(r.diagnosis, hazard=hazard, confirm=confirm(kb, h.id)))
    fits = tuple(r.fit for r in ranked if r.fit != 0)
    return Triage(tuple(out), fits, tuple(notes), tuple(dropped))


__all__ = [
    "Found",
    "Ranked",
    "Triage",
    "commands_for",
    "fill",
    "fit",
    "placeholders",
    "provider",
    "rank",
    "triage",
]
