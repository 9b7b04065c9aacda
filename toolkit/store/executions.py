"""Executions and their events: the rows a command reads and writes, the lists and event pages.

Each function takes ``read`` (``store.read``, or ``tx.execute`` inside a write job) or ``tx``.
DuckDB looks a row up through an index only when the key's equality is the whole filter; any
other condition beside it turns the lookup into a scan of the table, whose cost grows with
every execution ever stored. So executions are found by id alone and the caller checks the
workspace (events sit behind a materialised CTE the optimiser does not push the other
conditions into). PostgreSQL answers both shapes from its indexes.
"""

from __future__ import annotations

from toolkit.store.paging import Filters, keyset
from toolkit.store.seam import Read, Writes, count
from toolkit.store.writer import Row

BIGINT_MAX = 2**63 - 1

EVENT_COLUMNS = (
    "workspace_id",
    "execution_id",
    "seq",
    "event_id",
    "type",
    "step_id",
    "timestamp",
    "correlation_id",
    "external",
    "data",
)
COMMAND_COLUMNS = ("workspace_id", "execution_id", "version", "applied_at", "kind", "payload")
NEW_COLUMNS = (
    "workspace_id",
    "execution_id",
    "definition_id",
    "definition_version",
    "correlation_id",
    "idempotency_key",
    "organization_id",
    "document_id",
    "webhook_url",
    "webhook_secret",
    "started_at",
    "status",
    "failure_reason",
    "completed_at",
    "cancelled_at",
    "next_deadline",
    "state",
    "version",
    "list_key",
)
OUTBOX_COLUMNS = (
    "event_id",
    "workspace_id",
    "execution_id",
    "seq",
    "url",
    "body",
    "status",
    "attempts",
    "failures",
    "next_attempt_at",
    "created_at",
    "list_key",
)
UPDATE_COLUMNS = (
    "execution_id",
    "expected_version",
    "status",
    "failure_reason",
    "completed_at",
    "cancelled_at",
    "next_deadline",
    "state",
    "version",
)

_BY_ID = "SELECT {columns} FROM executions WHERE execution_id = ?"
_FOR_COMMAND = _BY_ID.format(columns="workspace_id, version, webhook_url, state")


def for_command(read: Read, execution_id: str, *, lock: bool = False) -> Row | None:
    """``(workspace_id, version, webhook_url, state JSON)`` of an execution, or None. ``lock``
    reads it ``FOR UPDATE``: commands on one execution then wait for each other, across
    processes, until the transaction ends (PostgreSQL; DuckDB's single writer needs none)."""
    return read(_FOR_COMMAND + " FOR UPDATE" if lock else _FOR_COMMAND, [execution_id]).fetchone()


def state_of(read: Read, execution_id: str) -> Row | None:
    """``(state JSON, workspace_id)`` of an execution, or None."""
    return read(_BY_ID.format(columns="state, workspace_id"), [execution_id]).fetchone()


def definition_of(read: Read, execution_id: str) -> Row | None:
    """``(definition_id, definition_version, workspace_id)`` of an execution, or None."""
    return read(_BY_ID.format(columns="definition_id, definition_version, workspace_id"), [execution_id]).fetchone()


def by_idempotency_key(read: Read, workspace_id: str, definition_id: str, key: str) -> str | None:
    """The execution dispatched with ``key`` (unique per workspace and definition), or None."""
    row = read(
        "SELECT execution_id FROM executions WHERE workspace_id = ? AND definition_id = ? AND idempotency_key = ?",
        [workspace_id, definition_id, key],
    ).fetchone()
    return None if row is None else row[0]


def hold_workspace(read: Read, workspace_id: str) -> None:
    """Lock the workspace's row until the transaction ends (PostgreSQL): counts that must be
    exact across processes — quotas — are taken one after the other."""
    read("SELECT workspace_id FROM workspaces WHERE workspace_id = ? FOR UPDATE", [workspace_id])


