"""The webhook outbox (semantics §6): what is due (shared fairly between workspaces), what an
attempt came to, the dead letters a workspace lists and redrives, and the server operator's
tools to dead-letter or purge a workspace's outbox (``collab deliveries``).

Rows are created with the events they carry (``persist.save``); a deliverer — the server's
background task — reads the due ones, POSTs them and records each outcome here. A row that
was being sent when the process died is still ``pending`` and is sent again after the
restart with the same event id: deliveries are at least once, never lost.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from toolkit.model import workflow as m
from toolkit.services.context import CommitNotice, Services
from toolkit.services.paging import Filters, keyset_page
from toolkit.services.workspaces import Workspace
from toolkit.webhooks import RETRY_DELAYS_MS, retry_delay_ms


@dataclass(frozen=True)
class Delivery:
    """One due delivery, with what signing and sending it needs."""

    event_id: str
    workspace_id: str
    url: str
    body: str
    secret: str
    attempts: int  # made so far; this one is number attempts + 1
    failures: int


@dataclass(frozen=True)
class Outcome:
    """What one attempt came to. ``permanent`` failures (a destination we refuse to call)
    dead-letter at once instead of waiting out the schedule."""

    delivery: Delivery
    at: int
    error: str | None = None
    permanent: bool = False


# Each execution's events go out one at a time, in seq order: only the oldest pending row of
# an execution (its head) is ever due, so a receiver sees an execution's events in order, and
# a later event waits while an earlier one is being retried (until it is delivered or dead).
_HEADS = (
    "WITH heads AS (SELECT * FROM outbox WHERE status = 'pending' "
    "QUALIFY row_number() OVER (PARTITION BY execution_id ORDER BY seq) = 1) "
)

# Fair shares: each workspace's due heads are numbered oldest first (its turns), and the
# deliveries it already has in flight count as turns taken. Rows go out by turn, so every
# workspace with something due gets a slot before any gets a second (round-robin), and no
# workspace holds more than ``per_workspace`` slots: a slow or failing receiver of one
# workspace can only ever tie up that workspace's share.
_FAIR = (
    _HEADS + ", ready AS (SELECT h.*, row_number() OVER (PARTITION BY h.workspace_id "
    "ORDER BY h.next_attempt_at, h.list_key) AS turn FROM heads h "
    "WHERE h.next_attempt_at <= ? AND NOT list_contains(?::VARCHAR[], h.event_id)) "
    "SELECT r.event_id, r.workspace_id, r.url, r.body, x.webhook_secret, r.attempts, r.failures FROM ready r "
    "JOIN executions x ON x.execution_id = r.execution_id "
    "LEFT JOIN (SELECT unnest(?::VARCHAR[]) AS workspace_id, unnest(?::INTEGER[]) AS n) b "
    "ON b.workspace_id = r.workspace_id "
    "WHERE r.turn + coalesce(b.n, 0) <= ? "
    "ORDER BY r.turn + coalesce(b.n, 0), r.next_attempt_at, r.list_key LIMIT ?"
)


def due(
    services: Services,
    now: int,
    limit: int,
    skip: Collection[str] = (),
    busy: Mapping[str, int] | None = None,
    per_workspace: int = 8,
) -> list[Delivery]:
    """Up to ``limit`` deliveries whose time has come — the head of each execution's queue,
    leaving out ``skip`` (in flight or held back) — shared fairly between workspaces:
    round-robin, and at most ``per_workspace`` in flight per workspace counting ``busy``
    (workspace id -> deliveries of it in flight)."""
    busy = dict(busy or {})
    rows = services.store.read(
        _FAIR, [now, list(skip), list(busy), list(busy.values()), per_workspace, limit]
    ).fetchall()
    return [Delivery(*r) for r in rows]


def next_due(services: Services, after: int) -> int | None:
    """When the next delivery falls due, if later than ``after``."""
    row = services.store.read(
        _HEADS + "SELECT min(next_attempt_at) FROM heads WHERE next_attempt_at > ?", [after]
    ).fetchone()
    assert row is not None  # an aggregate without GROUP BY always answers one row
    return row[0]


def record(services: Services, outcomes: list[Outcome], delays: tuple[int, ...] = RETRY_DELAYS_MS) -> None:
    """Write what the attempts came to, in one statement. A row changed meanwhile (its
    attempt count moved on) is left alone."""
    if not outcomes:
        return
    columns: dict[str, list] = {
        k: [] for k in ("event_id", "attempts", "status", "failures", "next_at", "error", "delivered_at", "dead_at")
    }
    for o in outcomes:
        d = o.delivery
        failures = 0 if o.error is None else d.failures + 1
        delay = None if o.permanent else retry_delay_ms(failures, delays)
        status = "delivered" if o.error is None else ("dead" if delay is None else "pending")
        next_at = o.at + delay if delay is not None and status == "pending" else o.at  # pending: delay is set
        for key, value in (
            ("event_id", d.event_id),
            ("attempts", d.attempts),
            ("status", status),
            ("failures", failures),
            ("next_at", next_at),
            ("error", o.error),
            ("delivered_at", o.at if status == "delivered" else None),
            ("dead_at", o.at if status == "dead" else None),
        ):
            columns[key].append(value)

    def job(tx):
        tx.execute(
            "UPDATE outbox SET status = u.status, attempts = u.attempts + 1, failures = u.failures, "
            "next_attempt_at = u.next_at, last_error = u.error, delivered_at = u.delivered_at, dead_at = u.dead_at "
            "FROM (SELECT unnest(?::VARCHAR[]) AS event_id, unnest(?::INTEGER[]) AS attempts, "
            "unnest(?::VARCHAR[]) AS status, unnest(?::INTEGER[]) AS failures, unnest(?::BIGINT[]) AS next_at, "
            "unnest(?::VARCHAR[]) AS error, unnest(?::BIGINT[]) AS delivered_at, unnest(?::BIGINT[]) AS dead_at) u "
            "WHERE outbox.event_id = u.event_id AND outbox.attempts = u.attempts AND outbox.status = 'pending'",
            list(columns.values()),
        )

    services.store.write(job)


_VIEW_COLUMNS = (
    "o.event_id, o.execution_id, o.seq, json_extract_string(o.body, '$.event'), o.url, o.status, "
    "o.attempts, CASE WHEN o.status = 'pending' THEN o.next_attempt_at END, o.last_error, o.created_at, "
    "o.delivered_at, o.dead_at, o.list_key"
)
_VIEW_KEYS = (
    "eventId",
    "executionId",
    "seq",
    "event",
    "url",
    "status",
    "attempts",
    "nextAttemptAt",
    "lastError",
    "createdAt",
    "deliveredAt",
    "deadAt",
)


def list_deliveries(services: Services, workspace: Workspace, request: m.ListDeliveries) -> dict:
    """The workspace's webhook deliveries in the order they were created, filtered by
    ``status`` and ``executionId``; ``{items, nextCursor, hasMore}``."""
    filters = Filters("o.workspace_id = ?", workspace.workspace_id).equal(
        **{"o.status": request.status, "o.execution_id": request.execution_id}
    )
    rows, next_cursor = keyset_page(
        services.store.read, f"{_VIEW_COLUMNS} FROM outbox o", filters, "o.list_key", request.cursor, request.page_size
    )
    return {
        "items": [dict(zip(_VIEW_KEYS, r)) for r in rows],
        "nextCursor": next_cursor,
        "hasMore": next_cursor is not None,
    }


def redrive_deliveries(services: Services, workspace: Workspace, request: m.RedriveDeliveries) -> dict:
    """Dead letters back to ``pending``, due now, with a fresh retry schedule (the attempt
    count carries on). Ids that are not dead letters of this workspace are left alone."""
    ws = workspace.workspace_id
    filters = Filters("workspace_id = ?", ws).add("status = 'dead'").equal(execution_id=request.execution_id)
    if request.event_ids is not None:
        filters.add("list_contains(?, event_id)", request.event_ids)

    def job(tx):
        now = services.clock.now()
        rows = tx.execute(
            "UPDATE outbox SET status = 'pending', failures = 0, next_attempt_at = ?, dead_at = NULL "
            f"WHERE {filters.sql} RETURNING event_id, list_key",
            [now] + filters.params,
        ).fetchall()
        if rows:
            tx.after_commit(lambda: services.notify(CommitNotice(ws, redriven=True)))
        return [event_id for event_id, _ in sorted(rows, key=lambda r: r[1])]

    redriven = services.store.write(job)
    return {"redriven": len(redriven), "eventIds": redriven}


# ---------------------------------------------------------------- operator tools (no workspace credentials)

OPERATOR_DEAD_LETTER = "dead-lettered by an operator"


def outbox_summary(services: Services) -> list[dict]:
    """Per workspace that has deliveries: ``{workspaceId, label, pending, dead, delivered,
    oldestPendingAt}``, the workspaces with the most pending first."""
    rows = services.store.read(
        "SELECT o.workspace_id, any_value(w.label), count(*) FILTER (WHERE o.status = 'pending'), "
        "count(*) FILTER (WHERE o.status = 'dead'), count(*) FILTER (WHERE o.status = 'delivered'), "
        "min(o.created_at) FILTER (WHERE o.status = 'pending') "
        "FROM outbox o LEFT JOIN workspaces w ON w.workspace_id = o.workspace_id "
        "GROUP BY o.workspace_id ORDER BY 3 DESC, 1"
    ).fetchall()
    keys = ("workspaceId", "label", "pending", "dead", "delivered", "oldestPendingAt")
    return [dict(zip(keys, r)) for r in rows]


def dead_letter_outbox(services: Services, workspace_id: str, execution_id: str | None = None) -> int:
    """Every pending delivery of the workspace (or of one of its executions) becomes a dead
    letter, with ``lastError`` saying an operator did it: nothing more is sent, and the
    workspace can still list and redrive them. Returns how many."""
    filters = Filters("workspace_id = ?", workspace_id).add("status = 'pending'").equal(execution_id=execution_id)

    def job(tx):
        now = services.clock.now()
        return len(
            tx.execute(
                f"UPDATE outbox SET status = 'dead', dead_at = ?, last_error = ? WHERE {filters.sql} "
                "RETURNING event_id",
                [now, OPERATOR_DEAD_LETTER] + filters.params,
            ).fetchall()
        )

    return services.store.write(job)


def purge_outbox(services: Services, workspace_id: str, execution_id: str | None = None) -> int:
    """Delete the workspace's undelivered deliveries (pending and dead), or one execution's:
    they are never sent and no longer listed; delivered ones stay as history. Returns how many."""
    filters = (
        Filters("workspace_id = ?", workspace_id).add("status IN ('pending', 'dead')").equal(execution_id=execution_id)
    )

    def job(tx):
        return len(tx.execute(f"DELETE FROM outbox WHERE {filters.sql} RETURNING event_id", filters.params).fetchall())

    return services.store.write(job)
