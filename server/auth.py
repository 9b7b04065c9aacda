"""Service headers -> workspace (semantics §2)."""

from __future__ import annotations

from starlette.requests import Request

from toolkit.services.workspaces import Authenticator, Workspace


def workspace_of(request: Request, authenticator: Authenticator) -> Workspace:
    """Raises UNAUTHENTICATED without saying which of the two headers was wrong."""
    return authenticator.authenticate(request.headers.get("x-service-api-key"),
                                      request.headers.get("x-service-auth-token"))
