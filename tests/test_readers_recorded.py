"""State files an earlier version wrote (sources as text only, what could not be read named by
list alone) never turn what could not be read into a reading: a version only derived from a
pin stays a guess, and check never says "safe" on it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from upgradeplan.cli import cli
from upgradeplan.readers import snapshot
from upgradeplan.readers.recorded import EARLIER, TEXT_ONLY


def _doc(facts: str) -> str:
    """A state document of the cluster ``eu`` whose facts (and the rest) are ``facts``."""
    return HEAD + facts


HEAD = """\
schema_version: 1
kind: upgradeplan-state
name: eu
facts:
"""
# what an earlier version wrote for a cluster whose HelmRelease list was forbidden: every
# source as text, no `from`, no `unread` records, the list alone under `unreadable`, and the
# installed version it derived from the exact OCIRepository pin recorded beside the pin
EARLIER_FILE = _doc("""\
  installed.kubernetes:
    value: "1.35.2"
    source: "cluster eu: /version gitVersion v1.35.2"
  pin.agent-platform:
    value: "4.8.0"
    source: "cluster eu: OCIRepository flux/agent-platform spec.ref.semver"
  installed.agent-platform:
    value: "4.8.0"
    source: "derived: exact pin (cluster eu: OCIRepository flux/agent-platform spec.ref.semver)"
  pin.agent-platform-connectivity:
    value: "4.8.0"
    source: "cluster eu: OCIRepository flux/agent-platform-connectivity spec.ref.semver"
  installed.harness-delegate:
    value: "25.10.86901"
    source: "cluster eu: Deployment ops/delegate image tag harness/delegate:25.10.86901"
unreadable:
  helmrelease: "helmreleases.helm.toolkit.fluxcd.io in context eu: 403 Forbidden"
""")
CHECK = ["check", "--to", "agent-platform=4.8.1"]


def _file(tmp_path: Path, text: str, name: str = "eu.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def test_an_earlier_snapshot_of_a_forbidden_helmrelease_list_is_never_judged_safe(
    tmp_path: Path,
) -> None:
    path = _file(tmp_path, EARLIER_FILE)
    text = _run([*CHECK, "--snapshot", path])
    assert text.exit_code == 4, text.output  # it said "safe", exit 0
    assert "[eu]: undetermined" in text.stdout
    guess = next(line for line in text.stdout.splitlines() if "only derived" in line)
    assert "agent-platform 4.8.0 is only derived from its exact pin" in guess
    assert EARLIER in guess and "--installed agent-platform=VERSION" in guess
    listed = next(line for line in text.stdout.splitlines() if line.startswith("  helmrelease:"))
    assert f"{EARLIER}: helmreleases.helm.toolkit.fluxcd.io in context eu: 403" in listed
    assert "installed.agent-platform," in listed and "values.agent-platform," in listed
    (res,) = json.loads(_run([*CHECK, "--snapshot", path, "-o", "json"]).stdout)["results"]
    assert res["verdict"] == "undetermined"
    (rec,) = res["unreadable"]
    assert rec["source"] == "helmrelease" and "installed.agent-platform" in rec["unknown"]
    # what runs stated: judged on it, the guess gone (the list is still named)
    stated = _run([*CHECK, "--snapshot", path, "--installed", "agent-platform=4.8.0"])
    assert "only derived" not in stated.stdout and "403 Forbidden" in stated.stdout


def test_an_earlier_snapshot_keeps_what_it_read_and_types_what_it_derived(
    tmp_path: Path,
) -> None:
    state = snapshot.read(_file(tmp_path, EARLIER_FILE))
    # the derived version is derived again after merging (from the merged pin); the record stays
    assert "installed.agent-platform" not in state.facts
    assert "installed.agent-platform" in state.unreadable
    # the delegate's Deployment was read: a reading, not widened away
    delegate = state.facts["installed.harness-delegate"]
    assert delegate.value == "25.10.86901" and delegate.source.kind == "text"
    assert "installed.harness-delegate" not in state.unreadable
    # nothing unreadable: the recorded derived text comes back as the typed derived source
    readable = snapshot.read(_file(tmp_path, EARLIER_FILE.split("unreadable:")[0], "ok.yaml"))
    fact = readable.facts["installed.agent-platform"]
    assert fact.source.kind == "derived"
    assert fact.source.underived() == readable.facts["pin.agent-platform"].source
    assert str(fact.source) == (
        "derived: exact pin (cluster eu: OCIRepository flux/agent-platform spec.ref.semver)"
    )


def test_a_text_source_the_file_also_records_as_unreadable_is_named_not_read(
    tmp_path: Path,
) -> None:
    edited = EARLIER_FILE.replace(
        "derived: exact pin (cluster eu: OCIRepository flux/agent-platform spec.ref.semver)",
        "told by the platform team",
    ).replace("unreadable:\n", 'unreadable:\n  installed.agent-platform: "403 Forbidden"\n')
    path = _file(tmp_path, edited)
    text = _run([*CHECK, "--snapshot", path])
    assert text.exit_code == 4, text.output
    line = next(
        ln for ln in text.stdout.splitlines() if ln.startswith("  installed.agent-platform")
    )
    assert f"at {path}: {TEXT_ONLY}" in line and "take the snapshot again" in line
    (res,) = json.loads(_run([*CHECK, "--snapshot", path, "-o", "json"]).stdout)["results"]
    assert res["verdict"] == "undetermined"
    assert any(r["cause"] == TEXT_ONLY for r in res["unreadable"])


def test_a_snapshot_recording_a_typed_derived_version_keeps_its_guess(tmp_path: Path) -> None:
    # what `scan -o yaml` prints for a state: the derived version recorded, typed, beside the
    # record of the forbidden list that left it unknown
    doc = _doc("""\
  installed.kubernetes:
    value: "1.35.2"
    from: {kind: object, origin: cluster eu, detail: /version}
  pin.agent-platform:
    value: "4.8.0"
    from: {kind: object, origin: cluster eu, detail: OCIRepository flux/agent-platform}
  pin.agent-platform-connectivity:
    value: "4.8.0"
    from: {kind: object, origin: cluster eu, detail: OCIRepository platform/connectivity}
  installed.agent-platform:
    value: "4.8.0"
    from:
      kind: derived
      behind: {kind: object, origin: cluster eu, detail: OCIRepository flux/agent-platform}
unreadable:
  installed.agent-platform: "helmreleases in context eu: 403 Forbidden"
unread:
- {source: helmreleases.helm.toolkit.fluxcd.io, cause: 403 Forbidden, status: 403,
   context: eu, unknown: [helmrelease, installed.agent-platform]}
""")
    text = _run([*CHECK, "--snapshot", _file(tmp_path, doc)])
    assert text.exit_code == 4, text.output  # it said "safe", exit 0
    assert "agent-platform 4.8.0 is only derived from its exact pin" in text.stdout
    assert "(403 Forbidden, named below)" in text.stdout


def test_an_earlier_failed_source_list_leaves_unknown_only_the_pins_no_object_gave(
    tmp_path: Path,
) -> None:
    older = EARLIER_FILE.replace(
        "unreadable:\n", 'unreadable:\n  pin: "ocirepositories: 403 Forbidden"\n'
    )
    state = snapshot.read(_file(tmp_path, older))
    assert "pin" not in state.unreadable and "pin.agent-platform" not in state.unreadable
    assert state.unreadable["pin.kagent"] == "ocirepositories: 403 Forbidden"
