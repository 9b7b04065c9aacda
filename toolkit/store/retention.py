"""Retention: the statements that find finished executions past a cut-off and remove them
with every row keyed by them. The orchestration (mirror, archive, rounds) is
:mod:`toolkit.services.retention`. On DuckDB a round runs on a connection nothing else writes
meanwhile (the writer's, between two commits); on PostgreSQL, while servers write, a round is
one write job: :func:`claim_finished` locks the round's executions (skipping those another
prune holds) and their deliveries, :func:`delete_claimed` removes them.

Rows keyed by an execution, by table (``steps`` is a view over ``executions.state``, so it
goes with its execution):

* ``executions`` — the execution, its engine state, its idempotency key;
* ``events`` — its event log;
* ``commands`` — every input that changed it (what replay reads);
* ``outbox`` — its webhook deliveries (delivered and dead letters).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb

Read = Callable[..., Any]  # store.read, tx.execute, or a DuckDB connection's execute: rows with fetchall()

__all__ = [
    "FINISHED",
    "KEYED_TABLES",
    "finished_before",
    "count_rows",
    "count_rows_shared",
    "count_steps_shared",
    "delete_executions",
    "claim_finished",
    "delete_claimed",
]

FINISHED = ("completed", "failed", "cancelled")  # semantics §5.1: the terminal execution statuses
KEYED_TABLES = ("events", "commands", "outbox", "executions")  # executions last: the others hang off it

# Ended before the cut-off, and no delivery still pending (a receiver that is still being
# retried would lose its events; dead letters go with the execution).
_FINISHED_BEFORE = f"""
SELECT execution_id FROM executions x
WHERE status IN ({", ".join(f"'{s}'" for s in FINISHED)})
  AND coalesce(completed_at, cancelled_at) < $cutoff
  AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.execution_id = x.execution_id AND o.status = 'pending')
ORDER BY coalesce(completed_at, cancelled_at), execution_id
"""


def finished_before(read: Read, cutoff_ms: int, limit: int | None = None) -> list[str]:
    """Ids of the finished executions that ended before ``cutoff_ms``, oldest first
    (``read`` is ``store.read`` or a DuckDB connection's ``execute``)."""
    sql = _FINISHED_BEFORE + (f" LIMIT {int(limit)}" if limit is not None else "")
    return [r[0] for r in read(sql, {"cutoff": cutoff_ms}).fetchall()]


def _selection(con: duckdb.DuckDBPyConnection, ids: list[str]) -> None:
    con.execute("CREATE OR REPLACE TEMP TABLE _pruned_ids AS SELECT unnest(?::VARCHAR[]) AS execution_id", [ids])


def count_rows(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, int]:
    """How many rows of each keyed table (and of the ``steps`` view) belong to ``ids``."""
    _selection(con, ids)
    try:
        counts = {
            table: con.execute(
                f"SELECT count(*) FROM {table} WHERE execution_id IN (SELECT execution_id FROM _pruned_ids)"
            ).fetchall()[0][0]
            for table in KEYED_TABLES
        }
        counts["steps"] = con.execute(
            "SELECT coalesce(sum(json_array_length(state, '$.steps')), 0) FROM executions "
            "WHERE execution_id IN (SELECT execution_id FROM _pruned_ids)"
        ).fetchall()[0][0]
    finally:
        con.execute("DROP TABLE IF EXISTS temp._pruned_ids")
    return counts


def delete_executions(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, int]:
    """Delete ``ids`` and their rows in one transaction; returns rows deleted per table."""
    _selection(con, ids)
    deleted = {}
    con.execute("BEGIN")
    try:
        for table in KEYED_TABLES:
            deleted[table] = con.execute(
                f"DELETE FROM {table} WHERE execution_id IN (SELECT execution_id FROM _pruned_ids)"
            ).fetchall()[0][0]
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.execute("DROP TABLE IF EXISTS temp._pruned_ids")
    return deleted


_IDS = "execution_id IN (SELECT unnest(?::VARCHAR[]))"


def count_rows_shared(read: Read, ids: list[str]) -> dict[str, int]:
    """:func:`count_rows` on PostgreSQL (``read`` is ``store.read``)."""
    counts = {
        table: read(f"SELECT count(*) FROM {table} WHERE {_IDS}", [ids]).fetchall()[0][0] for table in KEYED_TABLES
    }
    counts["steps"] = count_steps_shared(read, ids)
    return counts


def count_steps_shared(read: Read, ids: list[str]) -> int:
    """The steps of executions ``ids`` on PostgreSQL (they live in each execution's state)."""
    return int(
        read(
            f"SELECT coalesce(sum(jsonb_array_length((state::jsonb) -> 'steps')), 0)::BIGINT FROM executions "
            f"WHERE {_IDS}",
            [ids],
        ).fetchall()[0][0]
    )


def claim_finished(tx: Any, cutoff_ms: int, limit: int) -> list[str]:
    """In a PostgreSQL write job: lock up to ``limit`` finished executions that ended before
    ``cutoff_ms`` (skipping rows another transaction holds) and their deliveries, and return
    those without a pending delivery. Locked, a delivery cannot turn pending (a redrive)
    before the job commits."""
    ids = [
        r[0]
        for r in tx.execute(
            _FINISHED_BEFORE + f" LIMIT {int(limit)} FOR UPDATE OF x SKIP LOCKED", {"cutoff": cutoff_ms}
        ).fetchall()
    ]
    if not ids:
        return []
    pending = {
        r[0]
        for r in tx.execute(f"SELECT execution_id, status FROM outbox WHERE {_IDS} FOR UPDATE", [ids])
        if r[1] == "pending"
    }
    return [i for i in ids if i not in pending]


def delete_claimed(tx: Any, ids: list[str]) -> dict[str, int]:
    """In the job that claimed them: delete ``ids`` and their rows; returns rows per table."""
    return {
        table: tx.execute(
            f"WITH d AS (DELETE FROM {table} WHERE {_IDS} RETURNING 1) SELECT count(*) FROM d", [ids]
        ).fetchall()[0][0]
        for table in KEYED_TABLES
    }
