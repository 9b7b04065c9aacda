"""What the server's background work asks of the store: the deadlines to watch, the agent
steps to run (again), their leases on a shared store, and one agent run recorded (semantics
§7, §11).

These are the only places the background needs the engine's state or the database, so the
server reads neither."""

from __future__ import annotations

import json
import os
import secrets
import socket
from collections.abc import Iterable
from typing import NamedTuple

from toolkit.engine import AgentFailure, AgentRequest, ExecutionState
from toolkit.services.context import Services
from toolkit.services.workflow.definitions import plan_for
from toolkit.services.workflow.executions import agent_completed
from toolkit.store import agent_runs, leases, timers
from toolkit.store.agent_runs import run_key

__all__ = [
    "LEASE_S",
    "AgentRun",
    "abandoned_agent_runs",
    "claim_agent_runs",
    "deadlines_due_by",
    "interrupted_agent_runs",
    "lease_new_agent_runs",
    "lease_owner",
    "release_agent_run",
    "release_leases",
    "renew_leases",
    "run_agent",
    "run_key",
    "running_deadlines",
    "take_turn",
]


LEASE_S = 30.0  # well over the 10 s a delivery attempt may take; renewed every third of it


def lease_owner() -> str:
    """This process's name on the leases it holds: host, pid and a random part (pids recur)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class AgentRun(NamedTuple):
    """What one agent run did: ``result`` is ``"completed"``, ``"failed"`` or ``None`` (the
    runner answered nothing: external work, the step stays running until resolved or timed
    out); ``runner_error`` is the exception of a runner that broke (the step failed with
    ``agent-error``), for the caller to log."""

    result: str | None
    runner_error: Exception | None = None


# (workspace id, execution id, request) of one background agent run
Run = tuple[str, str, AgentRequest]


def running_deadlines(services: Services) -> list[tuple[int, str, str]]:
    """``(next deadline, workspace id, execution id)`` of every running execution with one:
    the timer's heap at start-up."""
    return timers.running_deadlines(services.store.read)


def deadlines_due_by(services: Services, until: int) -> list[tuple[int, str, str]]:
    """As :func:`running_deadlines`, those due by ``until`` (whichever process made them)."""
    return timers.due_by(services.store.read, until)


def _background_runs(services: Services, workspace_id: str, raw: str, step_id: str | None = None) -> list[Run]:
    """The running agent steps of a state that the background runs (blocking and external
    agents wait for their resolution instead); only ``step_id`` when given."""
    state = ExecutionState.from_dict(json.loads(raw))
    plan, _ = plan_for(services, workspace_id, state.definition_id, state.definition_version)
    runs = []
    for step in state.active.values():
        if step_id is not None and step.step_id != step_id:
            continue
        node = plan.nodes[step.node_id]
        if step.status == "running" and node.type == "agent" and not node.blocking and not node.external:
            assert node.agent_id is not None  # an agent node's config requires its agentId
            request = AgentRequest(step.step_id, node.node_id, node.agent_id, node.config, step.input)
            runs.append((workspace_id, state.execution_id, request))
    return runs


def interrupted_agent_runs(services: Services) -> list[Run]:
    """``(workspace id, execution id, request)`` of each background agent step that was running
    when the server stopped: it gets its runner again."""
    runs = []
    for workspace_id, raw in agent_runs.running_states(services.store.read, services.store.dialect):
        runs.extend(_background_runs(services, workspace_id, raw))
    return runs


def claim_agent_runs(services: Services, runs: Iterable[Run], owner: str, lease_ms: int) -> list[Run]:
    """The ``runs`` whose ``agent-run`` lease ``owner`` now holds (none held them, or the
    holder's ran out) for ``lease_ms``: these, and only these, this process runs."""
    runs = list(runs)
    keys = [agent_runs.run_key(x, r.step_id) for _, x, r in runs]
    now = services.clock.now()
    won = set(
        services.store.write(lambda tx: leases.claim(tx, leases.AGENT_RUN, keys, owner, now=now, until=now + lease_ms))
    )
    return [run for run, key in zip(runs, keys) if key in won]


