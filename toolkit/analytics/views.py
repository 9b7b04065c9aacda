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

__all__ = ["VIEWS", "attach", "open_db", "views_sql", "to_arrow"]

VIEWS = ("step_durations", "execution_outcomes", "execution_summary", "reviewer_latency", "loop_iterations",
         "sla_breaches", "step_transitions", "directly_follows")
REQUIRED = ("executions", "steps", "events")


def views_sql() -> str:
    """The SQL that defines every view (one file, shared by every source)."""
    return resources.files("toolkit.analytics").joinpath("views.sql").read_text(encoding="utf-8")


def _relations(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    return {name for (name,) in rows}


def attach(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Create (or replace) the views on ``con`` and return it. ``con`` must hold tables or
    views named executions, steps and events with the columns of ``views.sql``."""
    missing = [name for name in REQUIRED if name not in _relations(con)]
    if missing:
        raise ValueError(f"not an event log: no {', '.join(missing)} table (need executions, steps and events)")
    con.execute(views_sql())
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


def to_arrow(relation):
    """A DuckDB relation as a pyarrow Table (across DuckDB versions)."""
    method = getattr(relation, "to_arrow_table", None) or relation.arrow
    return method()
