"""create_app(settings) -> Starlette: the route table wired to the envelope and auth."""

from __future__ import annotations

import contextlib
import logging

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.admin import admin_routes
from server.envelope import BodyTooLarge, error, ok, read_body
from server.health import health_routes
from server.limits import WORKSPACE_KEY, LimitsMiddleware
from server.metrics import MetricsListener, metrics_endpoint
from server.observe import Observe
from toolkit.errors import ApiError, ErrorCode
from toolkit.logs import note_workspace
from toolkit.services.envelope import parse_data
from toolkit.services.metrics import Metrics
from toolkit.services.openapi import openapi_document
from toolkit.services.operations import OPERATIONS, Operation
from toolkit.services.readiness import Probe
from toolkit.services.serving import Serving, Settings
from toolkit.services.workspaces import Workspace, unauthenticated

__all__ = ["Settings", "create_app"]

log = logging.getLogger("collab.server")


def _handler(endpoint: Operation, app_state: Serving):
    def handle(raw: bytes, workspace: Workspace | bool | None) -> object:
        assert app_state.services is not None  # requests come after start
        if not isinstance(workspace, Workspace):  # the limits middleware found no valid credentials
            raise unauthenticated()
        note_workspace(workspace.workspace_id)
        return endpoint.call(app_state.services, workspace, parse_data(raw))

    async def route(request: Request):
        try:
            raw = await read_body(request, app_state.settings.max_body_bytes)
        except BodyTooLarge:
            limit = app_state.settings.max_body_bytes
            return error(ApiError(ErrorCode.INVALID_ARGUMENT, f"body: larger than the {limit}-byte limit"), 413)
        try:
            return ok(await app_state.in_thread(handle, raw, request.scope.get(WORKSPACE_KEY)))
        except ApiError as exc:
            return error(exc)
        except Exception:  # a 5xx is always a bug: log it, never leak internals
            log.exception("unhandled error on %s", endpoint.path)
            return error(ApiError(ErrorCode.INTERNAL, "internal error"))

    return route


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)  # registered for HTTPException only
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "POST")
        message = f"method {request.method} not allowed: use {allowed}"
        response = error(ApiError(ErrorCode.INVALID_ARGUMENT, message), 405)
        response.headers["Allow"] = allowed
        return response
    if exc.status_code == 404:
        return error(ApiError(ErrorCode.NOT_FOUND, f"no endpoint at {request.url.path}"), 404)
    return error(ApiError(ErrorCode.INVALID_ARGUMENT, str(exc.detail)), exc.status_code)


def create_app(settings: Settings | None = None) -> Starlette:
    """The ASGI app. The database opens (and migrates) when the app starts."""
    settings = settings or Settings()
    state = Serving(settings)
    probe = Probe(settings.readiness)
    metrics = Metrics() if settings.metrics or settings.metrics_listen else None

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await state.start()
        assert state.services is not None and state.background is not None  # made by start()
        app.state.services = probe.services = state.services
        listener = None
        if metrics is not None:
            metrics.attach(state.services, state.background.deliverer)
            if settings.metrics_listen is not None:
                listener = MetricsListener(metrics, settings.metrics_listen)
        try:
            yield
        finally:
            await state.stop()
            if listener is not None:
                listener.close()

    async def openapi(request: Request):
        return JSONResponse(openapi_document())

    routes = [Route(e.path, _handler(e, state), methods=["POST"]) for e in OPERATIONS]
    routes.append(Route("/openapi.json", openapi, methods=["GET"]))
    routes += health_routes(probe)
    if metrics is not None and settings.metrics_listen is None:
        routes.append(Route("/metrics", metrics_endpoint(metrics), methods=["GET"]))
    routes += admin_routes(state)
    # Observe is outermost, so that refusals by the limits are logged and counted too.
    observe = Middleware(Observe, routes={r.path for r in routes}, metrics=metrics)
    limits = Middleware(LimitsMiddleware, limits=settings.limits, authenticator=lambda: state.authenticator)
    app = Starlette(
        routes=routes, lifespan=lifespan, exception_handlers={HTTPException: _http_error}, middleware=[observe, limits]
    )
    app.router.redirect_slashes = False  # a redirect would be built from the Host header: 404 instead
    return app
