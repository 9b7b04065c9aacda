"""The event-log views on any DuckDB connection that holds executions, steps and events.

``attach(con)`` creates the views of ``views.sql`` (semantics §12) as TEMP views, so they
work on a read-only connection and never change a database file; ``open_db(path)`` opens a
simulation's or a stopped server's database read-only and attaches them. A running server's
file is locked by the server: read its Parquet mirror with :func:`toolkit.analytics.open_mirror`.

>>> from toolkit import examples
>>> from toolkit.simulate import simulate
>>> result = simulate(examples.load("parallel-review"), runs=20, seed=1)
>>> con = attach(result.con)
>>> con.execute("SELECT count(*) FROM execution_summary").fetchall()
[(20,)]
>>> sorted(VIEWS)[:3]
['directly_follows', 'execution_outcomes', 'execution_summary']
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import duckdb

__all__ = ["VIEWS", "attach", "open_db", "open_postgres", "views_sql", "to_arrow"]

VIEWS = (
    "step_durations",
    "execution_outcomes",
    "execution_summary",
    "reviewer_latency",
    "loop_iterations",
    "sla_breaches",
    "step_transitions",
    "directly_follows",
)
REQUIRED = ("executions", "steps", "events")

# The step order as integers, for directly_follows: `exec_key` (one integer per execution),
# `step_index` (each step's position in its execution: by start, end (running last), node id,
# step id) and `definition_key` (one integer per definition id). A simulation stores all three
# (toolkit/simulate/schema.sql), so on its 10-million-event logs the window sorts two integers,
# stored in order, instead of four columns, and the counts group by an integer the steps carry
# instead of joining every transition to its execution; elsewhere (a server's database, where
# `steps` is a view over the execution state, and its Parquet mirror: both small) they are
# numbered here.
STORED_KEYS = """
CREATE OR REPLACE TEMP VIEW _definition_keys AS
SELECT DISTINCT definition_key, definition_id FROM executions;
CREATE OR REPLACE TEMP VIEW _step_keys AS SELECT exec_key, step_index, definition_key, node_id FROM steps;
"""
NUMBERED_KEYS = """
CREATE OR REPLACE TEMP VIEW _execution_keys AS
SELECT CAST(row_number() OVER (ORDER BY execution_id) AS INTEGER) AS exec_key,
       CAST(dense_rank() OVER (ORDER BY definition_id) AS INTEGER) AS definition_key, execution_id, definition_id
FROM executions;
CREATE OR REPLACE TEMP VIEW _definition_keys AS
SELECT DISTINCT definition_key, definition_id FROM _execution_keys;
CREATE OR REPLACE TEMP VIEW _step_keys AS
SELECT x.exec_key, CAST(row_number() OVER (PARTITION BY s.execution_id ORDER BY s.started_at,
       s.completed_at NULLS LAST, s.node_id, s.step_id) - 1 AS INTEGER) AS step_index, x.definition_key, s.node_id
FROM steps s JOIN _execution_keys x ON x.execution_id = s.execution_id;
"""


def views_sql() -> str:
    """The SQL that defines every view (one file, shared by every source)."""
    return resources.files("toolkit.analytics").joinpath("views.sql").read_text(encoding="utf-8")


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """The columns of every table and view, by name."""
    rows = con.execute("SELECT table_name, list(column_name) FROM information_schema.columns GROUP BY 1").fetchall()
    return {name: set(columns) for name, columns in rows}


def attach(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Create (or replace) the views on ``con`` and return it. ``con`` must hold tables or
    views named executions, steps and events with the columns of ``views.sql``."""
    columns = _columns(con)
    missing = [name for name in REQUIRED if name not in columns]
    if missing:
        raise ValueError(f"not an event log: no {', '.join(missing)} table (need executions, steps and events)")
    stored = {"exec_key", "definition_key"} <= columns["executions"] and {
        "exec_key",
        "step_index",
        "definition_key",
    } <= columns["steps"]
    con.execute((STORED_KEYS if stored else NUMBERED_KEYS) + views_sql())
    return con


def open_db(path: str | Path) -> duckdb.DuckDBPyConnection:
    """Open a simulation's or a stopped server's DuckDB file read-only, with the views.

    Raises ``FileNotFoundError`` for a missing file and ``duckdb.IOException`` when another
    process (a running server) holds it open for writing.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no database file {path}")
    con = duckdb.connect(str(path), read_only=True)
    con.execute("SET enable_progress_bar = false")
    try:
        return attach(con)
    except BaseException:
        con.close()
        raise


def open_postgres(url: str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection holding one snapshot of the event log of the PostgreSQL
    database at ``url`` — tables ``executions`` (without ``state`` and ``webhook_secret``),
    ``steps``, ``events``, ``commands`` and ``definition_versions`` — with the views: the
    analyst's SQL is DuckDB's whichever backend served the log. The tables are copied whole;
    for a large live log, query the server's mirror (``collab serve --mirror DIR``) instead.
    ``StoreUnavailable`` when the database cannot be reached, ``LookupError`` when it holds
    no event log."""
    from toolkit.store.postgres.eventlog import read_log  # psycopg is the `postgres` extra

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    try:
        read_log(url, con)
        return attach(con)
    except BaseException:
        con.close()
        raise


def to_arrow(relation):
    """A DuckDB relation as a pyarrow Table (across DuckDB versions)."""
    method = getattr(relation, "to_arrow_table", None) or relation.arrow
    return method()
