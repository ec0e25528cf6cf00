"""The first screen of a check or plan: why each stop of a path, and every missing fact once.

What the text output shows by default and ``-o json`` carries as ``summary``: derived from a
plan's findings only (nothing is planned again).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from upgradeplan.model import Finding, Plan

_RANK = {"applies": 0, "may-apply": 1, "does-not-apply": 2}
_SEVERITY = {"blocking": 0, "warning": 1, "notice": 2}


def shown(findings: Iterable[Finding]) -> list[Finding]:
    """What applies or may apply, worst first (the findings a first screen names)."""
    live = [f for f in findings if f.status != "does-not-apply"]
    return sorted(live, key=lambda f: (_RANK[f.status], _SEVERITY[f.severity], f.hazard))


def _skipped_stop(f: Finding, version: str) -> bool:
    return f.scope == "skip" and f"skips {version}" in f.reason


def stop_reasons(plan: Plan, direct: Sequence[Finding] = ()) -> dict[tuple[str, str], str]:
    """Per ``(product, version)`` of every stop of the plan's path after the start, one line:
    why the path stops there.

    ``direct`` are the findings of the move as asked (a check's; a plan's own jump when not
    given). A stop the direct jump skips with a skip hazard that applies or may apply names
    that hazard; another intermediate stop names what the direct jump risks and the steps do
    not; the last stop of a product is its target.
    """
    jump = list(direct) or list(plan.direct.findings)
    risky = shown(jump)
    on_steps = {
        f.hazard for step in plan.steps for f in step.findings if f.status != "does-not-apply"
    }
    avoided = [f for f in risky if f.hazard not in on_steps]
    out: dict[tuple[str, str], str] = {}
    last = {step.product: step.to_version for step in plan.steps}
    for step in plan.steps:
        version = step.to_version
        if last[step.product] == version:
            out[(step.product, version)] = "the target"
            continue
        skips = [f for f in risky if _skipped_stop(f, version)]
        if skips:
            names = ", ".join(f"{f.hazard} ({f.status.replace('-', ' ')})" for f in skips)
            out[(step.product, version)] = f"a jump past it hits {names}"
        elif avoided:
            names = ", ".join(f.hazard for f in avoided)
            out[(step.product, version)] = f"the direct jump risks {names}; this path does not"
        else:
            out[(step.product, version)] = "the cheapest path the knowledge's release graph allows"
    return out


class Needed(Struct, eq=False):
    """One missing fact: how to state it, where it is shown, which findings need it."""

    key: str
    flag: str  # "--pin kagent=CONSTRAINT"
    shown_by: str  # "kubectl get … (field)", "" when nothing shows it
    needed_by: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "supply": self.flag,
            "shown_by": self.shown_by,
            "needed_by": list(self.needed_by),
        }


def _stated(how: str) -> str:
    """``--pin kagent=CONSTRAINT`` (and any note after it) out of a missing-fact hint."""
    return how.split("; shown by ", 1)[0].split(", or read it with", 1)[0].strip()


_FLAG = re.compile(r"(--[a-z-]+) ([^\s=]+=[^\s)]+)")


def _flag_of(how: str) -> str:
    """``--pin kagent=CONSTRAINT`` alone: the first option with a ``KEY=VALUE`` it names ("" for
    a fact no flag states)."""
    found = _FLAG.search(_stated(how))
    return f"{found.group(1)} {found.group(2)}" if found else ""


def _shown_of(how: str) -> str:
    """What shows the fact: the kubectl read, else how it is stated."""
    _, _, rest = how.partition("; shown by ")
    if rest:
        return "shown by " + rest
    stated = _stated(how)
    flag = _flag_of(how)
    note = stated[len(flag) :].strip() if stated.startswith(flag) else stated
    return "stated only" + (f": {note}" if note else "")


def to_decide(findings: Iterable[Finding]) -> list[Needed]:
    """Every fact a finding that may apply is missing, once, in key order."""
    by_key: dict[str, tuple[str, list[str]]] = {}
    for f in findings:
        if f.status != "may-apply":
            continue
        for m in f.missing:
            _, needers = by_key.setdefault(m.key, (m.how, []))
            if f.hazard not in needers:
                needers.append(f.hazard)
    return [
        Needed(key, _flag_of(how), _shown_of(how), tuple(needers))
        for key, (how, needers) in sorted(by_key.items())
    ]


def supply_command(command: Sequence[str], needed: Sequence[Needed]) -> str:
    """``command`` again with one flag per missing fact: fill in the upper-case placeholders."""
    flags: list[str] = []
    for n in needed:
        if n.flag:
            flags.extend(n.flag.split(" ", 1))
    return shlex.join([*command, *flags])


# The state and target options as a command line spells them, in the order ``--help`` lists them.
_RERUN = (
    ("kb_dirs", "--kb"),
    ("packs", "--pack"),
    ("installed", "--installed"),
    ("pins", "--pin"),
    ("facts", "--fact"),
    ("state_files", "--snapshot"),
    ("gitops", "--gitops"),
    ("base", "--base"),
    ("clusters", "--cluster"),
    ("kubeconfig", "--kubeconfig"),
    ("contexts", "--context"),
    ("to", "--to"),
    ("holds", "--hold"),
)


def rerun(verb: str, params: Mapping[str, Any]) -> list[str]:
    """``upgradeplan VERB`` with the inputs and targets of ``params`` (the parsed options)."""
    out = ["upgradeplan", verb]
    for name, flag in _RERUN:
        value = params.get(name)
        if value is None or value == () or value == "" or value is False:
            continue
        for one in value if isinstance(value, (tuple, list)) else (value,):
            out.extend([flag, str(one)])
    if params.get("all_contexts"):
        out.append("--all-contexts")
    return out


__all__ = ["Needed", "rerun", "shown", "stop_reasons", "supply_command", "to_decide"]
