"""``upgradeplan patch``: the migration patches of a plan, to stdout, a folder, or in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from msgspec.structs import replace

from upgradeplan import api, errors
from upgradeplan.commands.options import inputs_from, kb_dirs, state_options, target_options
from upgradeplan.patches.files import recover
from upgradeplan.render import patches as render_patches


def _output(value: str) -> tuple[str, str | None]:
    if value in ("text", "json"):
        return value, None
    if value.startswith("dir="):
        path = value[4:]
        if not path:
            raise errors.BadInput("-o dir= needs a path", hint="e.g. -o dir=./patches")
        return "dir", path
    raise errors.BadInput(
        f"-o {value!r} is not a format of patch", hint="use text, json or dir=PATH"
    )


def _write_dir(root: str, layout: dict[str, str]) -> None:
    base = Path(root)
    try:
        if base.exists() and any(base.iterdir()):
            raise errors.BadInput(
                "the output folder is not empty", location=root, hint="give a new or empty folder"
            )
        for rel, content in sorted(layout.items()):
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
            if rel.endswith(".sh"):
                path.chmod(0o755)
    except OSError as exc:
        raise errors.BadInput(f"cannot write: {exc.strerror}", location=root) from None


def _first_step(patchset: Any) -> Any:
    """Only step 1 and the fixes needed now (step 0); says on stderr what was left out."""
    later = sorted({i.step for i in patchset.items if i.step > 1})
    if not later:
        return patchset
    click.echo(
        f"upgradeplan: showing step 1 of {len(patchset.steps)}: apply it, let it roll out, "
        "then run patch again (or --step N; --all-steps prints every step, which applied at "
        "once is the direct jump)",
        err=True,
    )
    return replace(patchset, items=tuple(i for i in patchset.items if i.step <= 1))


@click.command("patch")
@state_options
@target_options
@click.option(
    "-o",
    "--output",
    "output",
    default="text",
    show_default=True,
    metavar="text|json|dir=PATH",
    help="Patches as text (diffs, YAML, shell), as JSON, or as a folder per step with a "
    "kustomization.yaml (dir=PATH).",
)
@click.option(
    "--write",
    "write",
    is_flag=True,
    help="Edit the files the pins and values were read from in place (comments, order and "
    "quoting kept; atomic; refused if a file changed since it was read).",
)
@click.option(
    "--step",
    "through_step",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="With --write: write the changes of steps 1..N (default 1, the next safe change; "
    "writing the final pins at once would skip the required stops). Without: show step N only.",
)
@click.option(
    "--all-steps",
    "all_steps",
    is_flag=True,
    help="Text output: every step at once. Without it the text holds step 1 only (and the "
    "fixes needed now), so `patch … | git apply` never makes the direct jump.",
)
@click.pass_context
def patch(
    ctx: click.Context,
    /,
    output: str,
    write: bool,
    through_step: int | None,
    all_steps: bool,
    to: tuple[str, ...],
    holds: tuple[str, ...],
    **params: Any,
) -> None:
    """The migration patches of a plan (or, without --to, of the installation as it is).

    \b
    Pin and values moves become unified diffs of the files they were read from
    (--gitops); HelmRelease changes kustomize strategic-merge patches; workload changes
    JSON 6902 patches; new objects manifests; the rest shell commands, every substituted
    value shell-quoted. Text output holds one step (step 1 and what is needed now) unless
    --all-steps or --step N; JSON and dir= hold every step, each marked with its number.

    \b
    Examples:
      upgradeplan patch --gitops . --to agent-platform=4.8.1 | git apply
      upgradeplan patch --gitops . --to agent-platform=4.8.1 --write
      upgradeplan patch --gitops . --to 4.8.1 --step 2
      upgradeplan patch --installed agent-platform=4.8.0 -o dir=./patches
    """

    fmt, folder = _output(output)
    inputs = inputs_from(params)
    if not inputs.any:
        raise errors.BadInput(
            "no installation given",
            hint="state it with --installed/--pin/--fact, or read it with --gitops PATH, "
            "--snapshot FILE or --kubeconfig",
        )
    kb = api.load_kb(kb_dirs(ctx))

    for path in recover():  # a step a killed --write left half done, finished before reading
        click.echo(f"upgradeplan: finished an interrupted write of {path}", err=True)
    gathered = api.gather(kb, inputs)
    if len(gathered) != 1 or gathered[0].state is None:
        if len(gathered) > 1:
            raise errors.BadInput(
                "patch works on one installation", hint="give one --context, not several"
            )
        raise errors.BadInput(f"cannot read the installation: {gathered[0].error}")
    state = gathered[0].state
    built = api.patch(kb, state, to, holds=holds)
    patchset, plan = built.patchset, built.plan
    if plan is not None and plan.verdict == "blocked":
        click.echo(
            "upgradeplan: no safe path (blocked by "
            + ", ".join(plan.blocked_by or ("a blocking hazard",))
            + "); these patches do not make the move safe",
            err=True,
        )
    if write and plan is not None and plan.verdict == "blocked":
        click.echo("upgradeplan: not writing: the plan is blocked", err=True)
        ctx.exit(int(errors.ExitCode.HAZARD))
    if write:
        n = through_step or 1
        written = 0
        for path in api.write_patches(built, n):
            click.echo(f"wrote {path}", err=True)
            written += 1
        if not written:
            click.echo("upgradeplan: nothing to write: no pin or value of a file moves", err=True)
        total = len(patchset.steps)
        if written and total > n:
            click.echo(
                f"upgradeplan: wrote step{'s 1-' + str(n) if n > 1 else ' 1'} of {total}; run "
                "patch again once it has rolled out",
                err=True,
            )
        return
    if through_step is not None and all_steps:
        raise errors.BadInput("--step and --all-steps cannot be combined", hint="use one")
    if through_step is not None:  # show that step only
        chosen = tuple(i for i in patchset.items if i.step == through_step)
        patchset = replace(patchset, items=chosen)
    elif fmt == "text" and not all_steps:
        patchset = _first_step(patchset)
    if fmt == "dir":
        assert folder is not None
        _write_dir(folder, render_patches.dir_layout(patchset))
        click.echo(f"wrote {folder}", err=True)
    elif fmt == "json":
        click.echo(render_patches.render_json(patchset), nl=False)
    else:
        click.echo(render_patches.render_text(patchset), nl=False)
    if plan is not None and plan.verdict == "blocked":
        ctx.exit(int(errors.ExitCode.HAZARD))