def lease_new_agent_runs(
    tx, execution_id: str, requests: Iterable[AgentRequest], owner: str, now: int, lease_ms: int
) -> None:
    """Inside the command that starts background agent runs: lease them to the committing
    process, so that they have a holder from the moment they exist (and another process
    takes them over should this one die before running them)."""
    keys = [agent_runs.run_key(execution_id, r.step_id) for r in requests]
    leases.claim(tx, leases.AGENT_RUN, keys, owner, now=now, until=now + lease_ms)


def abandoned_agent_runs(services: Services) -> list[Run]:
    """Background agent runs whose lease ran out (the process running them died): the runs
    still to do. Leases of runs that have ended meanwhile are dropped."""
    now = services.clock.now()
    runs, over = [], []
    for key in leases.expired(services.store.read, leases.AGENT_RUN, now):
        execution_id, step_id = agent_runs.split_run_key(key)
        found = agent_runs.running_state(services.store.read, execution_id)
        todo = _background_runs(services, found[0], found[1], step_id) if found is not None else []
        if todo:
            runs.extend(todo)
        else:
            over.append(key)
    if over:
        services.store.write(lambda tx: leases.drop_expired(tx, leases.AGENT_RUN, over, now))
    return runs


def release_agent_run(services: Services, execution_id: str, step_id: str, owner: str) -> None:
    """The run is over (recorded, or left to an outside system): give its lease up."""
    key = agent_runs.run_key(execution_id, step_id)
    services.store.write(lambda tx: leases.release(tx, leases.AGENT_RUN, [key], owner))


def renew_leases(services: Services, owner: str, lease_ms: int, deliveries: list[str], runs: list[str]) -> int:
    """The holder's heartbeat: ``owner``'s leases on the deliveries (event ids) and agent runs
    (``execution/step`` keys) it is still working on last another ``lease_ms``; returns how
    many it still holds (a lease lost meanwhile went to another process)."""
    until = services.clock.now() + lease_ms

    def job(tx):
        held = leases.renew(tx, leases.DELIVERY, deliveries, owner, until)
        return len(held) + len(leases.renew(tx, leases.AGENT_RUN, runs, owner, until))

    return services.store.write(job)


def release_leases(services: Services, owner: str) -> int:
    """Every lease of ``owner`` run out now (a process stopping): others need not wait them
    out. Run out rather than deleted, so a run a command leased to this process while it was
    stopping is still found and taken over."""
    return services.store.write(lambda tx: leases.expire_all(tx, owner))


def take_turn(services: Services, work: str, owner: str, lease_ms: int) -> bool:
    """Whether ``owner`` does this turn of cluster-wide periodic ``work`` (kind
    ``maintenance``): it holds the lease, or takes it because none holds it or it ran out."""
    now = services.clock.now()
    won = services.store.write(
        lambda tx: leases.claim(tx, leases.MAINTENANCE, [work], owner, now=now, until=now + lease_ms)
    )
    return bool(won)


def run_agent(services: Services, workspace_id: str, execution_id: str, request: AgentRequest) -> AgentRun:
    """Run ``services.runner`` on one agent step and record its output or failure. A runner
    that raises anything but :class:`~toolkit.engine.AgentFailure` fails the step with
    ``agent-error``. Raises what recording raises (the step then runs again after a restart)."""
    bug = None
    try:
        output, err = services.runner.run(request), None
    except AgentFailure as failure:
        output, err = None, {"code": failure.code, "message": failure.message}
    except Exception as exc:  # a runner bug fails the step, never the caller
        output, err, bug = None, {"code": "agent-error", "message": f"{type(exc).__name__}: {exc}"}, exc
    if output is None and err is None:
        return AgentRun(None)
    agent_completed(services, workspace_id, execution_id, request.step_id, output, err)
    return AgentRun("failed" if err else "completed", bug)
