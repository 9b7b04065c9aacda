"""Shared test setup: makes ``tests/strategies.py`` importable as ``strategies`` from every test,
refuses to run on a stale compiled module, puts the long-running files first, and starts one
real PostgreSQL server for the tests that ask for it (``postgres_dsn``)."""

import itertools
import os
import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from postgres import SKIP_ENV, PostgresCluster  # noqa: E402  (needs the path above)


def pytest_sessionstart(session):
    """A module compiled by mypyc (setup.py) is imported in place of its source, so one built
    before its source last changed would test old code: stop, and say how to rebuild."""
    root = Path(__file__).resolve().parents[1]
    stale = [
        str(built.relative_to(root))
        for built in root.glob("toolkit/*/*.cpython-*.so")
        if built.with_name(built.name.split(".", 1)[0] + ".py").stat().st_mtime > built.stat().st_mtime
    ]
    if stale:
        pytest.exit(f"compiled modules older than their sources: {stale}; run `make compiled` (or COLLAB_COMPILE=0)")


def pytest_collection_modifyitems(session, config, items):
    """The files that hold a ``slow`` test, and the notebooks, run first. `make test` hands whole
    files to its two workers in the order collected (``--dist loadfile --no-loadscope-reorder``):
    a file of one long test collected last would run alone at the end while the other worker
    idles (pytest-xdist's own reordering, by number of tests per file, puts exactly those last)."""
    first = {item.path for item in items if item.path.suffix == ".ipynb" or item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in first)  # stable: the order within each part stays


@pytest.fixture(scope="session")
def postgres_cluster():
    """One real PostgreSQL server for the whole run, in a temporary directory."""
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: the PostgreSQL tests are skipped")
    cluster = PostgresCluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


_database_names = itertools.count(1)


@pytest.fixture
def postgres_dsn(postgres_cluster):
    """A new, empty database on the test cluster (its DSN), one per test."""
    return postgres_cluster.create_database(f"t{os.getpid()}_{next(_database_names)}")
