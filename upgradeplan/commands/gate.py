"""What ``check`` adds for CI: accepted-risk options and output, the error outputs of
``-o sarif`` / ``-o github``, and the repository root SARIF and Markdown links are relative to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from upgradeplan import errors
from upgradeplan.accept import to_dict

if TYPE_CHECKING:
    from pathlib import Path

    from upgradeplan.accept import Acceptance
    from upgradeplan.results import CheckResult

F = TypeVar("F", bound=Callable[..., Any])


def accept_options(f: F) -> F:
    """--accept-file PATH and --accept ID (repeatable)."""
    import click

    f = click.option(
        "--accept",
        "accept_ids",
        multiple=True,
        metavar="ID",
        help="Accept this hazard for this run: shown as accepted, not counted (repeatable).",
    )(f)
    f = click.option(
        "--accept-file",
        "accept_file",
        metavar="PATH",
        default=None,
        help="Accepted risks (hazard, where, reason, owner, expires); default: "
        ".upgradeplan.yaml in the working directory or a parent; '' for none.",
    )(f)
    return f


def root_of(gitops: str | None) -> Path:
    """The repository root URIs are relative to: the git work tree of --gitops (else of the
    working directory), else that folder."""
    return repository_root(gitops)


def repository_root(start: str | Path | None = None) -> Path:
    """The git work tree holding ``start`` (a file or folder; default the working directory);
    outside git, the working directory when ``start`` is under it, else ``start``'s folder.
    URIs in the log are relative to it."""
    import subprocess
    from pathlib import Path

    here = Path(start) if start else Path.cwd()
    folder = here if here.is_dir() else here.parent
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=folder if folder.is_dir() else None,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return Path(done.stdout.strip()).resolve()
    cwd = Path.cwd().resolve()
    if not folder.is_dir():
        return cwd
    inside = folder.resolve()
    return cwd if inside == cwd or cwd in inside.parents else inside


def error_output(output: str, exc: errors.UpgradeplanError, gitops: str | None = None) -> str:
    """What ``-o sarif`` / ``-o github`` print on stdout when the run fails (the one-line
    message still goes to stderr and the exit code is unchanged)."""
    location = getattr(exc, "location", "") or ""
    message = f"upgradeplan: error: {exc.one_line()}"
    if output == "sarif":
        from upgradeplan.render import sarif

        try:
            root: Path | None = root_of(gitops)
        except Exception:
            root = None
        return sarif.dumps(sarif.error_log(message, location, root=root))
    from upgradeplan.render import github

    return github.error_annotation(exc.one_line(), location) + "\n"


def accepted_text(results: Sequence[CheckResult], stale: Sequence[Acceptance]) -> str:
    """The text lines for accepted findings and stale acceptances ("" when there are none)."""
    out: list[str] = []
    for r in results:
        if not r.accepted:
            continue
        name = f" [{r.name}]" if r.name else ""
        out.append(f"Accepted risks{name} (shown, not counted):")
        for a in r.accepted:
            f = a.finding
            status = "applies" if f.status == "applies" else "may apply"
            out.append(f"  accepted       {f.severity:<8} {f.hazard} [{status}]")
            out.append(f"      {f.title}")
            out.append(f"      accepted: {a.acceptance.describe()}")
    if stale:
        out.append("Stale acceptances (they match no finding; remove them):")
        for acc in stale:
            out.append(f"  {acc.label}: {acc.describe()}")
    return "\n".join(out) + "\n" if out else ""


def with_acceptances(
    doc: dict[str, Any], results: Sequence[CheckResult], stale: Sequence[Acceptance]
) -> dict[str, Any]:
    """``check -o json``: each result's ``accepted`` findings, and the run's stale acceptances."""
    from upgradeplan.render import structured

    for entry, r in zip(doc.get("results", []), results, strict=False):
        if isinstance(entry, dict):
            entry["accepted"] = [
                {**structured.finding_to_dict(a.finding), "acceptance": to_dict(a.acceptance)}
                for a in r.accepted
            ]
    doc["stale_acceptances"] = [to_dict(a) for a in stale]
    return doc
