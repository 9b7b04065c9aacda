"""Reviewer impersonation (api-v2 §5 rule 5, §7): `reviewer-approve` / `reviewer-reject` in
Resolve Step by an actorId that is not in the step's reviewer list — including near-misses of
a listed id and reviewers of other steps — is PERMISSION_DENIED, and the execution, its steps
and its event stream read back exactly as before. Record Reviewer Decision by a non-listed
reviewer is not recorded (`unknown-responder`) and changes nothing either."""

from __future__ import annotations

import pytest

from api.support import DECIDE, RESOLVE, expect_error, human_definition, uid

IMPOSTORS = [
    "mallory",
    "Ann",
    "ANN",
    "ann ",
    " ann",
    "\u0430nn",
    "ann\u200b",
    "ann\u0000",
    "bob,ann",
    "*",
    "other-reviewer",
]


@pytest.fixture(scope="module")
def definitions(api):
    """`review` with reviewers ann (mandatory) and bob; a legacy `reviewerIds` twin; and a
    definition whose second step is reviewed by `other-reviewer` only."""
    modern = human_definition(uid("imp"))
    legacy = human_definition(uid("imp-legacy"))
    legacy["nodes"][0]["config"] = {"reviewerIds": ["ann", "bob"]}
    chained = human_definition(uid("imp-chain"))
    chained["nodes"][1] = {
        "nodeId": "approved",
        "type": "human",
        "config": {"reviewers": [{"userId": "other-reviewer", "mandatory": True}]},
    }
    chained["nodes"].append({"nodeId": "done", "type": "agent", "config": {"agentId": "publisher"}})
    chained["edges"] += [
        {"from": "approved", "to": "done", "on": "approve"},
        {"from": "approved", "to": "rejected", "on": "reject"},
    ]
    for body in (modern, legacy, chained):
        api.create(body)
    return [modern["definitionId"], legacy["definitionId"], chained["definitionId"]]


def state(api, execution_id):
    return api.execution(execution_id), api.events(execution_id)


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_non_listed_actor_cannot_act_as_a_reviewer(api, definitions, which):
    execution_id = api.dispatch(definitions[which])
    step_id = api.step(execution_id, "review")["stepId"]
    before = state(api, execution_id)
    for actor in IMPOSTORS:
        for action in ("reviewer-approve", "reviewer-reject"):
            resp = api.post(
                RESOLVE,
                {
                    "executionId": execution_id,
                    "stepId": step_id,
                    "action": action,
                    "actorId": actor,
                    "reason": "trust me",
                    "output": {"decision": "approve"},
                },
            )
            expect_error(resp, "PERMISSION_DENIED")
    assert state(api, execution_id) == before
    # the listed reviewer still can
    api.ok(RESOLVE, {"executionId": execution_id, "stepId": step_id, "action": "reviewer-approve", "actorId": "ann"})
    assert api.step(execution_id, "review")["status"] == "completed"


def test_a_reviewer_of_one_step_cannot_act_on_another(api, definitions):
    execution_id = api.dispatch(definitions[2])
    api.ok(
        RESOLVE,
        {
            "executionId": execution_id,
            "stepId": api.step(execution_id, "review")["stepId"],
            "action": "reviewer-approve",
            "actorId": "ann",
        },
    )
    second = api.step(execution_id, "approved")
    assert second["status"] == "waiting"
    before = state(api, execution_id)
    for actor in ("ann", "bob"):  # reviewers of the first step only
        resp = api.post(
            RESOLVE,
            {"executionId": execution_id, "stepId": second["stepId"], "action": "reviewer-approve", "actorId": actor},
        )
        expect_error(resp, "PERMISSION_DENIED")
    assert state(api, execution_id) == before


def test_a_decision_by_a_non_listed_reviewer_is_not_recorded(api, definitions):
    execution_id = api.dispatch(definitions[0])
    step_id = api.step(execution_id, "review")["stepId"]
    before = state(api, execution_id)
    for reviewer in IMPOSTORS:
        answer = api.ok(
            DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": reviewer, "decision": "approve"}
        )
        assert answer["recorded"] is False and answer["rejectionReason"] == "unknown-responder", answer
    assert state(api, execution_id) == before
