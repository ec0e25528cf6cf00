"""What ``check`` does once its options are parsed.

The click command (:mod:`upgradeplan.commands.check`) calls :func:`check`; the global options'
settings (:mod:`upgradeplan.commands.settings`) fill in what the command's own leave unset.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from msgspec.structs import replace

from upgradeplan import accept, api, errors
from upgradeplan.api import Inputs
from upgradeplan.commands import gate
from upgradeplan.commands.settings import setting
from upgradeplan.kb import packs as kb_packs
from upgradeplan.model import Finding, KnowledgeBase
from upgradeplan.render.firstscreen import check_screen
from upgradeplan.render.summary import rerun
from upgradeplan.render.text import render_check as everything
from upgradeplan.render.text import use_color as decide
from upgradeplan.unreadable import UNREACHABLE, Unreadable


def inputs_from(params: Mapping[str, Any], obj: Mapping[str, Any] | None) -> Inputs:
    """Build :class:`Inputs` from the state options' values; the global options (``obj``) fill
    in what the command's own leave unset; contexts add up."""
    contexts = (*setting(obj, "contexts", ()), *(params.get("contexts") or ()))
    timeout = params.get("request_timeout")
    return Inputs(
        installed=tuple(params.get("installed") or ()),
        pins=tuple(params.get("pins") or ()),
        facts=tuple(params.get("facts") or ()),
        state_files=tuple(params.get("state_files") or ()),
        gitops=params.get("gitops"),
        base=params.get("base"),
        clusters=tuple(params.get("clusters") or ()),
        artifacts=tuple(params.get("gitops_artifacts") or ()),
        kubeconfig=params.get("kubeconfig") or setting(obj, "kubeconfig"),
        contexts=tuple(dict.fromkeys(contexts)),
        all_contexts=bool(params.get("all_contexts")),
        request_timeout=timeout if timeout is not None else setting(obj, "request_timeout"),
        namespace=params.get("namespace") or setting(obj, "namespace"),
    )


def use_color(obj: Mapping[str, Any] | None) -> bool:
    """Whether text output is coloured: --color, and whether stdout is a terminal."""
    import sys

    return decide(str((obj or {}).get("color") or "auto"), sys.stdout)


def gather(
    obj: Mapping[str, Any] | None, params: Mapping[str, Any]
) -> tuple[KnowledgeBase, list[api.Gathered]]:
    """The knowledge and every installation the state options name (BadInput when none)."""
    inputs = inputs_from(params, obj)
    if not inputs.any:
        raise errors.BadInput(
            "no installation given",
            hint="state it with --installed PRODUCT=VERSION (and --pin, --fact), or read it with "
            "--snapshot FILE, --gitops PATH or --kubeconfig",
        )
    kb = api.load_kb(tuple((obj or {}).get("kb_dirs", ())))
    return kb, api.gather(kb, inputs)


def _unreadable_check(g: api.Gathered, *, empty: bool = False) -> api.CheckResult:
    """A result for what could not be judged (exit 4): a context that could not be read, or
    (``empty``) a snapshot or tree with nothing in it that a target was asked of."""

    if empty:
        whole = Unreadable(g.name, "nothing read", kind="file", detail=g.error or "")
    else:
        whole = Unreadable(
            f"context {g.name}", UNREACHABLE, kind="context", context=g.name, detail=g.error or ""
        )
    return api.CheckResult(
        name=g.name,
        state=None,
        plan=None,
        verdict="undetermined",
        exit_code=int(errors.ExitCode.UNDETERMINED),
        error=g.error,
        unreadable=(whole,),
    )


def check(
    obj: Mapping[str, Any] | None,
    *,
    output: str,
    fail_on: str,
    to: Sequence[str],
    holds: Sequence[str],
    accept_file: str | None,
    accept_ids: Sequence[str],
    **params: Any,
) -> tuple[str, int]:
    """The text ``check`` prints and its exit code; the keywords are the click command's."""
    kb, gathered = gather(obj, params)
    acceptances = accept.gather(kb, accept_file, accept_ids)
    results: list[api.CheckResult] = []
    for g in gathered:
        if g.state is None:
            results.append(_unreadable_check(g))
            continue
        if to and not g.state.facts and not g.state.unread and not g.state.unreadable:
            # nothing was read (a snapshot of items: []): what --to asks cannot be answered
            empty = api.Gathered(name=g.name, state=None, error=f"nothing read from {g.name}")
            results.append(_unreadable_check(empty, empty=True))
            continue
        try:
            judged = api.check(
                kb,
                g.state,
                to,
                holds=tuple(holds) + g.holds,
                fail_on=fail_on,
                name=g.name,
                targets=g.targets,
                moved=g.relocate,
                changed=g.changed,
            )
        except errors.BadInput as exc:
            if len(gathered) == 1:
                raise
            # one installation of several cannot be judged (the product is not in it)
            failed = api.Gathered(name=g.name, state=None, error=str(exc))
            results.append(_unreadable_check(failed))
            continue
        if g.moved_pins or g.set_aside:
            judged = replace(judged, moved_pins=g.moved_pins, notes=(*judged.notes, *g.set_aside))
        if g.moved_pins:  # the checks computed from the charts (docs/exit-codes.md)
            from upgradeplan.charts import with_checks

            judged = with_checks(judged, fail_on, chart_settings(params), os.environ)
        results.append(set_aside(judged, acceptances, fail_on))
    stale = stale_acceptances(acceptances, results)
    code = api.worst_exit([r.exit_code for r in results])
    shown = rerun_params(obj, params, to, holds)
    return render_check(obj, kb, results, output, code, fail_on, stale, shown), code


