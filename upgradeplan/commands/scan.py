"""scan and snapshot: what an installation runs and pins, with the provenance of every fact."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import click
from msgspec.structs import replace

from upgradeplan import api, errors
from upgradeplan.commands.fleet import snapshot_output
from upgradeplan.commands.options import (
    inputs_from,
    kb_dirs,
    output_option,
    request_timeout_option,
    state_options,
)
from upgradeplan.fleet import s3
from upgradeplan.model import State
from upgradeplan.render.structured import serialise
from upgradeplan.unreadable import failures

SCAN_FORMATS = ("text", "json", "yaml")


def _value(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(value.items())) or "{}"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "[]"
    return str(value)


def state_text(state: State) -> list[str]:
    """One line per fact (key = value) with its source under it; then what was unreadable."""
    lines: list[str] = []
    for fact in state:
        lines.append(f"  {fact.key} = {_value(fact.value)}")
        lines.append(f"      from {fact.source}")
    if not state.facts:
        lines.append("  (no facts)")
    for key in sorted(state.unreadable):
        lines.append(f"  unknown {key}.*: {state.unreadable[key]}")
    return lines


def render_scan(gathered: Sequence[api.Gathered]) -> str:
    out: list[str] = []
    for g in gathered:
        if out:
            out.append("")
        if g.state is None:
            out.append(f"{g.name}: could not be read: {g.error}")
            continue
        out.append(f"{g.name or 'stated'}: {len(g.state.facts)} facts")
        out.extend(state_text(g.state))
    return "\n".join(out) + "\n"


def scan_document(gathered: Sequence[api.Gathered], exit_code: int) -> dict[str, Any]:
    """What ``scan -o json|yaml`` prints."""
    results: list[dict[str, Any]] = []
    for g in gathered:
        if g.state is None:
            results.append({"name": g.name, "error": g.error})
        else:
            results.append({"name": g.name, "state": api.state_document(g.state)})
    return {"schema_version": 1, "command": "scan", "exit_code": exit_code, "results": results}


def _exit_code(gathered: Sequence[api.Gathered]) -> int:
    """4 when a context, or a source of one, could not be read (its facts are unknown)."""
    if any(g.state is None or failures(g.state.unread) for g in gathered):
        return int(errors.ExitCode.UNDETERMINED)
    return int(errors.ExitCode.SAFE)


def _say_unread(name: str, state: State) -> None:
    for rec in state.unread:
        click.echo(f"upgradeplan: {name}: could not read {rec}", err=True)


@click.command("scan")
@state_options
@output_option(SCAN_FORMATS)
@click.pass_context
def scan(ctx: click.Context, /, output: str, **params: Any) -> None:
    """Print what an installation runs and pins, and where each fact was read.

    \b
    Reads a live cluster (--kubeconfig, --context, --all-contexts; one result per
    context), snapshots, GitOps files and stated facts. Without any input it reads the
    current context of $KUBECONFIG (or ~/.kube/config).
    Exit codes: 0 read, 1 nothing could be read, 2 bad input, 4 a context or a source of
    one could not be read (named on stderr; the rest is printed).

    \b
    Examples:
      upgradeplan scan
      kubectl upgradeplan scan --context prod -n flux-giantswarm
      upgradeplan scan --gitops . -o yaml
    """
    inputs = inputs_from(params)
    if not inputs.any:
        inputs = replace(
            inputs,
            kubeconfig=os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config"),
        )
    kb = api.load_kb(kb_dirs(ctx))
    gathered = api.gather(kb, inputs)
    code = _exit_code(gathered)
    for g in gathered:
        if g.state is None:
            click.echo(f"upgradeplan: context {g.name!r} could not be read: {g.error}", err=True)
        else:
            _say_unread(g.name, g.state)
    if output == "text":
        click.echo(render_scan(gathered), nl=False)
    else:
        doc = scan_document(gathered, code)
        click.echo(serialise(doc, output), nl=False)
    ctx.exit(code)


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory."""
    if os.path.lexists(path) and not os.path.isfile(path):  # a device, FIFO, directory...
        raise errors.BadInput(
            f"{path}: exists and is not a regular file; not writing",
            hint="-f writes a regular file; choose another path",
        )
    import tempfile  # here: `scan` never writes a file

    path = os.path.realpath(path)  # a symlinked snapshot file is written through, kept a link
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".upgradeplan-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise errors.BadInput(f"{path}: cannot write ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
        _say_unread(state.name, state)
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
