"""Human steps and Record Reviewer Decision (semantics §5.3, §5.10, §7)."""

from __future__ import annotations

import pytest

from toolkit.engine import RecordReviewerDecision, resume_key
from toolkit.engine.testing import Harness, agent, definition, edge, human
from toolkit.errors import ApiError, ErrorCode


@pytest.fixture(params=["live", "restore"])
def run(request):
    return lambda body, **kw: Harness(body, restore=request.param == "restore", **kw)


REVIEW = definition(
    [
        human("review", "ann", "bob", ("cy", False), reviewerEmails=["ann@x.io"], commentBody="Please look"),
        agent("ship"),
        agent("fix"),
    ],
    [edge("review", "ship", "approve"), edge("review", "fix", "reject")],
)


def test_resume_key_is_the_specs_hash_of_execution_and_step():
    # semantics §5.3: "rk_" + the first 16 hex digits of sha256(executionId + ":" + stepId)
    assert resume_key("ex_test", "step_review_1") == "rk_8d949a41c5b3d6aa"


def test_awaiting_approval_data(run):
    h = run(REVIEW)
    h.dispatch()
    sid = h.sid("review")
    event = h.of_type("step.awaiting-approval")[0]
    assert event.step_id == sid
    assert event.data == {"waitingForReviewers": 3, "mandatoryCount": 2, "resumeKey": resume_key("ex_test", sid)}
    assert event.data["resumeKey"].startswith("rk_") and len(event.data["resumeKey"]) == 19


def test_approves_when_every_mandatory_reviewer_approved(run):
    h = run(REVIEW, start_ms=1_000)
    h.dispatch()
    sid = h.sid("review")
    h.at(2_000)
    assert h.decide("review", "ann", "approve", "fine") == {
        "recorded": True,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
    }
    assert h.step("review").status == "waiting"
    h.at(3_000)
    assert h.decide("review", "bob", "approve") == {
        "recorded": True,
        "aggregatorStatus": "resolved",
        "resumeScheduled": True,
    }
    step = h.step("review")
    assert step.status == "completed" and step.completed_at == 3_000
    assert step.output == {
        "reviewers": [
            {"userId": "ann", "mandatory": True, "decision": "approve", "reason": "fine", "respondedAt": 2_000},
            {"userId": "bob", "mandatory": True, "decision": "approve", "reason": None, "respondedAt": 3_000},
            {"userId": "cy", "mandatory": False, "decision": None, "reason": None, "respondedAt": None},
        ],
        "reviewerIds": ["ann", "bob", "cy"],
        "reviewerEmails": ["ann@x.io"],
        "commentBody": "Please look",
        "aggregatorStatus": "resolved",
        "approveCount": 2,
        "rejectCount": 0,
        "totalResponses": 2,
        "mandatoryCount": 2,
        "mandatoryApproveCount": 2,
        "decision": "approve",
        "approved": True,
        "resumedAt": 3_000,
        "resumeKey": resume_key("ex_test", sid),
    }
    tail = [(e.type, e.data) for e in h.events if e.seq > 4]
    assert tail[:4] == [
        ("step.response-recorded", {"reviewerId": "ann", "decision": "approve", "reason": "fine", "mandatory": True}),
        ("step.response-recorded", {"reviewerId": "bob", "decision": "approve", "reason": None, "mandatory": True}),
        ("step.resumed", {"aggregatorStatus": "resolved"}),
        ("step.completed", {"nodeType": "human", "decision": "approve", "aggregatorStatus": "resolved"}),
    ]
    assert h.statuses() == [("review", "completed"), ("ship", "completed")]
    assert h.state.status == "completed"


def test_optional_approval_does_not_resolve(run):
    h = run(REVIEW)
    h.dispatch()
    h.decide("review", "cy", "approve")
    h.decide("review", "ann", "approve")
    assert h.step("review").status == "waiting"
    h.decide("review", "bob", "approve")
    out = h.step("review").output
    assert (out["approveCount"], out["mandatoryApproveCount"], out["totalResponses"]) == (3, 2, 3)


