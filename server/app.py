"""create_app(settings) -> Starlette: the route table wired to the envelope and auth."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from server.admin import admin_routes
from server.envelope import DEFAULT_MAX_BODY, BodyTooLarge, error, ok, read_body
from server.health import health_routes
from server.limits import WORKSPACE_KEY, LimitsMiddleware
from server.metrics import MetricsListener, metrics_endpoint
from server.observe import Observe
from toolkit.errors import ApiError, ErrorCode
from toolkit.logs import note_workspace
from toolkit.services.background import Background
from toolkit.services.context import AgentRunner, DefaultAgentRunner, Services
from toolkit.services.envelope import parse_data
from toolkit.services.fair_shares import Limits
from toolkit.services.metrics import Metrics
from toolkit.services.openapi import openapi_document
from toolkit.services.operations import OPERATIONS, Operation
from toolkit.services.quotas import Quotas
from toolkit.services.readiness import Probe, Readiness
from toolkit.services.webhooks.deliverer import DeliverySettings
from toolkit.services.workflow.recovery import LEASE_S
from toolkit.services.workspaces import Authenticator, unauthenticated
from toolkit.store import DEFAULT_PATH, Store, open_store

log = logging.getLogger("collab.server")


@dataclass
class Settings:
    db: str | Path = DEFAULT_PATH
    max_body_bytes: int = DEFAULT_MAX_BODY
    agent_runner: AgentRunner = field(default_factory=DefaultAgentRunner)
    timers: bool = True
    mirror_every_s: float | None = 5.0  # the Parquet mirror for analysts (None: off)
    mirror_dir: str | None = None  # its folder (DuckDB: events/ next to the file; PostgreSQL: none unless given)
    delivery: DeliverySettings = field(default_factory=DeliverySettings)  # webhook push delivery
    metrics: bool = False  # GET /metrics (Prometheus text format)
    metrics_listen: tuple[str, int] | None = None  # serve /metrics there instead of on the API's port
    readiness: Readiness = field(default_factory=Readiness)  # the bounds of GET /readyz
    shutdown_timeout_s: float = 30.0  # what stopping may take; agent runs still going get a quarter of it
    retention_ms: int | None = None  # prune finished executions older than this (None: keep all)
    maintenance_every_s: float = 3600.0  # how often retention and mirror compaction run
    admin_token: str | None = None  # the operator token of /admin/* (None: those endpoints are off)
    lease_s: float = LEASE_S  # how long a dead process's agent runs and deliveries wait to be taken over

    limits: Limits = field(default_factory=Limits)  # per-workspace rate and concurrency, fair shares
    quotas: Quotas = field(default_factory=Quotas)  # stored definitions and executions per workspace


def _handler(endpoint: Operation, app_state):
    def handle(raw: bytes, headers, workspace) -> object:
        if workspace is False:  # the limits middleware found the service credentials wrong
            raise unauthenticated()
        if workspace is None:  # no limits middleware in front
            workspace = app_state.authenticator.authenticate(
                headers.get("x-service-api-key"), headers.get("x-service-auth-token")
            )
        note_workspace(workspace.workspace_id)
        return endpoint.call(app_state.services, workspace, parse_data(raw))

    async def route(request: Request):
        try:
            raw = await read_body(request, app_state.settings.max_body_bytes)
        except BodyTooLarge:
            limit = app_state.settings.max_body_bytes
            return error(ApiError(ErrorCode.INVALID_ARGUMENT, f"body: larger than the {limit}-byte limit"), 413)
        try:
            return ok(await app_state.in_thread(handle, raw, request.headers, request.scope.get(WORKSPACE_KEY)))
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


# Threads serving requests at once (what Starlette's thread pool allows by default).
REQUEST_THREADS = 40


class _AppState:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.store: Store | None = None
        self.services: Services | None = None
        self.authenticator: Authenticator | None = None
        self.background: Background | None = None
        self.threads: ThreadPoolExecutor | None = None

    async def in_thread(self, fn, *args):
        """``fn(*args)`` on a request thread, in the request's context (its id, for the logs).
        A plain executor: Starlette's ``run_in_threadpool`` (anyio's capacity limiter and
        worker bookkeeping) costs about twice the CPU for each request."""
        assert self.threads is not None  # made when the app starts
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self.threads, context.run, fn, *args)


def create_app(settings: Settings | None = None) -> Starlette:
    """The ASGI app. The database opens (and migrates) when the app starts."""
    settings = settings or Settings()
    state = _AppState(settings)
    probe = Probe(settings.readiness)
    metrics = Metrics() if settings.metrics or settings.metrics_listen else None

    @contextlib.asynccontextmanager
    async def lifespan(app):
        state.threads = ThreadPoolExecutor(REQUEST_THREADS, thread_name_prefix="collab-request")
        state.store = open_store(settings.db)
        state.services = Services(
            state.store, runner=settings.agent_runner, webhook_policy=settings.delivery.policy, quotas=settings.quotas
        )
        state.authenticator = Authenticator(state.store)
        state.background = Background(
            state.services,
            mirror_every_s=settings.mirror_every_s,
            mirror_dir=settings.mirror_dir,
            delivery=settings.delivery,
            retention_ms=settings.retention_ms,
            maintenance_every_s=settings.maintenance_every_s,
            stop_within_s=settings.shutdown_timeout_s / 4,
            lease_s=settings.lease_s,
        )
        app.state.services = probe.services = state.services
        listener = None
        if metrics is not None:
            metrics.attach(state.services, state.background.deliverer)
            if settings.metrics_listen is not None:
                listener = MetricsListener(metrics, settings.metrics_listen)
        if settings.timers:
            await state.background.start()
        try:
            yield
        finally:
            await state.background.stop()
            if listener is not None:
                listener.close()
            state.threads.shutdown()
            state.store.close()

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
