"""Waiting steps being decided (semantics §5.3, §5.9): reviewers, agent resolutions, overrides.

- **Human steps** complete ``approve`` once every mandatory reviewer approved, and ``reject``
  as soon as any declared reviewer rejects. The completed output summarises every response.
- **Blocking agent steps** count resolutions by ``resolutionId``: resolved at
  ``required`` successes (``expectedResolutions`` for allResolved, ``minCount`` for
  minResolved), failed as soon as enough failures make that unreachable.
- **Resolve Step** ends a step at once, bypassing both aggregators; it always writes the
  internal ``step.overridden`` audit event first.

Each function here is called after the handler's checks passed; they only mutate.
"""

from __future__ import annotations

from toolkit.engine.commands import RecordAgentResolution, ResolveStep
from toolkit.engine.plan import NodePlan
from toolkit.engine.run import Run, resume_key
from toolkit.engine.state import StepState
from toolkit.engine.types import JsonObject

__all__ = ["status_of", "record_decision", "record_resolution", "resolve", "completed_data"]

_APPROVE_ACTIONS = ("force-approve", "reviewer-approve")
_REJECT_ACTIONS = ("force-reject", "reviewer-reject")


def status_of(step: StepState) -> str:
    """The aggregator status a decision or resolution response reports for ``step``.

    ``pending`` while undecided; ``resolved`` when completed (a human step completed with
    ``reject`` is ``rejected``); ``failed`` when failed or breached; ``cancelled``.
    """
    status = step.status
    if status in ("pending", "running", "waiting"):
        return "pending"
    if status == "completed":
        if step.node_type == "human" and step.output and step.output.get("decision") == "reject":
            return "rejected"
        return "resolved"
    if status == "cancelled":
        return "cancelled"
    return "failed"


def completed_data(node: NodePlan, output: JsonObject) -> JsonObject:
    """``step.completed`` data: decision and aggregator status for human and blocking agent
    steps, the agent id for non-blocking agent steps (semantics §6)."""
    if node.type == "human":
        decision = output.get("decision")
        return {
            "nodeType": "human",
            "decision": decision,
            "aggregatorStatus": "rejected" if decision == "reject" else "resolved",
        }
    if node.blocking:
        return {"nodeType": "agent", "decision": output.get("decision"), "aggregatorStatus": "resolved"}
    return {"agentId": node.agent_id}


# ---------------------------------------------------------------- human steps


def record_decision(
    run: Run, node: NodePlan, step: StepState, reviewer_id: str, decision: str, reason: str | None
) -> bool:
    """Record one declared reviewer's decision; True when it resolved the step."""
    mandatory = reviewer_id in node.mandatory_set
    responses = step.responses
    assert responses is not None  # a waiting human step has its responses
    responses[reviewer_id] = {"decision": decision, "reason": reason, "at": run.now, "mandatory": mandatory}
    run.emit(
        "step.response-recorded",
        step.step_id,
        {"reviewerId": reviewer_id, "decision": decision, "reason": reason, "mandatory": mandatory},
    )
    if decision != "reject":
        for user_id in node.mandatory_set:
            response = responses.get(user_id)
            if response is None or response["decision"] != "approve":
                return False
    output = _human_output(run, node, step, decision)
    if decision == "reject":
        output["rejectedBy"] = reviewer_id
        output["rejectorMandatory"] = mandatory
        output["rejectionReason"] = reason
    aggregator = output["aggregatorStatus"]
    run.emit("step.resumed", step.step_id, {"aggregatorStatus": aggregator})
    run.finish(
        step,
        "completed",
        output,
        None,
        "step.completed",
        {"nodeType": "human", "decision": decision, "aggregatorStatus": aggregator},
    )
    return True


def _human_output(run: Run, node: NodePlan, step: StepState, decision: str) -> JsonObject:
    responses = step.responses
    assert responses is not None  # a waiting human step has its responses
    reviewers: list[JsonObject] = []
    approve_count = reject_count = mandatory_approve = 0
    for user_id, mandatory in node.reviewers:
        response = responses.get(user_id)
        given = response["decision"] if response is not None else None
        if given == "approve":
            approve_count += 1
            mandatory_approve += mandatory
        elif given == "reject":
            reject_count += 1
        reviewers.append(
            {
                "userId": user_id,
                "mandatory": mandatory,
                "decision": given,
                "reason": response["reason"] if response is not None else None,
                "respondedAt": response["at"] if response is not None else None,
            }
        )
    return {
        "reviewers": reviewers,
        "reviewerIds": list(node.reviewer_ids),
        "reviewerEmails": list(node.reviewer_emails),
        "commentBody": node.comment_body,
        "aggregatorStatus": "rejected" if decision == "reject" else "resolved",
        "approveCount": approve_count,
        "rejectCount": reject_count,
        "totalResponses": len(responses),
        "mandatoryCount": node.mandatory_count,
        "mandatoryApproveCount": int(mandatory_approve),
        "decision": decision,
        "approved": decision == "approve",
        "resumedAt": run.now,
        "resumeKey": resume_key(run.state.execution_id, step.step_id),
    }


