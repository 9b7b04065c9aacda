"""Reject loop-backs (semantics §5.6): restart the loop's entry, or exhaust it.

A loop-back fires when its source rejects *mandatorily*:

- a human step completed with ``decision: "reject"`` and ``rejectorMandatory: true`` — only
  Record Reviewer Decision by a mandatory reviewer sets that; a step ended by Resolve Step
  never counts, whatever its output says;
- an agent step (blocking or not) completed with ``decision: "reject"`` — an agent's
  rejection is always mandatory;
- a group resolving ``reject`` with at least one member that rejected mandatorily (the first
  such member, in completion order, is the rejector).

Below ``maxIterations`` the loop restarts: in-flight body steps are cancelled
(``system:loop-restart``), the counter goes up, ``loop.iteration-started`` is emitted and the
entry step is created with ``{iteration, loopId, previousAttempts}``. At the cap it is
exhausted: ``loop.exhausted``, then the source's ``exhausted`` edge, or with none the
execution fails at once with ``loop-exhausted:<loopId>``.
"""

from __future__ import annotations

from toolkit.engine.plan import LoopPlan, NodePlan
from toolkit.engine.run import Run
from toolkit.engine.state import GroupInstance, LoopState, StepState
from toolkit.engine.types import JsonObject

__all__ = ["is_mandatory_reject", "rejection_of", "trigger", "LOOP_ACTOR", "EXHAUSTED_ACTOR"]

LOOP_ACTOR = "system:loop-restart"
EXHAUSTED_ACTOR = "system:loop-exhausted"


def is_mandatory_reject(node: NodePlan, step: StepState) -> bool:
    """Whether ``step`` (of ``node``) rejected in the way that iterates a loop."""
    if step.status != "completed":
        return False
    output = step.output
    if not output or output.get("decision") != "reject":
        return False
    if node.type == "agent":
        return True
    return node.type == "human" and output.get("rejectorMandatory") is True and step.overridden is None


def rejection_of(node: NodePlan, step: StepState) -> JsonObject:
    """Who rejected and why, for ``previousAttempts`` and ``loop.exhausted``."""
    output = step.output or {}
    rejected_by = output.get("rejectedBy", node.agent_id if node.type == "agent" else None)
    reason = output["rejectionReason"] if "rejectionReason" in output else output.get("reason")
    return {"rejectedBy": rejected_by, "rejectionReason": reason, "stepId": step.step_id}


def trigger(
    run: Run,
    loop: LoopPlan,
    source: StepState | GroupInstance,
    rejection: JsonObject,
    group_output: JsonObject | None = None,
) -> None:
    """``source`` (a StepState or GroupInstance) rejected mandatorily: restart or exhaust."""
    state = run.state
    loop_state = state.loops[loop.loop_id]
    entry = state.steps.get(loop_state.entry_step_id) if loop_state.entry_step_id else None
    loop_state.attempts.append(
        {
            "iteration": loop_state.iteration,
            "authorOutput": entry.output if entry is not None else None,
            "rejectedBy": rejection["rejectedBy"],
            "rejectorMandatory": True,
            "rejectionReason": rejection["rejectionReason"],
            "rejectedAt": run.now,
        }
    )
    if loop_state.iteration < loop.max_iterations:
        _restart(run, loop, loop_state, source, group_output)
    else:
        _exhaust(run, loop, loop_state, source, rejection, group_output)


def _restart(
    run: Run, loop: LoopPlan, loop_state: LoopState, source: StepState | GroupInstance, group_output: JsonObject | None
) -> None:
    state = run.state
    body = loop.body
    for step in list(state.active.values()):
        if step.node_id in body:
            run.cancel(step, LOOP_ACTOR, "loop-restart", route=False)
    groups = run.plan.groups
    for instance in state.groups.values():
        members = groups[instance.group_id].members
        if not instance.closed and members and members[0] in body:
            instance.closed = True  # each iteration gets a fresh group instance
    loop_state.iteration += 1
    loop_state.entry_step_id = None
    planned = run.plan_targets(source, [(loop.edge_index, loop.entry_kind, loop.entry_ref)])
    first_step_id = planned[0][2][0][1] if planned and planned[0][2] else None
    run.emit(
        "loop.iteration-started",
        first_step_id,
        {"loopId": loop.loop_id, "iteration": loop_state.iteration, "triggeredBy": "rejection"},
    )
    entry_input = {
        "iteration": loop_state.iteration,
        "loopId": loop.loop_id,
        "previousAttempts": list(loop_state.attempts),
    }
    if group_output is not None:
        entry_input = {**group_output, **entry_input}
    run.spawn_targets(planned, entry_input)


def _exhaust(
    run: Run,
    loop: LoopPlan,
    loop_state: LoopState,
    source: StepState | GroupInstance,
    rejection: JsonObject,
    group_output: JsonObject | None,
) -> None:
    loop_state.exhausted = True
    source_step_id = source.step_id if isinstance(source, StepState) else None
    event = run.emit(
        "loop.exhausted",
        source_step_id,
        {
            "loopId": loop.loop_id,
            "iteration": loop_state.iteration,
            "lastRejectedBy": rejection["rejectedBy"],
            "lastRejectionReason": rejection["rejectionReason"],
        },
    )
    if loop.exhausted_edge is not None:
        route_input = {
            "loopId": loop.loop_id,
            "iteration": loop_state.iteration,
            "previousAttempts": list(loop_state.attempts),
        }
        if group_output is not None:
            route_input = {**group_output, **route_input}
        run.fire(source, [loop.exhausted_edge], route_input)
        return
    run.state.unhandled.append([event.seq, f"loop-exhausted:{loop.loop_id}"])
    run.cancel_all(EXHAUSTED_ACTOR, "loop-exhausted")
    run.end("failed")
