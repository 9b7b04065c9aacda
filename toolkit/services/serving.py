"""A serving process, whatever answers its requests: its :class:`Settings`, and :class:`Serving`,
the parts it opens when it starts and closes when it stops — the store, the services, the
authenticator, the background work and the threads that run requests' service calls.

The HTTP server (``server.create_app``) holds one :class:`Serving` for its app's lifespan and
only adds what HTTP needs (routes, envelope, limits middleware, /metrics).

>>> import asyncio
>>> async def opened():
...     serving = Serving(Settings(db=":memory:", timers=False))
...     await serving.start()
...     try:
...         return serving.services.store.dialect
...     finally:
...         await serving.stop()
>>> asyncio.run(opened())
'duckdb'
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from toolkit.services.background import Background
from toolkit.services.context import AgentRunner, DefaultAgentRunner, Services
from toolkit.services.fair_shares import Limits
from toolkit.services.quotas import Quotas
from toolkit.services.readiness import Readiness
from toolkit.services.webhooks.deliverer import DeliverySettings
from toolkit.services.workflow.recovery import LEASE_S
from toolkit.services.workspaces import Authenticator
from toolkit.store import DEFAULT_PATH, AnyStore, open_store

log = logging.getLogger("collab.server")

__all__ = ["ConnectionLimits", "DEFAULT_MAX_BODY", "REQUEST_THREADS", "Serving", "Settings"]

DEFAULT_MAX_BODY = 1024 * 1024
# Threads serving requests at once (what Starlette's thread pool allows by default).
REQUEST_THREADS = 40

T = TypeVar("T")


@dataclass(frozen=True)
class ConnectionLimits:
    """What the HTTP server allows a connection (``server.protocol``), set apart from
    :class:`Settings` because uvicorn, not the app, applies them."""

    max_connections: int = 1024  # open connections at once (0: no limit)
    max_head_bytes: int = 16 * 1024  # request line and headers together
    head_timeout_s: float = 10.0  # to send a whole request head
    keep_alive_s: float = 5.0  # an idle kept-alive connection is closed after this


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


# Collections of the youngest generation start after this many new container objects, where
# Python's default is 700: under load that was a collection every 13 requests, 1.2 % of the
# server's time; at 10,000 a tenth of it, each collection still under 0.2 ms.
YOUNG_THRESHOLD = 10_000


def settle_memory() -> None:
    """For a server process once its app has started: collect, then freeze what is left (the
    modules, the app, the store's caches) out of the cyclic collector's reach, and collect the
    young generation less often. Without the freeze every full collection walks every object
    the imports made: under load one came every 2 s and held the GIL for 65-70 ms, every
    request in flight waiting, which was the server's p99."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def exit_overdue(seconds: float) -> None:
    """End the process with exit status 1: its stop took longer than ``seconds``."""
    log.error("shutdown took longer than %g s: exiting without finishing it", seconds)
    logging.shutdown()
    os._exit(1)


class Serving:
    """What :meth:`start` opens (in the event loop that is to run the background work) and
    :meth:`stop` closes; until then ``store``, ``services``, ``authenticator`` and
    ``background`` are None."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store: AnyStore | None = None
        self.services: Services | None = None
        self.authenticator: Authenticator | None = None
        self.background: Background | None = None
        self.threads: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        """Open the database (migrating it), make the services and start the background work
        (unless ``settings.timers`` is off)."""
        settings = self.settings
        self.threads = ThreadPoolExecutor(REQUEST_THREADS, thread_name_prefix="collab-request")
        self.store = store = open_store(settings.db)
        store.warm()  # what the first write loads, loaded before the first request
        self.services = Services(
            store, runner=settings.agent_runner, webhook_policy=settings.delivery.policy, quotas=settings.quotas
        )
        self.authenticator = Authenticator(store)
        self.background = Background(
            self.services,
            mirror_every_s=settings.mirror_every_s,
            mirror_dir=settings.mirror_dir,
            delivery=settings.delivery,
            retention_ms=settings.retention_ms,
            maintenance_every_s=settings.maintenance_every_s,
            stop_within_s=settings.shutdown_timeout_s / 4,
            lease_s=settings.lease_s,
        )
        if settings.timers:
            await self.background.start()

    async def stop(self) -> None:
        """Stop the background work at a safe point, then close the threads and the database."""
        if self.background is not None:
            await self.background.stop()
        if self.threads is not None:
            self.threads.shutdown()
        if self.store is not None:
            self.store.close()

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a request thread, in the caller's context (its request id, for the
        logs). A plain executor: Starlette's ``run_in_threadpool`` (anyio's capacity limiter and
        worker bookkeeping) costs about twice the CPU for each request."""
        assert self.threads is not None  # made when the process starts
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self.threads, context.run, fn, *args)
