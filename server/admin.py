"""Operator endpoints, outside ``/v2`` (:mod:`toolkit.services.operator` says who may call them):
``POST /admin/backup`` streams a consistent copy of the database."""

from __future__ import annotations

import os

from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from server.envelope import error
from toolkit.errors import ApiError
from toolkit.services import operator
from toolkit.services.serving import Serving


def admin_routes(state: Serving) -> list[Route]:
    """The operator routes of the app whose settings and store ``state`` holds."""

    async def backup(request: Request) -> Response:
        try:
            operator.authorise(state.settings.admin_token, request.headers.get("authorization", ""), request.url.path)
            assert state.store is not None  # requests come after start
            tmp = await run_in_threadpool(operator.backup, state.store)
        except ApiError as exc:
            return error(exc)
        return FileResponse(
            tmp,
            media_type="application/octet-stream",
            filename="collab-backup.duckdb",
            background=BackgroundTask(os.remove, tmp),
        )

    return [Route("/admin/backup", backup, methods=["POST"])]
