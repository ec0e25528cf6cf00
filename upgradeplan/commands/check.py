"""check: the move judged as asked, with an exit code for CI.

A thin click command over :mod:`upgradeplan.commands.judging`, in its own module so that a
check builds only its own options, not those of plan, explain and diagnose
(:mod:`upgradeplan.commands.planning`).
"""

from __future__ import annotations

from typing import Any

import click

from upgradeplan import errors
from upgradeplan.commands import judging
from upgradeplan.commands.gate import accept_options
from upgradeplan.commands.options import judging_options

CHECK_FORMATS = ("text", "json", "yaml", "markdown", "sarif", "github")


def chart_options(f: Any) -> Any:
    """The checks computed from the charts of the pins a change moves (--base)."""
    f = click.option(
        "--charts",
        "charts_dir",
        type=click.Path(exists=True, file_okay=False),
        help="Read the chart archives of moved pins from DIR (<chart>-<version>.tgz), "
        "never from the network; implies --chart-checks require.",
    )(f)
    f = click.option(
        "--no-chart-checks",
        "no_chart_checks",
        is_flag=True,
        help="Same as --chart-checks off.",
    )(f)
    return click.option(
        "--chart-checks",
        "chart_checks",
        type=click.Choice(["auto", "require", "off"]),
        default="auto",
        show_default=True,
        envvar="UPGRADEPLAN_CHART_CHECKS",
        help="With --base: compare the chart archives of every moved pin (CRDs, values keys, "
        "kubeVersion, appVersion). auto: fetched with a short deadline, an archive that "
        "cannot be read is only reported; require: it makes the check exit 4 "
        "(docs/exit-codes.md).",
    )(f)


@click.command("check")
@judging_options(CHECK_FORMATS)
@accept_options
@chart_options
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
    obj = ctx.find_root().obj
    try:
        text, code = judging.check(
            obj,
            output=output,
            fail_on=fail_on,
            to=to,
            holds=holds,
            accept_file=accept_file,
            accept_ids=accept_ids,
            **params,
        )
    except errors.UpgradeplanError as exc:
        shown = judging.error_text(output, exc, params)
        if shown is not None:
            click.echo(shown, nl=False)
        raise
    click.echo(text, nl=False, color=judging.use_color(obj))
    ctx.exit(code)
