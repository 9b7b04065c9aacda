"""Resolve Step, Cancel Step, Cancel Execution and their errors (semantics §5.9, §7; api-v2 §3, §4.6)."""

from __future__ import annotations

import pytest

from toolkit.engine import CancelExecution, CancelStep, ResolveStep
from toolkit.engine.testing import Harness, agent, definition, edge, human
from toolkit.errors import ApiError, ErrorCode


@pytest.fixture(params=["live", "restore"])
def run(request):
    return lambda body, **kw: Harness(body, restore=request.param == "restore", **kw)


FLOW = definition(
    [
        human("review", "ann", ("cy", False)),
        agent("ext", external=True),
        agent("panel", blocking=True, resolutionPolicy="allResolved", expectedResolutions=2),
        agent("ok"),
        agent("no"),
        agent("broken"),
    ],
    [
        edge("review", "ok", "approve"),
        edge("review", "no", "reject"),
        edge("ext", "broken", "custom", when='{"op": "eq", "args": [{"var": "step.status"}, "failed"]}'),
        edge("panel", "ok", "approve"),
    ],
)


def code_of(h, command) -> ErrorCode:
    with pytest.raises(ApiError) as err:
        h.send(command)
    return err.value.code


@pytest.mark.parametrize(
    "action,actor,decision",
    [
        ("force-approve", "ops", "approve"),
        ("reviewer-approve", "cy", "approve"),
        ("force-reject", "ops", "reject"),
        ("reviewer-reject", "ann", "reject"),
    ],
)
def test_approve_and_reject_actions_complete_at_once(run, action, actor, decision):
    h = run(FLOW, start_ms=50)
    h.dispatch()
    sid = h.sid("review")
    h.at(60)
    result = h.resolve(
        "review", action, actor, output={"decision": "nope", "approved": 3, "note": "n"}, reason="because"
    )
    assert result == {"resolved": True, "executionId": "ex_test", "stepId": sid, "action": action}
    step = h.step("review")
    assert step.status == "completed"
    assert step.output == {
        "decision": decision,
        "approved": decision == "approve",
        "note": "n",
        "approvalReply": {"actorId": actor, "action": action, "reason": "because", "at": 60},
    }
    assert step.responses == {}  # the reviewer aggregator is bypassed
    mine = [(e.type, e.data) for e in h.events if e.step_id == sid][-3:]
    assert mine == [
        ("step.overridden", {"actorId": actor, "action": action, "reason": "because", "decision": decision}),
        ("step.resumed", {"aggregatorStatus": "resolved" if decision == "approve" else "rejected"}),
        (
            "step.completed",
            {
                "nodeType": "human",
                "decision": decision,
                "aggregatorStatus": "resolved" if decision == "approve" else "rejected",
            },
        ),
    ]
    assert h.step("ok" if decision == "approve" else "no").status == "completed"


def test_force_complete_stores_exactly_the_output(run):
    h = run(FLOW)
    h.dispatch()
    h.resolve("ext", "force-complete", "bot", output={"answer": 42})
    step = h.step("ext")
    assert step.status == "completed" and step.output == {"answer": 42}
    mine = [e.type for e in h.events if e.step_id == step.step_id]
    assert mine == ["step.scheduled", "step.started", "step.overridden", "step.completed"]  # no resume: it ran
    assert h.of_type("step.overridden")[0].data == {
        "actorId": "bot",
        "action": "force-complete",
        "reason": None,
        "decision": None,
    }
    h.resolve("review", "force-complete", "ops")
    assert h.step("review").output == {}


def test_force_complete_a_waiting_blocking_agent(run):
    h = run(FLOW)
    h.dispatch()
    h.resolution("panel", "r1", "success", {"decision": "approve"})
    h.resolve("panel", "force-complete", "ops", output={"decision": "approve"})
    assert h.step("panel").output == {"decision": "approve"}
    assert h.of_type("step.completed")[-2].data == {
        "nodeType": "agent",
        "decision": "approve",
        "aggregatorStatus": "resolved",
    }
    assert h.resolution("panel", "r1", "success")["aggregatorStatus"] == "resolved"


def test_force_fail_fails_the_step_and_routes_on_status(run):
    h = run(FLOW)
    h.dispatch()
    h.resolve("ext", "force-fail", "ops", output={"trace": "x"}, reason="vendor down")
    step = h.step("ext")
    assert (step.status, step.output) == ("failed", {"trace": "x"})
    assert step.error == {"code": "force-failed", "message": "vendor down"}
    assert h.of_type("step.failed")[0].data == {"error": step.error}
    assert h.step("broken").status == "completed"


def test_force_fail_without_reason_names_the_actor(run):
    h = run(FLOW)
    h.dispatch()
    h.resolve("review", "force-fail", "ops")
    assert h.step("review").error == {"code": "force-failed", "message": "failed by ops"}
    assert h.of_type("step.resumed")[0].data == {"aggregatorStatus": "failed"}


