"""What the server's background work asks of the store: the deadlines to watch after a start,
the agent steps to run again, and one agent run recorded (semantics §7, §11).

These are the only places the background needs the engine's state or the database, so the
server reads neither."""

from __future__ import annotations

import json
from typing import NamedTuple

from toolkit.engine import AgentFailure, AgentRequest, ExecutionState
from toolkit.services.context import Services
from toolkit.services.workflow.definitions import plan_for
from toolkit.services.workflow.executions import agent_completed


class AgentRun(NamedTuple):
    """What one agent run did: ``result`` is ``"completed"``, ``"failed"`` or ``None`` (the
    runner answered nothing: external work, the step stays running until resolved or timed
    out); ``runner_error`` is the exception of a runner that broke (the step failed with
    ``agent-error``), for the caller to log."""

    result: str | None
    runner_error: Exception | None = None


def running_deadlines(services: Services) -> list[tuple[int, str, str]]:
    """``(next deadline, workspace id, execution id)`` of every running execution with one:
    the timer's heap at start-up."""
    rows = services.store.read(
        "SELECT next_deadline, workspace_id, execution_id FROM executions "
        "WHERE status = 'running' AND next_deadline IS NOT NULL"
    ).fetchall()
    return [tuple(r) for r in rows]


def interrupted_agent_runs(services: Services) -> list[tuple[str, str, AgentRequest]]:
    """``(workspace id, execution id, request)`` of each background agent step that was running
    when the server stopped: it gets its runner again (blocking and external agents wait for
    their resolution instead)."""
    runs = []
    rows = services.store.read("SELECT workspace_id, state FROM executions WHERE status = 'running'").fetchall()
    for workspace_id, raw in rows:
        state = ExecutionState.from_dict(json.loads(raw))
        plan, _ = plan_for(services, workspace_id, state.definition_id, state.definition_version)
        for step in state.active.values():
            node = plan.nodes[step.node_id]
            if step.status == "running" and node.type == "agent" and not node.blocking and not node.external:
                request = AgentRequest(step.step_id, node.node_id, node.agent_id, node.config, step.input)
                runs.append((workspace_id, state.execution_id, request))
    return runs


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
