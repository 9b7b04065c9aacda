"""Background work: SLA deadlines and agent timeouts, non-blocking agents, webhook delivery,
and the Parquet mirror analysts query while the server runs.

Deadlines fire through the engine's ``Tick`` from an in-memory heap of each running
execution's next deadline — the index, rebuilt at start-up from ``executions.next_deadline``
and fed by every commit — never by scanning steps. Agent steps whose runner is not the
default one run on a small thread pool, so the request that started them returns at once.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import logging
from concurrent.futures import ThreadPoolExecutor, wait

from starlette.concurrency import run_in_threadpool

from server.delivery import Deliverer, DeliverySettings
from server.logs import Origins, fields, log_delivery
from server.maintenance import Maintenance
from toolkit.analytics import Mirror, server_mirror
from toolkit.services.context import CommitNotice, Services
from toolkit.services.workflow import tick
from toolkit.services.workflow.recovery import interrupted_agent_runs, run_agent, running_deadlines

log = logging.getLogger("collab.background")


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
        mirror_dir: str | None = None,
    ) -> None:
        self.services = services
        self.deliverer = Deliverer(services, delivery or DeliverySettings())
        self.origins = Origins()  # which request created each delivery, for the attempt's log line
        self.deliverer.observers.append(log_delivery(self.origins))
        self.stop_within_s = stop_within_s
        self.stopping = False
        self.agent_runs: set = set()
        self.mirror: Mirror | None = None
        self.mirror_every_s = mirror_every_s
        self.mirror_dir = mirror_dir
        self.heap: list[tuple[int, str, str]] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.wake: asyncio.Event | None = None
        self.task: asyncio.Task | None = None
        self.agents = ThreadPoolExecutor(agent_threads, thread_name_prefix="collab-agent")
        self.maintenance = Maintenance(services, retention_ms, maintenance_every_s)

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()
        self.heap = running_deadlines(self.services)
        heapq.heapify(self.heap)
        self.services.listeners.append(self._on_commit)
        if not self.services.runs_agents_inline:
            await run_in_threadpool(self._resume_agents)
        self.task = asyncio.create_task(self._timer())
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
        await self.maintenance.stop()
        await self.deliverer.stop()
        self.agents.shutdown(wait=False, cancel_futures=True)
        running = list(self.agent_runs)
        if running:
            await run_in_threadpool(wait, running, self.stop_within_s)
        if self.mirror is not None:
            await run_in_threadpool(self.mirror.stop)  # a last sync, so the mirror ends complete

    # ---------------------------------------------------------------- called on the writer thread

    def _on_commit(self, notice: CommitNotice) -> None:
        if notice.next_deadline is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(self._push, notice.next_deadline, notice.workspace_id, notice.execution_id)
        for request in notice.agent_requests:
            self._submit_agent(notice.workspace_id, notice.execution_id, request)
        if notice.deliveries:
            self.origins.note(list(notice.deliveries))
        if notice.deliveries or notice.redriven:
            self.deliverer.wake()

    # ---------------------------------------------------------------- timers

    def _push(self, deadline: int, workspace_id: str, execution_id: str) -> None:
        heapq.heappush(self.heap, (deadline, workspace_id, execution_id))
        self.wake.set()

    async def _timer(self) -> None:
        while not self.stopping:
            now = self.services.clock.now()
            while self.heap and self.heap[0][0] <= now and not self.stopping:
                _, workspace_id, execution_id = heapq.heappop(self.heap)
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
            try:
                await asyncio.wait_for(self.wake.wait(), timeout)
            except TimeoutError:
                pass

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
        try:
            run = run_agent(self.services, workspace_id, execution_id, request)
        except Exception:
            log.exception("could not record the agent result of %s", request.step_id)
            return
        if run.runner_error is not None:  # a runner bug fails the step, never the server
            log.error("agent runner failed on %s", request.step_id, exc_info=run.runner_error)
        if run.result is None:
            return  # external work: the step stays running until resolved or timed out
        log.info("agent run %s", run.result, extra=fields(agentId=request.agent_id, result=run.result))

    def _resume_agents(self) -> None:
        """Agent steps that were running when the server stopped get their runner again."""
        for workspace_id, execution_id, request in interrupted_agent_runs(self.services):
            self._submit_agent(workspace_id, execution_id, request)
