"""Replay real Renovate chart bumps of public Flux repositories through the PR gate.

Each commit is checked out in a detached worktree of a local clone and judged exactly as the
documented CI job does (docs/ci.md): ``upgradeplan check --gitops . --base <sha>~1`` in the
checkout of ``<sha>``, here with ``-o json`` to read what it said. The repositories stay
outside the project (clone them under /tmp/field/, one directory per ``owner+name``)::

    python bench/field_replay.py /tmp/field --per-repo 5 --markdown

prints one line per commit (repository, commit, bump, exit, what it said) and a summary: how
many commits exit 0 among those whose change moves no product of the knowledge, and whether
every moved pin is named in the output.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# the chart version line a Renovate bump rewrites: a HelmRelease's spec.chart.spec.version, an
# OCIRepository's spec.ref.tag or semver (an image tag inside values is not a chart bump)
_VERSION_LINE = {
    "helmrelease": re.compile(r"^[-+]\s*version:\s*\S"),
    "ocirepository": re.compile(r"^[-+]\s*(tag|semver):\s*\S"),
}
_CHART_FILES = re.compile(r"(helm-?release|ocirepository|oci-repository)[^/]*\.ya?ml$")


@dataclass
class Replayed:
    repo: str
    commit: str
    subject: str
    code: int
    said: str
    moved: list[str]
    named: bool
    known: bool  # the change moves a product of the knowledge


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False
    )
    return done.stdout


def bumps(repo: Path, per_repo: int, scan: int = 600) -> list[tuple[str, str]]:
    """Renovate commits that change a chart version line in a HelmRelease or OCIRepository
    file and nothing else (sha, subject), newest first."""
    out: list[tuple[str, str]] = []
    log = _git(repo, "log", f"-n{scan}", "--no-merges", "--format=%H%x09%an%x09%s")
    for line in log.splitlines():
        sha, author, subject = line.split("\t", 2)
        if "renovate" not in author.lower() and not re.search(r"helm|chart", subject, re.I):
            continue
        files = _git(repo, "show", "--format=", "--name-only", sha).split()
        if not files or not all(_CHART_FILES.search(f) for f in files):
            continue
        kinds = {"ocirepository" if "oci" in f.lower() else "helmrelease" for f in files}
        if len(kinds) != 1:
            continue
        pattern = _VERSION_LINE[kinds.pop()]
        diff = _git(repo, "show", "--format=", "-U0", sha).splitlines()
        changed = [d for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]
        if not changed or not all(pattern.match(d) for d in changed):
            continue
        out.append((sha, subject))
        if len(out) >= per_repo:
            break
    return out


def _checkout(repo: Path, into: Path, sha: str) -> None:
    """Check ``sha`` out into ``into``; files whose blob the clone lacks are left empty."""
    listing = _git(repo, "ls-tree", "-r", sha).splitlines()
    blobs = [ln.split(None, 3) for ln in listing if ln.split(None, 3)[1:2] == ["blob"]]
    query = "".join(f"{b[2]}\n" for b in blobs)
    done = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-check"],
        input=query,
        capture_output=True,
        text=True,
        check=False,
    )
    missing = {ln.split()[0] for ln in done.stdout.splitlines() if ln.endswith(" missing")}
    absent = [b[3] for b in blobs if b[2] in missing]
    excludes = [f":(exclude,literal){p}" for p in absent]
    _git(into, "checkout", sha, "--", ".", *excludes)
    for path in absent:
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).touch()


def replay(repo: Path, sha: str, subject: str, exe: list[str]) -> Replayed:
    work = Path(tempfile.mkdtemp(prefix="replay-"))
    try:
        # every file; a blob the clone lacks (some large images) becomes an empty file
        _git(repo, "worktree", "add", "--detach", "--no-checkout", "-f", str(work / "w"), sha)
        _git(work / "w", "reset", "-q")
        _checkout(repo, work / "w", sha)
        if not (work / "w").is_dir():
            return Replayed(repo.name, sha[:10], subject, -1, "not checked out", [], False, False)
        done = subprocess.run(
            [*exe, "check", "--gitops", ".", "--base", f"{sha}~1", "-o", "json"],
            cwd=work / "w",
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
    finally:
        _git(repo, "worktree", "remove", "--force", str(work / "w"))
        shutil.rmtree(work, ignore_errors=True)
    said, moved, named, known = _summary(done.stdout, done.stderr)
    return Replayed(repo.name, sha[:10], subject, done.returncode, said, moved, named, known)


def _summary(stdout: str, stderr: str) -> tuple[str, list[str], bool, bool]:
    try:
        doc = json.loads(stdout)
    except ValueError:
        return (stderr.strip().splitlines() or ["(no output)"])[-1][:160], [], False, False
    moved: list[str] = []
    known = False
    said: list[str] = []
    for r in doc.get("results", []):
        for m in r.get("moved", []):
            moved.append(f"{m['name']} {m.get('before')} → {m.get('after')}")
            known = known or bool(m.get("product"))
        said.append(str(r.get("verdict")))
        said += [u.get("source", "") + " unread" for u in r.get("unreadable", [])][:1]
    return "; ".join(dict.fromkeys(said))[:160], moved, bool(moved), known


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", type=Path, help="directory of clones (owner+name)")
    p.add_argument("--per-repo", type=int, default=5)
    p.add_argument("--repos", nargs="*", default=None)
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    exe = [sys.executable, "-m", "upgradeplan"]
    names = args.repos or sorted(d.name for d in args.root.iterdir() if (d / ".git").exists())
    rows: list[Replayed] = []
    for name in names:
        repo = args.root / name
        for sha, subject in bumps(repo, args.per_repo):
            row = replay(repo, sha, subject, exe)
            rows.append(row)
            moved = ", ".join(row.moved) or "-"
            if args.markdown:
                print(f"| {row.repo} | {row.commit} | {moved} | {row.code} | {row.said} |")
            else:
                print(f"{row.repo} {row.commit} exit {row.code} moved: {moved} | {row.said}")
            sys.stdout.flush()
    unknown = [r for r in rows if not r.known]
    green = [r for r in unknown if r.code == 0]
    print(
        f"\n{len(rows)} commits; {len(green)}/{len(unknown)} exit 0 among those moving no "
        f"product of the knowledge; moved pins named in {sum(r.named for r in rows)}/{len(rows)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
