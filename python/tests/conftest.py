"""Shared fixtures: the shared corpus (games and reference traces).

The corpus is found at `$GGPNET_CORPUS`, else at `../shared` beside the
repository. When it is absent, the tests that need it are skipped with a
printed notice, unless `GGPNET_REQUIRE_CORPUS=1`, which makes them fail.
The adapters' tests need open_spiel, pettingzoo or gymnasium: without one,
they are skipped with a notice, unless `GGPNET_REQUIRE_EXTRAS=1`.
"""

import importlib
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def corpus_dir():
    """The corpus directory, or None when it is absent."""
    given = os.environ.get("GGPNET_CORPUS")
    path = Path(given) if given else REPO.parent / "shared"
    return path if (path / "games").is_dir() else None


@pytest.fixture(scope="session")
def corpus():
    """The corpus directory; skips (or fails under GGPNET_REQUIRE_CORPUS=1) without it."""
    path = corpus_dir()
    if path is None:
        message = "the shared corpus is absent (set GGPNET_CORPUS or put it at ../shared)"
        if os.environ.get("GGPNET_REQUIRE_CORPUS") == "1":
            pytest.fail(message + " and GGPNET_REQUIRE_CORPUS=1")
        print("notice: " + message + "; skipping")
        pytest.skip(message)
    return path


def require_module(name, package):
    """Module `name` (from the PyPI package `package`); skips the test module
    with a notice without it, or fails under `GGPNET_REQUIRE_EXTRAS=1`."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"{name} is not installed (pip install {package})"
        if os.environ.get("GGPNET_REQUIRE_EXTRAS") == "1":
            pytest.fail(message + " and GGPNET_REQUIRE_EXTRAS=1", pytrace=False)
        print("notice: " + message + "; skipping")
        pytest.skip(message, allow_module_level=True)


def pytest_report_header(config):
    path = corpus_dir()
    return f"ggpnet corpus: {path if path else 'absent'}"
