"""One handler per command, and :func:`apply`, the engine's single entry point.

Every handler first runs all of its checks — any of which may raise :class:`ApiError` — and
only then mutates the state. An ApiError therefore never leaves a half-applied state.
Check order (semantics §5.9, §7; api-v2 §3, §4.6, §4.7): argument values
(``INVALID_ARGUMENT``), then the execution and step exist (``NOT_FOUND``), then idempotent
replays (answered, never refused), then state and type (``FAILED_PRECONDITION``), then
reviewer membership (``PERMISSION_DENIED`` for ``reviewer-*``; ``unknown-responder`` for a
decision).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolkit.engine import decisions
from toolkit.engine.clock import Clock, IdSource
from toolkit.engine.commands import (
    RESOLVE_ACTIONS,
    AgentCompleted,
    CancelExecution,
    CancelStep,
    Command,
    Dispatch,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    Tick,
)
from toolkit.engine.events import Event
from toolkit.engine.plan import Plan
from toolkit.engine.routing import drain
from toolkit.engine.run import Run, Transition
from toolkit.engine.state import TERMINAL, ExecutionState, LoopState, StepState
from toolkit.engine.types import JsonObject, PlannedTarget
from toolkit.errors import ApiError, ErrorCode
from toolkit.work import Work

__all__ = ["apply", "suppress_duplicate_dispatch", "EXECUTION_CANCEL_ACTOR"]

EXECUTION_CANCEL_ACTOR = "system:execution-cancel"
_NOT_FOUND, _PRECONDITION, _INVALID = ErrorCode.NOT_FOUND, ErrorCode.FAILED_PRECONDITION, ErrorCode.INVALID_ARGUMENT


def apply(
    plan: Plan, state: ExecutionState | None, command: Command, clock: Clock, ids: IdSource, work: Work | None = None
) -> Transition:
    """Apply one command to one execution and return what happened.

    ``state`` is None only for :class:`Dispatch`. For speed, the given state object is
    mutated and returned as ``transition.state`` (copy it first with
    :meth:`ExecutionState.copy` if you need the old one). All checks that can raise
    :class:`ApiError` run before the first mutation, so on an error ``state`` is unchanged.

    ``work`` is the command's :class:`~toolkit.work.Work` budget (a fresh one by default);
    a command that would spend more fails its execution with ``work-limit-exceeded``
    (:mod:`toolkit.engine.routing`) instead of running on.

    >>> from toolkit.engine import Plan, ManualClock, SeededIds, Dispatch
    >>> plan = Plan.from_definition({"definitionId": "abc", "name": "x",
    ...     "nodes": [{"nodeId": "hook", "type": "webhook"}], "edges": []})
    >>> t = apply(plan, None, Dispatch("ex_1"), ManualClock(5), SeededIds(0))
    >>> t.state.status, [e.type for e in t.events][-1]
    ('completed', 'execution.completed')
    """
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise TypeError(f"not an engine command: {command!r}")
    if state is None:
        if not isinstance(command, Dispatch):
            raise ApiError(_NOT_FOUND, "execution not found")
    elif state.definition_version != plan.version or state.definition_id != plan.definition_id:
        # A host bug, not a client error: an execution runs the version it was dispatched with.
        raise ValueError(
            f"execution {state.execution_id} runs {state.definition_id} "
            f"v{state.definition_version}, not {plan.definition_id} v{plan.version}"
        )
    return handler(plan, state, command, clock, ids, work)


def suppress_duplicate_dispatch(state: ExecutionState, clock: Clock) -> Transition:
    """A dispatch repeated an ``idempotencyKey``: log internal ``idempotency.suppressed`` on the
    first execution and answer its dispatch response with ``deduplicated: true``."""
    # One event and no steps: no Run (which needs a plan and an id source) is involved.
    seq = state.last_seq = state.last_seq + 1
    event = Event(
        None,
        state.execution_id,
        seq,
        "idempotency.suppressed",
        None,
        clock.now(),
        state.correlation_id,
        {"idempotencyKey": state.idempotency_key},
    )
    return Transition(
        state,
        [event],
        {"executionId": state.execution_id, "correlationId": state.correlation_id, "deduplicated": True},
        [],
    )


# ---------------------------------------------------------------- lookups shared by handlers


def _step(state: ExecutionState, step_id: str) -> StepState:
    step = state.steps.get(step_id)
    if step is None:
        raise ApiError(_NOT_FOUND, f"step {step_id} not found in execution {state.execution_id}")
    return step


def _require_running(state: ExecutionState) -> None:
    if state.status != "running":
        raise ApiError(_PRECONDITION, f"execution {state.execution_id} is {state.status}")


def _given(cmd: object, name: str) -> object:
    """A command's field as its caller gave it. Commands come from outside (the API edge, a
    script), so the engine checks the fields it relies on; read through the field's annotation,
    a compiled module (setup.py) would refuse a wrong type with a TypeError before the check."""
    return getattr(cmd, name)


def _require_object(cmd: object, name: str, field: str) -> None:
    value = _given(cmd, name)
    if value is not None and not isinstance(value, dict):
        raise ApiError(_INVALID, f"data.{field}: must be an object")


def _require_id(cmd: object, name: str, field: str) -> None:
    value = _given(cmd, name)
    if not isinstance(value, str) or not value:
        raise ApiError(_INVALID, f"{field}: must be a non-empty string")


# ---------------------------------------------------------------- handlers


def _dispatch(
    plan: Plan, state: ExecutionState | None, cmd: Dispatch, clock: Clock, ids: IdSource, work: Work | None
) -> Transition:
    if state is not None:
        raise ApiError(_PRECONDITION, f"execution {state.execution_id} was already dispatched")
    _require_id(cmd, "execution_id", "executionId")
    _require_object(cmd, "trigger_context", "triggerContext")
    now = clock.now()
    state = ExecutionState(
        cmd.execution_id,
        plan.definition_id,
        plan.version,
        cmd.correlation_id if cmd.correlation_id is not None else cmd.execution_id,
        cmd.idempotency_key,
        cmd.trigger_context,
        now,
    )
    for loop_id in plan.loops:
        state.loops[loop_id] = LoopState(loop_id)
    run = Run(plan, state, now, ids, work)
    planned: list[PlannedTarget] = []
    for kind, ref in plan.roots:
        planned.extend(run.plan_targets(None, [(-1, kind, ref)]))
    run.emit(
        "execution.dispatched",
        None,
        {
            "definitionId": plan.definition_id,
            "definitionVersion": plan.version,
            "rootStepIds": [step_id for _, _, entries in planned for _, step_id in entries],
        },
    )
    run.spawn_targets(planned, None)
    drain(run)
    return run.transition(
        {"executionId": state.execution_id, "correlationId": state.correlation_id, "deduplicated": False}
    )


def _tick(plan: Plan, state: ExecutionState, cmd: Tick, clock: Clock, ids: IdSource, work: Work | None) -> Transition:
    run = Run(plan, state, clock.now(), ids, work)
    fired = 0
    while state.status == "running":
        due = _earliest_due(state, run.now)
        if due is None:
            break
        step, kind = due
        node = plan.nodes[step.node_id]
        if kind == 0:
            error = {"code": "sla-exceeded", "message": f"step exceeded its SLA of {node.sla_ms} ms"}
            run.finish(step, "breached", None, error, "step.breached", {"reason": "sla-exceeded", "slaMs": node.sla_ms})
        else:
            error = {
                "code": "agent-timeout",
                "message": f"agent {node.agent_id} ran longer than {node.max_runtime_ms} ms",
            }
            run.finish(step, "failed", None, error, "step.failed", {"error": error})
        fired += 1
        drain(run)
    return run.transition({"fired": fired})


def _earliest_due(state: ExecutionState, now: int) -> tuple[StepState, int] | None:
    """(step, 0 for an SLA / 1 for an agent timeout) with the earliest due deadline, or None.
    Ties go to the SLA, then to the step created first."""
    best: tuple[StepState, int] | None = None
    best_key: tuple[int, int] | None = None
    for step in state.active.values():
        d = step.sla_deadline
        if d is not None and d <= now and (best_key is None or (d, 0) < best_key):
            best, best_key = (step, 0), (d, 0)
        d = step.agent_deadline
        if d is not None and d <= now and step.status == "running" and (best_key is None or (d, 1) < best_key):
            best, best_key = (step, 1), (d, 1)
    return best


def _agent_completed(
    plan: Plan, state: ExecutionState, cmd: AgentCompleted, clock: Clock, ids: IdSource, work: Work | None
) -> Transition:
    _require_object(cmd, "output", "output")
    _require_object(cmd, "error", "error")
    step = _step(state, cmd.step_id)
    node = plan.nodes[step.node_id]
    if node.type != "agent" or node.blocking:
        raise ApiError(_PRECONDITION, f"step {step.step_id} is not a non-blocking agent step")
    if step.status != "running":
        raise ApiError(_PRECONDITION, f"step {step.step_id} is {step.status}, not running")
    run = Run(plan, state, clock.now(), ids, work)
    output = cmd.output if cmd.output is not None else {}
    if cmd.error is not None:
        error = {"code": str(cmd.error.get("code", "agent-error")), "message": str(cmd.error.get("message", ""))}
        run.finish(step, "failed", output, error, "step.failed", {"error": error})
    elif node.require_non_empty and not output:
        error = {"code": "empty-output", "message": f"agent {node.agent_id} returned an empty output"}
        run.finish(step, "failed", output, error, "step.failed", {"error": error})
    else:
        run.finish(step, "completed", output, None, "step.completed", {"agentId": node.agent_id})
    drain(run)
    return run.transition({"completed": True, "stepId": step.step_id, "status": step.status})


def _record_reviewer_decision(
    plan: Plan, state: ExecutionState, cmd: RecordReviewerDecision, clock: Clock, ids: IdSource, work: Work | None
) -> Transition:
    if cmd.decision not in ("approve", "reject"):
        raise ApiError(_INVALID, "data.decision: must be approve or reject")
    step = _step(state, cmd.step_id)
    node = plan.nodes[step.node_id]
    if node.type != "human":
        raise ApiError(_PRECONDITION, f"step {step.step_id} is not a human step")
    run = Run(plan, state, clock.now(), ids, work)
    if step.responses and cmd.reviewer_id in step.responses:
        return run.transition(_decision_result(False, decisions.status_of(step), False, "idempotent"))
    if step.status != "waiting":
        raise ApiError(_PRECONDITION, f"step {step.step_id} is {step.status}, not waiting")
    _require_running(state)
    if cmd.reviewer_id not in node.reviewer_set:
        return run.transition(_decision_result(False, "pending", False, "unknown-responder"))
    resolved = decisions.record_decision(run, node, step, cmd.reviewer_id, cmd.decision, cmd.reason)
    drain(run)
    return run.transition(_decision_result(True, decisions.status_of(step), resolved, None))


def _decision_result(recorded: bool, status: str, resumed: bool, why: str | None) -> JsonObject:
    result: JsonObject = {"recorded": recorded, "aggregatorStatus": status, "resumeScheduled": resumed}
    if why is not None:
        result["rejectionReason"] = why
    return result


def _record_agent_resolution(
    plan: Plan, state: ExecutionState, cmd: RecordAgentResolution, clock: Clock, ids: IdSource, work: Work | None
) -> Transition:
    if cmd.status not in ("success", "failure"):
        raise ApiError(_INVALID, "data.status: must be success or failure")
    _require_id(cmd, "resolution_id", "data.resolutionId")
    if cmd.status == "failure" and not cmd.error_message:
        raise ApiError(_INVALID, "data.errorMessage: required when status is failure")
    _require_object(cmd, "output", "output")
    step = _step(state, cmd.step_id)
    node = plan.nodes[step.node_id]
    if node.type != "agent" or not node.blocking:
        raise ApiError(_PRECONDITION, f"step {step.step_id} is not a blocking agent step")
    run = Run(plan, state, clock.now(), ids, work)
    if step.resolutions and cmd.resolution_id in step.resolutions:
        return run.transition(
            {"recorded": False, "aggregatorStatus": decisions.status_of(step), "resumeScheduled": False}
        )
    if step.status != "waiting":
        raise ApiError(_PRECONDITION, f"step {step.step_id} is {step.status}, not waiting")
    _require_running(state)
    resolved = decisions.record_resolution(run, node, step, cmd)
    drain(run)
    return run.transition(
        {"recorded": True, "aggregatorStatus": decisions.status_of(step), "resumeScheduled": resolved}
    )


def _resolve_step(
    plan: Plan, state: ExecutionState, cmd: ResolveStep, clock: Clock, ids: IdSource, work: Work | None
) -> Transition:
    if cmd.action not in RESOLVE_ACTIONS:
        raise ApiError(_INVALID, f"data.action: must be one of {', '.join(RESOLVE_ACTIONS)}")
    _require_object(cmd, "output", "output")
    step = _step(state, cmd.step_id)
    if step.status in TERMINAL:
        raise ApiError(_PRECONDITION, f"step {step.step_id} is already {step.status}")
    _require_running(state)
    node = plan.nodes[step.node_id]
    action = cmd.action
    if action in ("force-complete", "force-fail"):
        if step.status not in ("running", "waiting"):
            raise ApiError(_PRECONDITION, f"{action} needs a running or waiting step, not {step.status}")
    else:
        if node.type != "human":
            raise ApiError(_PRECONDITION, f"{action} applies to human steps only; {step.step_id} is {node.type}")
        if step.status != "waiting":
            raise ApiError(_PRECONDITION, f"{action} needs a waiting step, not {step.status}")
        if action.startswith("reviewer-") and cmd.actor_id not in node.reviewer_set:
            raise ApiError(
                ErrorCode.PERMISSION_DENIED, f"actorId {cmd.actor_id} is not a reviewer of step {step.step_id}"
            )
    run = Run(plan, state, clock.now(), ids, work)
    decisions.resolve(run, node, step, cmd)
    drain(run)
    return run.transition(
        {"resolved": True, "executionId": state.execution_id, "stepId": step.step_id, "action": action}
    )


def _cancel_step(
    plan: Plan, state: ExecutionState, cmd: CancelStep, clock: Clock, ids: IdSource, work: Work | None
) -> Transition:
    step = _step(state, cmd.step_id)
    if step.status in TERMINAL:
        raise ApiError(_PRECONDITION, f"step {step.step_id} is already {step.status}")
    _require_running(state)
    run = Run(plan, state, clock.now(), ids, work)
    run.cancel(step, cmd.actor_id, cmd.reason, route=True)
    drain(run)
    return run.transition({"cancelled": True, "stepId": step.step_id, "executionId": state.execution_id})


def _cancel_execution(
    plan: Plan, state: ExecutionState, cmd: CancelExecution, clock: Clock, ids: IdSource, work: Work | None
) -> Transition:
    _require_running(state)
    run = Run(plan, state, clock.now(), ids, work)
    run.cancel_all(EXECUTION_CANCEL_ACTOR, cmd.reason)
    state.status = "cancelled"
    state.cancelled_at = state.completed_at = run.now
    run.emit("execution.cancelled", None, {"reason": cmd.reason})
    return run.transition({"cancelled": True, "executionId": state.execution_id})


# Keyed by the command's exact type; each handler takes that command type (and, but for
# Dispatch, an existing state), which one Callable type cannot say: hence Any for those two.
_Handler = Callable[[Plan, Any, Any, Clock, IdSource, Work | None], Transition]

_HANDLERS: dict[type[Command], _Handler] = {
    Dispatch: _dispatch,
    Tick: _tick,
    AgentCompleted: _agent_completed,
    RecordReviewerDecision: _record_reviewer_decision,
    RecordAgentResolution: _record_agent_resolution,
    ResolveStep: _resolve_step,
    CancelStep: _cancel_step,
    CancelExecution: _cancel_execution,
}
