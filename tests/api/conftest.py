"""One real server for the HTTP tests: a temporary DuckDB file, two workspaces created with
`collab workspace create` (before the server starts: DuckDB admits one writing process per
file), then `collab serve` on a free port. Killed at the end of the session."""

from __future__ import annotations

import pytest

from api.support import Api, serve_fresh


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
