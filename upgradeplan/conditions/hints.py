"""How a user supplies a fact a condition needed and did not have."""

from __future__ import annotations

READERS_HINT = "or read it with --kubeconfig/--snapshot/--gitops"


def missing_fact_hint(key: str) -> str:
    """How a user supplies the fact ``key``."""
    if key.startswith("installed."):
        return f"--installed {key[len('installed.') :]}=VERSION, {READERS_HINT}"
    if key.startswith("pin."):
        return f"--pin {key[len('pin.') :]}=CONSTRAINT, {READERS_HINT}"
    if key.startswith("cloud."):
        return f"--fact {key}=VALUE (cloud facts can only be stated)"
    return f"--fact {key}=VALUE, {READERS_HINT}"
