"""The webhook outbox's statements (semantics §6): due heads shared fairly between
workspaces, claiming them on a shared store, outcomes, the list a workspace pages through,
redrive, and the operator's summary, dead-lettering and purge.

Each execution's events go out one at a time, in seq order: only the oldest pending row of an
execution (its head) is ever due, so a receiver sees an execution's events in order, and a
later event waits while an earlier one is retried (until it is delivered or dead).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from toolkit.store import leases
from toolkit.store.seam import Read, Writes, count
from toolkit.store.writer import Row

_HEADS = (
    "WITH heads AS (SELECT * FROM (SELECT o.*, row_number() OVER (PARTITION BY o.execution_id ORDER BY o.seq) AS nth "
    "FROM outbox o WHERE o.status = 'pending') p WHERE p.nth = 1) "
)

# Fair shares: each workspace's due heads are numbered oldest first (its turns), and the
# deliveries it already has in flight count as turns taken. Rows go out by turn, so every
# workspace with something due gets a slot before any gets a second (round-robin), and no
# workspace holds more than ``per_workspace`` slots: a slow or failing receiver of one
# workspace can only ever tie up that workspace's share. ``{leased}`` leaves out the heads
# another process holds a live lease on (a shared store).
_FAIR = (
    _HEADS + ", ready AS (SELECT h.*, row_number() OVER (PARTITION BY h.workspace_id "
    "ORDER BY h.next_attempt_at, h.list_key) AS turn FROM heads h "
    "WHERE h.next_attempt_at <= ? AND NOT list_contains(?::VARCHAR[], h.event_id){leased}) "
    "SELECT r.event_id, r.workspace_id, r.url, r.body, x.webhook_secret, r.attempts, r.failures FROM ready r "
    "JOIN executions x ON x.execution_id = r.execution_id "
    "LEFT JOIN (SELECT unnest(?::VARCHAR[]) AS workspace_id, unnest(?::INTEGER[]) AS n) b "
    "ON b.workspace_id = r.workspace_id "
    "WHERE r.turn + coalesce(b.n, 0) <= ? "
    "ORDER BY r.turn + coalesce(b.n, 0), r.next_attempt_at, r.list_key LIMIT ?"
)
_UNLEASED = (
    " AND NOT EXISTS (SELECT 1 FROM leases l WHERE l.kind = 'delivery' AND l.key = h.event_id AND l.lease_until > ?)"
)
_DUE = _FAIR.format(leased="")
_DUE_UNLEASED = _FAIR.format(leased=_UNLEASED)


def due(
    read: Read, now: int, limit: int, skip: Collection[str], busy: Mapping[str, int], per_workspace: int
) -> list[Row]:
    """``(event_id, workspace_id, url, body, secret, attempts, failures)`` of up to ``limit``
    due heads, leaving out ``skip``, at most ``per_workspace`` per workspace counting ``busy``
    (workspace id -> deliveries of it in flight)."""
    return read(_DUE, [now, list(skip), list(busy), list(busy.values()), per_workspace, limit]).fetchall()


def claim_due(
    tx: Writes,
    now: int,
    limit: int,
    skip: Collection[str],
    busy: Mapping[str, int],
    per_workspace: int,
    owner: str,
    until: int,
) -> list[Row]:
    """As :func:`due`, on a store other processes deliver from too: the due heads no live lease
    holds are locked (``FOR UPDATE SKIP LOCKED``: a head another process is claiming right now
    is passed over, not waited for) and leased to ``owner`` until ``until``, in the caller's
    transaction. Only the rows whose lease was won are returned."""
    rows = tx.execute(
        _DUE_UNLEASED, [now, list(skip), now, list(busy), list(busy.values()), per_workspace, limit]
    ).fetchall()
    if not rows:
        return []
    locked = {
        k
        for (k,) in tx.execute(
            "SELECT event_id FROM outbox WHERE event_id = ANY(?) AND status = 'pending' FOR UPDATE SKIP LOCKED",
            [[r[0] for r in rows]],
        ).fetchall()
    }
    won = set(leases.claim(tx, leases.DELIVERY, [r[0] for r in rows if r[0] in locked], owner, now=now, until=until))
    return [r for r in rows if r[0] in won]


def next_due(read: Read, after: int) -> int | None:
    """When the next head falls due, if later than ``after``."""
    row = read(_HEADS + "SELECT min(next_attempt_at) FROM heads WHERE next_attempt_at > ?", [after]).fetchone()
    assert row is not None  # an aggregate without GROUP BY always answers one row
    return None if row[0] is None else int(row[0])


OUTCOME_COLUMNS = ("event_id", "attempts", "status", "failures", "next_at", "error", "delivered_at", "dead_at")


def record(tx: Writes, columns: Mapping[str, Sequence[Any]], owner: str | None = None) -> None:
    """Write attempts' outcomes (``columns`` as :data:`OUTCOME_COLUMNS`, one value per attempt)
    in one statement. A row changed meanwhile (its attempt count moved on) is left alone; with
    ``owner`` (a shared store) so is a row whose lease ``owner`` no longer holds, and the
    leases still held are released."""
    values = [list(columns[c]) for c in OUTCOME_COLUMNS]
    if owner is not None:
        held = set(leases.release(tx, leases.DELIVERY, values[0], owner))
        keep = [i for i, event_id in enumerate(values[0]) if event_id in held]
        values = [[column[i] for i in keep] for column in values]
        if not keep:
            return
    tx.execute(
        "UPDATE outbox SET status = u.status, attempts = u.attempts + 1, failures = u.failures, "
        "next_attempt_at = u.next_at, last_error = u.error, delivered_at = u.delivered_at, dead_at = u.dead_at "
        "FROM (SELECT unnest(?::VARCHAR[]) AS event_id, unnest(?::INTEGER[]) AS attempts, "
        "unnest(?::VARCHAR[]) AS status, unnest(?::INTEGER[]) AS failures, unnest(?::BIGINT[]) AS next_at, "
        "unnest(?::VARCHAR[]) AS error, unnest(?::BIGINT[]) AS delivered_at, unnest(?::BIGINT[]) AS dead_at) u "
        "WHERE outbox.event_id = u.event_id AND outbox.attempts = u.attempts AND outbox.status = 'pending'",
        values,
    )


def pending_count(read: Read) -> int:
    """Deliveries pending (due or waiting to retry), over every workspace."""
    return count(read, "SELECT count(*) FROM outbox WHERE status = 'pending'", [])


# ---------------------------------------------------------------- a workspace's view

VIEW_KEYS = (
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
_VIEW = (
    "SELECT event_id, execution_id, seq, CAST(body AS JSON) ->> 'event', url, status, attempts, "
    "CASE WHEN status = 'pending' THEN next_attempt_at END, last_error, created_at, delivered_at, dead_at, list_key "
    "FROM outbox WHERE workspace_id = ?"
)


def page(
    read: Read,
    workspace_id: str,
    status: str | None,
    execution_id: str | None,
    after: int | None,
    limit: int,
) -> list[Row]:
    """Up to ``limit`` of the workspace's deliveries in creation order after the list key
    ``after``, as :data:`VIEW_KEYS` plus the list key last."""
    sql = _VIEW
    params: list[Any] = [workspace_id]
    if status is not None:
        sql, params = sql + " AND status = ?", [*params, status]
    if execution_id is not None:
        sql, params = sql + " AND execution_id = ?", [*params, execution_id]
    if after is not None:
        sql, params = sql + " AND list_key > ?", [*params, after]
    return read(sql + " ORDER BY list_key LIMIT ?", [*params, limit]).fetchall()


def redrive(
    tx: Writes, workspace_id: str, now: int, execution_id: str | None, event_ids: Sequence[str] | None
) -> list[str]:
    """The workspace's dead letters (of ``execution_id``, among ``event_ids``, when given) back
    to pending, due ``now``, with a fresh schedule; their ids in creation order."""
    sql = "UPDATE outbox SET status = 'pending', failures = 0, next_attempt_at = ?, dead_at = NULL "
    sql += "WHERE workspace_id = ? AND status = 'dead'"
    params: list[Any] = [now, workspace_id]
    if execution_id is not None:
        sql, params = sql + " AND execution_id = ?", [*params, execution_id]
    if event_ids is not None:
        sql, params = sql + " AND list_contains(?::VARCHAR[], event_id)", [*params, list(event_ids)]
    rows = tx.execute(sql + " RETURNING event_id, list_key", params).fetchall()
    return [event_id for event_id, _ in sorted(rows, key=lambda r: r[1])]


# ---------------------------------------------------------------- operator tools


def summary(read: Read) -> list[Row]:
    """Per workspace with deliveries: ``(workspace_id, label, pending, dead, delivered,
    oldest pending created_at)``, the most pending first."""
    return read(
        "SELECT o.workspace_id, min(w.label), count(*) FILTER (WHERE o.status = 'pending'), "
        "count(*) FILTER (WHERE o.status = 'dead'), count(*) FILTER (WHERE o.status = 'delivered'), "
        "min(o.created_at) FILTER (WHERE o.status = 'pending') "
        "FROM outbox o LEFT JOIN workspaces w ON w.workspace_id = o.workspace_id "
        "GROUP BY o.workspace_id ORDER BY 3 DESC, 1",
        [],
    ).fetchall()


def dead_letter(tx: Writes, workspace_id: str, execution_id: str | None, now: int, error: str) -> int:
    """Every pending delivery of the workspace (or of one execution) becomes a dead letter
    with ``error``; returns how many."""
    sql = "UPDATE outbox SET status = 'dead', dead_at = ?, last_error = ? WHERE workspace_id = ? AND status = 'pending'"
    params: list[Any] = [now, error, workspace_id]
    if execution_id is not None:
        sql, params = sql + " AND execution_id = ?", [*params, execution_id]
    return len(tx.execute(sql + " RETURNING event_id", params).fetchall())


def purge(tx: Writes, workspace_id: str, execution_id: str | None) -> int:
    """Delete the workspace's (or one execution's) undelivered deliveries; returns how many."""
    sql = "DELETE FROM outbox WHERE workspace_id = ? AND status IN ('pending', 'dead')"
    params: list[Any] = [workspace_id]
    if execution_id is not None:
        sql, params = sql + " AND execution_id = ?", [*params, execution_id]
    return len(tx.execute(sql + " RETURNING event_id", params).fetchall())
