"""The command line on a PostgreSQL database, as an operator and an analyst use it: `--db
postgresql://…` (or `COLLAB_DB`) for sql, events export, replay, prune and the credential
commands, while servers run; the Parquet mirror written by one of two processes; an
unreachable database as one line and a non-zero exit. Each answer is checked against the same
work done on a DuckDB server."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import psycopg
import pytest

from api.support import (
    DECIDE,
    Api,
    Server,
    collab_bin,
    create_workspace,
    fresh_db,
    http_client,
    human_definition,
    skip_without_postgres,
    wait_for,
)
from toolkit.cli import main

DEFINITION = "cli-review"
UNREACHABLE = "postgresql://collab@127.0.0.1:1/nowhere"
QUERIES = (
    "SELECT status, count(*) AS n FROM execution_summary GROUP BY 1 ORDER BY 1",
    "SELECT node_id, status, decision, count(*) AS n, count(duration_ms) AS timed FROM step_durations "
    "GROUP BY ALL ORDER BY ALL",
    "SELECT type, count(*) AS n FROM events GROUP BY 1 ORDER BY 1",
    "SELECT * EXCLUDE (definition_id) FROM directly_follows ORDER BY ALL",
    "SELECT kind, count(*) AS n FROM commands GROUP BY 1 ORDER BY 1",
    "SELECT definition_id, version FROM definition_versions",
)


@pytest.fixture(autouse=True)
def _postgres():
    skip_without_postgres()


def collab(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`collab ARGS` in this process (the command line is a library call)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (print(exc.code, file=err) or 1)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def sql(db: str, query: str, *source: str) -> list[dict]:
    done = collab("sql", query, *(source or ("--db", db)), "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def fill(srv: Server, creds: dict, decisions=("approve", "reject", "approve", "reject")) -> list[str]:
    """The same work on any server: one definition, six executions, four of them decided."""
    with srv.client(creds) as http:
        api = Api(http)
        api.create(human_definition(DEFINITION))
        ids = [api.dispatch(DEFINITION) for _ in range(6)]
        for execution_id, decision in zip(ids, decisions):
            step = api.step(execution_id, "review")
            api.ok(
                DECIDE,
                {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": decision},
            )
    return ids


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """A stopped DuckDB server's file and a PostgreSQL database (its server still running),
    filled the same way."""
    root = tmp_path_factory.mktemp("cli-logs")
    duck = fresh_db(root, "duck", backend="duckdb")
    pg = fresh_db(root, "pg", backend="postgres")
    servers = []
    for db in (duck, pg):
        creds = create_workspace(db)
        srv = Server(db, root / f"{Path(str(db)).name[:20]}.log", processes=1).start()
        servers.append(srv)
        fill(srv, creds)
    servers[0].stop()  # DuckDB: the file is read once its server stopped
    try:
        yield str(duck), str(pg)
    finally:
        servers[1].stop()


def test_sql_answers_the_same_on_a_duckdb_and_a_postgresql_log(logs):
    duck, pg = logs
    for query in QUERIES:
        assert sql(pg, query) == sql(duck, query), query
    assert sql(pg, "SELECT count(*) AS n FROM execution_summary") == [{"n": 6}]


def test_collab_db_is_the_default_database_of_every_command(logs, monkeypatch):
    _, pg = logs
    monkeypatch.setenv("COLLAB_DB", pg)
    done = collab("sql", "SELECT count(*) AS n FROM executions", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"n": 6}]
    summary = collab("deliveries", "summary", "--json")
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout) == []  # no execution had a webhook
    unknown = collab("deliveries", "purge", "--workspace", "ws_nobody")
    assert unknown.returncode == 2 and "no workspace ws_nobody" in unknown.stderr
    dry = collab("prune", "--older-than", "3650d", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["executions"] == 0
    created = collab("workspace", "create", "--json")
    assert created.returncode == 0, created.stderr
    with psycopg.connect(pg) as con:
        assert con.execute("SELECT count(*) FROM workspaces").fetchone() == (2,)


def test_events_export_and_replay_read_postgresql_like_duckdb(logs, tmp_path):
    duck, pg = logs
    lines = {}
    for name, db in (("duck", duck), ("pg", pg)):
        out = tmp_path / f"{name}.csv"
        done = collab("events", "export", "--db", db, "--definition", DEFINITION, "--to", "csv", str(out))
        assert done.returncode == 0, done.stderr
        lines[name] = done.stdout.replace(str(out), "OUT")
    assert lines["pg"] == lines["duck"]
    assert lines["pg"].endswith("of 6 execution(s) written to OUT (csv)\n")
    changed = human_definition(DEFINITION)
    changed["edges"] = [  # the routes swapped
        {"from": "review", "to": "rejected", "on": "approve"},
        {"from": "review", "to": "approved", "on": "reject"},
    ]
    against = tmp_path / "v2.json"
    against.write_text(json.dumps(changed))
    diffs = {}
    for name, db in (("duck", duck), ("pg", pg)):
        done = collab("replay", "--db", db, "--definition", DEFINITION, "--against", str(against), "--json")
        assert done.returncode == 0, done.stderr
        diffs[name] = json.loads(done.stdout)["summary"]
        diffs[name].pop("meanCycleTimeMs")  # wall-clock times of two different runs
    assert diffs["pg"] == diffs["duck"]
    assert diffs["pg"]["executions"] == 6 and diffs["pg"]["changed"] > 0
    policy = tmp_path / "policy.json"
    done = collab("calibrate", "--db", pg, "--definition", DEFINITION, "--out", str(policy))
    assert done.returncode == 0, done.stderr
    assert json.loads(policy.read_text()), "a fitted policy"


def test_an_unreachable_database_is_one_line_and_a_failure(tmp_path):
    for args in (
        ("workspace", "create", "--db", UNREACHABLE, "--json"),
        ("serve", "--db", UNREACHABLE, "--port", "1"),
        ("sql", "SELECT 1", "--db", UNREACHABLE),
    ):
        done = subprocess.run([collab_bin(), *args], capture_output=True, text=True, timeout=120)
        assert done.returncode != 0, args
        assert "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "127.0.0.1" in done.stderr, done.stderr


def test_backup_of_a_postgresql_database_says_to_use_pg_dump():
    for args in (("backup", "--db", UNREACHABLE, "--to", "x.dump"), ("restore", "--from", "x", "--db", UNREACHABLE)):
        done = collab(*args)
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1 and "pg_" in done.stderr


def test_prune_on_postgresql_while_two_servers_run(tmp_path):
    db = fresh_db(tmp_path, "prune", backend="postgres")
    creds = create_workspace(db)
    srv = Server(db, tmp_path / "prune.log", processes=2).start()
    try:
        ids = fill(srv, creds)
        time.sleep(1.1)  # the four decided executions ended more than a second ago
        dry = collab("prune", "--db", db, "--older-than", "1s", "--dry-run", "--json")
        assert dry.returncode == 0, dry.stderr
        planned = json.loads(dry.stdout)
        assert sorted(planned["executionIds"]) == sorted(ids[:4])
        archive = tmp_path / "archive"
        done = collab("prune", "--db", db, "--older-than", "1s", "--archive", str(archive), "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["executions"] == 4 and report["rows"] == planned["rows"]
        assert report["archived"]["events"] == planned["rows"]["events"]
        kept = sql(db, "SELECT execution_id, status FROM executions ORDER BY 1")
        assert kept == sorted(
            [{"execution_id": i, "status": "running"} for i in ids[4:]], key=lambda r: r["execution_id"]
        )
        archived = sql(db, "SELECT status, count(*) AS n FROM execution_summary GROUP BY 1", "--mirror", str(archive))
        assert archived == [{"status": "completed", "n": 4}]
        with srv.client(creds) as http:  # both processes still serve the executions that stay
            api = Api(http)
            for execution_id in ids[4:]:
                step = api.step(execution_id, "review")
                api.ok(
                    DECIDE,
                    {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"},
                )
                assert api.execution(execution_id)["status"] == "completed"
    finally:
        srv.stop()


def _mirror_owner(db: str) -> int | None:
    with psycopg.connect(db) as con:
        row = con.execute("SELECT owner FROM leases WHERE kind = 'mirror'").fetchone()
    return int(row[0].split(":")[1]) if row else None


def test_one_of_two_processes_writes_the_mirror_and_the_other_takes_over(tmp_path):
    db = fresh_db(tmp_path, "mirror", backend="postgres")
    creds = create_workspace(db)
    folder = tmp_path / "events"
    srv = Server(db, tmp_path / "mirror.log", ("--mirror", str(folder)), processes=2).start()
    try:
        fill(srv, creds)
        holder = wait_for(lambda: _mirror_owner(db), timeout=30)
        assert holder in [p.pid for p in srv.procs]
        count = "SELECT count(*) AS n FROM events"
        # the lease is taken before the first sync has written the mirror's manifest
        wait_for(lambda: (folder / "_mirror.json").exists(), timeout=30)
        wait_for(lambda: sql(db, count, "--mirror", str(folder)) == sql(db, count), timeout=30)
        for query in QUERIES:
            assert sql(db, query, "--mirror", str(folder)) == sql(db, query), query
        os.kill(holder, signal.SIGKILL)  # the holder dies; its lease runs out and the other takes over
        survivor = next(p for p in srv.procs if p.pid != holder)
        port = srv.ports[srv.procs.index(survivor)]
        headers = {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]}
        with http_client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60) as http:
            for _ in range(3):  # to the survivor only: the other process is dead
                api = Api(http)
                api.dispatch(DEFINITION)
        wait_for(lambda: _mirror_owner(db) == survivor.pid, timeout=60)
        wait_for(lambda: sql(db, count, "--mirror", str(folder)) == sql(db, count), timeout=30)
        assert sql(db, "SELECT count(*) AS n FROM executions", "--mirror", str(folder)) == [{"n": 9}]
        assert sql(db, "SELECT count(*) AS n FROM (SELECT DISTINCT event_id FROM events)", "--mirror", str(folder)) == (
            sql(db, count)
        )
    finally:
        srv.stop()
