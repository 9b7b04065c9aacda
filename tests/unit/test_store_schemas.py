"""The two store backends keep one schema: the same numbered migrations, and after them the
same tables, views and columns in the same order — on a real PostgreSQL server."""

from __future__ import annotations

import threading

import duckdb
import psycopg
import pytest

from toolkit import examples
from toolkit.client import LocalClient
from toolkit.store.migrate import migrate as migrate_duckdb
from toolkit.store.migrate import migrations
from toolkit.store.postgres.migrate import migrate as migrate_postgres

pytestmark = pytest.mark.usefixtures("postgres_cluster")

COLUMNS = (
    "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = {schema} ORDER BY table_name, ordinal_position"
)


def _layout(rows) -> dict[str, list[str]]:
    tables: dict[str, list[str]] = {}
    for table, column in rows:
        tables.setdefault(table, []).append(column)
    return tables


def duckdb_layout() -> dict[str, list[str]]:
    con = duckdb.connect(":memory:")
    migrate_duckdb(con)
    return _layout(con.execute(COLUMNS.format(schema="'main'")).fetchall())


def postgres_layout(dsn: str) -> dict[str, list[str]]:
    with psycopg.connect(dsn) as con:
        return _layout(con.execute(COLUMNS.format(schema="'public'")).fetchall())


def test_both_backends_have_the_same_numbered_migrations():
    duck = [(number, name) for number, name, _ in migrations()]
    pg = [(number, name) for number, name, _ in migrations("toolkit.store.postgres")]
    assert pg == duck
    assert [n for n, _ in duck] == list(range(1, len(duck) + 1))


def test_both_backends_have_the_same_tables_and_columns(postgres_dsn):
    with psycopg.connect(postgres_dsn) as con:
        applied = migrate_postgres(con)
    assert applied == [name for _, name, _ in migrations("toolkit.store.postgres")]
    duck, pg = duckdb_layout(), postgres_layout(postgres_dsn)
    assert sorted(pg) == sorted(duck)
    for table in duck:
        assert pg[table] == duck[table], table


def test_migrating_again_applies_nothing(postgres_dsn):
    with psycopg.connect(postgres_dsn) as con:
        assert migrate_postgres(con)
        assert migrate_postgres(con) == []


def test_processes_starting_at_once_migrate_once(postgres_dsn):
    results: list[list[str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(6)

    def run():
        try:
            with psycopg.connect(postgres_dsn) as con:
                start.wait()
                results.append(migrate_postgres(con))
        except BaseException as exc:  # collected: the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    expected = [name for _, name, _ in migrations("toolkit.store.postgres")]
    assert sorted(results, key=len) == [[]] * 5 + [expected]
    with psycopg.connect(postgres_dsn) as con:
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone() == (len(expected),)


def test_the_steps_view_reads_an_execution_state_the_same_on_both(postgres_dsn, tmp_path):
    """A real execution's state, written by the engine through the DuckDB store, laid out as
    step rows by each backend's `steps` view."""
    db = str(tmp_path / "source.duckdb")
    with LocalClient.open(db) as client:
        client.create_definition(examples.load("parallel-review"))
        run = client.dispatch("parallel-review")
        legal = next(s for s in client.get_execution(run["executionId"])["steps"] if s["nodeId"] == "legal-review")
        client.record_reviewer_decision(
            run["executionId"], legal["stepId"], reviewerId="alice@legal", decision="reject", reason="no"
        )
    columns = (
        "workspace_id",
        "execution_id",
        "definition_id",
        "definition_version",
        "status",
        "correlation_id",
        "started_at",
        "state",
        "version",
        "list_key",
    )
    steps = (
        "SELECT step_id, node_id, node_type, status, group_id, iteration, started_at, completed_at, "
        "decision, source_node_id FROM steps ORDER BY step_id"
    )
    con = duckdb.connect(db, read_only=True)
    row = con.execute(f"SELECT {', '.join(columns)} FROM executions").fetchone()
    expected = con.execute(steps).fetchall()
    con.close()
    assert any(r[8] == "reject" for r in expected) and any(r[9] for r in expected)
    with psycopg.connect(postgres_dsn) as pg:
        migrate_postgres(pg)
        pg.execute(f"INSERT INTO executions ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})", row)
        assert pg.execute(steps).fetchall() == expected
