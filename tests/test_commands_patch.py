"""`upgradeplan patch`: text, JSON and kustomize folders; --write in place; hostile names."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from conftest import REPO, fixture_path

from upgradeplan.cli import cli

GITOPS = REPO / "tests" / "fixtures" / "gitops"

S4 = [
    "--installed", "agent-platform=4.8.0",
    "--pin", "agent-platform-connectivity=4.8.0",
    "--fact", "helmrelease.kagent.drift-detection=disabled",
    "--fact", "object.Harness.kagent.kagent.exists=false",
    "--to", "agent-platform=4.8.1",
]  # fmt: skip
HARNESS_FACTS = [
    "--fact", "object.Harness.kagent.kagent.exists=true",
    "--fact", "object.Harness.kagent.kagent.annotations=",
]  # fmt: skip


def run(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_s4_text_has_the_reconcile_command_and_the_drift_patch() -> None:
    result = run(["patch", *S4, "--fact", "helmrelease.kagent.namespace=flux-giantswarm"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "# Step 1: agent-platform 4.8.0 → 4.8.1" in out
    assert "kubectl -n flux-giantswarm annotate helmrelease kagent" in out
    assert "driftDetection:" in out and "mode: enabled" in out


def test_stated_installation_says_which_moves_have_no_file_to_patch(tmp_path: Path) -> None:
    args = ["--installed", "agent-platform=4.7.18", "--fact", "kubernetes=1.35.0"]
    result = run(["patch", *args, "--to", "agent-platform=4.8.1"])
    assert result.exit_code == 0, result.output
    moves = "agent-platform 4.7.18 → 4.7.19, agent-platform 4.7.19 → 4.8.1"
    assert result.stdout.splitlines()[0] == f"# No patches for {moves}:"
    assert "--gitops PATH" in result.stdout
    # the same reason in the folder's README
    folder = tmp_path / "out"
    result = run(["patch", *args, "--to", "agent-platform=4.8.1", "-o", f"dir={folder}"])
    assert result.exit_code == 0, result.output
    assert "No patches for agent-platform 4.7.18" in (folder / "README.md").read_text()
    # nothing moves: the plain sentence
    result = run(["patch", *args, "--to", "agent-platform=4.7.18"])
    assert result.stdout.startswith("# No patches: nothing needs a migration")


HOSTILE = "a;rm -rf x"


def test_hostile_namespace_is_shell_quoted_everywhere() -> None:
    result = run(["patch", *S4, "--fact", f"helmrelease.kagent.namespace={HOSTILE}", "-o", "json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)["patches"]
    commands = [i["content"] for i in items if i["kind"] == "command"]
    assert commands
    for content in commands:
        for line in content.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            tokens = shlex.split(line)
            assert HOSTILE in tokens  # one word, not a command separator
            assert "rm" not in tokens
    # and the YAML patches carry it as a plain string value
    for item in items:
        if item["kind"] in ("strategic-merge", "manifest"):
            doc = yaml.safe_load(item["content"])
            assert doc["metadata"]["namespace"] == HOSTILE


def test_json_output_parses_and_every_yaml_patch_parses() -> None:
    result = run(
        ["patch", *S4, "--fact", "helmrelease.kagent.namespace=flux-giantswarm", "-o", "json"]
    )
    doc = json.loads(result.stdout)
    assert doc["schema_version"] == 1
    for item in doc["patches"]:
        if item["kind"] in ("strategic-merge", "manifest", "json6902"):
            assert list(yaml.safe_load_all(item["content"]))


def _dir(tmp_path: Path, extra: list[str]) -> Path:
    out = tmp_path / "patches"
    result = run(["patch", *S4, *extra, "-o", f"dir={out}"])
    assert result.exit_code == 0, result.output
    return out


def test_dir_output_is_a_kustomize_folder_per_step(tmp_path: Path) -> None:
    out = _dir(tmp_path, ["--fact", f"helmrelease.kagent.namespace={HOSTILE}"])
    step = out / "01-agent-platform-4.8.0-to-4.8.1"
    kust = yaml.safe_load((step / "kustomization.yaml").read_text())
    assert kust["kind"] == "Kustomization"
    (entry,) = kust["patches"]
    assert entry["target"]["kind"] == "HelmRelease" and entry["target"]["name"] == "kagent"
    assert entry["target"]["namespace"] == HOSTILE
    for path in out.rglob("*.yaml"):
        assert list(yaml.safe_load_all(path.read_text())) is not None
    script = (step / "commands-before.sh").read_text()
    assert script.startswith("#!/bin/sh\nset -eu\n")
    assert shlex.quote(HOSTILE) in script
    bash = shutil.which("bash")
    if bash:
        check = subprocess.run([bash, "-n", str(step / "commands-before.sh")], check=False)
        assert check.returncode == 0
    assert (out / "README.md").read_text().startswith("# Patches")


def test_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("keep me")
    result = run(["patch", *S4, "-o", f"dir={tmp_path}"])
    assert result.exit_code == 2
    assert "not empty" in result.output


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_builds_the_folder_against_the_installation(tmp_path: Path) -> None:
    out = _dir(tmp_path, ["--fact", "helmrelease.kagent.namespace=flux-giantswarm"])
    step = out / "01-agent-platform-4.8.0-to-4.8.1"
    # the user's base: the kagent HelmRelease as the cluster holds it
    base = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "kagent", "namespace": "flux-giantswarm"},
        "spec": {"interval": "10m", "chartRef": {"kind": "OCIRepository", "name": "kagent"}},
    }
    (step / "base-kagent.yaml").write_text(yaml.safe_dump(base))
    kust_path = step / "kustomization.yaml"
    kust = yaml.safe_load(kust_path.read_text())
    kust["resources"] = [*kust["resources"], "base-kagent.yaml"]
    kust_path.write_text(yaml.safe_dump(kust))
    built = subprocess.run(
        ["kubectl", "kustomize", str(step)], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    (hr,) = [d for d in yaml.safe_load_all(built.stdout) if d]
    assert hr["spec"]["driftDetection"] == {"mode": "enabled"}
    assert hr["spec"]["interval"] == "10m"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_builds_the_delegate_folder(tmp_path: Path) -> None:
    snapshot = fixture_path("cluster", "s7", "objects.yaml")
    out = tmp_path / "patches"
    args = ["patch", "--snapshot", str(snapshot), "--installed", "harness-cd=24.12.0",
            "--fact", "kubernetes=1.31.0", "-o", f"dir={out}"]  # fmt: skip
    result = run(args)
    assert result.exit_code == 0, result.output
    step = out / "00-now"
    objects = yaml.safe_load(snapshot.read_text())["items"]
    dep = next(o for o in objects if o["kind"] == "Deployment")
    (step / "base.yaml").write_text(yaml.safe_dump(dep))
    kust = yaml.safe_load((step / "kustomization.yaml").read_text())
    kust["resources"] = [*kust["resources"], "base.yaml"]
    (step / "kustomization.yaml").write_text(yaml.safe_dump(kust))
    built = subprocess.run(
        ["kubectl", "kustomize", str(step)], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    docs = {d["kind"]: d for d in yaml.safe_load_all(built.stdout) if d}
    assert docs["Secret"]["type"] == "Opaque"
    env = docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]["env"]
    refs = [e["valueFrom"]["secretKeyRef"]["name"] for e in env if "valueFrom" in e]
    assert refs == ["harness-api-key"]


UNUSUAL_BOM = """\
# Customer BOM -- comments everywhere, odd quoting
gitops:
  namespace: flux-giantswarm   # trailing comment
  interval: 30m
