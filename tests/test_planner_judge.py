"""The verdict where the knowledge stops: above a product's ``reviewed_through`` a green
verdict is "no known hazards (knowledge reviewed through X)", never "safe", in ``check`` and
``plan`` and every output, and exits 0 as a chart the knowledge does not know does; a known
hazard is judged as before (docs/exit-codes.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import check, plan, run, run_stdout

KB = str(Path(__file__).resolve().parent / "fixtures" / "kb-reviewed")
WORDS = "no known hazards (knowledge reviewed through 1.1.0)"


def test_a_move_within_the_reviewed_history_is_safe() -> None:
    code, res = check("--kb", KB, "--installed", "widget=1.0.0", "--to", "widget=1.1.0")
    assert (code, res["verdict"]) == (0, "safe")
    assert "reviewed_through" not in res
    assert not any("reviewed through" in n for n in res.get("notes", []))


def test_a_move_above_reviewed_through_is_no_known_hazards_never_safe() -> None:
    code, res = check("--kb", KB, "--installed", "widget=1.1.0", "--to", "widget=1.2.0")
    assert (code, res["verdict"]) == (0, "no-known-hazards")
    assert res["reviewed_through"] == {"widget": "1.1.0"}
    assert "widget 1.2.0: no known hazards (knowledge reviewed through 1.1.0)" in res["notes"]


def test_an_installation_above_reviewed_through_is_not_safe_as_it_is() -> None:
    code, res = check("--kb", KB, "--installed", "widget=1.2.0")
    assert (code, res["verdict"]) == (0, "no-known-hazards")
    assert any(WORDS in n for n in res["notes"])


@pytest.mark.parametrize("command", ["check", "plan"])
def test_the_text_verdict_says_the_words_not_safe(command: str) -> None:
    code, out = run_stdout(
        command, "--kb", KB, "--installed", "widget=1.1.0", "--to", "widget=1.2.0"
    )
    assert code == 0
    head = out.splitlines()[0]
    assert head.endswith(f": {WORDS}"), out
    assert "safe" not in out.replace("unsafe", ""), out


def test_plan_json_says_no_known_hazards_for_the_path_and_the_step() -> None:
    code, p = plan("--kb", KB, "--installed", "widget=1.0.0", "--to", "widget=1.2.0")
    assert (code, p["verdict"], p["reviewed_through"]) == (
        0,
        "no-known-hazards",
        {"widget": "1.1.0"},
    )
    assert [s["verdict"] for s in p["steps"]] == ["no-known-hazards"] * len(p["steps"])


def test_markdown_github_and_sarif_say_no_known_hazards() -> None:
    args = ("--kb", KB, "--installed", "widget=1.1.0", "--to", "widget=1.2.0")
    for output in ("markdown", "github"):
        code, out = run_stdout("check", "-o", output, *args)
        assert code == 0 and WORDS in out and "safe" not in out, out
    code, out = run_stdout("plan", "-o", "markdown", *args)
    assert code == 0 and f"**Verdict**: {WORDS}" in " ".join(out.split()), out
    code, out = run_stdout("check", "-o", "sarif", *args)
    props = json.loads(out)["runs"][0]["properties"]
    assert (code, props["verdict"], props["reviewed_through"]) == (
        0,
        "no-known-hazards",
        {"widget": "1.1.0"},
    )
    assert run("check", "-o", "json", *args)[0] == 0


def _two_packs_tree(root: Path) -> Path:
    """One Flux installation of our own running cert-manager v1.20.2 and cilium 1.19.6 (above
    the cilium pack's reviewed_through, 1.17.0), committed; the tree is the fixture trees of
    both packs side by side."""
    import shutil

    from support.cli import git

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    packs = Path(__file__).resolve().parent / "fixtures" / "packs"
    home = root / "clusters" / "home"
    shutil.copytree(packs / "cert-manager" / "clusters" / "home" / "infra", home / "infra")
    shutil.copytree(packs / "cilium" / "clusters" / "lab" / "kube-system", home / "kube-system")
    (home / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - infra\n  - kube-system\n"
    )
    cilium = home / "kube-system" / "helmrelease.yaml"
    text = cilium.read_text().replace("name: Lab_West", "name: lab-west")
    cilium.write_text(text.replace("version: 1.16.19", "version: 1.19.6"))
    cert = home / "infra" / "helmrelease.yaml"
    cert.write_text(cert.read_text().replace("version: v1.20.3", "version: v1.20.2"))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    cert.write_text(cert.read_text().replace("version: v1.20.2", "version: v1.20.3"))
    return root


def test_a_product_left_alone_above_its_review_does_not_colour_another_bump(
    tmp_path: Path,
) -> None:
    repo = _two_packs_tree(tmp_path / "repo")
    packs = ("--pack", "cert-manager", "--pack", "cilium")
    gate = ("--gitops", str(repo), "--base", "HEAD", "--no-chart-checks")
    code, res = check(*packs, *gate)
    assert (code, res["verdict"]) == (0, "safe"), res
    assert "reviewed_through" not in res
    assert {m["name"]: m["judged"] for m in res["moved"]} == {"cert-manager": True}
    # the same tree as it is: cilium runs above its review, so nothing is called safe
    code, res = check(*packs, "--gitops", str(repo))
    assert (code, res["verdict"], res["reviewed_through"]) == (
        0,
        "no-known-hazards",
        {"cilium": "1.17.0"},
    )
