"""Back up a PostgreSQL database the README's way — `pg_dump --format=custom` while two server
processes write to it, `pg_restore` into a new database — and the copy passes the fault
harness's audit, holds every execution acknowledged before the dump, and serves again
(issue 16, "backup and restore on both backends")."""

from __future__ import annotations

import os
import subprocess
import threading

import psycopg
import pytest
from faults.audit import invariants
from postgres import SKIP_ENV

from api.support import Api, Server, create_workspace, fresh_db, human_definition, postgres_cluster, uid, wait_for
from api.test_operations_data import decide

pytestmark = pytest.mark.skipif(os.environ.get(SKIP_ENV) == "1", reason=f"{SKIP_ENV}=1: no PostgreSQL")


def audit(db: str) -> None:
    with psycopg.connect(db) as con:
        for what, _, query in invariants("postgres"):
            assert con.execute(query + " LIMIT 5").fetchall() == [], what


def executions(db: str) -> set[str]:
    with psycopg.connect(db) as con:
        return {r[0] for r in con.execute("SELECT execution_id FROM executions").fetchall()}


def test_pg_dump_under_concurrent_writes_restores_to_a_database_that_passes_the_audit(tmp_path):
    db = str(fresh_db(tmp_path, "dumped", backend="postgres"))
    cluster = postgres_cluster()
    creds = create_workspace(db)
    srv = Server(db, tmp_path / "dumped.log", processes=2).start()
    acked: list[str] = []
    stop = threading.Event()
    errors: list[str] = []

    def load(n: int) -> None:
        with srv.client(creds) as client:
            api = Api(client)
            definition = uid(f"dump{n}")
            api.create(human_definition(definition))
            try:
                while not stop.is_set():
                    execution = api.dispatch(definition)
                    decide(api, execution)
                    acked.append(execution)
                    acked.append(api.dispatch(definition))  # one left waiting
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(repr(exc))

    dump = tmp_path / "collab.dump"
    workers = [threading.Thread(target=load, args=(n,)) for n in range(3)]
    try:
        for worker in workers:
            worker.start()
        wait_for(lambda: len(acked) >= 20, timeout=60, what="some load")
        before = list(acked)
        proc = subprocess.run(
            [str(cluster.bindir / "pg_dump"), "--format=custom", f"--file={dump}", db],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        during = len(acked)
        wait_for(lambda: len(acked) >= during + 10, timeout=60, what="writes after the dump")
    finally:
        stop.set()
        for worker in workers:
            worker.join()
        srv.stop()
    assert not errors, errors

    restored = str(fresh_db(tmp_path, "restored", backend="postgres"))
    proc = subprocess.run(
        [str(cluster.bindir / "pg_restore"), "--no-owner", f"--dbname={restored}", str(dump)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    audit(restored)
    held = executions(restored)
    assert set(before) <= held, "every execution acknowledged before the dump is in it"
    assert len(held) < len(acked), "writes after the dump are not"

    again = Server(restored, tmp_path / "restored.log", processes=1).start()
    try:
        with again.client(creds) as client:
            api = Api(client)
            waiting = [e for e in before if api.execution(e)["status"] == "running"]
            assert waiting and len(waiting) < len(before)
            decide(api, waiting[0])
            assert api.execution(waiting[0])["status"] == "completed"
            api.dispatch(api.ok("/v2/workflow/definitions/list", {})["items"][0]["definitionId"])
    finally:
        again.stop()