components:
  agent-platform-connectivity: {versionRange: '4.7.18', enabled: true}  # flow, single quotes
  kagent:
      versionRange:    "0.11.0-gs.6"      # wide spacing kept
  kagent-crds:
    # Must be the same build as kagent.
    versionRange: 0.11.0-gs.6
"""


def _unusual_repo(tmp_path: Path) -> Path:
    src = fixture_path("gitops", "s1")
    repo = tmp_path / "repo"
    shutil.copytree(src, repo)
    (repo / "bom.yaml").write_text(UNUSUAL_BOM)
    return repo


def test_write_changes_only_the_pin_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _unusual_repo(tmp_path)
    monkeypatch.chdir(repo)
    oci_before = (repo / "agent-platform" / "ocirepository.yaml").read_text()
    result = run(
        ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1", "--write"]
    )
    assert result.exit_code == 0, result.output
    assert "step 1 of 2" in result.stderr
    assert (repo / "bom.yaml").read_text() == UNUSUAL_BOM.replace("'4.7.18'", "'4.7.19'")
    assert (repo / "agent-platform" / "ocirepository.yaml").read_text() == oci_before.replace(
        '"4.7.18"', '"4.7.19"'
    )
    assert sorted(p.name for p in repo.iterdir() if p.name.startswith(".")) == []


def test_write_through_step_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _unusual_repo(tmp_path)
    monkeypatch.chdir(repo)
    args = ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1"]
    args += ["--write", "--step", "2"]
    assert run(args).exit_code == 0
    assert (repo / "bom.yaml").read_text() == UNUSUAL_BOM.replace("'4.7.18'", "'4.8.1'")


def test_write_refuses_a_file_changed_since_it_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from upgradeplan import api

    repo = _unusual_repo(tmp_path)
    monkeypatch.chdir(repo)
    real = api.patch

    def build_then_someone_edits(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        bom = repo / "bom.yaml"
        bom.write_text(bom.read_text() + "# edited meanwhile\n")
        return out

    monkeypatch.setattr(api, "patch", build_then_someone_edits)
    result = run(
        ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1", "--write"]
    )
    assert result.exit_code == 2
    assert "bom.yaml: changed since it was read" in result.stderr
    assert (repo / "bom.yaml").read_text() == UNUSUAL_BOM + "# edited meanwhile\n"
    # the other file of the same step is not written either
    oci = (repo / "agent-platform" / "ocirepository.yaml").read_text()
    assert '"4.7.18"' in oci


def test_bad_output_format_is_a_usage_error() -> None:
    result = run(["patch", *S4, "-o", "xml"])
    assert result.exit_code == 2
    assert "use text, json or dir=PATH" in result.stderr


def test_no_installation_is_a_usage_error() -> None:
    result = run(["patch", "--to", "agent-platform=4.8.1"])
    assert result.exit_code == 2
    assert "no installation given" in result.stderr


def test_write_refuses_a_blocked_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _unusual_repo(tmp_path)
    monkeypatch.chdir(repo)
    before = (repo / "bom.yaml").read_text()
    args = ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1"]
    result = run([*args, "--hold", "agent-platform-connectivity", "--write"])
    assert result.exit_code == 3
    assert "not writing: the plan is blocked" in result.stderr
    assert (repo / "bom.yaml").read_text() == before


def test_names_with_quotes_keep_the_yaml_intact_and_newlines_are_refused() -> None:
    newline = run(["patch", *S4, "--fact", "helmrelease.kagent.namespace=a\nkind: Secret"])
    assert newline.exit_code == 2 and "control character U+000A" in newline.stderr
    nasty = 'a"b: c # kind: Secret'
    result = run(["patch", *S4, "--fact", f"helmrelease.kagent.namespace={nasty}", "-o", "json"])
    assert result.exit_code == 0, result.output
    for item in json.loads(result.stdout)["patches"]:
        if item["kind"] == "strategic-merge":
            (doc,) = list(yaml.safe_load_all(item["content"]))
            assert doc["kind"] == "HelmRelease"
            assert doc["metadata"]["namespace"] == nasty


def test_step_option_shows_one_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _unusual_repo(tmp_path)
    monkeypatch.chdir(repo)
    args = ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1"]
    result = run([*args, "--step", "2", "-o", "json"])
    assert result.exit_code == 0, result.output
    steps = {i["step"] for i in json.loads(result.stdout)["patches"]}
    assert steps == {2}
    text = run([*args, "--step", "2"]).stdout
    assert "# Step 2:" in text and "# Step 1:" not in text


# ----------------------------------------------------------------- the kagent BOM passthrough

HARNESS_GONE = ["--fact", "object.Harness.kagent.kagent.exists=false"]


def _s4_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    src = fixture_path("gitops", "s4")
    repo = tmp_path / "repo"
    shutil.copytree(src, repo)
    monkeypatch.chdir(repo)
    return repo


def test_s4_gitops_drift_detection_is_a_bom_diff_and_write_inserts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _s4_copy(tmp_path, monkeypatch)
    bom = (repo / "bom.yaml").read_text()
    args = ["patch", "--gitops", ".", *HARNESS_GONE, "--to", "agent-platform=4.8.1"]
    shown = run(args)
    assert shown.exit_code == 0, shown.output
    assert "[kagent-drift-detection; unified diff; bom.yaml]" in shown.stdout
    assert "+    driftDetection:\n+      mode: enabled\n" in shown.stdout
    assert "kind: HelmRelease" not in shown.stdout  # no patch with nothing to apply to

    written = run([*args, "--write"])
    assert written.exit_code == 0, written.output
    expected = bom.replace(
        '  kagent:\n    versionRange: "0.11.0-gs.6"\n',
        '  kagent:\n    versionRange: "0.11.0-gs.6"\n    driftDetection:\n      mode: enabled\n',
    ).replace('versionRange: "4.8.0"', 'versionRange: "4.8.1"')
    assert (repo / "bom.yaml").read_text() == expected
    assert sorted(p.name for p in repo.iterdir() if p.name.startswith(".")) == []


def test_s4_gitops_flow_mapping_bom_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _s4_copy(tmp_path, monkeypatch)
    bom = repo / "bom.yaml"
    flow = bom.read_text().replace(
        '  kagent:\n    versionRange: "0.11.0-gs.6"\n', '  kagent: {versionRange: "0.11.0-gs.6"}\n'
    )
    bom.write_text(flow)
    result = run(["patch", "--gitops", ".", *HARNESS_GONE, "--write"])
    assert result.exit_code == 2
    assert "bom.yaml:7" in result.stderr and "flow mapping" in result.stderr
    assert "Traceback" not in result.output
    assert bom.read_text() == flow


def test_a_kagent_helmrelease_manifest_keeps_the_kustomize_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _s4_copy(tmp_path, monkeypatch)
    (repo / "kagent.yaml").write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata:\n  name: kagent\n  namespace: flux-giantswarm\n"
        "spec:\n  chart:\n    spec: {chart: kagent, version: 0.11.0-gs.6}\n"
    )
    kust = repo / "kustomization.yaml"
    kust.write_text(
        kust.read_text().replace("  - agent-platform\n", "  - agent-platform\n  - kagent.yaml\n")
    )
    result = run(["patch", "--gitops", ".", *HARNESS_GONE, "--to", "agent-platform=4.8.1"])
    assert result.exit_code == 0, result.output
    header = "[kagent-drift-detection; kustomize strategic-merge patch; HelmRelease "
    assert header + "flux-giantswarm/kagent]" in result.stdout
    assert "+    driftDetection:" not in result.stdout


def test_s4_gitops_bom_inside_a_configmap_text_block_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _s4_copy(tmp_path, monkeypatch)
    bom = (repo / "bom.yaml").read_text()
    (repo / "bom.yaml").unlink()
    block = "".join("    " + line + "\n" for line in bom.splitlines())
    (repo / "bom-configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: agent-platform-bom\n"
        "data:\n  values.yaml: |\n" + block
    )
    kust = repo / "kustomization.yaml"
    text = kust.read_text()
    kust.write_text(
        text[: text.index("configMapGenerator:")].replace(
            "  - agent-platform\n", "  - agent-platform\n  - bom-configmap.yaml\n"
        )
    )
    result = run(["patch", "--gitops", ".", *HARNESS_GONE, "--to", "agent-platform=4.8.1"])
    assert result.exit_code == 2
    assert "bom-configmap.yaml:13" in result.stderr and "by hand" in result.stderr


# ----------------------------------------------------------------- patch | git apply


def _git_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from support.cli import git

    repo = _unusual_repo(tmp_path)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "base")
    monkeypatch.chdir(repo)
    return repo


def _git_apply(repo: Path, diff: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "apply", "-"], cwd=repo, input=diff, capture_output=True, text=True, timeout=60
    )


def test_patch_piped_to_git_apply_takes_step_one_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _git_copy(tmp_path, monkeypatch)
    args = ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1"]
    result = run(args)
    assert result.exit_code == 0, result.output
    assert "# Step 1:" in result.stdout and "# Step 2:" not in result.stdout
    assert "showing step 1 of 2" in result.stderr
    applied = _git_apply(repo, result.stdout)
    assert applied.returncode == 0, applied.stderr
    assert (repo / "bom.yaml").read_text() == UNUSUAL_BOM.replace("'4.7.18'", "'4.7.19'")


def test_all_steps_is_explicit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _git_copy(tmp_path, monkeypatch)
    args = ["patch", "--gitops", ".", *HARNESS_FACTS, "--to", "agent-platform=4.8.1"]
    every = run([*args, "--all-steps"])
    assert every.exit_code == 0, every.output
    assert "# Step 1:" in every.stdout and "# Step 2:" in every.stdout
    assert "showing step 1" not in every.stderr
    both = run([*args, "--all-steps", "--step", "2"])
    assert both.exit_code == 2
