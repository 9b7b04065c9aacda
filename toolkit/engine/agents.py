"""The agent runner seam: how non-blocking agent steps get their output (semantics §5.3).

The engine never calls agents itself. A transition lists :class:`AgentRequest` s for the
non-blocking agent steps it started; the host hands each one to an :class:`AgentRunner` and
feeds the answer back as an :class:`AgentCompleted` command. :func:`run_agents` does exactly
that for hosts whose runner answers synchronously (the simulator, tests, the default
runner), and like ``httpx.MockTransport`` a test can pass any object with ``run``.

>>> DefaultAgentRunner().run(AgentRequest("s", "n", "spell", {"agentId": "spell"}, {}))
{'agentId': 'spell', 'decision': 'approve'}
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from toolkit.engine.clock import Clock, IdSource
from toolkit.engine.commands import AgentCompleted, AgentRequest
from toolkit.engine.handlers import apply
from toolkit.engine.plan import Plan
from toolkit.engine.run import Transition
from toolkit.engine.state import ExecutionState
from toolkit.engine.types import JsonObject
from toolkit.work import Work

__all__ = ["AgentRunner", "AgentFailure", "DefaultAgentRunner", "run_agents"]


class AgentFailure(Exception):
    """Raised by a runner to fail the step with ``error = {code, message}``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[type[AgentFailure], tuple[str, str]]:  # keep both fields through pickling and copying
        return (AgentFailure, (self.code, self.message))


@runtime_checkable
class AgentRunner(Protocol):
    def run(self, request: AgentRequest) -> JsonObject | None:
        """The step's output; None to leave the step running (an outside system finishes it
        with Resolve Step, or it times out); raise :class:`AgentFailure` to fail it."""
        ...


class DefaultAgentRunner:
    """``mockOutput`` when configured, else ``{agentId, decision: "approve"}``;
    ``external: true`` leaves the step running."""

    def run(self, request: AgentRequest) -> JsonObject | None:
        config = request.config
        if config.get("external"):
            return None
        mock = config.get("mockOutput")
        if mock is not None:
            # The step owns its output; the plan's stays pristine. The schema makes it an object.
            output: JsonObject = _copy_json(mock)
            return output
        return {"agentId": request.agent_id, "decision": "approve"}


def _copy_json(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars), several times faster than deepcopy."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    return value


def run_agents(
    plan: Plan,
    state: ExecutionState,
    transition: Transition,
    clock: Clock,
    ids: IdSource,
    runner: AgentRunner | None = None,
    memo: dict[tuple[str, str], bool] | None = None,
) -> list[Transition]:
    """Run every agent request of ``transition`` now, and of the transitions that follow.

    Completing one agent may start more (its successors); they are run too, breadth-first.
    Requests whose step is no longer running by its turn (a loop restart, a quorum, the end
    of the execution) are skipped. Returns the extra transitions, in order. Each completion
    is a command with its own work budget; ``memo`` (regex results, :class:`~toolkit.work.Work`)
    is shared by them all.
    """
    runner = runner if runner is not None else DefaultAgentRunner()
    pending = list(transition.agent_requests)
    extra: list[Transition] = []
    i = 0
    while i < len(pending):
        request = pending[i]
        i += 1
        step = state.steps.get(request.step_id)
        if step is None or step.status != "running" or state.status != "running":
            continue
        try:
            output = runner.run(request)
        except AgentFailure as failure:
            command = AgentCompleted(request.step_id, None, {"code": failure.code, "message": failure.message})
        else:
            if output is None:
                continue
            command = AgentCompleted(request.step_id, output, None)
        result = apply(plan, state, command, clock, ids, Work(memo=memo))
        extra.append(result)
        pending.extend(result.agent_requests)
    return extra
