"""The aggregates behind the operators' gauges (``/metrics``, ``/readyz``): counts over every
workspace, naming none. Each is one statement; the steps waiting are counted from the engine
state of running executions, which each dialect unpacks its own way."""

from __future__ import annotations

from toolkit.store.seam import Read, count

_WAITING = {
    "duckdb": (
        "SELECT count(*) FROM (SELECT unnest(json_extract_string(state, '$.steps[*].status')) AS s "
        "FROM executions WHERE status = 'running') WHERE s = 'waiting'"
    ),
    "postgres": (
        "SELECT count(*) FROM executions x, jsonb_array_elements((x.state::jsonb) -> 'steps') s "
        "WHERE x.status = 'running' AND s ->> 'status' = 'waiting'"
    ),
}


def executions_by_status(read: Read) -> dict[str, int]:
    """Executions stored, by status."""
    return {str(s): int(n) for s, n in read("SELECT status, count(*) FROM executions GROUP BY status", []).fetchall()}


def steps_waiting(read: Read, dialect: str) -> int:
    """Steps of running executions waiting for a person or a resolution."""
    return count(read, _WAITING[dialect], [])


def timers_due(read: Read, now_ms: int) -> int:
    """Running executions whose next deadline is due at ``now_ms`` but not yet fired."""
    return count(read, "SELECT count(*) FROM executions WHERE status = 'running' AND next_deadline <= ?", [now_ms])


def outbox_pending(read: Read) -> tuple[int, int | None]:
    """Deliveries pending, and when the oldest of them was created (None when none is)."""
    row = read("SELECT count(*), min(created_at) FROM outbox WHERE status = 'pending'", []).fetchone()
    assert row is not None  # an aggregate without GROUP BY always answers one row
    return int(row[0]), None if row[1] is None else int(row[1])
