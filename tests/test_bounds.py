"""Every read ends: inputs that never end, loop, or leave the tree end within 10 s with a
clear message, and a secret (a token with a line break) never appears in any output."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.fakeapi import FakeAPIFactory, fake_api
from support.scenarios import CLUSTER_FIXTURES

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

GITOPS = Path(__file__).resolve().parent / "fixtures" / "gitops"


def upgradeplan(*args: str, timeout: float = 10) -> tuple[int, str, str, float]:
    """Run the CLI as a user does (a process, so a hang is a failed test, not a stuck one)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "upgradeplan", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_as_snapshot_is_refused_by_name(tmp_path: Path, special: str) -> None:
    path = special
    if special == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)  # nobody ever writes it: opening it would block for ever
    code, out, err, took = upgradeplan("check", "--snapshot", path, "--to", "4.8.1")
    assert code == 2 and took < 10
    kind = "FIFO" if special == "fifo" else "character device"
    assert f"{path}: is a {kind}" in err and "not a regular file" in err and out == ""


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_as_kubeconfig_or_token_file_is_refused_by_name(
    tmp_path: Path, special: str
) -> None:
    path = special
    if special == "fifo":
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    kind = "FIFO" if special == "fifo" else "character device"
    code, _, err, took = upgradeplan("check", "--kubeconfig", path, "--to", "4.8.1")
    assert code == 2 and took < 10
    assert f"kubeconfig {path}: is a {kind}" in err
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        f"users: [{{name: u, user: {{tokenFile: '{path}'}}}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n",
        encoding="utf-8",
    )
    code, _, err, took = upgradeplan("scan", "--kubeconfig", str(kubeconfig))
    assert took < 10 and code != 0 and "Traceback" not in err
    assert f"tokenFile {path} of user 'u': is a {kind}" in err


def test_a_fifo_in_a_gitops_tree_is_refused_by_name(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    shutil.copytree(GITOPS / "s1", tree / "apps")
    os.mkfifo(tree / "apps" / "pipe.yaml")
    code, _, err, took = upgradeplan("scan", "--gitops", str(tree))
    assert code == 2 and took < 10
    assert "apps/pipe.yaml: is a FIFO (named pipe), not a regular file" in err


def test_a_snapshot_nested_too_deep_is_bad_input(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 10_000 + "]" * 10_000, encoding="utf-8")
    code, _, err, _ = upgradeplan("check", "--snapshot", str(deep))
    assert code == 2 and "nested too deeply" in err and "Traceback" not in err


def test_a_tree_with_symlink_loops_and_a_link_out_ends_and_reads_nothing_outside(
    tmp_path: Path,
) -> None:
    tree, outside = tmp_path / "repo", tmp_path / "outside"
    shutil.copytree(GITOPS / "s1", tree / "apps")
    outside.mkdir()
    (outside / "evil.yaml").write_text(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\n"
        "metadata: {name: agent-platform, namespace: flux-giantswarm}\n"
        "spec: {url: oci://example/evil, ref: {semver: '9.9.9'}}\n",
        encoding="utf-8",
    )
    (tree / "apps" / "up").symlink_to("..")  # loop one
    (tree / "apps" / "again").symlink_to("../apps")  # loop two
    (tree / "apps" / "out").symlink_to(outside)  # leaves the tree
    code, out, err, took = upgradeplan("scan", "--gitops", str(tree))
    assert took < 10, err
    assert code == 0, err
    assert "9.9.9" not in out and "evil" not in out
    assert out.count("pin.agent-platform =") == 1


# --------------------------------------------------------------------------- secrets

TOKEN = "s3cr3t-first-half\nsecond-half-0f-the-token"


def _kubeconfigs(fake_api: FakeAPIFactory, tmp_path: Path) -> list[str]:
    good = fake_api.start(CLUSTER_FIXTURES / "s1")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    inline = fake_api.kubeconfig(
        {"bad": good, "good": good}, name="inline", users={"bad": {"token": TOKEN}}
    )
    in_file = fake_api.kubeconfig(
        {"bad": good, "good": good}, name="file", users={"bad": {"tokenFile": str(token_file)}}
    )
    return [inline, in_file]


def test_a_token_with_a_line_break_never_appears_in_any_output(
    fake_api: FakeAPIFactory, tmp_path: Path
) -> None:
    runs: list[list[str]] = []
    for fmt in ("text", "json", "yaml", "markdown", "sarif", "github"):
        runs.append(["check", "--to", "agent-platform=4.8.1", "-o", fmt])
    for fmt in ("text", "json", "yaml"):
        runs.append(["scan", "-o", fmt])
    for fmt in ("yaml", "json"):
        runs.append(["snapshot", "-o", fmt])
    pieces = [TOKEN, *TOKEN.splitlines(), repr(TOKEN)[1:-1]]
    jobs = [
        (args, contexts, kubeconfig)
        for kubeconfig in _kubeconfigs(fake_api, tmp_path)
        for args in runs
        for contexts in (["--context", "bad"], ["--all-contexts"])
    ]
    from click.testing import CliRunner

    from upgradeplan.cli import cli

    done = []
    for args, contexts, kubeconfig in jobs:  # in-process: the same code, without start-ups
        res = CliRunner().invoke(cli, [*args, "--kubeconfig", kubeconfig, *contexts])
        done.append((res.exit_code, res.stdout, res.stderr, 0.0))
    for (args, contexts, _), (code, out, err, _) in zip(jobs, done, strict=True):
        for piece in pieces:
            assert piece not in out and piece not in err, (args, contexts)
        assert "Traceback" not in err
        if contexts == ["--all-contexts"]:
            assert code in (0, 3, 4), (args, err)  # the good context is still judged
            if "markdown" not in args and "sarif" not in args:  # judged ones only
                assert "line break" in err + out  # the bad one is named, not its token
        else:
            assert code in (1, 2), (args, err)
