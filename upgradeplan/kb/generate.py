"""Release files from a chart's git tags: ``kb releases-from-git``.

A local clone's tags that match a pattern (``kube-prometheus-stack-{version}``) name the chart's
releases; at each tag the chart's ``Chart.yaml`` gives ``version``, ``appVersion`` and
``kubeVersion``, the tag its date (the tag's, or its commit's for a lightweight tag). Each
release becomes ``<out>/<version>.yaml`` in the knowledge format, saying in a comment that it is
generated, by which command, from which repository and commit. Git is run twice in all
(``for-each-ref``, then one ``cat-file --batch`` for every Chart.yaml), so a line of a thousand
tags takes seconds, not minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from typing import TYPE_CHECKING

from msgspec import Struct

from upgradeplan.errors import BadInput
from upgradeplan.versions import compare, parse_version
from upgradeplan.yamlload import YamlError, load_one

if TYPE_CHECKING:
    from upgradeplan.versions import Version


class Tagged(Struct, frozen=True):
    """One chart release read at its tag."""

    version: str
    date: str  # YYYY-MM-DD
    commit: str
    app_version: str
    kube_version: str


def _git(clone: str, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", clone, *args], input=stdin, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise BadInput("git is not installed", hint="install git to read a clone's tags") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BadInput(
            f"--repo {clone}: git {args[0]} failed ({why[-1] if why else done.returncode})",
            hint="pass a local git clone of the chart's repository",
        )
    return done.stdout


def tag_pattern(template: str) -> re.Pattern[str]:
    """``x-{version}`` as a regular expression whose group ``version`` is the version."""
    if template.count("{version}") != 1:
        raise BadInput(
            f"--tag {template!r} must hold {{version}} once",
            hint="for example --tag 'kube-prometheus-stack-{version}'",
        )
    head, tail = template.split("{version}")
    return re.compile(
        re.escape(head) + r"(?P<version>v?\d+\.\d+\.\d+[0-9A-Za-z.+-]*)" + re.escape(tail)
    )


def read_tags(clone: str, chart_dir: str, template: str) -> list[Tagged]:
    """Every release of the chart at ``chart_dir`` whose tag matches ``template``, by version."""

    if not os.path.isdir(clone):
        raise BadInput(f"--repo {clone!r} is not a directory", hint="pass a local git clone")
    rx = tag_pattern(template)
    fmt = "%(refname:short)%09%(creatordate:short)%09%(objectname)%09%(*objectname)"
    rows = []
    for line in _git(clone, "for-each-ref", f"--format={fmt}", "refs/tags").decode().splitlines():
        tag, date, obj, peeled = line.split("\t")
        m = rx.fullmatch(tag)
        if m:
            rows.append((tag, date, peeled or obj))
    if not rows:
        raise BadInput(
            f"--repo {clone}: no tag matches {template!r}",
            hint="check --tag (git tag -l lists the clone's tags)",
        )
    path = chart_dir.strip("/")
    batch = "".join(f"{commit}:{path}/Chart.yaml\n" for _tag, _date, commit in rows).encode()
    out = _git(clone, "cat-file", "--batch", stdin=batch)
    found: list[tuple[Version, Tagged]] = []
    pos = 0
    for tag, date, commit in rows:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode()
        pos = end + 1
        if header.endswith(" missing"):
            continue  # the tag's tree has no Chart.yaml at chart_dir
        size = int(header.rsplit(" ", 1)[1])
        text = out[pos : pos + size].decode("utf-8", "replace")
        pos += size + 1
        try:
            chart = load_one(text)
        except YamlError:
            continue
        if not isinstance(chart, dict):
            continue
        version = str(chart.get("version") or rx.fullmatch(tag).group("version"))  # type: ignore[union-attr]
        try:
            parsed = parse_version(version)
        except ValueError:
            continue
        found.append(
            (
                parsed,
                Tagged(
                    version=version,
                    date=date,
                    commit=commit,
                    app_version=str(chart.get("appVersion") or ""),
                    kube_version=str(chart.get("kubeVersion") or ""),
                ),
            )
        )
    import functools

    def by_version(a: tuple[Version, Tagged], b: tuple[Version, Tagged]) -> int:
        return compare(a[0], b[0])

    found.sort(key=functools.cmp_to_key(by_version))
    seen: dict[str, Tagged] = {}
    for _parsed, t in found:
        seen.setdefault(t.version, t)
    return list(seen.values())


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def release_text(product: str, t: Tagged, origin: str, command: str) -> str:
    """One release file: the generated-by comment, then the release in the knowledge format."""
    lines = [
        f"# Generated by `{command}`",
        f"# from {origin} at commit {t.commit}; regenerate it rather than edit it.",
        "schema_version: 1",
        "kind: release",
        f"product: {product}",
        f"version: {_q(t.version)}",
        f"date: {_q(t.date)}",
        f"title: {_q(f'{product} {t.version}')}",
    ]
    if t.app_version:
        lines.append(f"app_version: {_q(t.app_version)}")
    if t.kube_version:
        lines.append(f"kube_version: {_q(t.kube_version)}")
    return "\n".join(lines) + "\n"


def origin_of(clone: str) -> str:
    """The clone's ``origin`` URL (credentials dropped), else its directory's name."""
    try:
        url = _git(clone, "config", "--get", "remote.origin.url").decode().strip()
    except BadInput:
        url = ""
    url = re.sub(r"//[^/@]*@", "//", url)  # never a credential of the URL
    if not url or os.path.isabs(url) or url.startswith(("/", ".")):
        return os.path.basename(os.path.realpath(clone))
    return url


def write_releases(
    tagged: Sequence[Tagged], product: str, out_dir: str, origin: str, command: str
) -> tuple[int, int]:
    """Write (or rewrite) one file per release; returns (written, unchanged)."""
    os.makedirs(out_dir, exist_ok=True)
    written = unchanged = 0
    for t in tagged:
        path = os.path.join(out_dir, f"{t.version}.yaml")
        text = release_text(product, t, origin, command)
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() == text:
                    unchanged += 1
                    continue
        except FileNotFoundError:
            pass
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        written += 1
    return written, unchanged
