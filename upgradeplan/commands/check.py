"""check: the move judged as asked, with an exit code for CI.

A thin click command over :mod:`upgradeplan.api`, in its own module so that an offline
check builds only its own options, not those of plan, explain and diagnose
(:mod:`upgradeplan.commands.planning`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from upgradeplan import api, errors
from upgradeplan.commands.gate import accept_options
from upgradeplan.commands.options import gather, judging_options, use_color
from upgradeplan.model import KnowledgeBase

CHECK_FORMATS = ("text", "json", "yaml", "markdown", "sarif", "github")


def _unreadable_check(g: api.Gathered) -> api.CheckResult:
    from upgradeplan.unreadable import UNREACHABLE, Unreadable

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


@click.command("check")
@judging_options(CHECK_FORMATS)
@accept_options
@click.pass_context
def check(
    ctx: click.Context,
    /,
    output: str,
    fail_on: str,
    to: tuple[str, ...],
    holds: tuple[str, ...],
    accept_file: str | None,
    accept_ids: tuple[str, ...],
    **params: Any,
) -> None:
    """Judge the move as asked (the direct jump); without --to, the installation as it is.

    \b
    Exit codes: 0 safe, 2 bad input, 3 a hazard at or above --fail-on applies (or an
    accepted risk expired), 4 one may apply and a fact that would settle it is missing
    (docs/exit-codes.md). Accepted risks: .upgradeplan.yaml or --accept-file (docs/ci.md).

    \b
    Examples:
      upgradeplan check --installed agent-platform=4.7.18 --to agent-platform=4.8.1
      upgradeplan check --gitops . --base origin/main -o sarif > upgradeplan.sarif
      kubectl upgradeplan --context prod check --to latest
    """
    try:
        text, code = _check(ctx, output, fail_on, to, holds, accept_file, accept_ids, params)
    except errors.UpgradeplanError as exc:
        if output in ("sarif", "github"):
            from upgradeplan.commands import gate

            click.echo(gate.error_output(output, exc, params.get("gitops")), nl=False)
        raise
    click.echo(text, nl=False, color=use_color(ctx))
    ctx.exit(code)


def _check(
    ctx: click.Context,
    output: str,
    fail_on: str,
    to: Sequence[str],
    holds: Sequence[str],
    accept_file: str | None,
    accept_ids: Sequence[str],
    params: dict[str, Any],
) -> tuple[str, int]:
    from upgradeplan import accept

    kb, gathered = gather(ctx, params)
    acceptances = accept.gather(kb, accept_file, accept_ids)
    results: list[api.CheckResult] = []
    for g in gathered:
        if g.state is None:
            results.append(_unreadable_check(g))
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
        results.append(accept.judge(judged, acceptances, fail_on))
    stale = accept.stale(acceptances, results)
    code = api.worst_exit([r.exit_code for r in results])
    return _render_check(ctx, kb, results, output, code, fail_on, stale, params), code


def _render_check(
    ctx: click.Context,
    kb: KnowledgeBase,
    results: Sequence[api.CheckResult],
    output: str,
    code: int,
    fail_on: str = "blocking",
    stale: Sequence[Any] = (),
    params: dict[str, Any] | None = None,
) -> str:
    from upgradeplan.commands import gate

    if output == "text":
        from upgradeplan.render.text import render_check

        return render_check(results, use_color(ctx)) + gate.accepted_text(results, stale)
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
