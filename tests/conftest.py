"""Shared pytest configuration: the golden-file switch and common paths."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from upgradeplan.model import KnowledgeBase

REPO = Path(__file__).resolve().parents[1]
SHARED_CONFORMANCE = REPO.parent / "shared" / "conformance"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite golden files under tests/golden/ from the current output.",
    )


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    """The bundled knowledge base, loaded once for the whole run (it is frozen)."""
    from upgradeplan.kb.loader import load

    return load()


def fixture_path(*parts: str) -> Path:
    """A fixture that lives in the repository: missing is a failure, never a skip."""
    path = REPO.joinpath("tests", "fixtures", *parts)
    assert path.exists(), f"fixture {path.relative_to(REPO)} is missing from the repository"
    return path


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(autouse=True, scope="session")
def _knowledge_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The knowledge cache and write journals of the run in throw-away directories, not the
    user's ~/.cache and ~/.local/state."""
    names = ("XDG_CACHE_HOME", "XDG_STATE_HOME", "UPGRADEPLAN_CHART_CHECKS")
    saved = {name: os.environ.get(name) for name in names}
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("xdg-state"))  # write journals
    # no test reaches the network for chart archives: those of tests/test_charts*.py serve
    # their own on 127.0.0.1 and turn the checks back on
    os.environ["UPGRADEPLAN_CHART_CHECKS"] = "off"
    yield
    for name, before in saved.items():
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before
