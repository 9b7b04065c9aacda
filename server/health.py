"""``GET /healthz`` (the process answers) and ``GET /readyz`` (it can do its work, by the
checks of :class:`toolkit.services.readiness.Probe`: 503 with one line saying which failed).
Neither needs credentials or says anything about any workspace."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from toolkit.services.readiness import Probe


def health_routes(probe: Probe) -> list[Route]:
    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> PlainTextResponse:
        problem = await probe.problem()
        if problem is None:
            return PlainTextResponse("ready\n")
        return PlainTextResponse(f"not ready: {problem}\n", status_code=503)

    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]
