"""A running server's data (issue 16, items 5 and 6), over real HTTP: it prunes by its
`--retention` setting without losing a waiting execution, and `collab backup --server` makes a
consistent copy under concurrent writes that `collab restore` turns into a database the fault
harness's audit passes and a new server serves."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import duckdb
import pytest
from faults.audit import INVARIANTS

from api.support import (
    DECIDE,
    EXEC_GET,
    Api,
    Server,
    collab_bin,
    human_definition,
    is_url,
    serve_fresh,
    uid,
    wait_for,
)
from toolkit.analytics import open_mirror

TOKEN = "operator-" + "x" * 32


def decide(api: Api, execution_id: str, decision: str = "approve") -> None:
    step = api.step(execution_id, "review")
    api.ok(DECIDE, {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": decision})


def gone(api: Api, execution_id: str) -> bool:
    return api.post(EXEC_GET, {"executionId": execution_id}).status_code == 404


def test_the_server_prunes_by_its_retention_setting_and_keeps_every_waiting_execution(tmp_path):
    srv = serve_fresh(tmp_path, "retention", ("--retention", "2s", "--maintenance-every", "0.5"))
    try:
        with srv.client(srv.creds_a) as client:
            api = Api(client)
            definition = uid("keep")
            api.create(human_definition(definition))
            finished = [api.dispatch(definition) for _ in range(3)]
            waiting = [api.dispatch(definition) for _ in range(3)]
            for execution in finished:
                decide(api, execution)
                assert api.execution(execution)["status"] == "completed"
            wait_for(lambda: all(gone(api, e) for e in finished), timeout=60, what="the finished executions pruned")
            # the waiting ones started before the cut-off too, and stay, decidable
            for execution in waiting:
                view = api.execution(execution)
                assert view["status"] == "running"
                assert [s["status"] for s in view["steps"] if s["nodeId"] == "review"] == ["waiting"]
                assert api.events(execution)[0]["type"] == "execution.dispatched"
            decide(api, waiting[0], "reject")
            assert api.execution(waiting[0])["status"] == "completed"
            # the mirror follows the database: the pruned executions leave it too (DuckDB's, next to
            # the file; PostgreSQL's shared mirror keeps pruned history: docs/decisions.md,
            # "PostgreSQL from the command line")
            if not is_url(srv.db):
                mirror = tmp_path / "events"

                def mirrored() -> set:
                    with open_mirror(mirror) as view:
                        return {r[0] for r in view.execute("SELECT execution_id FROM executions").fetchall()}

                wait_for(
                    lambda: not mirrored() & set(finished) and set(waiting[1:]) <= mirrored(),
                    timeout=60,
                    what="the mirror without the pruned executions",
                )
            assert not gone(api, waiting[1]) and not gone(api, waiting[2])
    finally:
        srv.stop()
    assert "maintenance pass failed" not in srv.log(), srv.log()[-3000:]


def audit(db: Path) -> None:
    with duckdb.connect(str(db), read_only=True) as con:
        for what, _, query in INVARIANTS:
            assert con.execute(query + " LIMIT 5").fetchall() == [], what


def collab(*args) -> subprocess.CompletedProcess:
    return subprocess.run([collab_bin(), *args], capture_output=True, text=True, timeout=300)


@pytest.mark.own_database  # a DuckDB file's backup; PostgreSQL's is pg_dump (test_postgres_backup.py)
def test_a_backup_under_concurrent_writes_restores_to_a_database_that_passes_the_audit(tmp_path):
    srv = serve_fresh(tmp_path, "live", ("--admin-token", TOKEN), backend="duckdb")
    acked: list[str] = []
    stop = threading.Event()
    errors: list[str] = []

    def load(n: int) -> None:
        with srv.client(srv.creds_a) as client:
            api = Api(client)
            definition = uid(f"load{n}")
            api.create(human_definition(definition))
            try:
                while not stop.is_set():
                    execution = api.dispatch(definition)
                    decide(api, execution)
                    acked.append(execution)
                    acked.append(api.dispatch(definition))  # one left waiting
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(repr(exc))

    workers = [threading.Thread(target=load, args=(n,)) for n in range(3)]
    try:
        for worker in workers:
            worker.start()
        wait_for(lambda: len(acked) >= 20, timeout=60, what="some load")
        before = list(acked)
        backup = tmp_path / "backup.duckdb"
        proc = collab("backup", "--server", srv.base_url, "--admin-token", TOKEN, "--to", str(backup))
        assert proc.returncode == 0, proc.stderr
        during = len(acked)
        wait_for(lambda: len(acked) >= during + 10, timeout=60, what="writes after the backup")
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    assert not errors, errors
    with srv.client() as client:  # workspace credentials do not open it; neither does a wrong token
        assert client.post("/admin/backup").status_code == 401
        assert client.post("/admin/backup", headers={"authorization": "Bearer nope"}).status_code == 401
        assert (
            client.post(
                "/admin/backup",
                headers={"x-service-api-key": srv.creds_a["apiKey"], "x-service-auth-token": srv.creds_a["authToken"]},
            ).status_code
            == 401
        )
    refused = collab("backup", "--db", str(srv.db), "--to", str(tmp_path / "direct.duckdb"))
    assert refused.returncode == 2 and "--server" in refused.stderr
    srv.stop()

    restored = tmp_path / "restored.duckdb"
    proc = collab("restore", "--from", str(backup), "--db", str(restored))
    assert proc.returncode == 0, proc.stderr
    audit(restored)
    with duckdb.connect(str(restored), read_only=True) as con:
        held = {r[0] for r in con.execute("SELECT execution_id FROM executions").fetchall()}
    assert set(before) <= held, "every execution acknowledged before the backup is in it"
    assert len(held) < len(acked), "writes after the backup are not"

    again = Server(restored, tmp_path / "restored.log").start()
    try:
        with again.client(srv.creds_a) as client:
            api = Api(client)
            waiting = [e for e in before if api.execution(e)["status"] == "running"]
            assert waiting and len(waiting) < len(before)
            decide(api, waiting[0])
            assert api.execution(waiting[0])["status"] == "completed"
    finally:
        again.stop()
