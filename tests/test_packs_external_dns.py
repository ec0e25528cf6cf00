"""The external-dns pack (packs/external-dns) as a user meets it: each hazard applies, does not
apply, or may apply when the values are unknown, on stated facts; a Flux tree of our own
(tests/fixtures/packs/external-dns) with a webhook provider on 1.13.1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.cli import check, run

ROOT = Path(__file__).resolve().parent.parent
PACK = ("--pack", "external-dns")
FIXTURE = ROOT / "tests" / "fixtures" / "packs" / "external-dns"
PORT = "external-dns-1140-webhook-port-name"
TEMPLATE = "external-dns-1140-provider-template"


def judge(frm: str, to: str, *facts: str) -> tuple[int, dict[str, str]]:
    """``check`` of one stated move: exit code and each hazard's status on the direct jump."""
    args = [*PACK, "--installed", f"external-dns={frm}", "--to", f"external-dns={to}"]
    for fact in facts:
        args += ["--fact", fact]
    code, result = check(*args)
    found: list[dict[str, Any]] = result["findings"]
    return code, {f["hazard"]: f["status"] for f in found}


def provider(name: str) -> tuple[str, str]:
    return (
        f'values.external-dns={{"provider.name":"{name}"}}',
        f"values.external-dns.provider.name={name}",
    )


def test_the_pack_lints_clean() -> None:
    code, out = run("kb", "lint", "--strict", *PACK)
    assert (code, out.strip()) == (0, "")


def test_a_webhook_provider_cannot_land_on_1_14_0() -> None:
    code, found = judge("1.13.1", "1.14.0", *provider("webhook"))
    assert (code, found[PORT]) == (3, "applies")
    code, found = judge("1.13.1", "1.14.1", *provider("webhook"))
    assert (code, found[PORT]) == (0, "does-not-apply")


def test_the_default_provider_lands_on_1_14_0_by_the_charts_default() -> None:
    code, found = judge("1.13.1", "1.14.0", "values.external-dns={}")
    assert (code, found[PORT]) == (0, "does-not-apply")


def test_unknown_values_leave_1_14_0_undetermined() -> None:
    code, found = judge("1.13.1", "1.14.0")
    assert (code, found[PORT]) == (4, "may-apply")


def test_a_templated_provider_cannot_land_on_1_14_0_or_1_14_1() -> None:
    templated = provider("dns-{{ .Values.zone }}")
    for to in ("1.14.0", "1.14.1"):
        code, found = judge("1.13.1", to, *templated)
        assert (code, found[TEMPLATE]) == (3, "applies"), to
    code, found = judge("1.13.1", "1.14.2", *templated)
    assert (code, found[TEMPLATE]) == (0, "does-not-apply")


def test_a_plain_provider_name_is_not_a_template() -> None:
    _, found = judge("1.13.1", "1.14.1", *provider("cloudflare"))
    assert found[TEMPLATE] == "does-not-apply"


def test_unknown_values_leave_the_template_hazard_open() -> None:
    code, found = judge("1.13.1", "1.14.1")
    assert (code, found[TEMPLATE]) == (4, "may-apply")


def test_gitops_tree_with_a_webhook_provider_on_1_14_0_exits_3_and_1_14_1_exits_0() -> None:
    base = (*PACK, "check", "--gitops", str(FIXTURE), "--to")
    code, out = run(*base, "external-dns=1.14.0")
    assert code == 3, out
    assert PORT in out
    code, out = run(*base, "external-dns=1.14.1")
    assert code == 0, out
