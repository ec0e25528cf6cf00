"""``change.<product>`` facts: which pins the change under review moves (``--base REF``).

The pull-request gate reads the GitOps tree twice, at the base ref and in the working tree.
Every product pinned in either gets ``change.<product>``: ``moved`` when the change writes,
moves or removes its pin (a range rewritten so that it selects the same release is ``kept``),
``kept`` when the pin stays. A product pinned in neither tree gets no fact, and without
``--base`` there are none: a predicate on them is then "may apply" (docs/state-format.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from upgradeplan.model import Fact, State
from upgradeplan.provenance import Source

MOVED = "moved"
KEPT = "kept"


def _pins(state: State) -> dict[str, Fact]:
    return {f.key[len("pin.") :]: f for f in state if f.key.startswith("pin.")}


def change_facts(base: State, head: State, moved: Mapping[str, Source]) -> tuple[Fact, ...]:
    """The change facts of the change from ``base`` to ``head``; ``moved`` maps each product
    whose pin selects another release to where its new pin is written."""
    before, after = _pins(base), _pins(head)
    out: list[Fact] = []
    for product in sorted(set(before) | set(after)):
        now, then = after.get(product), before.get(product)
        if product in moved:
            out.append(Fact(f"change.{product}", MOVED, moved[product]))
        elif now is None or then is None or (now.value is None) != (then.value is None):
            written = now if now is not None else then  # a pin written or removed
            assert written is not None
            out.append(Fact(f"change.{product}", MOVED, written.source))
        else:
            out.append(Fact(f"change.{product}", KEPT, now.source))
    return tuple(out)


def with_changes(base: State, head: State, moved: Mapping[str, Source]) -> State:
    """``base`` with the change facts added."""
    return base.with_facts(*change_facts(base, head, moved))