@pytest.mark.parametrize("who,mandatory", [("ann", True), ("cy", False)])
def test_any_declared_reviewer_rejects_at_once(run, who, mandatory):
    h = run(REVIEW)
    h.dispatch()
    result = h.decide("review", who, "reject", "typos")
    assert result == {"recorded": True, "aggregatorStatus": "rejected", "resumeScheduled": True}
    out = h.step("review").output
    assert out["decision"] == "reject" and out["approved"] is False
    assert out["aggregatorStatus"] == "rejected"
    assert (out["rejectedBy"], out["rejectorMandatory"], out["rejectionReason"]) == (who, mandatory, "typos")
    assert h.of_type("step.completed")[0].data == {
        "nodeType": "human",
        "decision": "reject",
        "aggregatorStatus": "rejected",
    }
    assert h.statuses() == [("review", "completed"), ("fix", "completed")]
    assert h.state.status == "completed"  # the reject edge handled it


def test_second_decision_of_a_reviewer_is_idempotent(run):
    h = run(REVIEW)
    h.dispatch()
    h.decide("review", "ann", "approve")
    before = h.state.last_seq
    assert h.decide("review", "ann", "reject") == {
        "recorded": False,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
        "rejectionReason": "idempotent",
    }
    assert h.state.last_seq == before
    h.decide("review", "bob", "approve")
    # Replays stay answerable after the step (and the execution) ended.
    assert h.decide("review", "bob", "approve") == {
        "recorded": False,
        "aggregatorStatus": "resolved",
        "resumeScheduled": False,
        "rejectionReason": "idempotent",
    }


def test_unknown_responder_is_not_recorded(run):
    h = run(REVIEW)
    h.dispatch()
    before = h.state.last_seq
    assert h.decide("review", "mallory", "approve") == {
        "recorded": False,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
        "rejectionReason": "unknown-responder",
    }
    assert h.state.last_seq == before
    assert h.step("review").responses == {}


def test_decision_errors(run):
    h = run(
        definition(
            [agent("a", external=True), human("review", "ann"), agent("fix")],
            [edge("a", "review", "always"), edge("review", "fix", "reject")],
        )
    )
    h.dispatch()
    with pytest.raises(ApiError) as err:
        h.send(RecordReviewerDecision("nope", "ann", "approve"))
    assert err.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(ApiError) as err:
        h.decide("a", "ann", "approve")  # an agent step
    assert err.value.code == ErrorCode.FAILED_PRECONDITION
    with pytest.raises(ApiError) as err:
        h.send(RecordReviewerDecision(h.sid("a"), "ann", "maybe"))
    assert err.value.code == ErrorCode.INVALID_ARGUMENT
    h.resolve("a", "force-complete", output={"decision": "approve"})
    h.cancel_step("review", "ops", "no longer needed")
    with pytest.raises(ApiError) as err:
        h.decide("review", "ann", "approve")  # cancelled: not waiting
    assert err.value.code == ErrorCode.FAILED_PRECONDITION
    with pytest.raises(ApiError) as err:
        h.decide("review", "mallory", "approve")  # state is checked before membership
    assert err.value.code == ErrorCode.FAILED_PRECONDITION


def test_legacy_reviewer_ids_are_all_mandatory(run):
    body = definition(
        [{"nodeId": "cab", "type": "human", "config": {"reviewerIds": ["u1", "u2"]}}, agent("fix")],
        [edge("cab", "fix", "reject")],
    )
    h = run(body)
    h.dispatch()
    assert h.of_type("step.awaiting-approval")[0].data["mandatoryCount"] == 2
    h.decide("cab", "u1", "approve")
    assert h.step("cab").status == "waiting"
    h.decide("cab", "u2", "approve")
    assert h.step("cab").output["decision"] == "approve"
    assert h.step("cab").view()["reviewerIds"] == ["u1", "u2"]


def test_human_reject_without_route_fails_the_execution(run):
    h = run(definition([human("review", "ann"), agent("ship")], [edge("review", "ship", "approve")]))
    h.dispatch()
    h.decide("review", "ann", "reject")
    assert h.state.status == "failed"
    assert h.state.failure_reason == "step-rejected:review"
    assert h.events[-1].type == "execution.failed"
    assert h.events[-1].data == {"failureReason": "step-rejected:review"}
