"""A scenario driver for tests and notebooks: one execution, virtual time, seeded ids.

:class:`Harness` wraps :func:`~toolkit.engine.apply` with conveniences that address steps by
node id (and occurrence), run agents through a runner at once, and — with
``restore=True`` — persist the state through JSON between every two commands while a live
twin runs the same commands, failing loudly if the two event logs ever differ (the
SpiffWorkflow save/load discipline). It also checks, on every ApiError, that the state was
left exactly as it was.

>>> h = Harness({"definitionId": "one", "name": "x", "edges": [],
...     "nodes": [{"nodeId": "a", "type": "agent", "config": {"agentId": "w"}}]}, restore=True)
>>> h.dispatch()["deduplicated"], h.state.status, h.types()
(False, 'completed', ['execution.dispatched', 'step.completed', 'execution.completed'])
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from toolkit.engine.agents import AgentFailure, AgentRunner, DefaultAgentRunner
from toolkit.engine.clock import ManualClock, SeededIds
from toolkit.engine.commands import (
    AgentCompleted,
    AgentRequest,
    CancelExecution,
    CancelStep,
    Command,
    Dispatch,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    Tick,
)
from toolkit.engine.events import EXTERNAL_TYPES, Event
from toolkit.engine.handlers import apply
from toolkit.engine.plan import Plan
from toolkit.engine.state import ExecutionState, StepState
from toolkit.engine.types import JsonObject
from toolkit.errors import ApiError
from toolkit.model import Definition

__all__ = ["Harness", "ScriptedRunner", "HOLD", "definition", "agent", "human", "webhook", "group", "G", "edge"]


class _Hold:
    """The :data:`HOLD` sentinel; one instance, even through copies."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _Hold:
        return self

    def __copy__(self) -> _Hold:
        return self

    def __repr__(self) -> str:
        return "HOLD"


HOLD = _Hold()  # a ScriptedRunner answer: leave the step running


class ScriptedRunner:
    """Agent outputs by node id: a dict (the output), :data:`HOLD` (stay running), an
    :class:`AgentFailure` (fail), a list of those (one per occurrence, the last repeating),
    or a callable ``request -> answer``. Unlisted nodes use the default runner."""

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        self.answers = dict(answers or {})
        self.calls: dict[str, int] = {}
        self._default = DefaultAgentRunner()

    def run(self, request: AgentRequest) -> JsonObject | None:
        answer = self.answers.get(request.node_id, None)
        n = self.calls.get(request.node_id, 0)
        self.calls[request.node_id] = n + 1
        if request.node_id not in self.answers:
            return self._default.run(request)
        if isinstance(answer, list):
            answer = answer[min(n, len(answer) - 1)]
        if callable(answer) and not isinstance(answer, AgentFailure):
            answer = answer(request)
        if answer is HOLD:
            return None
        if isinstance(answer, AgentFailure):
            raise answer
        copied: JsonObject = json.loads(json.dumps(answer))  # the step owns a copy
        return copied


