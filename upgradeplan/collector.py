"""The cyclic garbage collector paused while many small acyclic objects are built and kept.

Reading a snapshot, a cluster's lists, a GitOps tree or the knowledge, unpickling the cache
and the planner's search each make tens of thousands of containers that hold no reference
cycles and are all kept; every collection would only walk them again (it made reading large
inputs superlinear). Pausing nests: the collector is turned on again only by the pause that
turned it off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; on again afterwards if it was on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
