"""Shared test setup: makes ``tests/strategies.py`` importable as ``strategies`` from every test,
and starts one real PostgreSQL server for the tests that ask for it (``postgres_dsn``)."""

import itertools
import os
import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from postgres import SKIP_ENV, PostgresCluster  # noqa: E402  (needs the path above)


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
