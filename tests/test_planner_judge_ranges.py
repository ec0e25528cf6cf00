"""check as it is, when the files pin a product by a range: which release runs is not in the
files, so a hazard of a release the range admits may apply and the check is never "safe"."""

from __future__ import annotations

import textwrap
from pathlib import Path

from support.cli import run_in

PRODUCT = """\
schema_version: 1
kind: product
id: lantern
name: lantern
type: chart
description: A chart of this test.
recognise:
  helmrelease: [lantern]
  chart: [lantern]
"""
HAZARD = """\
schema_version: 1
kind: hazard
id: lantern-wick-too-short
title: lantern 2.4 burns through its wick
product: lantern
severity: blocking
scope: landing
landing: {range: ">=2.4.0 <3.0.0"}
description: |
  Written for this test.
consequence: |
  The lantern goes dark.
avoid: |
  Stay below 2.4.
recover: |
  Go back to 2.3.
verify: []
references: []
"""


def _release(version: str) -> str:
    return textwrap.dedent(f"""\
        schema_version: 1
        kind: release
        product: lantern
        version: "{version}"
        title: "lantern {version}"
        summary: |
          Written for this test.
        references: []
        bom: {{}}
        changes:
          - kind: fix
            summary: "A build of the line."
        notes: []
        verify: []
        """)


def _files(root: Path, pin: str, *, hazard: bool = True) -> tuple[Path, Path]:
    kb, tree = root / "kb", root / "tree"
    texts = {
        kb / "products/lantern.yaml": PRODUCT,
        kb / "releases/lantern/2.3.0.yaml": _release("2.3.0"),
        kb / "releases/lantern/2.4.0.yaml": _release("2.4.0"),
        tree / "release.yaml": textwrap.dedent(f"""\
            apiVersion: helm.toolkit.fluxcd.io/v2
            kind: HelmRelease
            metadata: {{name: lantern, namespace: lights}}
            spec:
              chart:
                spec:
                  chart: lantern
                  version: "{pin}"
                  sourceRef: {{kind: HelmRepository, name: charts}}
            """),
    }
    if hazard:
        texts[kb / "hazards/lantern-wick-too-short.yaml"] = HAZARD
    for path, text in texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return kb, tree


def test_a_range_that_admits_a_hazards_release_is_undetermined(tmp_path: Path) -> None:
    kb, tree = _files(tmp_path, "2.x")
    code, out, err = run_in(["--kb", str(kb), "check", "--gitops", str(tree)], cwd=tmp_path)
    assert code == 4, out + err  # it said "nothing to judge", exit 0
    assert "lantern is pinned by the range 2.x" in out
    assert "lantern-wick-too-short concerns lantern 2.4.0" in out
    assert "--installed lantern=VERSION" in out
    # stated, it is judged on what runs
    stated = ["--kb", str(kb), "check", "--gitops", str(tree), "--installed", "lantern=2.4.0"]
    assert run_in(stated, cwd=tmp_path)[0] == 3
    stated[-1] = "lantern=2.3.0"  # Flux moves it to the 2.4.0 the range admits
    code, out, _ = run_in(["-v", *stated], cwd=tmp_path)
    assert code == 3 and "admits lantern 2.4.0" in out


def test_a_range_below_every_hazard_or_without_one_stays_as_it_was(tmp_path: Path) -> None:
    kb, tree = _files(tmp_path / "below", "<2.4.0")
    assert run_in(["--kb", str(kb), "check", "--gitops", str(tree)], cwd=tmp_path)[0] == 0
    kb, tree = _files(tmp_path / "none", "2.x", hazard=False)
    assert run_in(["--kb", str(kb), "check", "--gitops", str(tree)], cwd=tmp_path)[0] == 0
