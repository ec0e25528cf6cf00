"""Pasted kubectl output keeps its shell prompt line: read anyway, with a note on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from support.cli import invoke

FIXTURE = Path(__file__).parent / "fixtures" / "cluster" / "s2" / "objects.yaml"


def _as_list() -> str:
    items = [d for d in yaml.safe_load_all(FIXTURE.read_text(encoding="utf-8")) if d]
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}, sort_keys=False)


def test_a_leading_kubectl_prompt_line_is_skipped_with_a_note(tmp_path: Path) -> None:
    clean = tmp_path / "clean.yaml"
    clean.write_text(_as_list(), encoding="utf-8")
    pasted = tmp_path / "pasted.yaml"
    pasted.write_text(
        "$ kubectl get helmreleases -A -o yaml\n" + _as_list() + "$ \n", encoding="utf-8"
    )
    want = invoke("scan", "-o", "json", "--snapshot", str(clean))
    got = invoke("scan", "-o", "json", "--snapshot", str(pasted))
    assert got.exit_code == want.exit_code == 0, got.output
    facts = json.loads(got.stdout)["results"][0]["state"]["facts"]
    assert facts == json.loads(want.stdout)["results"][0]["state"]["facts"]
    assert (
        f"upgradeplan: note: {pasted}:1: skipped a shell prompt line: "
        "$ kubectl get helmreleases -A -o yaml"
    ) in got.stderr
    assert want.stderr == ""


def test_a_prompt_with_user_and_host_is_skipped_too(tmp_path: Path) -> None:
    pasted = tmp_path / "pasted.yaml"
    pasted.write_text("ops@bastion:~$ kubectl get hr -A -o yaml\n" + _as_list(), encoding="utf-8")
    got = invoke("scan", "--snapshot", str(pasted))
    assert got.exit_code == 0, got.output
    assert ":1: skipped a shell prompt line" in got.stderr


def test_other_chatter_is_still_refused_with_its_line(tmp_path: Path) -> None:
    pasted = tmp_path / "pasted.yaml"
    pasted.write_text("Output of the command: [truncated\n" + _as_list(), encoding="utf-8")
    got = invoke("scan", "--snapshot", str(pasted))
    assert got.exit_code == 2
    assert f"{pasted}:" in got.output
    assert "skipped" not in got.output
