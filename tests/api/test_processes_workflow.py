"""Two `collab serve` processes on one PostgreSQL database, each request sent to the next
process in turn: races on one step, one idempotency key or one quorum take effect exactly once,
and every execution's events are numbered 1..n (issue 14, "several processes, the same
promises"). Runs whatever COLLAB_TEST_BACKEND says; skipped with COLLAB_SKIP_POSTGRES=1."""

from __future__ import annotations

import os

import psycopg
import pytest
from postgres import SKIP_ENV

from api.support import DECIDE, DISPATCH, EXEC_LIST, Api, Server, create_workspace, expect_error, fresh_db, uid
from api.test_concurrency import N, assert_completed_once, many_reviewers_definition, only_review_step, race

pytestmark = pytest.mark.skipif(os.environ.get(SKIP_ENV) == "1", reason=f"{SKIP_ENV}=1: no PostgreSQL")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two server processes on one new PostgreSQL database, and that database's URL."""
    root = tmp_path_factory.mktemp("processes")
    db = str(fresh_db(root, "processes", backend="postgres"))
    creds = create_workspace(db)
    srv = Server(db, root / "processes.log", processes=2).start()
    try:
        with srv.client(creds) as client:
            yield Api(client), db
    finally:
        srv.stop()


def test_racing_dispatches_in_two_processes_stop_at_the_execution_quota(tmp_path):
    db = str(fresh_db(tmp_path, "quota", backend="postgres"))
    creds = create_workspace(db)
    srv = Server(db, tmp_path / "quota.log", ("--max-executions", "10"), processes=2).start()
    try:
        with srv.client(creds) as client:
            api = Api(client)
            body = many_reviewers_definition()
            api.create(body)
            answers = race(lambda i: api.post(DISPATCH, {"definitionId": body["definitionId"]}), 30)
            refused = [r for r in answers if r.status_code != 200]
            for resp in refused:
                assert "at most 10 executions" in expect_error(resp, "RESOURCE_EXHAUSTED")
            assert len(answers) - len(refused) == 10
            assert len(api.ok(EXEC_LIST, {"pageSize": 100})["items"]) == 10
    finally:
        srv.stop()


def stored_events(db: str, execution_id: str) -> list[tuple[int, str]]:
    """``(seq, type)`` of every event of one execution, internal ones included, as stored."""
    with psycopg.connect(db) as con:
        sql = "SELECT seq, type FROM events WHERE execution_id = %s ORDER BY seq"
        return [tuple(row) for row in con.execute(sql, [execution_id]).fetchall()]


def assert_numbered(db: str, execution_id: str) -> None:
    seqs = [seq for seq, _ in stored_events(db, execution_id)]
    assert seqs == list(range(1, len(seqs) + 1)), seqs


def test_concurrent_decisions_on_one_step_take_effect_once(cluster):
    api, db = cluster
    body = many_reviewers_definition()
    api.create(body)
    execution_id = api.dispatch(body["definitionId"])
    step_id = only_review_step(api, execution_id)["stepId"]

    def reject(i):
        return api.post(
            DECIDE,
            {"executionId": execution_id, "stepId": step_id, "reviewerId": f"r{i:02d}", "decision": "reject"},
        )

    answers = race(reject, N)
    recorded = [r for r in answers if r.status_code == 200 and r.json()["result"]["recorded"]]
    assert len(recorded) == 1, [r.text for r in answers]
    for resp in answers:
        if resp is not recorded[0]:
            expect_error(resp, "FAILED_PRECONDITION")
    assert_completed_once(api, execution_id, step_id, "rejected")  # one successor step
    assert_numbered(db, execution_id)


def test_concurrent_dispatches_with_one_idempotency_key_make_one_execution(cluster):
    api, db = cluster
    body = many_reviewers_definition()
    api.create(body)
    key = uid("key")
    answers = race(
        lambda i: api.ok(
            DISPATCH, {"definitionId": body["definitionId"], "idempotencyKey": key, "correlationId": f"c-{i}"}
        ),
        50,
    )
    (execution_id,) = {a["executionId"] for a in answers}
    assert sorted(a["deduplicated"] for a in answers) == [False] + [True] * 49
    assert len({a["correlationId"] for a in answers}) == 1
    listed = api.ok(EXEC_LIST, {"definitionId": body["definitionId"], "pageSize": 100})["items"]
    assert [e["executionId"] for e in listed] == [execution_id]
    types = [t for _, t in stored_events(db, execution_id)]
    assert types.count("idempotency.suppressed") == 49 and types.count("execution.dispatched") == 1
    assert_numbered(db, execution_id)


APPROVE = {"decision": "approve"}


def quorum_definition(members: int, quorum: int) -> dict:
    """intake (agent) -> a group of ``members`` one-reviewer human steps; ``quorum`` approvals
    cancel the rest and start ``publish`` (a rejection would start ``objection``)."""
    reviews = [f"review-{i}" for i in range(members)]
    return {
        "definitionId": uid("quorum"),
        "name": "Quorum across processes",
        "nodes": [
            {"nodeId": "intake", "type": "agent", "config": {"agentId": "intake", "mockOutput": APPROVE}},
            *(
                {"nodeId": node, "type": "human", "config": {"reviewers": [{"userId": f"r{i}", "mandatory": True}]}}
                for i, node in enumerate(reviews)
            ),
            {"nodeId": "publish", "type": "agent", "config": {"agentId": "publisher"}},
            {"nodeId": "objection", "type": "agent", "config": {"agentId": "objections"}},
        ],
        "groups": [
            {
                "groupId": "board",
                "memberNodeIds": reviews,
                "expectedSteps": members,
                "quorum": quorum,
                "onQuorumMet": "cancelOnQuorum",
            }
        ],
        "edges": [
            {"from": "intake", "to": {"kind": "group", "groupId": "board"}, "on": "approve"},
            {"from": {"kind": "group", "groupId": "board"}, "to": "publish", "on": "approve"},
            *({"from": node, "to": "objection", "on": "reject"} for node in reviews),
        ],
    }


def test_concurrent_approvals_meet_a_quorum_once(cluster):
    api, db = cluster
    members, quorum = 8, 3
    body = quorum_definition(members, quorum)
    api.create(body)
    for _ in range(3):  # a race can go many ways: run it a few times
        execution_id = api.dispatch(body["definitionId"])
        steps = {s["nodeId"]: s["stepId"] for s in api.execution(execution_id)["steps"] if s["status"] == "waiting"}
        assert len(steps) == members

        def approve(i, execution_id=execution_id, steps=steps):
            step_id = steps[f"review-{i}"]
            return api.post(
                DECIDE, {"executionId": execution_id, "stepId": step_id, "reviewerId": f"r{i}", "decision": "approve"}
            )

        answers = race(approve, members)
        accepted = [r for r in answers if r.status_code == 200 and r.json()["result"]["recorded"]]
        for resp in answers:
            if resp.status_code != 200:
                expect_error(resp, "FAILED_PRECONDITION")  # its step was cancelled by the quorum
        assert len(accepted) == quorum, [r.text for r in answers]
        events = api.events(execution_id)
        assert sum(1 for e in events if e["type"] == "group.quorum-met") == 1
        view = api.execution(execution_id)
        assert view["status"] == "completed"
        by_status: dict[str, int] = {}
        for step in view["steps"]:
            if step["nodeId"].startswith("review-"):
                by_status[step["status"]] = by_status.get(step["status"], 0) + 1
        assert by_status == {"completed": quorum, "cancelled": members - quorum}
        assert [s["nodeId"] for s in view["steps"]].count("publish") == 1
        assert_numbered(db, execution_id)
