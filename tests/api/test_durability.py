"""kill -9 during a load: every acknowledged write survives the restart, and nothing is
half-applied (semantics §6: every state change and its events commit together)."""

from __future__ import annotations

import random
import threading
import time

import httpx

from api.support import (
    DECIDE,
    DISPATCH,
    EXEC_GET,
    EXEC_LIST,
    EXTERNAL_TYPES,
    TERMINAL_STEP,
    Api,
    Server,
    create_workspace,
    human_definition,
    wait_for,
)

THREADS = 4
MIN_LOAD_S, MAX_LOAD_S = 1.5, 4.0
REVIEWERS = [{"userId": "ann", "mandatory": True}, {"userId": "bob", "mandatory": True}]


class Load:
    """Threads doing dispatch + decisions, recording every request answered 200 and its result."""

    def __init__(self, server: Server, creds: dict, definition_id: str) -> None:
        self.server, self.creds, self.definition_id = server, creds, definition_id
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.dispatches: dict[str, str] = {}  # idempotencyKey -> executionId
        self.decisions: list[tuple[str, str, str, str, dict]] = []  # (execution, step, reviewer, decision, result)
        self.errors: list[str] = []

    def run(self, tid: int) -> None:
        rng = random.Random(tid)
        client = self.server.client(self.creds, timeout=10)
        try:
            n = 0
            while not self.stop.is_set():
                n += 1
                key = f"t{tid}-{n}"
                resp = client.post(DISPATCH, json={"data": {"definitionId": self.definition_id, "idempotencyKey": key}})
                if not self._ok(resp):
                    return
                execution_id = resp.json()["result"]["executionId"]
                with self.lock:
                    self.dispatches[key] = execution_id
                resp = client.post(EXEC_GET, json={"data": {"executionId": execution_id}})
                if not self._ok(resp):
                    return
                step_id = resp.json()["result"]["steps"][0]["stepId"]
                plan = [("ann", "approve")]
                roll = rng.random()
                if roll < 0.5:
                    plan.append(("bob", "approve"))
                elif roll < 0.7:
                    plan.append(("bob", "reject"))
                for reviewer, decision in plan:
                    resp = client.post(
                        DECIDE,
                        json={
                            "data": {
                                "executionId": execution_id,
                                "stepId": step_id,
                                "reviewerId": reviewer,
                                "decision": decision,
                            }
                        },
                    )
                    if not self._ok(resp):
                        return
                    with self.lock:
                        self.decisions.append((execution_id, step_id, reviewer, decision, resp.json()["result"]))
        except httpx.HTTPError:
            return  # the server died under us: this request was never acknowledged
        except Exception as exc:  # noqa: BLE001 - a bug in the load itself must fail the test
            with self.lock:
                self.errors.append(repr(exc))
        finally:
            client.close()

    def _ok(self, resp: httpx.Response) -> bool:
        if resp.status_code != 200:
            with self.lock:
                self.errors.append(f"{resp.status_code} {resp.text}")
            return False
        return True


def all_executions(api: Api) -> list[dict]:
    items, cursor = [], None
    while True:
        page = api.ok(EXEC_LIST, {"pageSize": 100} | ({"cursor": cursor} if cursor else {}))
        items.extend(page["items"])
        if not page["hasMore"]:
            return items
        cursor = page["nextCursor"]


def check_consistent(api: Api, execution_id: str, listed_status: str) -> dict:
    """No half-applied transition: steps, statuses and events agree."""
    view = api.execution(execution_id)
    assert view["status"] == listed_status
    events = api.events(execution_id)
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)), f"{execution_id}: seq not strictly increasing: {seqs}"
    assert all(e["type"] in EXTERNAL_TYPES for e in events)
    assert events[0]["type"] == "execution.dispatched"
    assert len({e["eventId"] for e in events}) == len(events)
    steps = {s["stepId"]: s for s in view["steps"]}
    assert {e["stepId"] for e in events if e["stepId"] is not None} <= set(steps)
    enders = [
        e["type"] for e in events if e["type"] in ("execution.completed", "execution.failed", "execution.cancelled")
    ]
    if view["status"] == "running":
        assert enders == []
        assert any(s["status"] == "waiting" for s in steps.values())
    else:
        assert enders == [f"execution.{view['status']}"] and events[-1]["type"] == enders[0]
        assert all(s["status"] in TERMINAL_STEP for s in steps.values())
    for step in steps.values():
        of_step = [e["type"] for e in events if e["stepId"] == step["stepId"]]
        if step["status"] == "waiting":
            assert of_step == ["step.awaiting-approval"]
        elif step["status"] == "completed":
            assert of_step.count("step.completed") == 1
        if step["nodeId"] == "review" and step["status"] == "completed":
            # a completed review has exactly its successor
            expected = "approved" if step["output"]["decision"] == "approve" else "rejected"
            children = [s for s in steps.values() if s["stepId"].startswith(step["stepId"] + "__to__")]
            assert [c["nodeId"] for c in children] == [expected], f"{execution_id}: successors {children}"
    return view


