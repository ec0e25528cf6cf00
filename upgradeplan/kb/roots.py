"""Where knowledge is read from: the bundled directory and the ``--kb`` directories, in order.

Shared by the loader and the knowledge cache (which keys its entries by these roots' files),
so finding them imports neither the YAML parser nor the loader; nor pathlib, for the bundled
directory alone (the cache's warm path works on the strings of :func:`root_dirs`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from upgradeplan.errors import BadInput

if TYPE_CHECKING:
    from pathlib import Path


def bundled_path() -> str:
    """The directory of the bundled knowledge (package ``upgradeplan.knowledge``).

    The package's own directory (it always installs as files): importlib.resources would pull
    tempfile, zipfile, shutil and the compression modules into every command.
    """
    from importlib.util import find_spec

    spec = find_spec("upgradeplan.knowledge")
    if spec is None or not spec.submodule_search_locations:
        raise BadInput(
            "the bundled knowledge (package upgradeplan.knowledge) is missing",
            hint="reinstall upgradeplan",
        )
    return str(next(iter(spec.submodule_search_locations)))


def bundled_dir() -> Path:
    """:func:`bundled_path` as a Path."""
    from pathlib import Path

    return Path(bundled_path())


def root_dirs(dirs: Sequence[str | Path], *, bundled: bool) -> list[str]:
    """The knowledge roots in load order (bundled first), each once, named as pathlib names
    them (``str(Path(d))``)."""
    roots = [bundled_path()] if bundled else []
    if dirs:  # pathlib (with urllib.parse and ipaddress) only for a command given --kb
        from pathlib import PurePath
    for d in dirs:
        if not os.path.isdir(d):
            raise BadInput(
                f"knowledge directory {str(d)!r} does not exist or is not a directory",
                hint="check --kb / UPGRADEPLAN_KB",
            )
        roots.append(str(PurePath(d)))
    seen: set[str] = set()
    out: list[str] = []
    for r in roots:
        key = os.path.realpath(r)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out
