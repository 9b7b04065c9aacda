"""Hourly upkeep of a serving process: retention (``collab serve --retention 90d``) and the
compaction of its Parquet mirror, a :func:`maintenance_pass` every ``every_s`` seconds (and once
at start) run by :class:`Maintenance`.

DuckDB admits one process per database file, so while the server runs it prunes its own
database: :func:`toolkit.services.retention.prune` removes the finished executions older than
``retention_ms`` — on the writer thread, between two commits, in rounds — and compacts the
mirror without their rows; without retention the mirror is compacted alone.

Several processes on one PostgreSQL database take turns: a pass prunes only in the process
that holds the ``retention`` lease, taken for ``every_s`` and kept by its holder pass after
pass; another process takes it once the holder has stopped renewing it (stopped or died). The
shared mirror has a lease of its own (:mod:`toolkit.analytics.shared_mirror`).
"""

from __future__ import annotations

import asyncio
import logging

from anyio.to_thread import run_sync

from toolkit.analytics import Mirror
from toolkit.services.context import Services
from toolkit.services.retention import prune
from toolkit.services.workflow.recovery import take_turn

log = logging.getLogger("collab.maintenance")


def maintenance_pass(
    services: Services, retention_ms: int | None, every_s: float, owner: str, mirror: Mirror | None
) -> None:
    """One pass: prune (with retention, in this process's turn), else compact the mirror.
    ``owner`` is the process's lease owner id (a shared store)."""
    now = services.clock.now()
    if retention_ms is not None and _my_turn(services, every_s, owner):
        report = prune(services.store, older_than_ms=retention_ms, now_ms=now, mirror=mirror)
        if report.executions:
            log.info("retention: removed %d execution(s) that ended before %d", report.executions, report.cutoff_ms)
        if report.mirror is not None:
            return  # prune compacted the mirror already
    if mirror is not None:
        mirror.compact(now_ms=now)


def _my_turn(services: Services, every_s: float, owner: str) -> bool:
    if not services.store.shared:
        return True
    # a little longer than the period, so the holder's next pass renews it before it runs out
    return take_turn(services, "retention", owner, int(every_s * 1000) + 60_000)


class Maintenance:
    """The loop: a :func:`maintenance_pass` every ``every_s`` seconds and once at start, on a
    worker thread; a failure is logged and the next pass tries again."""

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
                run_sync(maintenance_pass, self.services, self.retention_ms, self.every_s, self.owner, self.mirror)
            )
            try:
                await asyncio.shield(self.current)
            except asyncio.CancelledError:
                raise
            except Exception:  # keep the loop: the next pass retries
                log.exception("maintenance pass failed")
            await asyncio.sleep(self.every_s)
