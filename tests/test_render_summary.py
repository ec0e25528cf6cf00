"""Why each stop of a path, each missing fact once, and the command that states them."""

from __future__ import annotations

from test_render_text import CHECK, PLAN

from upgradeplan.model import Finding, MissingFact
from upgradeplan.render import summary


def test_a_stop_the_direct_jump_skips_names_the_skip_hazard() -> None:
    reasons = summary.stop_reasons(PLAN, CHECK.findings)
    assert reasons[("platform", "4.7.19")] == "a jump past it hits handover-skipped (applies)"
    assert reasons[("platform", "4.8.0")] == "the target"


def _needing(hazard: str, *keys: str) -> Finding:
    how = (
        "--pin {k}=CONSTRAINT, or read it with --kubeconfig/--snapshot/--gitops;"
        " shown by `kubectl get x` (spec.ref)"
    )
    return Finding(
        hazard=hazard,
        title=hazard,
        severity="blocking",
        scope="state",
        status="may-apply",
        product="p",
        from_version=None,
        to_version=None,
        missing=tuple(MissingFact(f"pin.{k}", how.format(k=k)) for k in keys),
    )


def test_each_missing_fact_once_with_every_finding_that_needs_it() -> None:
    needed = summary.to_decide([_needing("a", "kagent", "muster"), _needing("b", "kagent")])
    assert [(n.key, n.flag, n.needed_by) for n in needed] == [
        ("pin.kagent", "--pin kagent=CONSTRAINT", ("a", "b")),
        ("pin.muster", "--pin muster=CONSTRAINT", ("a",)),
    ]
    assert needed[0].shown_by == "shown by `kubectl get x` (spec.ref)"
    command = summary.supply_command(["upgradeplan", "check"], needed)
    assert command == "upgradeplan check --pin kagent=CONSTRAINT --pin muster=CONSTRAINT"


def test_a_fact_only_stated_another_way_is_explained_not_flagged() -> None:
    gate = "check --gitops PATH --base REF (or --fact change.fapp=moved|kept)"
    found = Finding(
        "h",
        "t",
        "blocking",
        "state",
        "may-apply",
        "p",
        None,
        None,
        missing=(MissingFact("change.fapp", gate),),
    )
    (needed,) = summary.to_decide([found])
    assert needed.flag == "--fact change.fapp=moved|kept"
    assert needed.shown_by == f"stated only: {gate}"


def test_rerun_spells_the_inputs_as_the_command_line_does() -> None:
    params = {
        "installed": ("agent-platform=4.7.18",),
        "gitops": "clusters/prod",
        "to": ("latest",),
        "holds": (),
        "kb_dirs": ("extra",),
        "all_contexts": False,
    }
    assert summary.rerun("check", params) == [
        "upgradeplan",
        "check",
        "--kb",
        "extra",
        "--installed",
        "agent-platform=4.7.18",
        "--gitops",
        "clusters/prod",
        "--to",
        "latest",
    ]