def chart_settings(params: Mapping[str, Any]) -> Any:
    """The computed checks' settings from ``check``'s options (``--chart-checks``,
    ``--no-chart-checks``, ``--charts``, ``--request-timeout``)."""
    from pathlib import Path

    from upgradeplan.charts import Settings

    mode = "off" if params.get("no_chart_checks") else str(params.get("chart_checks") or "auto")
    folder = params.get("charts_dir")
    timeout = params.get("request_timeout")
    return Settings(
        mode="off" if mode == "off" else "require" if mode == "require" else "auto",
        folder=Path(folder) if folder else None,
        timeout=float(timeout) if timeout else None,
    )


def rerun_params(
    obj: Mapping[str, Any] | None,
    params: Mapping[str, Any],
    to: Sequence[str],
    holds: Sequence[str],
) -> dict[str, Any]:
    """The options a command ran with, for the command line its text output suggests: the
    inputs, the targets, the ``--kb`` directories and ``--pack`` names given (not those of
    UPGRADEPLAN_KB, UPGRADEPLAN_PACKS or the config file)."""
    env_dirs = {d for d in os.environ.get("UPGRADEPLAN_KB", "").split(os.pathsep) if d}
    packs = kb_packs.packs_path()
    given = [
        d
        for d in setting(obj, "kb_dirs", ())
        if d not in env_dirs and not (packs and os.path.dirname(d) == packs)
    ]
    return {
        **params,
        "to": tuple(to),
        "holds": tuple(holds),
        "kb_dirs": tuple(given),
        "packs": tuple(dict.fromkeys(setting(obj, "packs_given", ()))),
    }


def render_check(
    obj: Mapping[str, Any] | None,
    kb: KnowledgeBase,
    results: Sequence[api.CheckResult],
    output: str,
    code: int,
    fail_on: str = "blocking",
    stale: Sequence[Any] = (),
    params: Mapping[str, Any] | None = None,
) -> str:
    """The results in ``output``'s format."""

    if output == "text":
        if setting(obj, "verbose"):
            shown = everything(results, use_color(obj))
        else:
            shown = check_screen(results, use_color(obj), rerun("check", params or {}))
        return shown + gate.accepted_text(results, stale)
    if output in ("json", "yaml"):
        from upgradeplan.render import structured

        doc = structured.check_to_dict(results, code)
        return structured.serialise(gate.with_acceptances(doc, results, stale), output)
    root = gate.root_of((params or {}).get("gitops"))
    if output == "markdown":
        from upgradeplan.render import prcomment

        return prcomment.render(results, code=code, fail_on=fail_on, root=root, stale=stale)
    if output == "sarif":
        from upgradeplan.render import sarif

        return sarif.dumps(sarif.log(results, kb, fail_on=fail_on, root=root, stale=stale))
    from upgradeplan.render import github

    return github.render_check(results, fail_on=fail_on, code=code, stale=stale)


def error_text(output: str, exc: errors.UpgradeplanError, params: Mapping[str, Any]) -> str | None:
    """What ``-o sarif`` / ``-o github`` print on stdout when the check fails (else None)."""
    if output not in ("sarif", "github"):
        return None

    return gate.error_output(output, exc, params.get("gitops"))


def set_aside(
    result: api.CheckResult,
    acceptances: Sequence[accept.Acceptance],
    fail_on: str,
    today: dt.date | None = None,
) -> api.CheckResult:
    """``result`` with its accepted findings set aside and expired acceptances added."""
    if not acceptances or result.plan is None or result.state is None:
        return result
    day = today or dt.date.today()
    live = [a for a in acceptances if not a.expired(day)]
    kept: list[Finding] = []
    accepted: list[accept.Accepted] = []
    for f in result.findings:
        match = next(
            (a for a in live if f.status != "does-not-apply" and a.matches(f, result.name)), None
        )
        if match is None:
            kept.append(f)
        else:
            accepted.append(accept.Accepted(f, match))
    expired = [
        accept.expired_finding(a)
        for a in acceptances
        if a.expired(day) and (not a.installation or fnmatchcase(result.name, a.installation))
    ]
    findings = (*kept, *expired)
    verdict = api.judge(findings, fail_on)
    if result.verdict == "safe-with-actions" and verdict == "safe" and not accepted:
        verdict = "safe-with-actions"
    if verdict == "safe" and any(f.status == "applies" for f in findings):
        verdict = "safe-with-actions"
    code = api.exit_of(verdict, fail_on)
    return replace(
        result,
        findings=findings,
        verdict=verdict,
        exit_code=code,
        accepted=tuple(accepted),
    )


def stale_acceptances(
    acceptances: Sequence[accept.Acceptance],
    results: Sequence[api.CheckResult],
    today: dt.date | None = None,
) -> list[accept.Acceptance]:
    """Unexpired acceptances that matched no finding of any result."""
    day = today or dt.date.today()
    used = {id(a.acceptance) for r in results for a in r.accepted}
    return [a for a in acceptances if not a.expired(day) and id(a) not in used]
