"""Operator endpoints, outside ``/v2``: ``POST /admin/backup`` streams a consistent copy of the
database (:func:`toolkit.store.backup.backup_beside`).

They span workspaces, so workspace credentials do not open them: the server is started with
an operator token (``--admin-token`` / ``COLLAB_ADMIN_TOKEN``) and a request carries it as
``authorization: Bearer <token>``. Without a token configured the endpoints answer 404, as if
they did not exist.
"""

from __future__ import annotations

import hmac
import logging
import os

from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse
from starlette.routing import Route

from server.envelope import error
from toolkit.errors import ApiError, ErrorCode
from toolkit.store.backup import backup_beside

log = logging.getLogger("collab.admin")


def admin_routes(state) -> list[Route]:
    """The operator routes; ``state`` is the app state (its settings and store)."""

    def authorised(request: Request):
        token = state.settings.admin_token
        if not token:
            return error(ApiError(ErrorCode.NOT_FOUND, f"no endpoint at {request.url.path}"), 404)
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return error(
                ApiError(ErrorCode.UNAUTHENTICATED, "authorization: the operator token (Bearer) is missing or wrong"),
                401,
            )
        return None

    async def backup(request: Request):
        refused = authorised(request)
        if refused is not None:
            return refused
        try:
            tmp = await run_in_threadpool(backup_beside, state.store)
        except Exception as exc:  # disk full, say: the operator gets the reason, the server carries on
            log.exception("backup failed")
            return error(ApiError(ErrorCode.UNAVAILABLE, f"backup failed: {type(exc).__name__}: {exc}"))
        return FileResponse(
            tmp,
            media_type="application/octet-stream",
            filename="collab-backup.duckdb",
            background=BackgroundTask(os.remove, tmp),
        )

    return [Route("/admin/backup", backup, methods=["POST"])]
