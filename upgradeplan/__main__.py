"""The console scripts and ``python -m upgradeplan``: run the click CLI and exit with its code."""

from __future__ import annotations

import sys


def main() -> None:
    """Entry point of ``upgradeplan`` and ``kubectl-upgradeplan``."""
    from upgradeplan.cli import run

    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
