"""Background work with two server processes on one PostgreSQL database (issue 14): an SLA
deadline fires once however many processes watch it, and fires when the process that made it
is gone; every webhook event is delivered exactly once while both processes deliver; and a
process killed with SIGKILL while it holds a delivery or runs a slow agent has that work
taken over by the other once its lease runs out (``--lease-seconds 2`` here). Deliveries are
at least once: the attempt in flight at the kill is sent again, nothing else is. Skipped with
COLLAB_SKIP_POSTGRES=1."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from postgres import SKIP_ENV
from processes import free_port, wait_until_ready

from api.receiver import Receiver
from api.support import (
    DECIDE,
    EXEC_GET,
    Api,
    Server,
    create_workspace,
    fresh_db,
    http_client,
    human_definition,
    uid,
    wait_for,
)

pytestmark = pytest.mark.skipif(os.environ.get(SKIP_ENV) == "1", reason=f"{SKIP_ENV}=1: no PostgreSQL")

LEASE_S = 2.0
SECRET = "whsec-processes-0123456789"


@contextlib.contextmanager
def _apis(ports: list[int], creds: dict) -> Iterator[list[Api]]:
    """A client of each process (not taking turns): the test decides which process acts."""
    headers = {"content-type": "application/json", "x-service-api-key": creds["apiKey"]}
    headers["x-service-auth-token"] = creds["authToken"]
    with contextlib.ExitStack() as stack:
        clients = [http_client(base_url=f"http://127.0.0.1:{p}", headers=headers, timeout=60) for p in ports]
        for client in clients:
            stack.enter_context(client)
        yield [Api(c) for c in clients]


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=20)


def _lease_holders(db: str, kind: str) -> list[tuple[str, int]]:
    """``(key, pid)`` of the leases of ``kind`` (the owner is ``host:pid:random``)."""
    with psycopg.connect(db) as con:
        rows = con.execute("SELECT key, owner FROM leases WHERE kind = %s", [kind]).fetchall()
    return [(key, int(owner.split(":")[1])) for key, owner in rows]


def _stored(db: str, execution_id: str) -> list[tuple[int, str, str | None]]:
    with psycopg.connect(db) as con:
        sql = "SELECT seq, type, step_id FROM events WHERE execution_id = %s ORDER BY seq"
        return [tuple(r) for r in con.execute(sql, [execution_id]).fetchall()]


def _once_numbered(db: str, execution_id: str) -> list[tuple[int, str, str | None]]:
    events = _stored(db, execution_id)
    assert [e[0] for e in events] == list(range(1, len(events) + 1)), events
    return events


def _cluster(root: Path, name: str, extra: tuple[str, ...] = ()) -> tuple[Server, str, dict]:
    db = str(fresh_db(root, name, backend="postgres"))
    creds = create_workspace(db)
    srv = Server(db, root / f"{name}.log", ("--lease-seconds", str(LEASE_S), *extra), processes=2).start()
    return srv, db, creds


# ---------------------------------------------------------------------------- timers


def test_an_sla_deadline_fires_once_with_both_processes_watching(tmp_path):
    srv, db, creds = _cluster(tmp_path, "sla_once")
    try:
        with _apis(srv.ports, creds) as apis:
            body = human_definition(uid("sla"), sla_ms=1500)
            apis[0].create(body)
            executions = [apis[i % 2].dispatch(body["definitionId"]) for i in range(6)]

            def ended():
                return all(apis[0].execution(x)["status"] == "completed" for x in executions)

            wait_for(ended, timeout=15, what="every SLA to breach and its execution to end")
            for execution_id in executions:
                events = _once_numbered(db, execution_id)
                assert [t for _, t, _ in events].count("step.breached") == 1, events
                steps = apis[1].execution(execution_id)["steps"]
                assert [s["nodeId"] for s in steps].count("escalate") == 1, steps
                assert [s["status"] for s in steps if s["nodeId"] == "review"] == ["breached"]
    finally:
        srv.stop()


def test_a_deadline_fires_within_a_second_in_the_other_process_when_its_maker_is_gone(tmp_path):
    srv, db, creds = _cluster(tmp_path, "sla_takeover")
    try:
        with _apis(srv.ports, creds) as (maker, other):
            body = human_definition(uid("sla"), sla_ms=2500)
            maker.create(body)
            execution_id = maker.dispatch(body["definitionId"])
            _kill(srv.procs[0])  # the deadline was only ever in this process's heap
            due = other.execution(execution_id)["steps"][0]["startedAt"] + 2500

            def breached():
                return other.execution(execution_id)["steps"][0]["status"] == "breached"

            wait_for(breached, timeout=10, what="the other process to fire the deadline")
            fired = next(e for e in other.events(execution_id) if e["type"] == "step.breached")["timestamp"]
            assert due <= fired <= due + 1500, f"fired {fired - due} ms after the deadline"
            assert [t for _, t, _ in _once_numbered(db, execution_id)].count("step.breached") == 1
    finally:
        srv.stop()


# ---------------------------------------------------------------------------- webhook deliveries


@pytest.fixture
def receiver(tmp_path):
    rec = Receiver(tmp_path).start()
    yield rec
    rec.stop()


def _hooked(root: Path, name: str, receiver: Receiver) -> tuple[Server, str, dict]:
    webhooks = ("--webhook-allow-loopback", "--webhook-ca-bundle", str(receiver.ca_path))
    webhooks += ("--webhook-allow-port", str(receiver.port), "--webhook-retry-delays", "100,100,100,100,100")
    return _cluster(root, name, webhooks)


def _decide(api: Api, execution_id: str) -> None:
    step = api.execution(execution_id)["steps"][0]
    api.ok(DECIDE, {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"})


def _external(db: str, execution_id: str) -> list[str]:
    with psycopg.connect(db) as con:
        sql = "SELECT event_id FROM events WHERE execution_id = %s AND external ORDER BY seq"
        return [eid for (eid,) in con.execute(sql, [execution_id]).fetchall()]


def test_every_event_is_delivered_exactly_once_with_both_processes_delivering(tmp_path, receiver):
    srv, db, creds = _hooked(tmp_path, "hooks_once", receiver)
    try:
        with _apis(srv.ports, creds) as apis:
            body = human_definition(uid("hook"))
            apis[0].create(body)
            url = receiver.url("/once")
            executions = [
                apis[i % 2].dispatch(body["definitionId"], webhookUrl=url, webhookSecret=SECRET) for i in range(8)
            ]
            for i, execution_id in enumerate(executions):
                _decide(apis[(i + 1) % 2], execution_id)  # the decision's events come from the other process
            expected = {x: _external(db, x) for x in executions}
            total = sum(len(ids) for ids in expected.values())
            receiver.wait_for(lambda: len(receiver.received("/once")) >= total, what=f"{total} deliveries")
            time.sleep(2 * LEASE_S)  # time for a second delivery of anything, were there one
            got = receiver.received("/once")
            ids = [r.headers["x-service-event-id"] for r in got]
            assert sorted(ids) == sorted(i for x in executions for i in expected[x]), "each event exactly once"
            for event_ids in expected.values():
                assert [i for i in ids if i in set(event_ids)] == event_ids, "an execution's events in seq order"
            assert {r.headers["x-service-attempt"] for r in got} == {"1"}
            with psycopg.connect(db) as con:
                assert con.execute("SELECT count(*) FROM leases").fetchone() == (0,), "every lease given back"
    finally:
        srv.stop()


def test_a_delivery_held_by_a_killed_process_is_taken_over_after_its_lease(tmp_path, receiver):
    srv, db, creds = _hooked(tmp_path, "hooks_kill", receiver)
    try:
        with _apis(srv.ports, creds) as apis:
            body = human_definition(uid("hook"))
            apis[0].create(body)
            url = receiver.url("/kill")
            execution_id = apis[0].dispatch(body["definitionId"], webhookUrl=url, webhookSecret=SECRET)
            receiver.wait_for(lambda: len(receiver.received("/kill")) == 2, what="the first two deliveries")
            receiver.respond = lambda path, attempt: None  # hold the next POST open
            _decide(apis[0], execution_id)
            receiver.wait_for(lambda: len(receiver.received("/kill")) == 3, what="the held delivery")
            held = receiver.received("/kill")[-1].headers["x-service-event-id"]
            ((key, pid),) = _lease_holders(db, "delivery")
            assert key == held
            (holder,) = [i for i, p in enumerate(srv.procs) if p.pid == pid]
            receiver.respond = lambda path, attempt: 200
            killed = time.monotonic()
            _kill(srv.procs[holder])
            receiver.release()
            # >= : once the held event is taken over, the later ones follow at once
            receiver.wait_for(lambda: len(receiver.received("/kill")) >= 4, timeout=LEASE_S + 10, what="the takeover")
            took = time.monotonic() - killed
            # renewed every third of a lease: it runs out between 2/3 of a lease and a lease after the kill
            assert took >= LEASE_S * 2 / 3 - 0.2, f"taken over {took:.1f} s after the kill, before the lease ran out"
            survivor = apis[1 - holder]
            events = [e["eventId"] for e in survivor.events(execution_id)]
            receiver.wait_for(lambda: len(receiver.received("/kill")) == len(events) + 1, what="the rest")
            time.sleep(2 * LEASE_S)
            got = receiver.received("/kill")
            ids = [r.headers["x-service-event-id"] for r in got]
            assert list(dict.fromkeys(ids)) == events, "every event, in order, none lost"
            assert [i for i in events if ids.count(i) != 1] == [held], "only the attempt in flight is sent twice"
            assert [r.headers["x-service-attempt"] for r in got if r.headers["x-service-event-id"] == held] == [
                "1",
                "1",
            ]
    finally:
        srv.stop()


# ---------------------------------------------------------------------------- background agent runs

AGENT_CHAIN = {
    "name": "Slow agents",
    "nodes": [
        {"nodeId": "first", "type": "agent", "config": {"agentId": "slow-one"}},
        {"nodeId": "second", "type": "agent", "config": {"agentId": "slow-two"}},
    ],
    "edges": [{"from": "first", "to": "second", "on": "always"}],
}


class SlowAgents:
    """Two processes of ``slow_agents_server.py`` on one database, each with its own agent delay."""

    def __init__(self, root: Path, delays: tuple[float, float]) -> None:
        self.db = str(fresh_db(root, "agents", backend="postgres"))
        self.creds = create_workspace(self.db)
        self.runs = root / "runs.txt"
        self.runs.touch()
        self.log = open(root / "agents.log", "ab")
        self.procs: list[subprocess.Popen] = []
        self.ports: list[int] = []
        script = Path(__file__).with_name("slow_agents_server.py")
        for delay in delays:
            port = free_port()
            args = [sys.executable, str(script), "--db", self.db, "--port", str(port), "--runs", str(self.runs)]
            args += ["--delay", str(delay), "--lease-seconds", str(LEASE_S)]
            proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
            self.procs.append(proc)
            assert wait_until_ready(proc, f"http://127.0.0.1:{port}/openapi.json", 60), (
                root / "agents.log"
            ).read_text()
            self.ports.append(port)

    def started(self) -> list[tuple[int, str]]:
        """``(pid, step id)`` of every agent run started, in order."""
        return [(int(p), s) for p, s in (line.split() for line in self.runs.read_text().splitlines())]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _kill(proc)
        self.log.close()


def test_each_background_agent_run_runs_in_one_process(tmp_path):
    agents = SlowAgents(tmp_path, (0.2, 0.2))
    try:
        with _apis(agents.ports, agents.creds) as apis:
            definition_id = uid("agents")
            apis[0].create({"definitionId": definition_id, **AGENT_CHAIN})
            executions = [apis[i % 2].dispatch(definition_id) for i in range(6)]
            wait_for(lambda: all(apis[1].execution(x)["status"] == "completed" for x in executions), timeout=30)
            started = agents.started()
            assert len(started) == 12 and len({step for _, step in started}) == 12, started
            for execution_id in executions:
                types = [t for _, t, _ in _once_numbered(agents.db, execution_id)]
                assert types.count("step.completed") == 2, types
    finally:
        agents.stop()


def test_a_slow_agent_run_of_a_killed_process_is_taken_over_after_its_lease(tmp_path):
    agents = SlowAgents(tmp_path, (120.0, 0.2))  # the first process would take two minutes
    try:
        with _apis(agents.ports, agents.creds) as (first, second):
            definition_id = uid("agents")
            first.create({"definitionId": definition_id, **AGENT_CHAIN})
            execution_id = first.dispatch(definition_id)  # its first run is leased to the first process
            wait_for(lambda: agents.started(), what="the first process to start the run")
            ((pid, step_id),) = agents.started()
            assert pid == agents.procs[0].pid
            assert [p for _, p in _lease_holders(agents.db, "agent-run")] == [pid]
            killed = time.monotonic()
            _kill(agents.procs[0])
            wait_for(lambda: second.execution(execution_id)["status"] == "completed", timeout=LEASE_S + 15)
            assert time.monotonic() - killed >= LEASE_S * 2 / 3 - 0.2, "not before the lease ran out"
            started = agents.started()
            assert started[:2] == [(pid, step_id), (agents.procs[1].pid, step_id)], started
            assert len(started) == 3 and started[2][0] == agents.procs[1].pid, "the next step runs once, where it began"
            steps = second.ok(EXEC_GET, {"executionId": execution_id})["steps"]
            assert [(s["nodeId"], s["status"]) for s in steps] == [("first", "completed"), ("second", "completed")]
            types = [t for _, t, _ in _once_numbered(agents.db, execution_id)]
            assert types.count("step.completed") == 2, types
    finally:
        agents.stop()
