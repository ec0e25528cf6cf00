"""plan, explain, diagnose: thin click commands over :mod:`upgradeplan.api` (check is in
:mod:`upgradeplan.commands.check`)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from upgradeplan import api, errors, symptoms, triage
from upgradeplan.commands import complete
from upgradeplan.commands.judging import rerun_params
from upgradeplan.commands.options import (
    gather,
    inputs_from,
    judging_options,
    kb_dirs,
    output_option,
    state_options,
    use_color,
)
from upgradeplan.model import KnowledgeBase, Plan, State
from upgradeplan.pasted import read_paste
from upgradeplan.render import markdown, structured
from upgradeplan.render.firstscreen import plan_screen
from upgradeplan.render.summary import rerun
from upgradeplan.render.text import render_diagnose, render_explain, render_plan

PLAN_FORMATS = ("text", "json", "yaml", "markdown")


def _markdown(
    kb: KnowledgeBase,
    plans: Sequence[tuple[Plan, State]],
    named: bool = False,
    notes: Mapping[str, Sequence[str]] | None = None,
    reviewed: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
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
        + _ensure_nl(
            markdown.runbook(
                plan,
                kb,
                state,
                now=api.now_actions(kb, plan, state),
                reviewed=(reviewed or {}).get(state.name),
            )
        )
        for plan, state in plans
    )


def _ensure_nl(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


@click.command("plan")
@judging_options(PLAN_FORMATS)
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
    kb, gathered = gather(ctx, params)
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
        if ctx.find_root().obj.get("verbose"):
            text = render_plan(results, use_color(ctx))
        else:
            command = rerun("plan", rerun_params(ctx.find_root().obj, params, to, holds))
            text = plan_screen(results, use_color(ctx), command)
    elif output in ("json", "yaml"):
        text = structured.serialise(structured.plans_to_dict(results, code), output)
    else:
        text = _markdown(
            kb,
            [(r.plan, r.state) for r in results if r.plan is not None and r.state is not None],
            reviewed={r.state.name: r.reviewed for r in results if r.state is not None},
        )
    click.echo(text, nl=False, color=use_color(ctx))
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
        docs = [structured.explanation_to_dict(e) for e in explanations]
        doc = docs[0] if len(docs) == 1 else {"schema_version": 1, "results": docs}
        click.echo(structured.serialise(doc, output), nl=False)
        return

    color = use_color(ctx)
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

    Reads FILE, or stdin when FILE is '-' or absent (text only; of a paste over 8 MiB its
    last 8 MiB, and says so). Messages that span lines (events, folded YAML, JSON log lines)
    are read whole. The best match comes first, with its confidence (a generic line alone is
    a low-confidence hint), the lines it matched and the facts that would confirm it. With a
    state (--installed, --snapshot, --kubeconfig…) the matches the state rules out are
    dropped (-v lists them); placeholders such as <gitops-namespace> are filled from what the
    text (or the state) names, and cloud commands are those of the provider it shows (all
    when unknown). diagnose reports and does not gate: it exits 0 whether or not anything
    matched.

    \b
    Examples:
      kubectl -n kagent describe pod kagent-0 | upgradeplan diagnose
      upgradeplan diagnose helm-controller.log --installed agent-platform=4.8.0
      upgradeplan diagnose events.txt --snapshot prod.yaml -o json
    """

    paste = _read_paste(file)
    kb = api.load_kb(kb_dirs(ctx))
    state = _diagnose_state(kb, params)
    found = triage.triage(
        kb, paste.text, symptoms.diagnose(kb, paste.text, paste.first_line), state
    )
    notes = ((paste.note,) if paste.note else ()) + found.notes
    verbose = bool((ctx.obj or {}).get("verbose"))
    if verbose:
        notes += tuple(
            f"ruled out by the state: {d.hazard.id} (matched line {d.matches[0].line_number})"
            for d in found.ruled_out
        )
    elif found.ruled_out:
        notes += (f"{len(found.ruled_out)} match(es) the state rules out left out (-v lists them)",)
    shown = found.diagnoses[:top] if top is not None else found.diagnoses
    fits = found.fits[: len(shown)] if state is not None else ()
    if output in ("json", "yaml"):
        doc = structured.diagnoses_to_dict(shown, fits, notes)
        if verbose:
            doc["ruled_out"] = [d.hazard.id for d in found.ruled_out]
        click.echo(structured.serialise(doc, output), nl=False)
        return

    color = use_color(ctx)
    click.echo(render_diagnose(shown, color, fits, notes), nl=False, color=color)


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


def _read_paste(file: str) -> Any:
    if file == "-":
        if sys.stdin.isatty():
            click.echo(
                "upgradeplan: reading the text to diagnose from the terminal: paste it, then "
                "press Ctrl-D (or pass a FILE)",
                err=True,
            )
        return read_paste(sys.stdin.buffer, "stdin")
    try:
        with open(file, "rb") as fh:
            return read_paste(fh, file)
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