def test_resolve_check_order_and_codes(run):
    h = run(FLOW)
    h.dispatch()
    review, ext, panel = h.sid("review"), h.sid("ext"), h.sid("panel")
    assert code_of(h, ResolveStep(review, "approve-please", "ops")) == ErrorCode.INVALID_ARGUMENT
    assert code_of(h, ResolveStep(review, "force-complete", "ops", output=[1])) == ErrorCode.INVALID_ARGUMENT
    assert code_of(h, ResolveStep("missing", "force-approve", "ops")) == ErrorCode.NOT_FOUND
    # approve/reject actions are for human steps only (type before membership)
    assert code_of(h, ResolveStep(ext, "force-approve", "ops")) == ErrorCode.FAILED_PRECONDITION
    assert code_of(h, ResolveStep(panel, "reviewer-reject", "mallory")) == ErrorCode.FAILED_PRECONDITION
    assert code_of(h, ResolveStep(review, "reviewer-approve", "mallory")) == ErrorCode.PERMISSION_DENIED
    assert code_of(h, ResolveStep(review, "reviewer-reject", "ops")) == ErrorCode.PERMISSION_DENIED
    h.resolve("review", "force-approve")
    # terminal comes before everything else
    assert code_of(h, ResolveStep(review, "reviewer-approve", "mallory")) == ErrorCode.FAILED_PRECONDITION
    assert code_of(h, ResolveStep(review, "force-complete", "ops")) == ErrorCode.FAILED_PRECONDITION


def test_concurrent_resolves_one_wins(run):
    h = run(FLOW)
    h.dispatch()
    h.decide("review", "ann", "approve")
    assert code_of(h, ResolveStep(h.sid("review"), "force-reject", "ops")) == ErrorCode.FAILED_PRECONDITION
    assert h.step("review").output["decision"] == "approve"


# ---------------------------------------------------------------- cancel step


def test_cancel_step(run):
    h = run(FLOW, start_ms=10)
    h.dispatch()
    h.at(20)
    sid = h.sid("review")
    assert h.cancel_step("review", "ops", "duplicate") == {"cancelled": True, "stepId": sid, "executionId": "ex_test"}
    step = h.step("review")
    assert (step.status, step.completed_at) == ("cancelled", 20)
    assert h.events[-1].type == "step.cancelled" and h.events[-1].data == {"actorId": "ops", "reason": "duplicate"}
    assert h.state.steps_of("ok") == [] and h.state.steps_of("no") == []  # cancelled fires nothing
    assert code_of(h, CancelStep(sid, "ops")) == ErrorCode.FAILED_PRECONDITION
    assert code_of(h, CancelStep("missing", "ops")) == ErrorCode.NOT_FOUND


def test_cancelling_the_last_active_step_completes_the_execution(run):
    h = run(definition([human("r", "ann"), agent("x")], [edge("r", "x", "always")]))
    h.dispatch()
    h.cancel_step("r", "ops")
    assert h.state.status == "completed"
    assert h.types()[-2:] == ["step.cancelled", "execution.completed"]


def test_cancelled_steps_fire_no_always_edges(run):
    h = run(definition([agent("a", external=True), agent("x")], [edge("a", "x", "always")]))
    h.dispatch()
    h.cancel_step("a", "ops")
    assert h.state.steps_of("x") == []


# ---------------------------------------------------------------- cancel execution


def test_cancel_execution_cancels_every_active_step(run):
    h = run(FLOW, start_ms=5)
    h.dispatch()
    h.at(9)
    assert h.cancel("withdrawn") == {"cancelled": True, "executionId": "ex_test"}
    cancelled = h.of_type("step.cancelled")
    assert [e.step_id for e in cancelled] == [h.sid("review"), h.sid("ext"), h.sid("panel")]
    assert all(e.data == {"actorId": "system:execution-cancel", "reason": "withdrawn"} for e in cancelled)
    assert h.events[-1].type == "execution.cancelled" and h.events[-1].data == {"reason": "withdrawn"}
    assert h.events[-1].step_id is None
    view = h.state.view()
    assert (view["status"], view["cancelledAt"], view["completedAt"], view["failureReason"]) == (
        "cancelled",
        9,
        9,
        None,
    )


def test_commands_on_an_ended_execution(run):
    h = run(FLOW)
    h.dispatch()
    h.decide("review", "ann", "approve")
    review, ext, panel = h.sid("review"), h.sid("ext"), h.sid("panel")
    h.cancel()
    assert code_of(h, CancelExecution()) == ErrorCode.FAILED_PRECONDITION
    assert code_of(h, ResolveStep(ext, "force-complete", "ops")) == ErrorCode.FAILED_PRECONDITION
    assert code_of(h, CancelStep(panel, "ops")) == ErrorCode.FAILED_PRECONDITION
    with pytest.raises(ApiError) as err:
        h.decide("review", "cy", "approve")
    assert err.value.code == ErrorCode.FAILED_PRECONDITION
    with pytest.raises(ApiError) as err:
        h.resolution("panel", "r1", "success")
    assert err.value.code == ErrorCode.FAILED_PRECONDITION
    # idempotent replays still answer, and a tick does nothing
    assert h.decide("review", "ann", "approve")["rejectionReason"] == "idempotent"
    seq = h.state.last_seq
    assert h.tick(10**9) == {"fired": 0}
    assert h.state.last_seq == seq
    assert review  # the completed review keeps its output
    assert h.step("review").output["decision"] == "approve"
