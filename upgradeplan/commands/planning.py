"""check, plan, explain, diagnose: thin click commands over :mod:`upgradeplan.api`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import click

from upgradeplan import api, errors
from upgradeplan.commands import complete
from upgradeplan.commands.gate import accept_options
from upgradeplan.commands.options import (
    color_mode,
    fail_on_option,
    inputs_from,
    kb_dirs,
    output_option,
    state_options,
    target_options,
)
from upgradeplan.model import KnowledgeBase, Plan, State

CHECK_FORMATS = ("text", "json", "yaml", "markdown", "sarif", "github")
PLAN_FORMATS = ("text", "json", "yaml", "markdown")

F = TypeVar("F", bound=Callable[..., Any])


def _color(ctx: click.Context) -> bool:
    from upgradeplan.render.text import use_color

    return use_color(color_mode(ctx), sys.stdout)


def _judging_options(formats: Sequence[str]) -> Callable[[F], F]:
    """The options check and plan share: the state, --to/--hold, --fail-on and -o."""

    def decorate(f: F) -> F:
        return state_options(target_options(fail_on_option(output_option(formats)(f))))

    return decorate


def _gather(ctx: click.Context, params: dict[str, Any]) -> tuple[KnowledgeBase, list[api.Gathered]]:
    inputs = inputs_from(params)
    if not inputs.any:
        raise errors.BadInput(
            "no installation given",
            hint="state it with --installed PRODUCT=VERSION (and --pin, --fact), or read it with "
            "--snapshot FILE, --gitops PATH or --kubeconfig",
        )
    kb = api.load_kb(kb_dirs(ctx))
    return kb, api.gather(kb, inputs)


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
@_judging_options(CHECK_FORMATS)
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
    click.echo(text, nl=False, color=_color(ctx))
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

    kb, gathered = _gather(ctx, params)
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

        return render_check(results, _color(ctx)) + gate.accepted_text(results, stale)
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


def _markdown(
    kb: KnowledgeBase,
    plans: Sequence[tuple[Plan, State]],
    named: bool = False,
    notes: Mapping[str, Sequence[str]] | None = None,
) -> str:
    from upgradeplan.render import markdown

    def said(state: State) -> str:
        lines = (notes or {}).get(state.name, ())
        return "".join(f"> {line}\n" for line in lines) + ("\n" if lines else "")

    return "\n".join(
        (
            f"<!-- installation: {state.name} -->\n## Installation `{state.name}`\n\n"
            if named
            else ""
        )
        + said(state)
        + _ensure_nl(markdown.runbook(plan, kb, state, now=api.now_actions(kb, plan, state)))
        for plan, state in plans
    )


def _ensure_nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


@click.command("plan")
@_judging_options(PLAN_FORMATS)
@click.pass_context
def plan(
    ctx: click.Context,
    /,
    output: str,
    fail_on: str,
    to: tuple[str, ...],
    holds: tuple[str, ...],
    **params: Any,
) -> None:
    """The safe path to --to as ordered steps: moves, findings, actions, verification.

    \b
    Exit codes: 0 a safe path exists, 2 bad input, 3 no safe path, 4 undetermined.

    \b
    Examples:
      upgradeplan plan --installed agent-platform=4.7.18 --to 4.8.1
      upgradeplan plan --gitops clusters/prod --to latest -o markdown > RUNBOOK.md
      upgradeplan plan --snapshot prod.yaml --to agent-platform=4.8.1 --hold kagent
    """
    kb, gathered = _gather(ctx, params)
    results: list[api.PlanResult] = []
    for g in gathered:
        if g.state is None:
            results.append(
                api.PlanResult(
                    name=g.name,
                    state=None,
                    plan=None,
                    exit_code=int(errors.ExitCode.UNDETERMINED),
                    error=g.error,
                )
            )
            continue
        results.append(
            api.plan(
                kb,
                g.state,
                to,
                holds=tuple(holds) + g.holds,
                fail_on=fail_on,
                name=g.name,
                targets=g.targets,
            )
        )
    code = api.worst_exit([r.exit_code for r in results])
    if output == "text":
        from upgradeplan.render.text import render_plan

        text = render_plan(results, _color(ctx))
    elif output in ("json", "yaml"):
        from upgradeplan.render import structured

        text = structured.serialise(structured.plans_to_dict(results, code), output)
    else:
        text = _markdown(
            kb, [(r.plan, r.state) for r in results if r.plan is not None and r.state is not None]
        )
    click.echo(text, nl=False, color=_color(ctx))
    ctx.exit(code)


@click.command("explain")
@click.argument("ident", metavar="ID", shell_complete=complete.identifiers)
@state_options
@click.option(
    "--to",
    "to",
    multiple=True,
    metavar="PRODUCT=VERSION",
    help="The hop to evaluate a skip or transition hazard on (repeatable).",
)
@output_option(("text", "json", "yaml"))
@click.pass_context
def explain(
    ctx: click.Context, /, ident: str, output: str, to: tuple[str, ...], **params: Any
) -> None:
    """A hazard, release (PRODUCT@VERSION), migration or product from the knowledge base.

    With state inputs, each condition of a hazard is shown with its observed value and
    where it was read, and each missing fact with how to supply it.

    \b
    Examples:
      upgradeplan explain harness-missing-on-480
      upgradeplan explain agent-platform@4.8.1
      upgradeplan explain harness-handover-skipped --snapshot prod.yaml --to 4.8.1
    """
    kb = api.load_kb(kb_dirs(ctx))
    inputs = inputs_from(params)
    explanations: list[api.Explanation] = []
    if inputs.any:
        for g in api.gather(kb, inputs):
            if g.state is None:
                raise errors.BadInput(f"context {g.name!r} could not be read: {g.error}")
            explanations.append(api.explain(kb, ident, g.state, to=to))
    else:
        explanations.append(api.explain(kb, ident, None, to=to))
    if output in ("json", "yaml"):
        from upgradeplan.render import structured

        docs = [structured.explanation_to_dict(e) for e in explanations]
        doc = docs[0] if len(docs) == 1 else {"schema_version": 1, "results": docs}
        click.echo(structured.serialise(doc, output), nl=False)
        return
    from upgradeplan.render.text import render_explain

    color = _color(ctx)
    click.echo("\n".join(render_explain(e, color) for e in explanations), nl=False, color=color)


@click.command("diagnose")
@click.argument("file", required=False, default="-", metavar="[FILE|-]")
@state_options
@output_option(("text", "json", "yaml"))
@click.option(
    "--top", type=click.IntRange(min=1), default=None, help="Show only the N best matches."
)
@click.pass_context
def diagnose(ctx: click.Context, /, file: str, output: str, top: int | None, **params: Any) -> None:
    """Match pasted logs, events or status text against the known symptoms of hazards.

    Reads FILE, or stdin when FILE is '-' or absent. The best match comes first, with its
    recovery. With a state (--installed, --snapshot, --kubeconfig…) the hazards the state
    fits come first; placeholders such as <gitops-namespace> are filled from what the text
    (or the state) names, and cloud commands are those of the provider it shows (all when
    unknown). diagnose reports and does not gate: it exits 0 whether or not anything matched.

    \b
    Examples:
      kubectl -n kagent describe pod kagent-0 | upgradeplan diagnose
      upgradeplan diagnose helm-controller.log --installed agent-platform=4.8.0
      upgradeplan diagnose events.txt --snapshot prod.yaml -o json
    """
    from upgradeplan import triage

    text = _read_text(file)
    kb = api.load_kb(kb_dirs(ctx))
    state = _diagnose_state(kb, params)
    found = triage.triage(kb, text, api.diagnose(kb, text), state)
    shown = found.diagnoses[:top] if top is not None else found.diagnoses
    fits = found.fits[: len(shown)] if state is not None else ()
    if output in ("json", "yaml"):
        from upgradeplan.render import structured

        doc = structured.diagnoses_to_dict(shown, fits, found.notes)
        click.echo(structured.serialise(doc, output), nl=False)
        return
    from upgradeplan.render.text import render_diagnose

    color = _color(ctx)
    click.echo(render_diagnose(shown, color, fits, found.notes), nl=False, color=color)


def _diagnose_state(kb: KnowledgeBase, params: dict[str, Any]) -> State | None:
    inputs = inputs_from(params)
    if not inputs.any:
        return None
    gathered = api.gather(kb, inputs)
    if len(gathered) != 1 or gathered[0].state is None:
        names = ", ".join(g.name for g in gathered)
        raise errors.BadInput(
            f"diagnose takes one state; got {len(gathered)} ({names})"
            if len(gathered) != 1
            else f"{gathered[0].name}: could not be read: {gathered[0].error}",
            hint="name one --context (or one --cluster)",
        )
    return gathered[0].state


def _read_text(file: str) -> str:
    if file == "-":
        if sys.stdin.isatty():
            click.echo(
                "upgradeplan: reading the text to diagnose from the terminal: paste it, then "
                "press Ctrl-D (or pass a FILE)",
                err=True,
            )
        return sys.stdin.read()
    try:
        with open(file, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except FileNotFoundError:
        raise errors.BadInput(
            f"{file}: no such file", hint="pass a file, or '-' for stdin"
        ) from None
    except IsADirectoryError:
        raise errors.BadInput(
            f"{file}: is a directory", hint="pass a file, or '-' for stdin"
        ) from None
    except OSError as exc:
        raise errors.BadInput(f"{file}: cannot read ({exc.strerror})") from None
