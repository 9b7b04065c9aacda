"""Hourly upkeep of a running server: retention (``collab serve --retention 90d``) and the
compaction of its Parquet mirror.

DuckDB admits one process per database file, so while the server runs it prunes its own
database: every ``every_s`` seconds (and once at start) :func:`toolkit.services.retention.prune`
removes the finished executions older than ``retention_ms`` — on the writer thread, between
two commits, in rounds — and compacts the mirror without their rows; without retention the
mirror is compacted alone. Each pass runs on a worker thread; a failure is logged and the next
pass tries again.

Several processes on one PostgreSQL database take turns: a pass prunes only in the process
that holds the ``retention`` lease, taken for ``every_s`` and kept by its holder pass after
pass; another process takes it once the holder has stopped renewing it (stopped or died). The
shared mirror has a lease of its own (:mod:`toolkit.analytics.shared_mirror`).
"""

from __future__ import annotations

import asyncio
import logging

from starlette.concurrency import run_in_threadpool

from toolkit.services.context import Services
from toolkit.services.retention import prune
from toolkit.services.workflow.recovery import take_turn

log = logging.getLogger("collab.maintenance")


class Maintenance:
    def __init__(self, services: Services, retention_ms: int | None, every_s: float, owner: str = "") -> None:
        self.services = services
        self.owner = owner  # the process's lease owner id (a shared store)
        self.retention_ms = retention_ms
        self.every_s = every_s
        self.mirror = None
        self.task: asyncio.Task | None = None
        self.current: asyncio.Future | None = None  # the pass running on a worker thread

    def start(self, mirror) -> None:
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
            self.current = asyncio.ensure_future(run_in_threadpool(self.run_once))
            try:
                await asyncio.shield(self.current)
            except asyncio.CancelledError:
                raise
            except Exception:  # keep the loop: the next pass retries
                log.exception("maintenance pass failed")
            await asyncio.sleep(self.every_s)

    def run_once(self) -> None:
        """One pass: prune (with retention), else compact the mirror."""
        now = self.services.clock.now()
        if self.retention_ms is not None and self._my_turn():
            report = prune(self.services.store, older_than_ms=self.retention_ms, now_ms=now, mirror=self.mirror)
            if report.executions:
                log.info("retention: removed %d execution(s) that ended before %d", report.executions, report.cutoff_ms)
            if report.mirror is not None:
                return  # prune compacted the mirror already
        if self.mirror is not None:
            self.mirror.compact(now_ms=now)

    def _my_turn(self) -> bool:
        if not self.services.store.shared:
            return True
        # a little longer than the period, so the holder's next pass renews it before it runs out
        return take_turn(self.services, "retention", self.owner, int(self.every_s * 1000) + 60_000)
