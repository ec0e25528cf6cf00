"""``upgradeplan patch``: the migration patches of a plan, to stdout, a folder, or in place."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from upgradeplan import api, errors
from upgradeplan.commands.options import inputs_from, kb_dirs, state_options, target_options
from upgradeplan.model import KnowledgeBase, Plan, State
from upgradeplan.planner.fixes import current_actions


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


def _files_named(plan: Plan | None, state: State) -> dict[str, str]:
    """The text of every file a fact or move names (file:line), as it is now."""
    from upgradeplan.render.patchset import files_of

    sources = [f.source for f in state]
    if plan is not None:
        sources += [m.source for s in plan.steps for m in s.moves if m.source is not None]
    out: dict[str, str] = {}
    for source in sources:
        loc = files_of(source)
        if loc is None or loc[0] in out:
            continue
        try:
            out[loc[0]] = Path(loc[0]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


def build_patches(
    kb: KnowledgeBase,
    state: State,
    to: Sequence[str],
    *,
    holds: Sequence[str] = (),
    files: dict[str, str] | None = None,
) -> tuple[Any, Plan | None]:
    """The :class:`~upgradeplan.render.patches.PatchSet` for ``state`` (and its plan).

    With targets: the plan's steps. Without: fixes for the installation as it is (step 0)
    and, when the installation is in trouble, the plan to the newest release.
    """
    from upgradeplan import planner
    from upgradeplan.render import patches

    plan: Plan | None
    if to:
        plan = api.plan(kb, state, to, holds=holds, fail_on="blocking").plan
        now = plan.state_findings if plan is not None else ()
    else:
        checked = api.check(kb, state, (), holds=holds)
        plan = checked.recommended
        now = planner.current_findings(kb, state)
    planned = {a.migration for s in plan.steps[:1] for a in s.actions} if plan else set()
    fixes = current_actions(kb, state, now, holds=holds, skip=sorted(planned))
    if files is None:
        files = _files_named(plan, state)
    empty = Plan(
        schema_version=1,
        targets=(),
        current={},
        direct=_empty_jump(),
        steps=(),
        verdict="safe",
    )
    return patches.build(plan or empty, state, files=files, current_actions=fixes, kb=kb), plan


def _empty_jump() -> Any:
    from upgradeplan.model import Jump

    return Jump(findings=(), verdict="safe")


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
@click.pass_context
def patch(
    ctx: click.Context,
    /,
    output: str,
    write: bool,
    through_step: int | None,
    to: tuple[str, ...],
    holds: tuple[str, ...],
    **params: Any,
) -> None:
    """The migration patches of a plan (or, without --to, of the installation as it is).

    \b
    Pin and values moves become unified diffs of the files they were read from
    (--gitops); HelmRelease changes kustomize strategic-merge patches; workload changes
    JSON 6902 patches; new objects manifests; the rest shell commands, every substituted
    value shell-quoted.
    """
    from upgradeplan.render import patches as render_patches
    from upgradeplan.render.yamledit import ensure_unchanged, write_atomic

    fmt, folder = _output(output)
    inputs = inputs_from(params)
    if not inputs.any:
        raise errors.BadInput(
            "no installation given",
            hint="state it with --installed/--pin/--fact, or read it with --gitops PATH, "
            "--snapshot FILE or --kubeconfig",
        )
    kb = api.load_kb(kb_dirs(ctx))
    gathered = api.gather(kb, inputs)
    if len(gathered) != 1 or gathered[0].state is None:
        if len(gathered) > 1:
            raise errors.BadInput(
                "patch works on one installation", hint="give one --context, not several"
            )
        raise errors.BadInput(f"cannot read the installation: {gathered[0].error}")
    state = gathered[0].state
    patchset, plan = build_patches(kb, state, to, holds=holds)
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
        changes = patchset.file_changes(n)
        if not changes:
            click.echo("upgradeplan: nothing to write: no pin or value of a file moves", err=True)
        for change in changes:  # every file first, so a stale one stops all writing
            ensure_unchanged(change.path, change.original_hash)
        for change in changes:
            write_atomic(change.path, change.result, expected_hash=change.original_hash)
            click.echo(f"wrote {change.path}", err=True)
        total = len(patchset.steps)
        if changes and total > n:
            click.echo(
                f"upgradeplan: wrote step{'s 1-' + str(n) if n > 1 else ' 1'} of {total}; run "
                "patch again once it has rolled out",
                err=True,
            )
        return
    if through_step is not None:  # show that step only
        from dataclasses import replace

        chosen = tuple(i for i in patchset.items if i.step == through_step)
        patchset = replace(patchset, items=chosen)
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
