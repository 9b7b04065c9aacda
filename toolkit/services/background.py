"""The background work of a serving process, in its event loop: the timer firing the
deadlines of :class:`~toolkit.services.workflow.timers.Deadlines`, the agent runs of
:class:`~toolkit.services.workflow.agent_pool.AgentPool`, the webhook
:class:`~toolkit.services.webhooks.deliverer.Deliverer`, the lease heartbeat of a shared store,
the Parquet mirror and the upkeep (:class:`~toolkit.services.maintenance.Maintenance`). Each
commit tells them what it started (:meth:`Background._on_commit`, on the writer thread). None
of it is HTTP: the server starts it when its app starts and stops it when the app stops.

On a shared store (PostgreSQL, several processes) agent runs and deliveries are leased to one
process (:mod:`toolkit.store.leases`); the heartbeat renews the leases of the work still under
way here every third of the lease and takes over the agent runs of a process that died
(deliveries are taken over by the deliverer's next poll).
"""

from __future__ import annotations

import asyncio
import logging

from anyio.to_thread import run_sync

from toolkit.analytics import Mirror, server_mirror
from toolkit.services.context import CommitNotice, Services
from toolkit.services.maintenance import Maintenance
from toolkit.services.webhooks.attempt_log import Origins, log_delivery
from toolkit.services.webhooks.deliverer import Deliverer, DeliverySettings
from toolkit.services.workflow.agent_pool import AgentPool
from toolkit.services.workflow.recovery import LEASE_S, lease_owner, release_leases, renew_leases
from toolkit.services.workflow.timers import Deadlines

log = logging.getLogger("collab.background")


class Background:
    """:meth:`start` and :meth:`stop` in the event loop that is to run the work."""

    def __init__(
        self,
        services: Services,
        agent_threads: int = 4,
        mirror_every_s: float | None = 5.0,
        delivery: DeliverySettings | None = None,
        stop_within_s: float = 30.0,
        retention_ms: int | None = None,
        maintenance_every_s: float = 3600.0,
        lease_s: float = LEASE_S,
        mirror_dir: str | None = None,
    ) -> None:
        self.services = services
        self.shared = services.store.shared
        self.owner = lease_owner()
        self.lease_ms = int(lease_s * 1000)
        self.deliverer = Deliverer(
            services, delivery or DeliverySettings(), (self.owner, self.lease_ms) if self.shared else None
        )
        self.origins = Origins()  # which request created each delivery, for the attempt's log line
        self.deliverer.observers.append(log_delivery(self.origins))
        self.agents = AgentPool(services, agent_threads, self.owner, self.lease_ms)
        self.deadlines = Deadlines(services)
        self.stop_within_s = stop_within_s
        self.stopping = False
        self.mirror: Mirror | None = None
        self.mirror_every_s = mirror_every_s
        self.mirror_dir = mirror_dir
        self.loop: asyncio.AbstractEventLoop | None = None
        self.wake = asyncio.Event()
        self.timer: asyncio.Task[None] | None = None
        self.heartbeat: asyncio.Task[None] | None = None
        self.maintenance = Maintenance(services, retention_ms, maintenance_every_s, self.owner)

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.deadlines.load()
        self.services.listeners.append(self._on_commit)
        if self.shared and not self.services.runs_agents_inline:
            self.services.lease_agent_runs = self.agents.lease_new
        if not self.services.runs_agents_inline:
            await run_sync(self.agents.resume)
        self.timer = asyncio.create_task(self._fire_deadlines())
        if self.shared:
            self.heartbeat = asyncio.create_task(self._renew_leases())
        await self.deliverer.start()
        if self.mirror_every_s:
            self.mirror = await run_sync(server_mirror, self.services.store, self.mirror_dir, self.lease_ms)
            if self.mirror is not None:
                self.mirror.start(interval=self.mirror_every_s)
        self.maintenance.start(self.mirror)

    async def stop(self) -> None:
        """Stop at safe points: the timer after the tick it is firing, deliveries now (an
        attempt cut short stays pending and goes out after a restart), agent runs not yet
        started never start, those running get ``stop_within_s`` to record their result
        (one that does not is run again after a restart, like after a crash)."""
        if self._on_commit in self.services.listeners:
            self.services.listeners.remove(self._on_commit)
        self.stopping = True
        if self.timer is not None:
            self.wake.set()
            await self.timer
        if self.heartbeat is not None:
            self.heartbeat.cancel()
            await asyncio.gather(self.heartbeat, return_exceptions=True)
        await self.maintenance.stop()
        await self.deliverer.stop()
        await run_sync(self.agents.stop, self.stop_within_s)
        if self.shared:
            try:
                await run_sync(release_leases, self.services, self.owner)
            except Exception:  # noqa: BLE001 - they run out by themselves
                log.warning("could not give up the leases of this process; they run out in %d ms", self.lease_ms)
        if self.mirror is not None:
            await run_sync(self.mirror.stop)  # a last sync, so the mirror ends complete

    def _on_commit(self, notice: CommitNotice) -> None:
        """Called on the writer thread after each commit."""
        execution_id = notice.execution_id
        if execution_id is not None:  # None: a redrive, which names no execution
            if notice.next_deadline is not None and self.loop is not None:
                self.loop.call_soon_threadsafe(self._push, notice.next_deadline, notice.workspace_id, execution_id)
            for request in notice.agent_requests:
                self.agents.submit(notice.workspace_id, execution_id, request)
        if notice.deliveries:
            self.origins.note(list(notice.deliveries))
        if notice.deliveries or notice.redriven:
            self.deliverer.wake()

    def _push(self, deadline: int, workspace_id: str, execution_id: str) -> None:
        if self.deadlines.add(deadline, workspace_id, execution_id):
            self.wake.set()

    async def _fire_deadlines(self) -> None:
        deadlines = self.deadlines
        while not self.stopping:
            now = self.services.clock.now()
            if deadlines.poll_due(now):
                try:  # deadlines other processes made (ours are in the heap already)
                    for deadline in await run_sync(deadlines.made_elsewhere, now):
                        deadlines.add(*deadline)
                except Exception:  # noqa: BLE001 - the next poll tries again
                    log.warning("could not read the deadlines", exc_info=True)
            while not self.stopping and (due := deadlines.pop_due(now)) is not None:
                workspace_id, execution_id = due
                try:
                    next_deadline = await run_sync(deadlines.fire, workspace_id, execution_id)
                except Exception:  # keep the timer alive; the deadline stays in the database
                    log.exception("tick failed for %s", execution_id)
                    continue
                if next_deadline is not None:
                    self._push(next_deadline, workspace_id, execution_id)
            self.wake.clear()
            if self.stopping:  # checked after the clear: stop() sets the flag, then wakes us
                return
            try:
                await asyncio.wait_for(self.wake.wait(), deadlines.wait_s(self.services.clock.now()))
            except TimeoutError:
                pass

    async def _renew_leases(self) -> None:
        """Every third of a lease: renew the leases of the work under way here, and take over
        the agent runs whose lease ran out (their process died)."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                deliveries, runs = list(self.deliverer.in_flight), list(self.agents.running)
                await run_sync(renew_leases, self.services, self.owner, self.lease_ms, deliveries, runs)
                if not self.services.runs_agents_inline and not self.stopping:
                    await run_sync(self.agents.take_over)
            except Exception:  # noqa: BLE001 - the next beat tries again; a lease lost is taken over, not lost
                log.warning("could not renew the leases of this process", exc_info=True)