def test_acknowledged_work_survives_kill_9(tmp_path):
    db = tmp_path / "durable.duckdb"
    creds = create_workspace(db)
    server = Server(db, tmp_path / "server.log").start()
    body = human_definition("durable-review", reviewers=REVIEWERS)
    try:
        with server.client(creds) as client:
            warm = Api(client)
            warm.create(body)
            warm_execution = warm.dispatch(body["definitionId"])  # first requests warm the process up
            warm.ok(
                DECIDE,
                {
                    "executionId": warm_execution,
                    "stepId": warm.step(warm_execution, "review")["stepId"],
                    "reviewerId": "ann",
                    "decision": "approve",
                },
            )
            # an SLA deadline that falls due around the restart: the timer index must be rebuilt
            sla_body = human_definition("durable-sla", reviewers=REVIEWERS, sla_ms=int(MAX_LOAD_S * 1000) + 1500)
            warm.create(sla_body)
            sla_execution = warm.dispatch(sla_body["definitionId"])
            sla_dispatched = time.monotonic()
        load = Load(server, creds, body["definitionId"])
        threads = [threading.Thread(target=load.run, args=(i,)) for i in range(THREADS)]
        started = time.monotonic()
        for t in threads:
            t.start()
        # kill mid-load: after a minimum time and enough acknowledged work (or a time cap)
        while time.monotonic() - started < MAX_LOAD_S:
            if time.monotonic() - started >= MIN_LOAD_S and len(load.dispatches) >= 20:
                break
            time.sleep(0.05)
        server.kill9()  # requests are in flight
        assert time.monotonic() - sla_dispatched < sla_body["nodes"][0]["slaMs"] / 1000, "SLA fell due before the kill"
        load.stop.set()
        for t in threads:
            t.join(timeout=30)
        assert not any(t.is_alive() for t in threads)
    finally:
        server.kill9()
    print(f"acknowledged: {len(load.dispatches)} dispatches, {len(load.decisions)} decisions")
    assert load.errors == [], load.errors[:3]  # nothing but success before the kill
    assert len(load.dispatches) >= 8, "the load did too little to test anything"
    assert any(r["resumeScheduled"] for *_, r in load.decisions)

    restarted = Server(db, tmp_path / "server-restarted.log").start()
    try:
        with restarted.client(creds) as client:
            api = Api(client)
            # every acknowledged dispatch exists, and its idempotency key still deduplicates
            for key, execution_id in load.dispatches.items():
                view = api.execution(execution_id)
                assert view["idempotencyKey"] == key and view["definitionId"] == body["definitionId"]
                again = api.ok(DISPATCH, {"definitionId": body["definitionId"], "idempotencyKey": key})
                assert again["executionId"] == execution_id and again["deduplicated"] is True

            # every execution is whole: statuses, steps, successors and events agree
            listed = {e["executionId"]: e for e in all_executions(api)}
            assert set(load.dispatches.values()) <= set(listed)
            views = {
                eid: check_consistent(api, eid, item["status"]) for eid, item in listed.items() if eid != sla_execution
            }  # (its SLA may fire at any moment now)

            # every acknowledged decision is in effect
            for execution_id, step_id, reviewer, decision, result in load.decisions:
                step = next(s for s in views[execution_id]["steps"] if s["stepId"] == step_id)
                assert result["recorded"] is True
                if result["resumeScheduled"]:
                    assert step["status"] == "completed" and step["output"]["decision"] == decision
                if step["status"] == "waiting":
                    replay = api.ok(
                        DECIDE,
                        {"executionId": execution_id, "stepId": step_id, "reviewerId": reviewer, "decision": decision},
                    )
                    assert replay["recorded"] is False and replay["rejectionReason"] == "idempotent", replay
                else:
                    assert step["status"] == "completed"
                    (mine,) = [r for r in step["output"]["reviewers"] if r["userId"] == reviewer]
                    assert mine["decision"] == decision

            # the SLA timer runs again after the restart, from the stored deadline
            wait_for(
                lambda: any(e["type"] == "step.breached" for e in api.events(sla_execution)),
                timeout=20,
                what="the SLA breach after the restart",
            )
            assert check_consistent(api, sla_execution, "completed")["steps"][0]["status"] == "breached"

            # the restarted server takes new decisions on the steps still waiting
            waiting = [
                v for v in views.values() if v["status"] == "running" and v["definitionId"] == body["definitionId"]
            ]
            assert waiting, "expected some executions to be left waiting"
            for view in waiting[:6]:
                step_id = view["steps"][0]["stepId"]
                for reviewer in ("ann", "bob"):
                    api.ok(
                        DECIDE,
                        {
                            "executionId": view["executionId"],
                            "stepId": step_id,
                            "reviewerId": reviewer,
                            "decision": "approve",
                        },
                    )
                after = check_consistent(api, view["executionId"], "completed")
                assert [s["nodeId"] for s in after["steps"]] == ["review", "approved"]
                assert api.events(view["executionId"])[-1]["type"] == "execution.completed"
    finally:
        restarted.stop()
