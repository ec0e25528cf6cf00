"""scan: what an installation runs and pins, with the provenance of every fact."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import click
from msgspec.structs import replace

from upgradeplan import api, errors
from upgradeplan.commands.options import (
    inputs_from,
    kb_dirs,
    output_option,
    state_options,
)
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


def say_unread(name: str, state: State) -> None:
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
            say_unread(g.name, g.state)
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
