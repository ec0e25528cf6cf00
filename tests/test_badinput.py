"""The bad-input corpus: every option that takes a file or stdin, fed files wrong in bytes, in
kind or in type. Each run must end in exit 2 (bad input) or 4 (undetermined) with a one-line
message, within 5 s and 300 MiB, never exit 1 and never a traceback.

The files wrong in kind or type are in ``tests/badinput/`` (see its README); the byte-level
cases are made here. All cases run in one child process (``support/badinput_run.py``), each
as the console script would run it, so the interpreter and the knowledge load once; the
child reports each case's seconds and its peak memory after the case (a high-water mark, so
a case that grew past the bound is the first one reported over it).
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, fixture_path

CORPUS = REPO / "tests" / "badinput"
SECONDS = 5.0
PEAK = 300 * 1024 * 1024
TO = ("--to", "agent-platform=4.8.1")
STATED = ("--installed", "agent-platform=4.7.18", "--installed", "kubernetes=1.35.0")


def _bytes() -> dict[str, bytes]:
    """Byte-level cases: each a whole file."""
    rng = random.Random(31)
    return {
        "empty": b"",
        "comments-only": b"# nothing here\n# at all\n",
        "nul-byte": b"apiVersion: v1\nkind: List\nitems:\n- kind: Namespace\n  name: a\x00b\n",
        "control-bytes": b"apiVersion: v1\nkind: \x1b[31mList\x07\nitems: []\n",
        "invalid-utf8": b"apiVersion: v1\nkind: \xff\xfeList\nitems: []\n",
        "utf16": "apiVersion: v1\nkind: List\nitems: []\n".encode("utf-16"),
        "utf8-bom-only": b"\xef\xbb\xbf",
        "binary": bytes(rng.randrange(256) for _ in range(4096)),
        "huge-scalar": b"apiVersion: v1\nkind: Namespace\nmetadata: " + b"x" * (16 << 20) + b"\n",
        "long-line-comment": b"# " + b"y" * (16 << 20) + b"\n",
        "deep-json": b"[" * 100_000 + b"]" * 100_000,
        "deep-yaml": b"apiVersion: v1\nkind: List\nitems: " + b"[" * 20_000 + b"]" * 20_000 + b"\n",
        "lone-surrogate": b'apiVersion: v1\nkind: "\\ud800"\nitems: []\n',
        "yaml-directive": b"%YAML 9.9\n---\nkind: List\n",
        "python-tag": b"!!python/object/apply:os.system ['true']\n",
        "json-nan": b'{"apiVersion": "v1", "kind": "List", "items": [NaN]}',
    }


BYTES = _bytes()


# cases run each in a process of its own: their memory is theirs alone
ALONE = ("huge-scalar", "long-line-comment")


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    stdin: bytes | None = None

    @property
    def alone(self) -> bool:
        return self.id.split("/")[:2][-1] in ALONE


def _kb_dir(root: Path, name: str, data: bytes) -> Path:
    folder = root / "kb" / name
    (folder / "hazards").mkdir(parents=True)
    (folder / "hazards" / "corpus.yaml").write_bytes(data)
    return folder


def _tree(root: Path, name: str, data: bytes, file: str) -> Path:
    """A copy of the S1 tree with ``file`` among its kustomization's resources (or, for a
    ``kustomization-*`` file, as its kustomization)."""
    tree = root / "trees" / name
    shutil.copytree(fixture_path("gitops", "s1"), tree)
    if file.startswith("kustomization-"):
        (tree / "kustomization.yaml").write_bytes(data)
        return tree
    (tree / file).write_bytes(data)
    kust = tree / "kustomization.yaml"
    text = kust.read_text(encoding="utf-8")
    kust.write_text(text.replace("resources:\n", f"resources:\n  - {file}\n"), encoding="utf-8")
    return tree


def _cases(root: Path) -> Iterator[Case]:
    files = root / "files"
    files.mkdir()
    # the byte-level cases through every option that takes a file
    for name, data in BYTES.items():
        path = files / f"{name}.yaml"
        path.write_bytes(data)
        f = str(path)
        yield Case(f"bytes/{name}/check --snapshot FILE", ("check", "--snapshot", f, *TO))
        yield Case(f"bytes/{name}/check --snapshot -", ("check", "--snapshot", "-", *TO), data)
        yield Case(f"bytes/{name}/scan --snapshot FILE", ("scan", "--snapshot", f))
        yield Case(f"bytes/{name}/fleet FILE", ("fleet", f, *TO))
        yield Case(f"bytes/{name}/check --gitops FILE", ("check", "--gitops", f, *TO))
        yield Case(f"bytes/{name}/check --accept-file", ("check", *STATED, *TO, "--accept-file", f))
        yield Case(f"bytes/{name}/scan --kubeconfig", ("scan", "--kubeconfig", f))
        if name != "deep-yaml":  # (deep nesting in knowledge files: the YAML readers' bounds)
            kb = str(_kb_dir(root, name, data))
            yield Case(f"bytes/{name}/check --kb", ("--kb", kb, "check", *STATED, *TO))
        if name not in ("empty", "comments-only", "utf8-bom-only", "long-line-comment"):
            # (an empty or comment-only file in a tree is no file of the installation)
            tree = str(_tree(root, name, data, "extra.yaml"))
            yield Case(f"bytes/{name}/check --gitops TREE", ("check", "--gitops", tree, *TO))
    # files wrong in kind or type, each through the options that take its sort
    for path in sorted((CORPUS / "snapshot").iterdir()):
        f, n = str(path), path.name
        yield Case(f"snapshot/{n}/check --snapshot FILE", ("check", "--snapshot", f, *TO))
        yield Case(
            f"snapshot/{n}/plan --snapshot -", ("plan", "--snapshot", "-", *TO), path.read_bytes()
        )
        yield Case(f"snapshot/{n}/patch --snapshot FILE", ("patch", "--snapshot", f, *TO))
        yield Case(
            f"snapshot/{n}/explain --snapshot FILE",
            ("explain", "harness-gap-skipping-to-481", "--snapshot", f),
        )
        yield Case(f"snapshot/{n}/fleet FILE", ("fleet", f, *TO))
    for path in sorted((CORPUS / "accept").iterdir()):
        f, n = str(path), path.name
        yield Case(f"accept/{n}/check --accept-file", ("check", *STATED, *TO, "--accept-file", f))
    for path in sorted((CORPUS / "kubeconfig").iterdir()):
        f, n = str(path), path.name
        yield Case(
            f"kubeconfig/{n}/scan --kubeconfig",
            ("scan", "--kubeconfig", f, "--request-timeout", "0.5"),
        )
        yield Case(
            f"kubeconfig/{n}/check --kubeconfig",
            ("check", "--kubeconfig", f, *TO, "--request-timeout", "0.5"),
        )
        yield Case(
            f"kubeconfig/{n}/fleet --kubeconfig",
            ("fleet", "--kubeconfig", f, *TO, "--request-timeout", "0.5"),
        )
    for path in sorted((CORPUS / "gitops").iterdir()):
        f, n = str(path), path.name
        yield Case(f"gitops/{n}/check --gitops FILE", ("check", "--gitops", f, *TO))
        tree = str(_tree(root, n, path.read_bytes(), n))
        yield Case(f"gitops/{n}/check --gitops TREE", ("check", "--gitops", tree, *TO))
        yield Case(f"gitops/{n}/patch --gitops TREE", ("patch", "--gitops", tree, *TO))
        yield Case(f"gitops/{n}/renovate --gitops TREE", ("renovate", "--gitops", tree))
    for path in sorted((CORPUS / "kb").iterdir()):
        kb = str(_kb_dir(root, path.stem, path.read_bytes()))
        yield Case(f"kb/{path.name}/check --kb", ("--kb", kb, "check", *STATED, *TO))
    # a few with --debug: the traceback is added, the exit code kept
    for name in ("nul-byte", "binary"):
        f = str(files / f"{name}.yaml")
        yield Case(
            f"debug/{name}/check --snapshot FILE", ("--debug", "check", "--snapshot", f, *TO)
        )


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Case, dict[str, Any]]]:
    root = tmp_path_factory.mktemp("badinput")
    cases = list(_cases(root))
    batches = [[c] for c in cases if c.alone] + [[c for c in cases if not c.alone]]
    got: dict[str, dict[str, Any]] = {}
    stopped = ""
    for batch in batches:
        payload = [
            {
                "id": c.id,
                "args": list(c.args),
                "stdin": base64.b64encode(c.stdin).decode() if c.stdin is not None else None,
            }
            for c in batch
        ]
        done = subprocess.run(
            [sys.executable, str(REPO / "tests" / "support" / "badinput_run.py")],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=root,
            timeout=1800,
        )
        got.update((r["id"], r) for r in map(json.loads, done.stdout.splitlines()))
        stopped += done.stderr[-2000:]
    return {c.id: (c, got.get(c.id, {"missing": stopped})) for c in cases}


def _ids() -> list[str]:
    """The case ids, made from a throw-away folder (the fixture makes the real one)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return [c.id for c in _cases(Path(tmp))]