class Harness:
    """Drive one execution of ``definition`` (a dict or a Definition)."""

    def __init__(
        self,
        definition: Plan | Definition | JsonObject,
        *,
        restore: bool = False,
        start_ms: int = 1_000,
        seed: int = 0,
        runner: AgentRunner | None = None,
        execution_id: str = "ex_test",
        version: int = 1,
    ) -> None:
        self.plan = definition if isinstance(definition, Plan) else Plan.from_definition(definition, version)
        self.clock = ManualClock(start_ms)
        self.ids = SeededIds(seed)
        self.runner: AgentRunner = runner if runner is not None else DefaultAgentRunner()
        self.execution_id = execution_id
        self.state: ExecutionState | None = None
        self.events: list[Event] = []
        self.restore = restore
        # The twin gets its own copy of the runner (a scripted runner counts its calls).
        self._twin = (
            Harness(
                self.plan, start_ms=start_ms, seed=seed, execution_id=execution_id, runner=copy.deepcopy(self.runner)
            )
            if restore
            else None
        )

    # ------------------------------------------------------------ time

    def at(self, ms: int) -> Harness:
        self.clock.set(ms)
        if self._twin is not None:
            self._twin.at(ms)
        return self

    def advance(self, ms: int) -> Harness:
        return self.at(self.clock.now() + ms)

    # ------------------------------------------------------------ commands

    def send(self, command: Command) -> JsonObject:
        """Apply ``command`` (then any agent work it started); return the command's result."""
        error = None
        try:
            result = self._apply(command)
        except ApiError as exc:
            error = exc
        if self._twin is not None:
            try:
                twin_result = self._twin._apply(command)
            except ApiError as exc:
                assert error is not None and exc.code == error.code, (exc, error)
            else:
                assert error is None, error
                assert twin_result == result, (twin_result, result)
            mine = json.dumps([e.to_json() for e in self.events], sort_keys=True)
            theirs = json.dumps([e.to_json() for e in self._twin.events], sort_keys=True)
            assert mine == theirs, "event logs diverged after save/restore"
        if error is not None:
            raise error
        return result

    def _roundtrip(self) -> None:
        assert self.state is not None  # called once the execution exists
        text = json.dumps(self.state.to_dict(), sort_keys=True)
        restored = ExecutionState.from_dict(json.loads(text))
        assert json.dumps(restored.to_dict(), sort_keys=True) == text, "state round trip is not exact"
        self.state = restored

    def _apply(self, command: Command) -> JsonObject:
        if self.restore and self.state is not None:
            self._roundtrip()
        before = json.dumps(self.state.to_dict(), sort_keys=True) if self.state is not None else None
        try:
            transition = apply(self.plan, self.state, command, self.clock, self.ids)
        except ApiError:
            after = json.dumps(self.state.to_dict(), sort_keys=True) if self.state is not None else None
            assert before == after, "an ApiError left a half-applied state"
            raise
        self.state = transition.state
        self.events.extend(transition.events)
        self._run_agents(transition.agent_requests)
        return transition.result

    def _run_agents(self, requests: Sequence[AgentRequest]) -> None:
        pending = list(requests)
        while pending:
            request = pending.pop(0)
            if self.restore:
                self._roundtrip()
            assert self.state is not None  # agent requests come from an existing execution
            step = self.state.steps.get(request.step_id)
            if step is None or step.status != "running" or self.state.status != "running":
                continue
            try:
                output = self.runner.run(request)
            except AgentFailure as failure:
                command = AgentCompleted(request.step_id, None, {"code": failure.code, "message": failure.message})
            else:
                if output is None:
                    continue
                command = AgentCompleted(request.step_id, output)
            transition = apply(self.plan, self.state, command, self.clock, self.ids)
            self.events.extend(transition.events)
            pending.extend(transition.agent_requests)

    def dispatch(self, trigger_context: JsonObject | None = None, **kw: str | None) -> JsonObject:
        return self.send(Dispatch(self.execution_id, trigger_context=trigger_context, **kw))

    def tick(self, at: int | None = None) -> JsonObject:
        if at is not None:
            self.at(at)
        return self.send(Tick())

    def decide(
        self, node: str, reviewer: str, decision: str, reason: str | None = None, occurrence: int = 1
    ) -> JsonObject:
        return self.send(RecordReviewerDecision(self.sid(node, occurrence), reviewer, decision, reason))

    def resolution(
        self,
        node: str,
        resolution_id: str,
        status: str = "success",
        output: JsonObject | None = None,
        error_message: str | None = None,
        occurrence: int = 1,
    ) -> JsonObject:
        return self.send(
            RecordAgentResolution(self.sid(node, occurrence), resolution_id, status, output, error_message)
        )

    def agent_done(
        self, node: str, output: JsonObject | None = None, error: JsonObject | None = None, occurrence: int = 1
    ) -> JsonObject:
        return self.send(AgentCompleted(self.sid(node, occurrence), output, error))

    def resolve(
        self,
        node: str,
        action: str,
        actor: str = "ops",
        output: JsonObject | None = None,
        reason: str | None = None,
        occurrence: int = 1,
    ) -> JsonObject:
        return self.send(ResolveStep(self.sid(node, occurrence), action, actor, output, reason))

    def cancel_step(self, node: str, actor: str = "ops", reason: str | None = None, occurrence: int = 1) -> JsonObject:
        return self.send(CancelStep(self.sid(node, occurrence), actor, reason))

    def cancel(self, reason: str | None = None) -> JsonObject:
        return self.send(CancelExecution(reason))

    # ------------------------------------------------------------ looking

    def step(self, node: str, occurrence: int = 1) -> StepState:
        assert self.state is not None, "dispatch first"
        steps = self.state.steps_of(node)
        if len(steps) < occurrence:
            raise KeyError(f"node {node!r} has {len(steps)} steps, not {occurrence}")
        return steps[occurrence - 1]

    def sid(self, node: str, occurrence: int = 1) -> str:
        return self.step(node, occurrence).step_id

    def statuses(self) -> list[tuple[str, str]]:
        """``(nodeId, status)`` of every step, in creation order."""
        assert self.state is not None, "dispatch first"
        return [(s.node_id, s.status) for s in self.state.steps.values()]

    def types(self, external: bool = True) -> list[str]:
        return [e.type for e in self.events if not external or e.type in EXTERNAL_TYPES]

    def of_type(self, type_: str) -> list[Event]:
        return [e for e in self.events if e.type == type_]

    def log(self) -> str:
        """The whole event log as canonical JSON (for byte-for-byte comparisons)."""
        return json.dumps([e.to_json() for e in self.events], sort_keys=True)


