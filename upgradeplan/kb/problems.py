"""Problems found in a knowledge base, and the catalogue of their codes.

Every problem has a stable code (``KB001``…), a severity and a ``file:line`` location. The
catalogue is the single list of codes: the loader, the semantic checks and ``kb lint
--list-checks`` all read it.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

from upgradeplan.model import Location

ProblemSeverity = Literal["error", "warning"]


class Problem(Struct, frozen=True, order=True):
    """One problem: where, which check, what is wrong (and what to do)."""

    location: Location
    code: str
    message: str
    severity: ProblemSeverity = "error"

    def __str__(self) -> str:
        return f"{self.location} {self.code} {self.message}"

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.location.file,
            "line": self.location.line,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }


class CheckInfo(Struct, frozen=True):
    code: str
    name: str
    severity: ProblemSeverity
    description: str


CATALOGUE: tuple[CheckInfo, ...] = (
    CheckInfo("KB001", "yaml-syntax", "error", "the file is not readable YAML (with the line)"),
    CheckInfo("KB002", "schema", "error", "the file does not match the JSON Schema of its kind"),
    CheckInfo(
        "KB003",
        "file-name",
        "error",
        "the file's path does not match its kind, id, product or version",
    ),
    CheckInfo(
        "KB004",
        "duplicate-id",
        "error",
        "a product, release, hazard or migration is defined twice (also across directories)",
    ),
    CheckInfo(
        "KB005",
        "unknown-product",
        "error",
        "a product id that no products/<id>.yaml defines is referenced",
    ),
    CheckInfo(
        "KB006",
        "unknown-release",
        "error",
        "a BOM version or a skip stop that is not a known release of its product",
    ),
    CheckInfo(
        "KB007", "unknown-migration", "error", "a hazard names a migration that does not exist"
    ),
    CheckInfo("KB008", "invalid-version", "error", "a version Helm/Flux would not accept"),
    CheckInfo(
        "KB009", "invalid-constraint", "error", "a version constraint Helm/Flux would reject"
    ),
    CheckInfo(
        "KB010",
        "skip-stop-not-below",
        "error",
        "a skip hazard's stop is not below the lowest known release its `to` range matches",
    ),
    CheckInfo(
        "KB011",
        "range-matches-nothing",
        "error",
        "a hazard range (or stop window) matches no known release of its product",
    ),
    CheckInfo(
        "KB012",
        "upgrade-cycle",
        "error",
        "a release's upgrade_from admits the release itself or a later release (a cycle)",
    ),
    CheckInfo(
        "KB013",
        "unreachable-release",
        "error",
        "a release's upgrade_from excludes every earlier release of its product",
    ),
    CheckInfo(
        "KB014",
        "template-render",
        "error",
        "a migration template fails to render against a sample state",
    ),
    CheckInfo(
        "KB015", "bad-pattern", "error", "a symptom pattern is not a valid regular expression"
    ),
    CheckInfo(
        "KB016", "unreleased-with-date", "error", "an unreleased (`next`) release has a date"
    ),
    CheckInfo("KB017", "withdrawn-without-date", "error", "a `withdrawn` entry has no date"),
    CheckInfo(
        "KB018",
        "bad-predicate",
        "error",
        "a `when` condition uses an unknown predicate or a missing/unknown argument",
    ),
    CheckInfo(
        "KB019", "no-symptom", "warning", "a hazard has no symptoms (diagnose cannot match it)"
    ),
    CheckInfo("KB020", "no-verify", "warning", "a hazard has no verify commands"),
    CheckInfo(
        "KB021",
        "bad-reference",
        "error",
        "a reference is neither owner/repo#N, an http(s) URL nor doc:<name>",
    ),
    CheckInfo("KB022", "duplicate-key", "error", "a key is written twice in one YAML mapping"),
    CheckInfo("KB023", "bad-date", "error", "a date is not a real YYYY-MM-DD calendar date"),
    CheckInfo(
        "KB024",
        "unknown-fact",
        "error",
        "a fact key outside the vocabulary of docs/state-format.md (effects, params, predicates)",
    ),
    CheckInfo(
        "KB025",
        "inferred-field",
        "warning",
        "a field is marked inferred (its value rests on a reason, not on a source)",
    ),
    CheckInfo("KB026", "no-reference", "error", "a hazard (not withdrawn) has no reference"),
    CheckInfo(
        "KB027", "bad-inferred-path", "error", "an `inferred` path names no field of its file"
    ),
    CheckInfo(
        "KB028",
        "bad-amend",
        "error",
        "an `amend` names no entry of an earlier directory, or changes a field without an override",
    ),
    CheckInfo(
        "KB029",
        "undeclared-object-field",
        "warning",
        "a condition reads a custom-resource field no product declares under `objects:` "
        "(no reader reads it; only a stated fact can settle it)",
    ),
    CheckInfo(
        "KB030",
        "placeholder",
        "error",
        "a field still holds a `TODO:` placeholder that `kb new` wrote",
    ),
    CheckInfo(
        "KB031",
        "bad-crossing-note",
        "error",
        "a crossing note's `shipped` range is invalid or admits no release of its product, "
        "its id is repeated, it names an unknown hazard, or it cites no section and quote",
    ),
    CheckInfo(
        "KB032",
        "migration-without-reference",
        "warning",
        "a migration has no reference (`kb lint` only)",
    ),
    CheckInfo(
        "KB040",
        "pack-manifest",
        "error",
        "a knowledge pack's pack.yaml lacks a field, or disagrees with the pack's products",
    ),
)

BY_CODE: dict[str, CheckInfo] = {c.code: c for c in CATALOGUE}


def problem(code: str, location: Location, message: str) -> Problem:
    """A problem with the severity the catalogue gives ``code``."""
    return Problem(location, code, message, BY_CODE[code].severity)
