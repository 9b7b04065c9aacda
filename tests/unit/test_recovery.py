"""The services the server's background work calls (toolkit.services.workflow.recovery) and
the notice a commit hands to listeners, on a real in-memory store."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from toolkit import examples
from toolkit.client import LocalClient
from toolkit.engine import AgentFailure, DefaultAgentRunner
from toolkit.services.context import CommitNotice
from toolkit.services.workflow.recovery import interrupted_agent_runs, run_agent, running_deadlines

AGENTS = {
    "definitionId": "two-agents",
    "name": "Two agents",
    "nodes": [
        {"nodeId": "first", "type": "agent", "config": {"agentId": "one"}},
        {"nodeId": "second", "type": "agent", "config": {"agentId": "two"}},
    ],
    "edges": [{"from": "first", "to": "second", "on": "always"}],
}


class Later(DefaultAgentRunner):
    """Not the default runner: agent steps are left to the background (here: to the test)."""


class Broken(DefaultAgentRunner):
    def run(self, request):
        if request.agent_id == "two":
            raise AgentFailure("no-budget", "out of budget")
        raise KeyError("oops")


def test_a_commit_hands_listeners_a_frozen_notice():
    with LocalClient.open() as client:
        seen: list = []
        client.services.listeners.append(seen.append)
        client.create_definition(examples.load("sla-escalation"))
        run = client.dispatch("sla-escalation")
    (notice,) = seen
    assert isinstance(notice, CommitNotice)
    assert (notice.workspace_id, notice.execution_id, notice.status) == (
        client.workspace.workspace_id,
        run["executionId"],
        "running",
    )
    assert notice.next_deadline is not None and notice.deliveries == () and not notice.redriven
    with pytest.raises(FrozenInstanceError):
        notice.status = "completed"


def test_start_up_finds_the_deadlines_and_the_agent_steps_to_run_again():
    with LocalClient.open(runner=Later()) as client:
        client.create_definition(examples.load("sla-escalation"))
        timed = client.dispatch("sla-escalation")["executionId"]
        client.create_definition(AGENTS)
        agents = client.dispatch("two-agents")["executionId"]
        deadlines = running_deadlines(client.services)
        # the SLA of the waiting review, and the runtime limit of the running agent
        assert sorted((ws, ex) for _, ws, ex in deadlines) == sorted(
            (client.workspace.workspace_id, ex) for ex in (timed, agents)
        )
        (interrupted,) = [run for run in interrupted_agent_runs(client.services) if run[1] == agents]
        workspace_id, execution_id, request = interrupted
        assert (execution_id, request.agent_id) == (agents, "one")
        # running it records the output, which starts the second agent
        assert run_agent(client.services, workspace_id, execution_id, request).result == "completed"
        assert [r.agent_id for _, ex, r in interrupted_agent_runs(client.services) if ex == agents] == ["two"]


def test_a_broken_runner_fails_the_step_and_hands_back_its_exception():
    with LocalClient.open(runner=Broken()) as client:
        client.create_definition(AGENTS)
        execution_id = client.dispatch("two-agents")["executionId"]
        ((workspace_id, _, request),) = interrupted_agent_runs(client.services)
        outcome = run_agent(client.services, workspace_id, execution_id, request)
        assert outcome.result == "failed" and isinstance(outcome.runner_error, KeyError)
        (first,) = [s for s in client.get_execution(execution_id)["steps"] if s["nodeId"] == "first"]
        assert first["status"] == "failed" and "KeyError" in str(first)
        ((_, _, second),) = interrupted_agent_runs(client.services)  # `always` goes on to the second
        outcome = run_agent(client.services, workspace_id, execution_id, second)
        assert outcome == ("failed", None)
