"""Workspace-wide counts the server's operators watch: the ``/metrics`` gauges and the
outbox backlog ``/readyz`` bounds. They count every workspace together and name none."""

from __future__ import annotations

from typing import NamedTuple

from toolkit.services.context import Services
from toolkit.store import deliveries
from toolkit.store import gauges as aggregates


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
    return deliveries.pending_count(services.store.read)


def gauges(services: Services, now_ms: int) -> Gauges:
    """Read every gauge at ``now_ms`` (one read each; the database is not locked between them)."""
    read = services.store.read
    pending, oldest = aggregates.outbox_pending(read)
    return Gauges(
        aggregates.executions_by_status(read),
        aggregates.steps_waiting(read, services.store.dialect),
        aggregates.timers_due(read, now_ms),
        pending,
        oldest,
    )