# ---------------------------------------------------------------- blocking agent steps


def record_resolution(run: Run, node: NodePlan, step: StepState, cmd: RecordAgentResolution) -> bool:
    """Record one new resolution; True when it resolved or failed the step."""
    resolutions = step.resolutions
    # A waiting blocking agent step has its resolutions; agent nodes have both counts.
    assert resolutions is not None and node.required is not None and node.expected is not None
    resolutions[cmd.resolution_id] = {
        "resolutionId": cmd.resolution_id,
        "status": cmd.status,
        "output": cmd.output,
        "errorMessage": cmd.error_message,
        "recordedAt": run.now,
    }
    run.emit("step.response-recorded", step.step_id, {"resolutionId": cmd.resolution_id, "status": cmd.status})
    successes = [r for r in resolutions.values() if r["status"] == "success"]
    failures = len(resolutions) - len(successes)
    if len(successes) >= node.required:
        rejecting = next((r for r in successes if (r["output"] or {}).get("decision") == "reject"), None)
        output: JsonObject = {
            "decision": "reject" if rejecting is not None else "approve",
            "resolutions": list(resolutions.values()),
            "successCount": len(successes),
            "failureCount": failures,
        }
        if rejecting is not None:
            output["rejectedBy"] = node.agent_id
            output["rejectorMandatory"] = True
            output["rejectionReason"] = rejecting["output"].get("reason")
        run.emit("step.resumed", step.step_id, {"aggregatorStatus": "resolved"})
        run.finish(step, "completed", output, None, "step.completed", completed_data(node, output))
        return True
    if failures > node.expected - node.required:
        error = {
            "code": "resolution-threshold-unreachable",
            "message": f"{failures} of {node.expected} resolutions failed; "
            f"{node.required} successes can no longer be reached",
        }
        output = {"resolutions": list(resolutions.values()), "successCount": len(successes), "failureCount": failures}
        run.emit("step.resumed", step.step_id, {"aggregatorStatus": "failed"})
        run.finish(step, "failed", output, error, "step.failed", {"error": error})
        return True
    return False


# ---------------------------------------------------------------- Resolve Step


def resolve(run: Run, node: NodePlan, step: StepState, cmd: ResolveStep) -> None:
    """Apply a Resolve Step action (already checked against the step's type and state)."""
    action = cmd.action
    output = dict(cmd.output) if cmd.output is not None else {}
    status = "completed"
    decision: str | None
    if action in _APPROVE_ACTIONS or action in _REJECT_ACTIONS:
        decision = "approve" if action in _APPROVE_ACTIONS else "reject"
        output["decision"] = decision
        output["approved"] = decision == "approve"
        output["approvalReply"] = {"actorId": cmd.actor_id, "action": action, "reason": cmd.reason, "at": run.now}
    elif action == "force-complete":
        decision = output.get("decision")
    else:  # force-fail
        decision = None
        status = "failed"
    run.emit(
        "step.overridden",
        step.step_id,
        {"actorId": cmd.actor_id, "action": action, "reason": cmd.reason, "decision": decision},
    )
    step.overridden = action
    was_waiting = step.status == "waiting"
    if status == "completed":
        data = completed_data(node, output)
        aggregator = data.get("aggregatorStatus", "resolved")
        if was_waiting:
            run.emit("step.resumed", step.step_id, {"aggregatorStatus": aggregator})
        run.finish(step, "completed", output, None, "step.completed", data)
    else:
        error = {"code": "force-failed", "message": cmd.reason or f"failed by {cmd.actor_id}"}
        if was_waiting:
            run.emit("step.resumed", step.step_id, {"aggregatorStatus": "failed"})
        run.finish(step, "failed", output, error, "step.failed", {"error": error})
