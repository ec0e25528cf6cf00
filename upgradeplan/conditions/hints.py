"""How a user supplies a fact a condition needed and did not have (from the key table)."""

from __future__ import annotations

import re

from upgradeplan.state.keys import READERS_HINT, how_to_supply, match

_PLACE = re.compile(r"<([A-Za-z]+)>")


def kubectl_for(key: str) -> str:
    """The kubectl command that shows the fact ``key``, its placeholders filled from the key.

    ``object.Harness.kagent.kagent.exists`` -> ``kubectl get harness kagent -n kagent -o yaml``;
    "" when the key's row names no command.
    """
    found = match(key)
    if found is None or not found.row.kubectl:
        return ""
    parts: dict[str, str] = {}
    template = found.row.key
    # the row's documented key as a pattern: each <placeholder> a named group
    pieces = _PLACE.split(template)
    rx = "".join(
        re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>.+?)" for i, piece in enumerate(pieces)
    )
    m = re.fullmatch(rx, key)
    if m is not None:
        parts = {k: v for k, v in m.groupdict().items() if v}
    if "Kind" in parts:
        parts["Kind"] = parts["Kind"].lower()  # kubectl takes the kind in lower case

    def fill(place: re.Match[str]) -> str:
        return parts.get(place.group(1), place.group(0))

    return _PLACE.sub(fill, found.row.kubectl)


def hint_parts(key: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """How a user supplies the fact ``key``, and each kubectl command that shows it with the
    field to look at ("" when the row names none): the parts of :func:`missing_fact_hint`,
    for renderings that quote a command their own way."""
    shown = kubectl_for(key)
    said: list[tuple[str, str]] = []
    for alt in shown.split("; ") if shown else ():
        cmd, _, field = alt.partition(" (")
        said.append((cmd, field.removesuffix(")")))
    return how_to_supply(key), tuple(said)


def missing_fact_hint(key: str) -> str:
    """How a user supplies the fact ``key`` (its row's ``supply`` in the fact-key table), and
    the kubectl command that shows it where there is one."""
    how, shown = hint_parts(key)
    if not shown:
        return how
    said = [f"`{cmd}`" + (f" ({field})" if field else "") for cmd, field in shown]
    return f"{how}; shown by {' or '.join(said)}"


__all__ = ["READERS_HINT", "hint_parts", "kubectl_for", "missing_fact_hint"]