IDS = _ids()


@pytest.mark.parametrize("case_id", IDS)
def test_bad_input_is_exit_2_or_4_in_one_line_in_time_and_memory(
    results: dict[str, tuple[Case, dict[str, Any]]], case_id: str
) -> None:
    case, r = results[case_id]
    assert "missing" not in r, f"no result (the run stopped): {r.get('missing')}"
    said = r["stdout"] + r["stderr"]
    debug = case.args[0] == "--debug"
    assert r["code"] in (2, 4), (r["code"], r["exception"], said[-1500:])
    assert ("Traceback" in r["stderr"]) == debug, said[-1500:]
    if r["code"] == 2 and not debug:
        lines = r["stderr"].splitlines()
        assert len(lines) == 1 and lines[0].startswith("upgradeplan: error: "), r["stderr"]
    assert r["seconds"] < SECONDS, f"took {r['seconds']:.1f} s of CPU"
    assert r["peak"] < PEAK, f"peak {r['peak'] / 2**20:.0f} MiB"


def test_the_corpus_count_is_the_one_docs_reliability_states() -> None:
    text = (REPO / "docs" / "reliability.md").read_text(encoding="utf-8")
    assert f"**{len(IDS)} cases**" in text, f"docs/reliability.md should state {len(IDS)}"


def test_a_wrong_accept_file_says_what_it_is_and_what_was_expected() -> None:
    from click.testing import CliRunner

    from upgradeplan.cli import cli

    path = CORPUS / "accept" / "is-a-snapshot.yaml"
    result = CliRunner().invoke(cli, ["check", *STATED, *TO, "--accept-file", str(path)])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert "is-a-snapshot.yaml:1: not an accept file: it is an upgradeplan snapshot; " in line
    assert "expected a mapping with a list of acceptances under 'accept'" in line


def test_a_nul_byte_in_a_tree_is_named_on_one_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from upgradeplan.cli import cli

    tree = _tree(tmp_path, "nul", BYTES["nul-byte"], "extra.yaml")
    result = CliRunner().invoke(cli, ["scan", "--gitops", str(tree)])
    assert result.exit_code == 4, result.output
    named = [line for line in result.output.splitlines() if "extra.yaml" in line]
    assert named and all("U+0000" in line or "#x0000" in line for line in named), named
    assert not any(line.lstrip().startswith('in "<') for line in result.output.splitlines())
