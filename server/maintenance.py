"""The loop of the serving process's upkeep: a :func:`toolkit.services.maintenance.maintenance_pass`
(retention, mirror compaction) every ``every_s`` seconds and once at start, on a worker thread;
a failure is logged and the next pass tries again."""

from __future__ import annotations

import asyncio
import logging

from starlette.concurrency import run_in_threadpool

from toolkit.analytics import Mirror
from toolkit.services.context import Services
from toolkit.services.maintenance import maintenance_pass

log = logging.getLogger("collab.maintenance")


class Maintenance:
    def __init__(self, services: Services, retention_ms: int | None, every_s: float, owner: str = "") -> None:
        self.services = services
        self.owner = owner  # the process's lease owner id (a shared store)
        self.retention_ms = retention_ms
        self.every_s = every_s
        self.mirror: Mirror | None = None
        self.task: asyncio.Task[None] | None = None
        self.current: asyncio.Future[None] | None = None  # the pass running on a worker thread

    def start(self, mirror: Mirror | None) -> None:
        self.mirror = mirror
        if self.retention_ms is not None or mirror is not None:
            self.task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        """Stop the loop; a pass under way finishes first (it cannot stop half-way safely)."""
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass
        if self.current is not None:
            try:
                await self.current
            except Exception:  # noqa: BLE001 - already logged by the loop, or the server is stopping anyway
                pass

    async def _loop(self) -> None:
        while True:
            self.current = asyncio.ensure_future(
                run_in_threadpool(
                    maintenance_pass, self.services, self.retention_ms, self.every_s, self.owner, self.mirror
                )
            )
            try:
                await asyncio.shield(self.current)
            except asyncio.CancelledError:
                raise
            except Exception:  # keep the loop: the next pass retries
                log.exception("maintenance pass failed")
            await asyncio.sleep(self.every_s)
