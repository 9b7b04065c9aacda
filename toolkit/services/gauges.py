"""Workspace-wide counts the server's operators watch: the ``/metrics`` gauges and the
outbox backlog ``/readyz`` bounds. They count every workspace together and name none."""

from __future__ import annotations

from typing import NamedTuple

from toolkit.services.context import Services


class Gauges(NamedTuple):
    """``executions`` by status; steps waiting for a person or a resolution; deadlines already
    due but not yet fired; pending webhook deliveries and when the oldest was created (ms,
    ``None`` when none is pending)."""

    executions: dict[str, int]
    steps_waiting: int
    timers_due: int
    outbox_pending: int
    oldest_pending_ms: int | None


def pending_deliveries(services: Services) -> int:
    """Webhook deliveries pending (due or waiting to retry), over every workspace."""
    return services.store.read("SELECT count(*) FROM outbox WHERE status = 'pending'").fetchone()[0]


def gauges(services: Services, now_ms: int) -> Gauges:
    """Read every gauge at ``now_ms`` (one read each; the database is not locked between them)."""
    read = services.store.read
    by_status = dict(read("SELECT status, count(*) FROM executions GROUP BY status").fetchall())
    waiting = read(
        "SELECT count(*) FROM (SELECT unnest(json_extract_string(state, '$.steps[*].status')) AS s "
        "FROM executions WHERE status = 'running') WHERE s = 'waiting'"
    ).fetchone()[0]
    due = read("SELECT count(*) FROM executions WHERE status = 'running' AND next_deadline <= ?", [now_ms]).fetchone()[
        0
    ]
    pending, oldest = read("SELECT count(*), min(created_at) FROM outbox WHERE status = 'pending'").fetchone()
    return Gauges(by_status, waiting, due, pending, oldest)
