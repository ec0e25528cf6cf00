"""Run the shared Masterminds/semver conformance vectors against upgradeplan.versions.

The vectors live outside the repository (../shared/conformance/ relative to the repo root);
they were produced by running the Go library itself. Each TSV row is one test so that a
mismatch is reported row by row. Fields are read raw: some inputs have leading or trailing
blanks on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from upgradeplan.errors import InvalidConstraint, InvalidVersion
from upgradeplan.versions import Constraint, Version, compare

CONFORMANCE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"


def _rows(name: str) -> list[tuple[int, list[str]]]:
    """(line number, raw fields) for every data row; empty when the file is absent."""
    path = CONFORMANCE / name
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")
    return [(n, line.split("\t")) for n, line in enumerate(lines[1:], start=2) if line]


def _params(name: str) -> list[object]:
    rows = _rows(name)
    if not rows:
        reason = f"conformance data not found: {CONFORMANCE / name}"
        return [pytest.param(None, None, marks=pytest.mark.skip(reason=reason), id="missing")]
    return [pytest.param(n, fields, id=f"{name}:{n}") for n, fields in rows]


@pytest.mark.parametrize(("line", "fields"), _params("semver-vectors.tsv"))
def test_constraint_vector(line: int, fields: list[str]) -> None:
    constraint, version, expected = fields[0], fields[1], fields[2]
    got = Constraint.parse(constraint).check(Version.parse(version))
    assert got == (expected == "true"), f"line {line}: {constraint!r} vs {version!r}"


@pytest.mark.parametrize(("line", "fields"), _params("semver-ordering.tsv"))
def test_ordering_vector(line: int, fields: list[str]) -> None:
    a, b, expected = Version.parse(fields[0]), Version.parse(fields[1]), int(fields[2])
    assert compare(a, b) == expected, f"line {line}: {fields[0]!r} vs {fields[1]!r}"
    assert compare(b, a) == -expected


def _accepts(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except (InvalidVersion, InvalidConstraint) as err:
        assert repr(text) in str(err), f"error message does not quote the input: {err}"
        return False
    return True


@pytest.mark.parametrize(("line", "fields"), _params("semver-invalid.tsv"))
def test_invalid_vector(line: int, fields: list[str]) -> None:
    kind, text = fields[0], fields[1]
    if kind == "constraint":
        assert not _accepts(Constraint.parse, text)
    elif kind == "version":
        assert not _accepts(Version.parse, text)
        assert not _accepts(Version.parse_strict, text)
    elif kind == "version-strict":
        assert _accepts(Version.parse, text)
        assert not _accepts(Version.parse_strict, text)
    elif kind == "version-flux":
        assert _accepts(Version.parse, text)
        assert not _accepts(Version.parse_flux, text)
    else:
        pytest.fail(f"line {line}: unknown kind {kind!r}")
