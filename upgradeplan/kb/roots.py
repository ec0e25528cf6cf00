"""Where knowledge is read from: the bundled directory and the ``--kb`` directories, in order.

Shared by the loader and the knowledge cache (which keys its entries by these roots' files),
so finding them imports neither the YAML parser nor the loader.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from upgradeplan.errors import BadInput


def bundled_dir() -> Path:
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
    return Path(next(iter(spec.submodule_search_locations)))


def roots_of(dirs: Sequence[str | Path], *, bundled: bool) -> list[Path]:
    """The knowledge roots in load order (bundled first), each once."""
    roots: list[Path] = [bundled_dir()] if bundled else []
    for d in dirs:
        p = Path(d)
        if not p.is_dir():
            raise BadInput(
                f"knowledge directory {str(d)!r} does not exist or is not a directory",
                hint="check --kb / UPGRADEPLAN_KB",
            )
        roots.append(p)
    seen: set[Path] = set()
    out: list[Path] = []
    for r in roots:
        key = r.resolve()
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out
