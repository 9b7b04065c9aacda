"""The event log of a PostgreSQL database, read for analysts: whole (``collab sql``, exports,
replay), per execution (prune's archive) or as what was committed since the last read (the
Parquet mirror).

Every read runs in one ``REPEATABLE READ`` transaction, so the tables it returns are one
snapshot. The rows go into a DuckDB connection (:func:`pull`), where the analytics views run
in the same SQL dialect as on a DuckDB server file. ``state`` (the engine's, large) and
``webhook_secret`` stay in PostgreSQL, as they stay out of the mirror; ``txid`` is bookkeeping.

**What was committed since.** Each row of ``events``, ``commands`` and ``definition_versions``
carries the id of the transaction that wrote it (``txid``, migration 010). All transactions
with an id below the snapshot's ``xmin`` have ended, and any other transaction has an id at
or above it; so the rows with ``lo <= txid < xmin`` — ``lo`` being the last read's ``xmin`` —
are exactly those committed since, however many processes wrote them and in whatever order
they committed. Commands are indexed by ``txid``; an execution's events are written in the
same transaction as its command, so they are found through the executions those commands name.
"""

from __future__ import annotations

from typing import Any

import duckdb
import psycopg
import pyarrow as pa

from toolkit.store.postgres.arrow import fetch_arrow

__all__ = ["LOG_TABLES", "snapshot", "pull", "pull_since", "window_end", "snapshot_xmin", "claim_lease", "HIDDEN"]

LOG_TABLES = ("definition_versions", "commands", "events", "steps", "executions")
HIDDEN = ("state", "webhook_secret", "txid")  # never leave PostgreSQL for an analyst's copy
APPEND_ONLY = ("definition_versions", "commands", "events")

# The `steps` view's columns; `execution_steps(ids)` (migration 013) adds the execution's version.
_STEP_COLUMNS = (
    "run, workspace_id, execution_id, step_id, node_id, node_type, status, group_id, iteration, "
    "started_at, completed_at, decision, source_node_id, output"
)


def snapshot(con: psycopg.Connection[Any]) -> None:
    """Begin the one-snapshot read transaction on ``con`` (autocommit off, no transaction open)."""
    con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")


def _columns(con: psycopg.Connection[Any], table: str) -> str:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = %s ORDER BY ordinal_position",
        [table],
    ).fetchall()
    if not rows:
        raise LookupError(f"no {table} table: not a collab-workflows database")
    return ", ".join(name for (name,) in rows if name not in HIDDEN)


def _into(duck: duckdb.DuckDBPyConnection, table: str, rows: pa.Table) -> int:
    duck.register("_pulled", rows)
    try:
        duck.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM _pulled")
    finally:
        duck.unregister("_pulled")
    return int(rows.num_rows)


def pull(
    con: psycopg.Connection[Any],
    duck: duckdb.DuckDBPyConnection,
    *,
    ids: list[str] | None = None,
    tables: tuple[str, ...] = LOG_TABLES,
    extra: tuple[str, ...] = (),
) -> dict[str, int]:
    """Copy ``tables`` (and ``extra`` tables keyed by execution, e.g. ``outbox``) into DuckDB
    tables of the same names, inside the caller's transaction on ``con``: every row, or only
    those of executions ``ids`` (then ``definition_versions`` holds the versions they ran).
    Returns rows copied per table."""
    counts = {}
    for table in tables + extra:
        if table == "steps":
            rows = "steps" if ids is None else "execution_steps(%(ids)s)"
            sql = f"SELECT {_STEP_COLUMNS} FROM {rows}" + ("" if ids is None else " ORDER BY 3, 4")
        elif ids is None:
            sql = f"SELECT {_columns(con, table)} FROM {table}"
        elif table == "definition_versions":
            sql = (
                f"SELECT {_columns(con, table)} FROM definition_versions d WHERE (workspace_id, definition_id, "
                "version) IN (SELECT workspace_id, definition_id, definition_version FROM executions "
                "WHERE execution_id = ANY(%(ids)s))"
            )
        else:
            sql = f"SELECT {_columns(con, table)} FROM {table} WHERE execution_id = ANY(%(ids)s)"
        counts[table] = _into(duck, table, fetch_arrow(con, sql, None if ids is None else {"ids": ids}))
    return counts


def snapshot_xmin(con: psycopg.Connection[Any]) -> int:
    """The oldest transaction id the current snapshot still sees as running (or the next id)."""
    row = con.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint").fetchone()
    assert row is not None
    return int(row[0])


def _window(lo: int | None) -> str:
    return "(txid >= %(lo)s AND txid < %(hi)s)" if lo is not None else "(txid < %(hi)s OR txid IS NULL)"


