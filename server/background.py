"""Background work: SLA deadlines and agent timeouts, non-blocking agents, webhook delivery,
and the Parquet mirror analysts query while the server runs.

Deadlines fire through the engine's ``Tick`` from an in-memory heap of each running
execution's next deadline — the index, rebuilt at start-up from ``executions.next_deadline``
and fed by every commit — never by scanning steps. Agent steps whose runner is not the
default one run on a small thread pool, so the request that started them returns at once.

On a shared store (PostgreSQL, several processes) other processes commit too: every second
the timer also reads the deadlines falling due in the next second from the database (the
heap stays the fast path for this process's own commits), and a deadline two processes both
fire is applied once, because the tick re-checks it under the execution's row lock. Agent
runs and webhook deliveries are leased to one process (:mod:`toolkit.store.leases`): the
command that starts a run leases it to the process that committed it, the deliverer leases
what it claims, and a heartbeat renews the leases of the work still under way every third of
the lease. A process that dies stops renewing; once its leases run out the others take its
runs (checked every third of a lease) and deliveries (the deliverer's next poll) over.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import logging
import os
import secrets
import socket
from concurrent.futures import ThreadPoolExecutor, wait

from starlette.concurrency import run_in_threadpool

from server.delivery import Deliverer, DeliverySettings
from server.logs import Origins, fields, log_delivery
from server.maintenance import Maintenance
from toolkit.analytics import Mirror, server_mirror
from toolkit.services.context import CommitNotice, Services
from toolkit.services.workflow import tick
from toolkit.services.workflow.recovery import (
    abandoned_agent_runs,
    claim_agent_runs,
    deadlines_due_by,
    interrupted_agent_runs,
    lease_new_agent_runs,
    release_agent_run,
    release_leases,
    renew_leases,
    run_agent,
    run_key,
    running_deadlines,
)

log = logging.getLogger("collab.background")

LEASE_S = 30.0  # well over the 10 s a delivery attempt may take; renewed every third of it
POLL_MS = 1000  # a shared store's timer reads the deadlines another process made this often


def lease_owner() -> str:
    """This process's name on the leases it holds: host, pid and a random part (pids recur)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class Background:
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
        self.stop_within_s = stop_within_s
        self.stopping = False
        self.agent_runs: set = set()
        self.running: set[str] = set()  # lease keys of the agent runs under way here
        self.leases: asyncio.Task | None = None
        self.mirror: Mirror | None = None
        self.mirror_every_s = mirror_every_s
        self.mirror_dir = mirror_dir
        self.heap: list[tuple[int, str, str]] = []
        self.queued: set[tuple[int, str]] = set()  # (deadline, execution id) in the heap
        self.loop: asyncio.AbstractEventLoop | None = None
        self.wake = asyncio.Event()
        self.task: asyncio.Task | None = None
        self.agents = ThreadPoolExecutor(agent_threads, thread_name_prefix="collab-agent")
        self.maintenance = Maintenance(services, retention_ms, maintenance_every_s, self.owner)

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        for deadline, workspace_id, execution_id in running_deadlines(self.services):
            self._queue(deadline, workspace_id, execution_id)
        self.services.listeners.append(self._on_commit)
        if self.shared and not self.services.runs_agents_inline:
            self.services.lease_agent_runs = self._lease_new_runs
        if not self.services.runs_agents_inline:
            await run_in_threadpool(self._resume_agents)
        self.task = asyncio.create_task(self._timer())
        if self.shared:
            self.leases = asyncio.create_task(self._heartbeat())
        await self.deliverer.start()
        store = self.services.store
        if self.mirror_every_s:
            self.mirror = await run_in_threadpool(server_mirror, store, self.mirror_dir)
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
        if self.task is not None:
            self.wake.set()
            await self.task
        if self.leases is not None:
            self.leases.cancel()
            await asyncio.gather(self.leases, return_exceptions=True)
        await self.maintenance.stop()
        await self.deliverer.stop()
        self.agents.shutdown(wait=False, cancel_futures=True)
        running = list(self.agent_runs)
        if running:
            await run_in_threadpool(wait, running, self.stop_within_s)
        if self.shared:
            try:
                await run_in_threadpool(release_leases, self.services, self.owner)
            except Exception:  # noqa: BLE001 - they run out by themselves
                log.warning("could not give up the leases of this process; they run out in %d ms", self.lease_ms)
        if self.mirror is not None:
            await run_in_threadpool(self.mirror.stop)  # a last sync, so the mirror ends complete

    # ---------------------------------------------------------------- called on the writer thread

    def _on_commit(self, notice: CommitNotice) -> None:
        execution_id = notice.execution_id
        if execution_id is not None:  # None: a redrive, which names no execution
            if notice.next_deadline is not None and self.loop is not None:
                self.loop.call_soon_threadsafe(self._push, notice.next_deadline, notice.workspace_id, execution_id)
            for request in notice.agent_requests:
                self._submit_agent(notice.workspace_id, execution_id, request)
        if notice.deliveries:
            self.origins.note(list(notice.deliveries))
        if notice.deliveries or notice.redriven:
            self.deliverer.wake()

    # ---------------------------------------------------------------- timers

    def _push(self, deadline: int, workspace_id: str, execution_id: str) -> None:
        if self._queue(deadline, workspace_id, execution_id):
            self.wake.set()

    def _queue(self, deadline: int, workspace_id: str, execution_id: str) -> bool:
        if (deadline, execution_id) in self.queued:
            return False
        self.queued.add((deadline, execution_id))
        heapq.heappush(self.heap, (deadline, workspace_id, execution_id))
        return True

    async def _timer(self) -> None:
        polled = None
        while not self.stopping:
            now = self.services.clock.now()
            if self.shared and (polled is None or now - polled >= POLL_MS):
                polled = now
                try:  # deadlines other processes made (ours are in the heap already)
                    for deadline, workspace_id, execution_id in await run_in_threadpool(
                        deadlines_due_by, self.services, now + POLL_MS
                    ):
                        self._queue(deadline, workspace_id, execution_id)
                except Exception:  # noqa: BLE001 - the next poll tries again
                    log.warning("could not read the deadlines", exc_info=True)
            while self.heap and self.heap[0][0] <= now and not self.stopping:
                deadline, workspace_id, execution_id = heapq.heappop(self.heap)
                self.queued.discard((deadline, execution_id))
                try:
                    result = await run_in_threadpool(tick, self.services, workspace_id, execution_id)
                except Exception:  # keep the timer alive; the deadline stays in the database
                    log.exception("tick failed for %s", execution_id)
                    continue
                if result and result.get("nextDeadline") is not None:
                    self._push(result["nextDeadline"], workspace_id, execution_id)
            self.wake.clear()
            if self.stopping:  # checked after the clear: stop() sets the flag, then wakes us
                return
            timeout = None if not self.heap else max(0.0, (self.heap[0][0] - self.services.clock.now()) / 1000)
            if self.shared:
                timeout = min(timeout if timeout is not None else POLL_MS / 1000, POLL_MS / 1000)
            try:
                await asyncio.wait_for(self.wake.wait(), timeout)
            except TimeoutError:
                pass

    # ---------------------------------------------------------------- leases (shared store)

    def _lease_new_runs(self, tx, execution_id: str, requests) -> None:
        lease_new_agent_runs(tx, execution_id, requests, self.owner, self.services.clock.now(), self.lease_ms)

    async def _heartbeat(self) -> None:
        """Every third of a lease: renew the leases of the work under way here, and take over
        the agent runs whose lease ran out (their process died)."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                deliveries, runs = list(self.deliverer.in_flight), list(self.running)
                await run_in_threadpool(renew_leases, self.services, self.owner, self.lease_ms, deliveries, runs)
                if not self.services.runs_agents_inline and not self.stopping:
                    await run_in_threadpool(self._take_over_agents)
            except Exception:  # noqa: BLE001 - the next beat tries again; a lease lost is taken over, not lost
                log.warning("could not renew the leases of this process", exc_info=True)

    def _take_over_agents(self) -> None:
        abandoned = [r for r in abandoned_agent_runs(self.services) if run_key(r[1], r[2].step_id) not in self.running]
        for workspace_id, execution_id, request in claim_agent_runs(
            self.services, abandoned, self.owner, self.lease_ms
        ):
            log.info("taking over the agent run of %s", request.step_id)
            self._submit_agent(workspace_id, execution_id, request)

    # ---------------------------------------------------------------- agents

    def _submit_agent(self, workspace_id: str, execution_id: str, request) -> None:
        """Run the agent on the pool in the caller's context (the request id of the request
        whose commit started it reaches the run's log lines)."""
        context = contextvars.copy_context()
        try:
            future = self.agents.submit(context.run, self._run_agent, workspace_id, execution_id, request)
        except RuntimeError:  # stopping: the step stays running and is run again after a restart
            return
        self.agent_runs.add(future)
        future.add_done_callback(self.agent_runs.discard)

    def _run_agent(self, workspace_id: str, execution_id: str, request) -> None:
        key = run_key(execution_id, request.step_id)
        self.running.add(key)
        try:
            run = run_agent(self.services, workspace_id, execution_id, request)
        except Exception:  # not renewed from now on: its lease runs out and the run is taken over
            log.exception("could not record the agent result of %s", request.step_id)
            return
        finally:
            self.running.discard(key)
        if self.shared:
            try:
                release_agent_run(self.services, execution_id, request.step_id, self.owner)
            except Exception:  # noqa: BLE001 - the lease runs out; its run has ended, so nothing is run again
                log.warning("could not give up the lease of the agent run of %s", request.step_id, exc_info=True)
        if run.runner_error is not None:  # a runner bug fails the step, never the server
            log.error("agent runner failed on %s", request.step_id, exc_info=run.runner_error)
        if run.result is None:
            return  # external work: the step stays running until resolved or timed out
        log.info("agent run %s", run.result, extra=fields(agentId=request.agent_id, result=run.result))

    def _resume_agents(self) -> None:
        """Agent steps that were running when the server stopped get their runner again (on a
        shared store, those no live process holds)."""
        runs = interrupted_agent_runs(self.services)
        if self.shared:
            runs = claim_agent_runs(self.services, runs, self.owner, self.lease_ms)
        for workspace_id, execution_id, request in runs:
            self._submit_agent(workspace_id, execution_id, request)
