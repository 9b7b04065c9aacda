"""Fan-out (semantics §5.4) and the end of an execution (§5.8).

:func:`drain` routes every step that became terminal during a command, oldest first, then
ends the execution if nothing is pending, running or waiting any more. Routing one step:

1. cancelled steps fire nothing (their group still counts them);
2. a mandatory reject from a loop source goes to the loop (:mod:`toolkit.engine.loops`),
   and none of the source's forward edges fire;
3. otherwise each forward edge of the node fires if: ``always`` — any terminal status but
   cancelled; ``approve`` / ``reject`` — completed with that ``output.decision``; ``custom`` —
   its predicate is true (for a breached step only predicates that read ``step.status``);
   ``exhausted`` — never here (only through loop exhaustion). joinOnQuorum members skip
   this: their group routes for them;
4. a group member is then counted by its group (:mod:`toolkit.engine.groups`);
5. a bad outcome (failed, breached, completed ``reject``) that nothing routed is recorded as
   unhandled ``[seq, code]``; the execution fails with the earliest one's code.

An execution that reaches :data:`MAX_STEPS` steps is stopped: its active steps are cancelled
and it fails with ``step-limit-exceeded:<n>`` (which takes precedence over other outcomes).
Likewise a command whose predicates spend more than its work budget (:mod:`toolkit.work`):
the step being routed fires nothing, active steps are cancelled and the execution fails with
``work-limit-exceeded:edge:<index>``, naming the custom edge whose predicate ran out.
"""

from __future__ import annotations

from toolkit.engine import groups, loops
from toolkit.engine.plan import EdgePlan, NodePlan
from toolkit.engine.run import Run
from toolkit.engine.state import StepState
from toolkit.engine.types import JsonObject
from toolkit.work import WorkLimitExceeded

__all__ = ["drain", "route_step", "outcome_code", "MAX_STEPS"]


def outcome_code(step: StepState) -> str | None:
    """``step-failed:<node>`` / ``step-breached:<node>`` / ``step-rejected:<node>``, or None."""
    status = step.status
    if status == "failed":
        return f"step-failed:{step.node_id}"
    if status == "breached":
        return f"step-breached:{step.node_id}"
    if status == "completed" and step.output and step.output.get("decision") == "reject":
        return f"step-rejected:{step.node_id}"
    return None


# Without implicit joins, a definition whose parallel branches keep re-converging multiplies
# its steps with every layer (2^n for n layers of fully connected pairs). The linter warns
# (implicit-join); the runtime stops such an execution instead of letting it take the host.
MAX_STEPS = 10_000
STEP_LIMIT_ACTOR = "system:step-limit"
WORK_LIMIT_ACTOR = "system:work-limit"


def drain(run: Run) -> None:
    """Route queued terminal steps breadth-first, then end the execution if it is done."""
    queue = run.queue
    state = run.state
    while queue:
        if len(state.steps) >= MAX_STEPS and state.status == "running":
            _stop_at_step_limit(run)
            return
        try:
            route_step(run, queue.popleft())
        except WorkLimitExceeded as exc:
            # Raised before the step's edges fired (they fire together, after every predicate
            # is known), so nothing of this step is half-done; the execution stops here.
            _stop_at_work_limit(run, exc)
            return
    run.end_if_done()


def _stop_at_step_limit(run: Run) -> None:
    """Cancel what is still active and fail the execution with ``step-limit-exceeded``."""
    run.cancel_all(STEP_LIMIT_ACTOR, "step-limit-exceeded")
    run.state.unhandled.append([0, f"step-limit-exceeded:{MAX_STEPS}"])
    run.end("failed")


def _stop_at_work_limit(run: Run, exc: WorkLimitExceeded) -> None:
    """Cancel what is still active and fail the execution with ``work-limit-exceeded``."""
    run.cancel_all(WORK_LIMIT_ACTOR, "work-limit-exceeded")
    run.state.unhandled.append([0, f"work-limit-exceeded:edge:{exc.edge_index}"])
    run.end("failed")


def route_step(run: Run, step: StepState) -> None:
    state = run.state
    if state.status != "running":
        return
    node = run.plan.nodes[step.node_id]
    if node.loop_id is not None and step.iteration != state.loops[node.loop_id].iteration:
        return  # a terminal step of an attempt that a loop restart superseded
    instance = state.groups.get(step.instance_id) if step.instance_id is not None else None
    if instance is not None and instance.closed:
        return
    if step.status == "cancelled":
        if instance is not None:
            groups.member_terminal(run, instance, step, False, None)
        return
    bad = outcome_code(step)
    handled = False
    if instance is None or not node.in_join_group:
        loop = node.loop_back
        if loop is not None and loops.is_mandatory_reject(node, step):
            loops.trigger(run, loop, step, loops.rejection_of(node, step))
            handled = True
            if state.status != "running":
                return
        else:
            handled = _fire_own_edges(run, node, step) > 0
    if instance is not None:
        if not instance.closed:
            groups.member_terminal(run, instance, step, handled, bad)
    elif bad is not None and not handled:
        state.unhandled.append([step.terminal_seq, bad])


def _fire_own_edges(run: Run, node: NodePlan, step: StepState) -> int:
    edges = run.plan.node_edges.get(step.node_id)
    if not edges:
        return 0
    status = step.status
    output = step.output if step.output is not None else {}
    decision = output.get("decision") if status == "completed" else None
    context: JsonObject | None = None
    firing: list[EdgePlan] = []
    for edge in edges:
        role = edge.role
        if role == "always":
            ok = True  # every terminal status but cancelled, which never gets here
        elif role == "approve":
            ok = decision == "approve"
        elif role == "reject":
            ok = decision == "reject"
        elif role == "custom":
            if status == "breached" and not edge.reads_status:
                ok = False
            else:
                if context is None:
                    context = {
                        "output": output,
                        "step": {
                            "stepId": step.step_id,
                            "nodeId": step.node_id,
                            "nodeType": step.node_type,
                            "status": status,
                            "iteration": step.iteration,
                        },
                        "execution": {"input": run.state.input},
                    }
                ok = run.holds(edge, context)
        else:  # exhausted: only through loop exhaustion
            ok = False
        if ok:
            firing.append(edge)
    return run.fire(step, firing, None) if firing else 0
