"""One real server for the HTTP tests: a temporary DuckDB file, two workspaces created with
`collab workspace create` (before the server starts: DuckDB admits one writing process per
file), then `collab serve` on a free port. Killed at the end of the session."""

from __future__ import annotations

import pytest

from api.support import Api, Server, create_workspace


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("api-server")
    db = root / "api.duckdb"
    creds_a = create_workspace(db)
    creds_b = create_workspace(db)
    srv = Server(db, root / "server.log").start()
    srv.creds_a, srv.creds_b = creds_a, creds_b
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