def count_stored(read: Read, workspace_id: str, *, lock: bool = False) -> int:
    """Executions the workspace stores, whatever their status; ``lock``: :func:`hold_workspace` first."""
    if lock:
        hold_workspace(read, workspace_id)
    return count(read, "SELECT count(*) FROM executions WHERE workspace_id = ?", [workspace_id])


def count_running(read: Read, workspace_id: str, definition_id: str) -> int:
    return count(
        read,
        "SELECT count(*) FROM executions WHERE workspace_id = ? AND definition_id = ? AND status = 'running'",
        [workspace_id, definition_id],
    )


LIST_COLUMNS = (
    "execution_id, status, started_at, completed_at, cancelled_at, definition_id, "
    "definition_version, correlation_id, idempotency_key, failure_reason, list_key"
)


def page(
    read: Read,
    workspace_id: str,
    definition_id: str | None,
    status: str | None,
    after: int | None,
    limit: int,
    last_key: int | None,
) -> list[Row]:
    """Up to ``limit`` rows (:data:`LIST_COLUMNS`) in creation order after list key ``after``."""
    filters = Filters("workspace_id = ?", workspace_id).equal(definition_id=definition_id, status=status)
    return keyset(read, f"{LIST_COLUMNS} FROM executions", filters, "list_key", after, limit, last_key=last_key)


_EVENT_COLUMNS = "event_id, seq, type, step_id, timestamp, correlation_id, data"


def external_events(
    read: Read, dialect: str, workspace_id: str, execution_id: str, since_seq: int, limit: int
) -> list[Row]:
    """``(event_id, seq, type, step_id, timestamp, correlation_id, data JSON)`` of up to
    ``limit`` external events after ``since_seq``, in seq order.

    PostgreSQL answers the whole question from its ``(execution_id, seq)`` index. DuckDB
    looks the execution up in its index only when that is the whole filter (the workspace,
    the seq or an ORDER BY … LIMIT beside it turn the lookup into a scan of every event
    stored), so there the statement reads the execution's events and the rest is done here.
    A materialised CTE that kept the rest in SQL read the same rows and cost about twice as
    much (an execution's events are bounded: MAX_STEPS steps)."""
    if dialect == "postgres":
        return read(
            f"SELECT {_EVENT_COLUMNS} FROM events WHERE execution_id = ? AND seq > ? "
            "AND workspace_id = ? AND external ORDER BY seq LIMIT ?",
            [execution_id, since_seq, workspace_id, limit],
        ).fetchall()
    rows = read(f"SELECT {_EVENT_COLUMNS}, workspace_id, external FROM events WHERE execution_id = ?", [execution_id])
    wanted = sorted((r for r in rows if r[8] and r[1] > since_seq and r[7] == workspace_id), key=lambda r: r[1])
    return [r[:7] for r in wanted[:limit]]


# ------------------------------------------------------------------ writes (buffered by the tx)


def insert(tx: Writes, row: Row) -> None:
    """A new execution (:data:`NEW_COLUMNS`)."""
    tx.append("executions", NEW_COLUMNS, [row])


def update(tx: Writes, row: Row) -> None:
    """A new state of an execution (:data:`UPDATE_COLUMNS`), applied only if its version is
    still the expected one (else the transaction fails with a conflict)."""
    tx.update("executions", UPDATE_COLUMNS, row)


def append_events(tx: Writes, rows: list[Row]) -> None:
    tx.append("events", EVENT_COLUMNS, rows)


def append_deliveries(tx: Writes, rows: list[Row]) -> None:
    """Pending webhook deliveries (:data:`OUTBOX_COLUMNS`) of events written in the same transaction."""
    tx.append("outbox", OUTBOX_COLUMNS, rows)


def append_command(tx: Writes, row: Row) -> None:
    tx.append("commands", COMMAND_COLUMNS, [row])
