"""kubectl/helm/flux conventions: global options before or after the verb, -n, colour,
did-you-mean, the help verb, bare upgradeplan, version -o yaml."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import yaml
from support.cli import invoke, run, run_stdout
from support.fakeapi import FakeAPIFactory, fake_api
from support.scenarios import CLUSTER_FIXTURES

__all__ = ["fake_api"]  # the pytest fixture, imported for its side effect

REPO = Path(__file__).resolve().parents[1]


def _two_contexts(fake_api: FakeAPIFactory) -> str:
    lab = fake_api.start(CLUSTER_FIXTURES / "s1")
    prod = fake_api.start(CLUSTER_FIXTURES / "s2")
    return fake_api.kubeconfig({"lab": lab, "prod": prod})


def test_context_before_and_after_the_verb_give_the_same_result(
    fake_api: FakeAPIFactory,
) -> None:
    kubeconfig = _two_contexts(fake_api)
    before = run_stdout("--kubeconfig", kubeconfig, "--context", "prod", "scan", "-o", "json")
    after = run_stdout("scan", "-o", "json", "--kubeconfig", kubeconfig, "--context", "prod")
    mixed = run_stdout("--context", "prod", "scan", "-o", "json", "--kubeconfig", kubeconfig)
    assert before == after == mixed
    assert [r["name"] for r in json.loads(before[1])["results"]] == ["prod"]


def test_global_options_after_a_verb_that_does_not_declare_them(
    fake_api: FakeAPIFactory,
) -> None:
    kubeconfig = _two_contexts(fake_api)
    code, out = run_stdout(
        "snapshot", "--kubeconfig", kubeconfig, "-n", "kagent", "--context", "lab"
    )
    assert code == 0, out
    assert "lab" in out
    code, out = run("diagnose", "--no-color", "-v", "--debug", "-")
    assert code == 0, out


def test_namespace_bounds_every_namespaced_list(fake_api: FakeAPIFactory) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s2")
    kubeconfig = fake_api.kubeconfig({"prod": server})
    code, out = run_stdout(
        "-n", "flux-giantswarm", "scan", "-o", "json", "--kubeconfig", kubeconfig
    )
    assert code == 0, out
    lists = [r.path for r in server.requests if r.path.rsplit("/", 1)[-1] not in ("version",)]
    namespaced = {
        "helmreleases",
        "ocirepositories",
        "helmcharts",
        "harnesses",
        "agenttemplates",
        "deployments",
        "secrets",
    }
    for path in lists:
        plural = path.rstrip("/").rsplit("/", 1)[-1]
        if plural in namespaced:
            assert "/namespaces/flux-giantswarm/" in path, path
    assert any("/namespaces/flux-giantswarm/helmreleases" in p for p in lists)
    facts = json.loads(out)["results"][0]["state"]["facts"]
    # the Harness lives in kagent, which was not read: unknown, not "absent"
    assert "object.Harness.kagent.kagent.exists" not in facts


def test_unknown_command_and_option_suggest_the_nearest() -> None:
    code, out = run("chek")
    assert code == 2
    assert "Did you mean 'check'?" in out
    code, out = run("check", "--too", "4.8.1")
    assert code == 2
    assert "Did you mean '--to'?" in out
    assert "--gitops" not in out.split("Error:")[-1]


def test_unknown_option_suggestion_through_the_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "upgradeplan", "check", "--too", "4.8.1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "No such option '--too'. Did you mean '--to'?" in proc.stderr


def test_bare_upgradeplan_and_help_verb_show_help_and_exit_0() -> None:
    code, out = run()
    assert code == 0
    assert "Commands:" in out
    code, out = run("help", "check")
    assert code == 0
    assert "check [OPTIONS]" in out.splitlines()[0]
    code, out = run("help", "kb", "lint")
    assert code == 0
    assert "kb lint [OPTIONS]" in out.splitlines()[0]
    code, out = run("help", "chek")
    assert code == 2
    assert "Did you mean 'check'?" in out


def test_version_as_yaml_and_json() -> None:
    code, out = run_stdout("version", "-o", "yaml")
    assert code == 0
    doc = yaml.safe_load(out)
    code, out = run_stdout("version", "-o", "json")
    assert doc == json.loads(out)


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """stdout of ``upgradeplan *args`` run with stdout on a pseudo-terminal."""
    out, _, _ = pty_run(args, env, stdout_tty=True)
    return out


def pty_run(
    args: list[str], env: dict[str, str], *, stdout_tty: bool = False, stderr_tty: bool = False
) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) with stdout and/or stderr on a pseudo-terminal."""
    import tempfile

    main, child = pty.openpty()
    # the stream that is not a terminal goes to a file: a pipe nobody reads while the
    # terminal is drained would block the child once it holds more than the pipe's 64 KiB
    piped = {name: tempfile.TemporaryFile() for name in ("out", "err")}  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "upgradeplan", *args],
        stdout=child if stdout_tty else piped["out"],
        stderr=child if stderr_tty else piped["err"],
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.close(child)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                data = os.read(main, 65536)
            except OSError:  # EIO: the other end is closed and everything was read
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
        for f in piped.values():
            f.seek(0)
        piped_out, piped_err = piped["out"].read(), piped["err"].read()
    finally:
        os.close(main)
        for f in piped.values():
            f.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    tty = b"".join(chunks).decode()
    out = tty if stdout_tty else piped_out.decode()
    err = tty if stderr_tty else piped_err.decode()
    return out, err, proc.returncode


