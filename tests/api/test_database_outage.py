"""PostgreSQL lost under load (issue 14): two server processes on one database, client threads
dispatching and deciding through both, and PostgreSQL stopped at once (``pg_ctl stop -m
immediate``: its processes killed, crash recovery at the next start) and started again.

While it is down every answer is 503 ``UNAVAILABLE`` with ``Retry-After`` — no other 5xx, no
request left hanging; once it is back the servers answer 200 by themselves, nobody restarts
them; and every dispatch and decision acknowledged before, during or after is in the database
exactly once, whole (an execution's events numbered 1..n without a gap, its command log one
row per version). A client resends what was answered 503, as told; a dispatch carries an
idempotency key, so resending it never makes a second execution.

The cluster is this test's own (the others' servers are not to see the outage).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import httpx
import psycopg
from faults.audit import invariants
from postgres import PostgresCluster

from api.support import (
    DECIDE,
    DEF_CREATE,
    DEF_GET,
    DISPATCH,
    EXEC_GET,
    Server,
    create_workspace,
    human_definition,
    skip_without_postgres,
)

CLIENTS = 4
CLIENT_TIMEOUT_S = 15.0  # far above any answer the servers should give, up or not
DOWN_S = 4.0
RECOVERY_S = 20.0  # every client has a 200 again within this long after PostgreSQL is back
REFUSAL_S = 8.0  # a request finds the database gone within this long (its pool waits 3 s at most)
REVIEWERS = [{"userId": "ann", "mandatory": True}, {"userId": "bob", "mandatory": True}]


class Client(threading.Thread):
    """Dispatches an execution, then ann's and bob's approvals, over and over; resends what is
    answered 503 after its ``Retry-After``. What was acknowledged is kept for the checks."""

    def __init__(self, server: Server, creds: dict, definition_id: str, number: int, stop: threading.Event) -> None:
        super().__init__(name=f"outage-client-{number}", daemon=True)
        self.http = server.client(creds, timeout=CLIENT_TIMEOUT_S)
        self.definition_id, self.number, self.stop = definition_id, number, stop
        self.dispatched: dict[str, str] = {}  # idempotency key -> execution id, acknowledged
        self.decided: list[tuple[str, str, str]] = []  # (execution, step, reviewer), acknowledged
        self.resent_decisions: list[tuple[str, str, str]] = []  # answered 503 at least once: maybe applied
        self.unavailable: list[float] = []  # when each 503 came
        self.refusal_s: list[float] = []  # how long each 503 took
        self.answered_ok: list[float] = []  # when each 200 came
        self.failures: list[str] = []

    def call(self, path: str, data: dict) -> tuple[dict | None, bool]:
        """(the result, or None when a resend was refused; whether a 503 came first)."""
        resent = False
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                resp = self.http.post(path, json={"data": data})
            except httpx.TimeoutException:
                self.failures.append(f"{path}: no answer within {CLIENT_TIMEOUT_S:g} s")
                return None, resent
            except httpx.TransportError as exc:
                self.failures.append(f"{path}: {type(exc).__name__}: {exc} after {time.monotonic() - began:.1f} s")
                return None, resent
            if resp.status_code == 200:
                self.answered_ok.append(time.monotonic())
                return resp.json()["result"], resent
            if resp.status_code == 503:
                body = resp.json()
                wait = resp.headers.get("retry-after", "")
                if list(body) != ["error"] or body["error"].get("status") != "UNAVAILABLE" or not wait.isdigit():
                    self.failures.append(f"{path}: a 503 without the UNAVAILABLE envelope or Retry-After: {resp.text}")
                    return None, resent
                self.unavailable.append(time.monotonic())
                self.refusal_s.append(time.monotonic() - began)
                resent = True
                self.stop.wait(int(wait))
                continue
            if resent and resp.status_code < 500:
                return None, resent  # the first attempt may have been applied: the checks look
            self.failures.append(f"{path} {json.dumps(data)}: answered {resp.status_code} {resp.text[:300]}")
            return None, resent
        return None, resent

    def run(self) -> None:
        try:
            for i in range(10**6):
                if self.stop.is_set():
                    return
                key = f"c{self.number}-{i}"
                result, resent = self.call(DISPATCH, {"definitionId": self.definition_id, "idempotencyKey": key})
                if result is None:
                    if resent and not self.stop.is_set():  # a dispatch resent with its key is never refused
                        self.failures.append(f"dispatch {key}: refused after a 503")
                    continue
                execution_id = self.dispatched[key] = result["executionId"]
                view, _ = self.call(EXEC_GET, {"executionId": execution_id})
                if view is None:
                    continue
                step_id = next(s["stepId"] for s in view["steps"] if s["nodeId"] == "review")
                for reviewer in ("ann", "bob"):
                    decision = (execution_id, step_id, reviewer)
                    data = {"executionId": execution_id, "stepId": step_id, "reviewerId": reviewer}
                    result, resent = self.call(DECIDE, {**data, "decision": "approve", "reason": "fine"})
                    if resent:
                        self.resent_decisions.append(decision)
                    if result is not None:
                        self.decided.append(decision)
        except Exception as exc:  # noqa: BLE001 - the test reports it, with the others
            self.failures.append(f"{type(exc).__name__}: {exc}")
        finally:
            self.http.close()


def test_postgres_lost_under_load_answers_503_and_recovers_by_itself(tmp_path):
    skip_without_postgres()
    cluster = PostgresCluster.start()
    stop = threading.Event()
    server: Server | None = None
    clients: list[Client] = []
    try:
        db = cluster.create_database("outage")
        creds = create_workspace(db)
        server = Server(db, tmp_path / "server.log", processes=2).start()
        with server.client(creds) as http:
            assert (
                http.post(DEF_CREATE, json={"data": human_definition("outage-review", reviewers=REVIEWERS)}).status_code
                == 200
            )
        clients = [Client(server, creds, "outage-review", n, stop) for n in range(CLIENTS)]
        for client in clients:
            client.start()
        time.sleep(2.0)
        assert all(c.decided for c in clients), [c.failures for c in clients]

        cluster.pg_ctl("stop", "-m", "immediate", "-w", "-t", "60")
        down = time.monotonic()
        time.sleep(DOWN_S / 2)
        ready_while_down = _readiness(server)
        time.sleep(DOWN_S / 2)
        cluster.restart("immediate")  # (starts the stopped cluster: crash recovery first)
        back = time.monotonic()
        deadline = back + RECOVERY_S
        while time.monotonic() < deadline and not all(c.answered_ok and c.answered_ok[-1] > back for c in clients):
            time.sleep(0.1)
        recovered = [c.answered_ok[-1] - back if c.answered_ok and c.answered_ok[-1] > back else None for c in clients]
        ready_after = _readiness(server)
        time.sleep(2.0)  # and some more load after it
        stop.set()
        for client in clients:
            client.join(timeout=CLIENT_TIMEOUT_S + 5)
        # Restarted while nobody asks: every pooled connection is dead, and the next request
        # must not be the one to find out (it is answered from a new connection, first time).
        cluster.restart("immediate")
        with server.client(creds) as http:
            idle_restart = [http.post(DEF_GET, json={"data": {"definitionId": "outage-review"}}) for _ in server.ports]
        log = server.log()
        assert all(p.poll() is None for p in server.procs), f"a server process exited:\n{log[-3000:]}"
    finally:
        stop.set()
        if server is not None:
            server.stop()

    try:
        failures = [f for c in clients for f in c.failures]
        assert not failures, f"{failures[:10]}\n{log[-3000:]}"
        refused = [t for c in clients for t in c.unavailable]
        assert refused, "no request was answered 503 while PostgreSQL was down"
        assert all(down - 1.0 <= t <= back + RECOVERY_S for t in refused), "a 503 while PostgreSQL was up"
        assert all(r is not None for r in recovered), f"not every client had a 200 within {RECOVERY_S:g} s: {recovered}"
        # a load balancer's probe sees it too, and says why
        assert all(code == 503 and "database" in text for code, text in ready_while_down), ready_while_down
        assert all(code == 200 for code, _ in ready_after), ready_after
        assert [r.status_code for r in idle_restart] == [200] * len(server.ports), [r.text for r in idle_restart]
        slowest = max(t for c in clients for t in c.refusal_s)
        assert slowest < REFUSAL_S, f"a 503 took {slowest:.1f} s"

        with psycopg.connect(db) as con:
            _exactly_once(con, clients)
            for what, _kind, query in invariants("postgres"):
                assert not con.execute(query + " LIMIT 10").fetchall(), what
    finally:
        cluster.stop()
    print(
        f"outage of {DOWN_S:g} s: {len(refused)} answers 503 (the slowest in {slowest:.2f} s), first 200 "
        f"after it within {max(r for r in recovered if r is not None):.2f} s"
    )


def _readiness(server: Server) -> list[tuple[int, str]]:
    """``GET /readyz`` of each process: (status, text)."""
    out = []
    for port in server.ports:
        resp = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=CLIENT_TIMEOUT_S)
        out.append((resp.status_code, resp.text.strip()))
    return out


def _exactly_once(con: psycopg.Connection, clients: list[Client]) -> None:
    """Every acknowledged dispatch is one execution, every acknowledged decision one command;
    a decision answered 503 and then refused happened at most once."""
    executions = {
        key: ids
        for key, ids in con.execute(
            "SELECT idempotency_key, array_agg(execution_id) FROM executions GROUP BY idempotency_key"
        ).fetchall()
    }
    decisions = Counter(
        tuple(row)
        for row in con.execute(
            "SELECT execution_id, payload::jsonb ->> 'step_id', payload::jsonb ->> 'reviewer_id' FROM commands "
            "WHERE kind = 'RecordReviewerDecision'"
        ).fetchall()
    )
    for client in clients:
        for key, execution_id in client.dispatched.items():
            assert executions.get(key) == [execution_id], (
                f"dispatch {key}: acknowledged {execution_id}, stored {executions.get(key)}"
            )
        for decision in client.decided:
            assert decisions[decision] == 1, f"decision {decision} acknowledged, stored {decisions[decision]} times"
        for decision in client.resent_decisions:
            assert decisions[decision] <= 1, f"decision {decision} stored {decisions[decision]} times"
    assert max(decisions.values(), default=0) <= 1, "a decision stored twice"