# ---------------------------------------------------------------- definition builders


def definition(
    nodes: list[JsonObject],
    edges: list[JsonObject],
    groups: list[JsonObject] | None = None,
    definition_id: str = "test-flow",
) -> JsonObject:
    """A definition create body from the builders below."""
    body: JsonObject = {"definitionId": definition_id, "name": "test", "nodes": nodes, "edges": edges}
    if groups is not None:
        body["groups"] = groups
    return body


def agent(node_id: str, sla_ms: int | None = None, **config: Any) -> JsonObject:
    """An agent node; ``config`` keys are camelCase (``mockOutput=...``, ``blocking=True``)."""
    node: JsonObject = {
        "nodeId": node_id,
        "type": "agent",
        "config": {"agentId": config.pop("agentId", node_id), **config},
    }
    if sla_ms is not None:
        node["slaMs"] = sla_ms
    return node


def human(node_id: str, *reviewers: str | tuple[str, bool], sla_ms: int | None = None, **config: Any) -> JsonObject:
    """A human node; a reviewer is ``"ann"`` (mandatory) or ``("bob", False)``."""
    listed = [
        {"userId": r, "mandatory": True} if isinstance(r, str) else {"userId": r[0], "mandatory": r[1]}
        for r in reviewers
    ]
    node: JsonObject = {"nodeId": node_id, "type": "human", "config": {"reviewers": listed, **config}}
    if sla_ms is not None:
        node["slaMs"] = sla_ms
    return node


def webhook(node_id: str) -> JsonObject:
    return {"nodeId": node_id, "type": "webhook", "config": {"url": "https://hooks.example.com/x"}}


def group(
    group_id: str,
    members: list[str],
    policy: str = "waitAll",
    quorum: int | None = None,
    required: list[str] | None = None,
) -> JsonObject:
    body: JsonObject = {"groupId": group_id, "memberNodeIds": members, "onQuorumMet": policy}
    if quorum is not None:
        body["quorum"] = quorum
    if required:
        body["requiredNodeIds"] = required
    return body


def G(group_id: str) -> JsonObject:
    """A group edge endpoint."""
    return {"kind": "group", "groupId": group_id}


def edge(
    source: str | JsonObject,
    target: str | JsonObject,
    on: str = "always",
    when: str | None = None,
    loop: int | None = None,
) -> JsonObject:
    body: JsonObject = {"from": source, "to": target, "on": on}
    if when is not None:
        body["when"] = when
    if loop is not None:
        body["loop"] = {"maxIterations": loop}
    return body
