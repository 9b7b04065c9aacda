"""One JupyterLab for every browser test (starting Lab is the slow part)."""

from __future__ import annotations

import os

import pytest

from e2e.lab import SKIP_VARIABLE, JupyterLab, chromium_path, missing_browser_message


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    if os.environ.get(SKIP_VARIABLE) == "1":
        pytest.skip(f"{SKIP_VARIABLE}=1: the JupyterLab browser test is skipped on this machine")
    if chromium_path() is None:
        pytest.fail(missing_browser_message(), pytrace=False)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail("the playwright package is missing: pip install -e '.[dev]' (or make test)", pytrace=False)
    with JupyterLab(tmp_path_factory.mktemp("lab")) as server:
        yield server