def window_end(con: psycopg.Connection[Any], lo: int | None, hi: int, limit: int) -> int:
    """Where a window from ``lo`` holding about ``limit`` commands ends: the transaction id of
    the first command past them, so that the window holds whole transactions (all of the first
    one, however large), or ``hi`` when fewer than ``limit`` commands are left below it."""
    window = {"lo": lo, "hi": hi, "limit": limit}
    row = con.execute(
        f"SELECT txid FROM commands WHERE {_window(lo)} AND txid IS NOT NULL ORDER BY txid OFFSET %(limit)s LIMIT 1",
        window,
    ).fetchone()
    if row is None:
        return hi
    first = con.execute(f"SELECT min(txid) FROM commands WHERE {_window(lo)}", window).fetchone()
    if first is not None and first[0] == row[0]:  # one transaction holds them all: take it whole
        after = con.execute(
            "SELECT min(txid) FROM commands WHERE txid > %(end)s AND txid < %(hi)s", {"end": row[0], "hi": hi}
        ).fetchone()
        return hi if after is None or after[0] is None else int(after[0])
    return int(row[0])


def pull_since(con: psycopg.Connection[Any], lo: int | None, hi: int) -> dict[str, Any]:
    """What transactions ``lo <= txid < hi`` committed (``lo`` None: everything below ``hi``,
    rows older than migration 010 included), as Arrow tables by mirror table: the append-only
    tables' new rows, and the executions they changed (whole, at the snapshot) with their
    steps tagged with the execution ``version``. Run in a :func:`snapshot` transaction whose
    :func:`snapshot_xmin` is ``hi`` or above (``hi`` below it: :func:`window_end`).

    An execution that this snapshot also shows changed at or past ``hi`` is left out of
    ``executions`` and ``steps``: the pull whose window holds that change exports it, at the
    version it then has. Exported now, at the snapshot's version, it would be exported again
    at the same version then, and its steps counted twice."""
    window = {"lo": lo, "hi": hi}
    since = _window(lo)
    tables: dict[str, Any] = {}
    tables["definition_versions"] = fetch_arrow(
        con, f"SELECT {_columns(con, 'definition_versions')} FROM definition_versions WHERE {since}", window
    )
    commands = fetch_arrow(con, f"SELECT {_columns(con, 'commands')} FROM commands WHERE {since}", window)
    tables["commands"] = commands
    ids = sorted(set(commands.column("execution_id").to_pylist()))
    tables["events"] = fetch_arrow(
        con,
        f"SELECT {_columns(con, 'events')} FROM events WHERE execution_id = ANY(%(ids)s) AND {since}",
        {**window, "ids": ids},
    )
    later = con.execute(
        "SELECT DISTINCT execution_id FROM commands WHERE execution_id = ANY(%(ids)s) AND txid >= %(hi)s",
        {"ids": ids, "hi": hi},
    ).fetchall()
    if later:
        ids = sorted(set(ids) - {execution_id for (execution_id,) in later})
    tables["steps"] = fetch_arrow(con, "SELECT * FROM execution_steps(%(ids)s)", {"ids": ids})
    tables["executions"] = fetch_arrow(
        con, f"SELECT {_columns(con, 'executions')} FROM executions WHERE execution_id = ANY(%(ids)s)", {"ids": ids}
    )
    return tables


def claim_lease(con: psycopg.Connection[Any], kind: str, key: str, owner: str, now_ms: int, ttl_ms: int) -> bool:
    """Take or renew the lease ``(kind, key)`` for ``owner`` (committed on ``con``); False
    while another owner's lease has not run out."""
    row = con.execute(
        "INSERT INTO leases (kind, key, owner, lease_until) VALUES (%(kind)s, %(key)s, %(owner)s, %(until)s) "
        "ON CONFLICT (kind, key) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until "
        "WHERE leases.owner = EXCLUDED.owner OR leases.lease_until < %(now)s RETURNING owner",
        {"kind": kind, "key": key, "owner": owner, "until": now_ms + ttl_ms, "now": now_ms},
    ).fetchone()
    con.commit()
    return row is not None


def release_lease(con: psycopg.Connection[Any], kind: str, key: str, owner: str) -> None:
    """Give the lease up at once (a clean stop), so another process need not wait for it."""
    con.execute("DELETE FROM leases WHERE kind = %s AND key = %s AND owner = %s", [kind, key, owner])
    con.commit()


def read_log(url: str, duck: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Copy the whole event log of the database at ``url`` (one snapshot) into ``duck``;
    :class:`~toolkit.store.postgres.store.StoreUnavailable` when it cannot be reached."""
    from toolkit.store.postgres.store import CONNECT_TIMEOUT_S, StoreUnavailable, _one_line, _safe

    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as con:
            snapshot(con)
            counts = pull(con, duck)
            con.rollback()
            return counts
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"cannot use the database {_safe(url)}: {_one_line(exc)}") from None
