"""Background agent runs: agent steps whose runner is not the default one run on a small
thread pool, so the request that started them returns at once (semantics §7).

On a shared store (PostgreSQL, several processes) each run is leased to one process
(:mod:`toolkit.store.leases`): the command that starts a run leases it to the process that
committed it (:meth:`AgentPool.lease_new`), and the serving process's heartbeat renews the
leases of the runs under way here (:attr:`AgentPool.running`). A process that dies stops
renewing; once its leases run out the others take its runs over (:meth:`AgentPool.take_over`).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from toolkit.engine import AgentRequest
from toolkit.logs import fields
from toolkit.services.context import Services
from toolkit.services.workflow.recovery import (
    abandoned_agent_runs,
    claim_agent_runs,
    interrupted_agent_runs,
    lease_new_agent_runs,
    release_agent_run,
    run_agent,
    run_key,
)
from toolkit.store import Tx

log = logging.getLogger("collab.background")


class AgentPool:
    """Runs background agent steps on ``threads`` threads; ``owner`` and ``lease_ms`` name this
    process's leases on a shared store."""

    def __init__(self, services: Services, threads: int, owner: str, lease_ms: int) -> None:
        self.services = services
        self.owner = owner
        self.lease_ms = lease_ms
        self.shared = services.store.shared
        self.futures: set[Future[None]] = set()
        self.running: set[str] = set()  # lease keys of the agent runs under way here
        self.executor = ThreadPoolExecutor(threads, thread_name_prefix="collab-agent")

    def lease_new(self, tx: Tx, execution_id: str, requests: Iterable[AgentRequest]) -> None:
        """Inside the command that starts runs: lease them to this process (``Services.lease_agent_runs``)."""
        lease_new_agent_runs(tx, execution_id, requests, self.owner, self.services.clock.now(), self.lease_ms)

    def submit(self, workspace_id: str, execution_id: str, request: AgentRequest) -> None:
        """Run the agent on the pool in the caller's context (the request id of the request
        whose commit started it reaches the run's log lines)."""
        context = contextvars.copy_context()
        try:
            future = self.executor.submit(context.run, self._run, workspace_id, execution_id, request)
        except RuntimeError:  # stopping: the step stays running and is run again after a restart
            return
        self.futures.add(future)
        future.add_done_callback(self.futures.discard)

    def resume(self) -> None:
        """Agent steps that were running when the server stopped get their runner again (on a
        shared store, those no live process holds)."""
        runs = interrupted_agent_runs(self.services)
        if self.shared:
            runs = claim_agent_runs(self.services, runs, self.owner, self.lease_ms)
        for workspace_id, execution_id, request in runs:
            self.submit(workspace_id, execution_id, request)

    def take_over(self) -> None:
        """Run the agent runs whose lease ran out (their process died)."""
        abandoned = [r for r in abandoned_agent_runs(self.services) if run_key(r[1], r[2].step_id) not in self.running]
        for workspace_id, execution_id, request in claim_agent_runs(
            self.services, abandoned, self.owner, self.lease_ms
        ):
            log.info("taking over the agent run of %s", request.step_id)
            self.submit(workspace_id, execution_id, request)

    def stop(self, within_s: float) -> None:
        """Runs not yet started never start; those running get ``within_s`` to record their
        result (one that does not is run again after a restart, like after a crash)."""
        self.executor.shutdown(wait=False, cancel_futures=True)
        running = list(self.futures)
        if running:
            wait(running, within_s)

    def _run(self, workspace_id: str, execution_id: str, request: AgentRequest) -> None:
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
