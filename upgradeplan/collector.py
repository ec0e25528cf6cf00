"""The cyclic garbage collector paused while many small acyclic objects are built and kept.

Reading a snapshot, a cluster's lists, a GitOps tree or the knowledge, unpickling the cache
and the planner's search each make tens of thousands of containers that hold no reference
cycles and are all kept; every collection would only walk them again (it made reading large
inputs superlinear). Pausing nests: the collector is turned on again only by the pause that
turned it off.

A one-shot console command keeps what it built until the process ends, so there the pause
that turns the collector on again first moves every object built so far to the permanent
generation (:func:`gc.freeze`), which no collection walks: otherwise the first collection
after a 5,000-release cluster read walks its some 10^5 objects again (45-80 ms). Only the
console script asks for it (:func:`freeze_on_resume`); library callers and ``fleet``, which
reads many installations in one process, never freeze, so their cyclic garbage is still
collected.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_freeze_on_resume: bool = False
_kept: list[object] = []  # what a one-shot command keeps until the exit (keep_until_exit)


def freeze_on_resume(on: bool) -> None:
    """Whether the pause that turns the collector on again freezes what exists first.

    Only for a process that ends after one command (the console script); turned off again
    by a command that reads many inputs in one process (``fleet``).
    """
    global _freeze_on_resume
    _freeze_on_resume = on


@contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; on again afterwards if it was on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _freeze_on_resume:
                gc.freeze()
            gc.enable()


def keep_until_exit(value: object) -> None:
    """In a one-shot console command (:func:`freeze_on_resume`), keep ``value`` referenced
    until the process ends; elsewhere do nothing.

    Freeing what a large read parsed (a 5,000-HelmRelease cluster's lists are some 10^5
    objects) costs tens of milliseconds when the last reference goes, and the console script
    ends without freeing anything (``os._exit``): it need not pay for it in between. A
    library caller or ``fleet`` frees it as always."""
    if _freeze_on_resume:
        _kept.append(value)