def test_no_color_and_NO_COLOR_on_a_terminal() -> None:
    args = ["check", "--installed", "agent-platform=4.7.14", "--to", "4.8.1"]
    args += ["--fact", "kubernetes=1.35.0"]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    coloured = _on_a_terminal(args, env)
    assert "\x1b[" in coloured
    assert "\x1b[" not in _on_a_terminal(["--no-color", *args], env)
    assert "\x1b[" not in _on_a_terminal([*args, "--no-color"], env)
    assert "\x1b[" not in _on_a_terminal(args, {**env, "NO_COLOR": "1"})


def test_progress_of_four_contexts_on_a_terminal_only(fake_api: FakeAPIFactory) -> None:
    from support.fakeapi import Faults

    servers = {
        "lab": fake_api.start(CLUSTER_FIXTURES / "s1"),
        "prod": fake_api.start(CLUSTER_FIXTURES / "s2"),
        "stage": fake_api.start(CLUSTER_FIXTURES / "s3"),
        "slow": fake_api.start(CLUSTER_FIXTURES / "s4", faults=Faults(slow={"nodes": 0.3})),
    }
    kubeconfig = fake_api.kubeconfig(dict(servers))
    args = ["scan", "--all-contexts", "--kubeconfig", kubeconfig, "-o", "json"]
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    tty_out, tty_err, tty_code = pty_run(args, env, stderr_tty=True)
    assert "reading 4 context(s): 4/4" in tty_err
    assert tty_err.endswith("\r\x1b[K")  # the progress line is erased at the end
    piped = subprocess.run(
        [sys.executable, "-m", "upgradeplan", *args],
        capture_output=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert piped.returncode == tty_code
    assert piped.stderr.decode() == ""
    assert piped.stdout.decode() == tty_out  # -o json is byte-identical either way
    assert len(json.loads(tty_out)["results"]) == 4


def test_yaml_is_offered_wherever_json_is() -> None:
    for args in (
        ["explain", "harness-missing-on-480"],
        ["kb", "list", "--product", "agent-platform"],
        ["version"],
    ):
        code, as_json = run_stdout(*args, "-o", "json")
        assert code == 0, as_json
        code, as_yaml = run_stdout(*args, "-o", "yaml")
        assert code == 0, as_yaml
        assert yaml.safe_load(as_yaml) == json.loads(as_json), args


def test_verbose_says_what_was_read_even_when_piped(fake_api: FakeAPIFactory) -> None:
    server = fake_api.start(CLUSTER_FIXTURES / "s2")
    kubeconfig = fake_api.kubeconfig({"prod": server})
    result = invoke("-v", "scan", "--kubeconfig", kubeconfig, "-o", "json")
    assert result.exit_code == 0, result.output
    assert "upgradeplan: reading 1 context(s): prod: " in result.stderr
    assert " requests (" in result.stderr
    json.loads(result.stdout)  # stdout stays the document alone
    quiet = invoke("scan", "--kubeconfig", kubeconfig, "-o", "json")
    assert quiet.stderr == ""
