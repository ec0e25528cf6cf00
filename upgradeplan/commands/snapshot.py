"""snapshot: a redacted snapshot of a live cluster, written for offline use."""

from __future__ import annotations

import click

from upgradeplan import api, errors
from upgradeplan.commands.options import inputs_from, kb_dirs, request_timeout_option
from upgradeplan.commands.scan import say_unread, write_atomically
from upgradeplan.fleet import s3
from upgradeplan.unreadable import failures


def snapshot_output(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``snapshot -o``: a format (yaml, json) or an ``s3://`` destination."""
    if value in ("yaml", "json") or value.startswith("s3://"):
        return value
    raise click.BadParameter(f"{value!r} is not yaml, json or an s3:// URL", ctx, param)


@click.command("snapshot")
@click.option(
    "--kubeconfig",
    "kubeconfig",
    metavar="PATH",
    default=None,
    help="Kubeconfig (else $KUBECONFIG, ~/.kube/config).",
)
@click.option(
    "--context", "contexts", multiple=True, metavar="NAME", help="Context to read (repeatable)."
)
@click.option(
    "--all-contexts", "all_contexts", is_flag=True, default=False, help="Read every context."
)
@request_timeout_option
@click.option(
    "-o",
    "--output",
    "output",
    metavar="yaml|json|s3://BUCKET/PREFIX/",
    callback=snapshot_output,
    default="yaml",
    show_default=True,
    help="Snapshot format, or s3://BUCKET/PREFIX/ to write to object storage (the s3 "
    "extra; one object per context under a prefix ending in '/', docs/fleet.md).",
)
@click.option(
    "-f",
    "--file",
    "file",
    metavar="FILE",
    default=None,
    help="Write here (atomically) instead of stdout; an s3:// URL works as with -o.",
)
@click.pass_context
def snapshot(
    ctx: click.Context,
    /,
    kubeconfig: str | None,
    contexts: tuple[str, ...],
    all_contexts: bool,
    request_timeout: float | None,
    output: str,
    file: str | None,
) -> None:
    """Write a redacted snapshot of a live cluster: facts only, never Secret data.

    \b
    Replay it offline with `upgradeplan check --snapshot FILE --to …`. Keys are sorted and
    no timestamps are written: two snapshots of the same cluster are byte-identical.
    Exit codes: 0 written, 1 nothing could be read, 2 bad input, 4 some context or some
    source of one could not be read (named on stderr and in the snapshot's unread list).

    \b
    Examples:
      upgradeplan snapshot --context prod -f prod.yaml
      upgradeplan snapshot --all-contexts -o json > fleet.json
      upgradeplan snapshot -o s3://bucket/snapshots/
    """
    url = (
        output if output.startswith("s3://") else file if (file or "").startswith("s3://") else None
    )
    if url is not None:
        s3.require()  # exit 2 naming the extra before the cluster is read
        output = (
            "json" if url.endswith(".json") else output if output in ("yaml", "json") else "yaml"
        )
    kb = api.load_kb(kb_dirs(ctx))
    inputs = inputs_from(
        {
            "kubeconfig": kubeconfig,
            "contexts": contexts,
            "all_contexts": all_contexts,
            "request_timeout": request_timeout,
        }
    )
    taken = api.snapshot(
        kb,
        inputs.kubeconfig,
        inputs.contexts,
        all_contexts=inputs.all_contexts,
        timeout=inputs.request_timeout,
        namespace=inputs.namespace,
    )
    states, failed = list(taken.states), taken.failed
    for name, error in failed:
        click.echo(f"upgradeplan: context {name!r} could not be read: {error}", err=True)
    for state in states:
        say_unread(state.name, state)
    if not states:
        names = ", ".join(f"{name} ({error})" for name, error in failed)
        raise errors.ClusterUnreachable(f"no context could be read: {names}")
    if url is not None:
        for where in s3.write_states(url, states, output):
            click.echo(f"upgradeplan: wrote {where}", err=True)
        ctx.exit(int(errors.ExitCode.UNDETERMINED) if failed else int(errors.ExitCode.SAFE))
    text = api.snapshot_text(states, output)
    if file and file != "-":
        write_atomically(file, text)
        click.echo(f"upgradeplan: wrote {file} ({', '.join(s.name for s in states)})", err=True)
    else:
        click.echo(text, nl=False)
    partly = failed or any(failures(s.unread) for s in states)
    ctx.exit(int(errors.ExitCode.UNDETERMINED) if partly else int(errors.ExitCode.SAFE))
