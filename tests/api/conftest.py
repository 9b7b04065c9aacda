"""One real server for the HTTP tests: a temporary DuckDB file, two workspaces created with
`collab workspace create` (before the server starts: DuckDB admits one writing process per
file), then `collab serve` on a free port. Killed at the end of the session."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

from api.support import Api, serve_fresh

# Modules whose tests choose their database themselves (a DuckDB file they name, or a PostgreSQL
# cluster of their own with several processes), whatever COLLAB_TEST_BACKEND says: `make test`'s
# second pass, the API tests on PostgreSQL, leaves them out (marker own_database), having run
# them in the first.
OWN_DATABASE = (
    "test_smoke.py",
    "test_startup.py",
    "test_credentials_cli.py",
    "test_database_outage.py",
    "test_postgres_*.py",
    "test_processes_*.py",
)


def pytest_collection_modifyitems(items):
    for item in items:
        if any(fnmatch.fnmatch(Path(str(item.fspath)).name, pattern) for pattern in OWN_DATABASE):
            item.add_marker(pytest.mark.own_database)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("api-server")
    srv = serve_fresh(root, "api")
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def api(server):
    """Workspace A."""
    with server.client(server.creds_a) as client:
        yield Api(client)


@pytest.fixture(scope="session")
def api_b(server):
    """Workspace B (isolation tests)."""
    with server.client(server.creds_b) as client:
        yield Api(client)


@pytest.fixture(scope="session")
def anon(server):
    """No service headers at all (authentication tests)."""
    with server.client(None) as client:
        yield Api(client)
