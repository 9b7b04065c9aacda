"""Races against the real server: many requests on one step or one idempotency key at once
must take effect exactly once (semantics §5.9, §7)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from api.support import (
    DECIDE,
    DEF_DELETE,
    DEF_GET,
    DISPATCH,
    EXEC_LIST,
    RESOLVE,
    expect_error,
    human_definition,
    uid,
)

N = 20


def race(fn, count: int) -> list:
    """Run fn(i) for i in range(count) on count threads released together."""
    barrier = threading.Barrier(count)

    def run(i):
        barrier.wait()
        return fn(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def many_reviewers_definition() -> dict:
    reviewers = [{"userId": f"r{i:02d}", "mandatory": i == 0} for i in range(N)]
    return human_definition(uid("race"), reviewers=reviewers)


def only_review_step(api, execution_id):
    (step,) = [s for s in api.execution(execution_id)["steps"] if s["nodeId"] == "review"]
    return step


def assert_completed_once(api, execution_id, step_id, successor: str):
    view = api.execution(execution_id)
    successors = [s for s in view["steps"] if s["stepId"].startswith(step_id + "__")]
    assert [s["nodeId"] for s in successors] == [successor]
    assert len(view["steps"]) == 2
    events = api.events(execution_id)
    assert sum(1 for e in events if e["type"] == "step.completed" and e["stepId"] == step_id) == 1
    assert sum(1 for e in events if e["type"] == "execution.completed") == 1
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs))
    assert view["status"] == "completed"
    return view


def test_concurrent_rejections_take_effect_once(api):
    body = many_reviewers_definition()
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = only_review_step(api, execution_id)["stepId"]

    def reject(i):
        return api.post(
            DECIDE,
            {
                "executionId": execution_id,
                "stepId": step_id,
                "reviewerId": f"r{i:02d}",
                "decision": "reject",
                "reason": f"no from {i}",
            },
        )

    answers = race(reject, N)
    recorded = [r.json()["result"] for r in answers if r.status_code == 200 and r.json()["result"]["recorded"]]
    refused = [r for r in answers if r.status_code != 200]
    assert len(recorded) == 1, [r.text for r in answers]
    assert recorded[0] == {"recorded": True, "aggregatorStatus": "rejected", "resumeScheduled": True}
    for resp in refused:
        expect_error(resp, "FAILED_PRECONDITION")
    assert len(recorded) + len(refused) == N  # nobody got recorded: false for a first decision
    view = assert_completed_once(api, execution_id, step_id, "rejected")
    output = view["steps"][0]["output"]
    assert output["decision"] == "reject" and output["rejectCount"] == 1 and output["totalResponses"] == 1


def test_concurrent_approvals_complete_the_step_once(api):
    body = many_reviewers_definition()
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = only_review_step(api, execution_id)["stepId"]

    def approve(i):
        return api.post(
            DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": f"r{i:02d}", "decision": "approve"}
        )

    answers = race(approve, N)
    results = [r.json()["result"] for r in answers if r.status_code == 200]
    for resp in answers:
        if resp.status_code != 200:
            expect_error(resp, "FAILED_PRECONDITION")
    assert all(r["recorded"] for r in results)
    resumed = [r for r in results if r["resumeScheduled"]]
    assert len(resumed) == 1 and resumed[0]["aggregatorStatus"] == "resolved"
    # r00, the mandatory reviewer, is the one whose approval completed the step
    assert answers[0].status_code == 200 and answers[0].json()["result"]["resumeScheduled"] is True
    view = assert_completed_once(api, execution_id, step_id, "approved")
    output = view["steps"][0]["output"]
    assert output["approveCount"] == len(results) == output["totalResponses"]


def test_one_reviewer_twenty_times(api):
    body = many_reviewers_definition()
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = only_review_step(api, execution_id)["stepId"]
    answers = race(
        lambda i: api.ok(
            DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": "r05", "decision": "approve"}
        ),
        N,
    )
    assert sum(1 for a in answers if a["recorded"]) == 1
    assert all(a["rejectionReason"] == "idempotent" for a in answers if not a["recorded"])
    assert only_review_step(api, execution_id)["status"] == "waiting"


def test_concurrent_force_approvals_take_effect_once(api):
    body = many_reviewers_definition()
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = only_review_step(api, execution_id)["stepId"]
    answers = race(
        lambda i: api.post(
            RESOLVE, {"executionId": execution_id, "stepId": step_id, "action": "force-approve", "actorId": f"op-{i}"}
        ),
        N,
    )
    winners = [r for r in answers if r.status_code == 200]
    assert len(winners) == 1
    assert winners[0].json()["result"]["resolved"] is True
    for resp in answers:
        if resp.status_code != 200:
            expect_error(resp, "FAILED_PRECONDITION")
    view = assert_completed_once(api, execution_id, step_id, "approved")
    winner = winners[0].json()["result"]
    actor = view["steps"][0]["output"]["approvalReply"]["actorId"]
    assert actor == f"op-{answers.index(winners[0])}" and winner["stepId"] == step_id


def test_concurrent_dispatches_with_one_idempotency_key(api):
    body = human_definition(uid("idem-race"))
    api.create(body)
    key = uid("key")
    answers = race(
        lambda i: api.ok(
            DISPATCH, {"definitionId": body["definitionId"], "idempotencyKey": key, "correlationId": f"c-{i}"}
        ),
        50,
    )
    assert len({a["executionId"] for a in answers}) == 1
    assert sum(1 for a in answers if a["deduplicated"]) == 49
    assert len({a["correlationId"] for a in answers}) == 1  # every answer describes the first execution
    listed = api.ok(EXEC_LIST, {"definitionId": body["definitionId"], "pageSize": 100})["items"]
    assert [e["executionId"] for e in listed] == [answers[0]["executionId"]]
    execution_id = answers[0]["executionId"]
    events = api.events(execution_id)
    assert [e["type"] for e in events] == ["execution.dispatched", "step.awaiting-approval"]
    # 49 internal idempotency.suppressed events took numbers, none is visible
    step_id = only_review_step(api, execution_id)["stepId"]
    api.ok(DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": "ann", "decision": "approve"})
    seqs = [e["seq"] for e in api.events(execution_id)]
    assert seqs == sorted(set(seqs)) and seqs[-1] >= 49 + 4


def test_concurrent_work_on_many_executions(api):
    """Decisions on 20 different executions at once: each is applied, none is lost."""
    body = human_definition(uid("many"))
    api.create(body)
    executions = [api.dispatch(body["definitionId"]) for _ in range(N)]
    steps = [only_review_step(api, e)["stepId"] for e in executions]
    answers = race(
        lambda i: api.ok(
            DECIDE,
            {
                "executionId": executions[i],
                "stepId": steps[i],
                "reviewerId": "ann",
                "decision": "approve" if i % 2 else "reject",
            },
        ),
        N,
    )
    assert all(a["recorded"] and a["resumeScheduled"] for a in answers)
    for i, execution_id in enumerate(executions):
        assert_completed_once(api, execution_id, steps[i], "approved" if i % 2 else "rejected")


def test_delete_racing_dispatches_never_leaves_a_running_execution_of_a_deleted_definition(api):
    """Delete refuses while executions run, dispatch refuses a tombstoned definition: whatever
    order the server picks, a deleted definition has no running execution."""
    for _ in range(12):
        body = human_definition(uid("deldisp"))
        api.create(body)
        definition_id = body["definitionId"]

        def work(i, definition_id=definition_id):  # bound now: race() runs it in this iteration
            if i == 5:
                return api.post(DEF_DELETE, {"definitionId": definition_id})
            return api.post(DISPATCH, {"definitionId": definition_id})

        answers = race(work, 12)
        deleted = answers[5].status_code == 200
        if not deleted:
            expect_error(answers[5], "FAILED_PRECONDITION")
        dispatched = [a for i, a in enumerate(answers) if i != 5 and a.status_code == 200]
        for i, a in enumerate(answers):
            if i != 5 and a.status_code != 200:
                expect_error(a, "FAILED_PRECONDITION")
        running = api.ok(EXEC_LIST, {"definitionId": definition_id, "status": "running"})["items"]
        assert len(running) == len(dispatched)
        status = api.ok(DEF_GET, {"definitionId": definition_id})["status"]
        assert status == ("tombstoned" if deleted else "active")
        if deleted:
            assert running == [], "a deleted definition kept running executions"
