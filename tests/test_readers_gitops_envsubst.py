"""One text through Flux's post-build substitution, expression by expression, the way
kustomize-controller's envsubst reads it: what it computes, what fails its build, and what
this reader will not guess."""

from __future__ import annotations

import pytest

from upgradeplan.readers.gitops.envsubst import Fails, Vars, expand, expressions

ENV = Vars(
    {
        "chart": "v2.31.4",
        "empty": "",
        "team": "Payments",
        "repo": "oci://registry.example.net/charts/ledger",
        "file": "ledger.values.prod.yaml",
    }
)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("${chart}", "v2.31.4"),
        # only ${...} is substituted: $chart is text, $$ writes one $
        ("$chart", "$chart"),
        ("$${chart}", "${chart}"),
        ("cost $$9 for ${team}", "cost $9 for Payments"),
        ("$$$${chart}", "$${chart}"),
        # every default form gives the default for an empty or unset value, else the value
        ("${empty:=1.0.0}", "1.0.0"),
        ("${empty=1.0.0}", "1.0.0"),
        ("${empty:-1.0.0}", "1.0.0"),
        ("${missing:=1.0.0}", "1.0.0"),
        ("${missing=1.0.0}", "1.0.0"),
        ("${chart:=1.0.0}", "v2.31.4"),
        ("${chart:+other}", "v2.31.4"),  # no bash "alternative value"
        ("${missing:+other}", "other"),
        ("${missing:?no message}", "no message"),  # no bash error either
        ("${missing:=${chart}-rc}", "v2.31.4-rc"),
        ("${missing:=}", ""),
        # length, case, substring
        ("${#team}", "8"),
        ("${team,,}", "payments"),
        ("${team^^}", "PAYMENTS"),
        ("${team,}", "payments"),
        ("${chart^}", "V2.31.4"),
        ("${chart:1}", "2.31.4"),
        ("${chart:1:4}", "2.31"),
        ("${chart:40}", ""),
        # prefix and suffix patterns: * is any text, a / too (not Go's path.Match)
        ("${chart#v}", "2.31.4"),
        ("${chart#*.}", "31.4"),
        ("${chart##*.}", "4"),
        ("${file%.*}", "ledger.values.prod"),
        ("${file%%.*}", "ledger"),
        ("${repo##*/}", "ledger"),
        ("${repo#*/}", "/registry.example.net/charts/ledger"),
        ("${repo%/*}", "oci://registry.example.net/charts"),
        ("${repo%%/*}", "oci:"),
        # plain-text replacement
        ("${chart/v/}", "2.31.4"),
        ("${file//./-}", "ledger-values-prod-yaml"),
        ("${repo/#oci:\\/\\//}", "oci://registry.example.net/charts/ledger"),  # needs two parts
        ("${repo/#oci:\\/\\//https://}", "https://registry.example.net/charts/ledger"),
        ("${file/%yaml/yml}", "ledger.values.prod.yml"),
    ],
)
def test_what_flux_computes(text: str, want: str) -> None:
    got = expand(text, ENV)
    assert (got.text, got.unknown, got.unset) == (want, {}, [])


@pytest.mark.parametrize("text", ["${chart-1.0.0}", "${chart+x}", "${chart?x}", "${}", "${ chart}"])
def test_a_form_envsubst_cannot_parse_fails_the_build(text: str) -> None:
    with pytest.raises(Fails):
        expand(text, ENV)


def test_a_variable_nobody_sets_is_unknown_and_would_fail_a_strict_build() -> None:
    got = expand("${missing}", ENV)
    assert got.text is None
    assert got.unset == ["missing"]
    assert "strict substitution" in got.unknown["${missing}"]
    # a transformation reads the value too: no default, so the same
    assert expand("${#missing}", ENV).unset == ["missing"]


def test_a_variable_a_secret_may_carry_is_unknown_even_with_a_default() -> None:
    env = Vars({"chart": "v2.31.4"}, maybe="it may come from Secret cluster-vars")
    got = expand("${ledger_version:=2.0.0}", env)
    assert got.text is None
    assert "Secret cluster-vars" in got.unknown["${ledger_version:=2.0.0}"]
    assert expand("${chart#v}", env).text == "2.31.4"


@pytest.mark.parametrize(
    "text",
    [
        "${chart#[v]}",  # a character class
        "${chart/v}",  # a replacement without its second slash
        "${chart:1::2}",
        "${chart:=unclosed",
    ],
)
def test_a_form_read_without_certainty_is_unknown(text: str) -> None:
    got = expand(text, ENV)
    assert got.text is None and got.unknown
    assert not got.unset


def test_expressions_are_named_as_written() -> None:
    assert expressions("ghcr.io/x:${tag:=1.0} and $${kept}") == ["${tag:=1.0}"]
    assert expressions("${bad-}") == []
