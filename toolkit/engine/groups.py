"""Parallel groups (semantics §5.5): counting members, quorum, and the group's own routing.

A group instance is created with all its member steps. Each member that becomes terminal
is counted here (after it fanned out on its own edges, unless the group is joinOnQuorum):

- quorum is met when ``approvals >= quorum`` and every ``requiredNodeIds`` member approved;
  the first time, ``group.quorum-met`` is emitted (every policy);
- ``cancelOnQuorum`` / ``joinOnQuorum``: on quorum, cancel the members still running
  (``system:group-quorum``) and fire the group's successors once, with the group output as
  their input; without quorum they route only through a loop-back (forward reject edges
  from these groups are dead — the linter rejects them);
- ``waitAll``: when every member is terminal, the collective decision (unanimity) fires the
  group-source edges: ``approve``/``reject`` by decision, ``always``, ``custom`` by predicate.

A waitAll member's bad outcome (failed, breached, rejected) that its own edges did not route
waits in ``deferred`` until the group decides: handled if the group's edges fired (or it
looped), unhandled otherwise. Members of joinOnQuorum and cancelOnQuorum groups are never
unhandled: their group owns their routing (semantics §5.8).
"""

from __future__ import annotations

from toolkit.engine import loops
from toolkit.engine.plan import EdgePlan, GroupPlan
from toolkit.engine.run import Run
from toolkit.engine.state import TERMINAL, GroupInstance, StepState
from toolkit.engine.types import JsonObject

__all__ = ["member_terminal", "group_output", "QUORUM_ACTOR"]

QUORUM_ACTOR = "system:group-quorum"


def group_output(run: Run, group: GroupPlan, instance: GroupInstance, decision: str) -> JsonObject:
    """``{decision, groupId, groupOutputs, quorum, totalApproved, expectedSteps}``.

    ``groupOutputs`` maps each member node that finished (not cancelled, not running) to its
    output.
    """
    steps = run.state.steps
    outputs: JsonObject = {}
    for step_id in instance.member_step_ids:
        step = steps[step_id]
        if step.status in TERMINAL and step.status != "cancelled":
            outputs[step.node_id] = step.output if step.output is not None else {}
    return {
        "decision": decision,
        "groupId": group.group_id,
        "groupOutputs": outputs,
        "quorum": group.quorum,
        "totalApproved": len(instance.approved),
        "expectedSteps": group.expected,
    }


def _context(run: Run, instance: GroupInstance, output: JsonObject) -> JsonObject:
    return {
        "output": output,
        "step": {
            "stepId": None,
            "nodeId": instance.group_id,
            "nodeType": "group",
            "groupId": instance.group_id,
            "status": "completed",
            "iteration": instance.iteration,
        },
        "execution": {"input": run.state.input},
    }


def _firing(
    run: Run, group: GroupPlan, instance: GroupInstance, output: JsonObject, roles: tuple[str, ...]
) -> list[EdgePlan]:
    """Group-source edges that fire for ``output``: the given roles, plus true custom edges."""
    firing: list[EdgePlan] = []
    context: JsonObject | None = None
    for edge in group.edges:
        if edge.role in roles:
            firing.append(edge)
        elif edge.role == "custom":
            context = context or _context(run, instance, output)
            if run.holds(edge, context):
                firing.append(edge)
    return firing


def _quorum_reached(group: GroupPlan, instance: GroupInstance) -> bool:
    approved = instance.approved
    return len(approved) >= group.quorum and all(r in approved for r in group.required)


def member_terminal(run: Run, instance: GroupInstance, step: StepState, handled: bool, bad: str | None) -> None:
    """Count ``step`` (a member of ``instance``) that just became terminal."""
    plan = run.plan
    group = plan.groups[instance.group_id]
    node = plan.nodes[step.node_id]
    instance.terminal += 1
    if step.status == "completed" and step.output and step.output.get("decision") == "approve":
        instance.approved.append(step.node_id)
    if bad is not None and not handled and group.policy == "waitAll":
        # Members of quorum groups never count as unhandled: their group owns their routing
        # (semantics §5.8). A waitAll member's is handled once its group's edges fire.
        instance.deferred.append([step.terminal_seq, bad])
    if instance.first_reject is None and loops.is_mandatory_reject(node, step):
        instance.first_reject = loops.rejection_of(node, step)
    if not instance.quorum_met and _quorum_reached(group, instance):
        instance.quorum_met = True
        run.emit(
            "group.quorum-met",
            step.step_id,
            {
                "groupId": group.group_id,
                "total": len(instance.approved),
                "quorum": group.quorum,
                "completedTotal": instance.terminal,
                "expectedSteps": group.expected,
            },
        )
        if group.policy != "waitAll":
            _resolve_on_quorum(run, group, instance, step.step_id)
            return
    if instance.terminal >= group.expected and not instance.completed:
        _complete(run, group, instance, step.step_id)


def _resolve_on_quorum(run: Run, group: GroupPlan, instance: GroupInstance, step_id: str) -> None:
    instance.resolved = True
    instance.decision = "approve"
    instance.deferred.clear()  # outvoted: the group routes, and it approved
    steps = run.state.steps
    for member_id in instance.member_step_ids:
        member = steps[member_id]
        if member.status not in TERMINAL:
            run.cancel(member, QUORUM_ACTOR, "group-quorum-met", route=False)
            instance.terminal += 1
    if instance.terminal >= group.expected:
        _complete(run, group, instance, step_id)
    output = group_output(run, group, instance, "approve")
    edges = _firing(run, group, instance, output, ("approve", "always"))
    if group.policy == "joinOnQuorum":
        # One step per distinct target of the members' approve/always edges and the group's.
        by_target: dict[tuple[str, str], EdgePlan] = {}
        for edge in sorted((*group.member_successor_edges, *edges), key=lambda e: e.index):
            by_target.setdefault((edge.target_kind, edge.target_ref), edge)
        edges = list(by_target.values())
    run.fire(instance, edges, output)


def _complete(run: Run, group: GroupPlan, instance: GroupInstance, step_id: str) -> None:
    """Every member is terminal: ``parallel-group.completed``, then resolve if not yet done."""
    instance.completed = True
    if instance.resolved:
        decision = instance.decision
        assert decision is not None  # set together with resolved
    elif group.policy == "waitAll":
        decision = "approve" if len(instance.approved) >= group.expected else "reject"
    else:
        decision = "reject"
    run.emit(
        "parallel-group.completed",
        step_id,
        {
            "groupId": group.group_id,
            "decision": decision,
            "totalApproved": len(instance.approved),
            "completedTotal": instance.terminal,
            "expectedSteps": group.expected,
        },
    )
    if instance.resolved:
        return
    instance.resolved = True
    instance.decision = decision
    output = group_output(run, group, instance, decision)
    if decision == "reject" and group.loop_back is not None and instance.first_reject is not None:
        instance.deferred.clear()
        loops.trigger(run, group.loop_back, instance, instance.first_reject, output)
        return
    fired = 0
    if group.policy == "waitAll":
        fired = run.fire(instance, _firing(run, group, instance, output, (decision, "always")), output)
    if fired or decision == "approve":
        instance.deferred.clear()
    run.state.unhandled.extend(instance.deferred)
    instance.deferred.clear()
