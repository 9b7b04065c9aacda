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
from toolkit.services.paging import decode_cursor, page_of
from toolkit.services.workspaces import Workspace
from toolkit.store import deliveries as outbox
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
    rows = outbox.due(services.store.read, now, limit, skip, dict(busy or {}), per_workspace)
    return [Delivery(*r) for r in rows]


def claim(
    services: Services,
    owner: str,
    lease_ms: int,
    now: int,
    limit: int,
    skip: Collection[str] = (),
    busy: Mapping[str, int] | None = None,
    per_workspace: int = 8,
) -> list[Delivery]:
    """As :func:`due`, on a store several processes deliver from: each delivery returned is
    leased to ``owner`` for ``lease_ms`` (renewed by its holder while it lives), so no other
    process attempts it meanwhile; :func:`record` with the same ``owner`` gives it back."""

    def job(tx):
        return outbox.claim_due(tx, now, limit, skip, dict(busy or {}), per_workspace, owner, now + lease_ms)

    return [Delivery(*r) for r in services.store.write(job)]


def next_due(services: Services, after: int) -> int | None:
    """When the next delivery falls due, if later than ``after``."""
    return outbox.next_due(services.store.read, after)


def record(
    services: Services,
    outcomes: list[Outcome],
    delays: tuple[int, ...] = RETRY_DELAYS_MS,
    owner: str | None = None,
) -> None:
    """Write what the attempts came to, in one statement. A row changed meanwhile (its
    attempt count moved on) is left alone; with ``owner`` (deliveries taken by
    :func:`claim`) so is a row whose lease ran out and went to another process — only the
    lease holder records an attempt."""
    if not outcomes:
        return
    columns: dict[str, list] = {k: [] for k in outbox.OUTCOME_COLUMNS}
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
        outbox.record(tx, columns, owner)

    services.store.write(job)


def list_deliveries(services: Services, workspace: Workspace, request: m.ListDeliveries) -> dict:
    """The workspace's webhook deliveries in the order they were created, filtered by
    ``status`` and ``executionId``; ``{items, nextCursor, hasMore}``."""
    after = decode_cursor(request.cursor)
    rows = outbox.page(
        services.store.read,
        workspace.workspace_id,
        request.status,
        request.execution_id,
        after,
        request.page_size + 1,  # one more: is there another page?
    )
    rows, next_cursor = page_of(rows, request.page_size)
    return {
        "items": [dict(zip(outbox.VIEW_KEYS, r)) for r in rows],
        "nextCursor": next_cursor,
        "hasMore": next_cursor is not None,
    }


def redrive_deliveries(services: Services, workspace: Workspace, request: m.RedriveDeliveries) -> dict:
    """Dead letters back to ``pending``, due now, with a fresh retry schedule (the attempt
    count carries on). Ids that are not dead letters of this workspace are left alone."""
    ws = workspace.workspace_id

    def job(tx):
        redriven = outbox.redrive(tx, ws, services.clock.now(), request.execution_id, request.event_ids)
        if redriven:
            tx.after_commit(lambda: services.notify(CommitNotice(ws, redriven=True)))
        return redriven

    redriven = services.store.write(job)
    return {"redriven": len(redriven), "eventIds": redriven}


# ---------------------------------------------------------------- operator tools (no workspace credentials)

OPERATOR_DEAD_LETTER = "dead-lettered by an operator"


def outbox_summary(services: Services) -> list[dict]:
    """Per workspace that has deliveries: ``{workspaceId, label, pending, dead, delivered,
    oldestPendingAt}``, the workspaces with the most pending first."""
    keys = ("workspaceId", "label", "pending", "dead", "delivered", "oldestPendingAt")
    return [dict(zip(keys, r)) for r in outbox.summary(services.store.read)]


def dead_letter_outbox(services: Services, workspace_id: str, execution_id: str | None = None) -> int:
    """Every pending delivery of the workspace (or of one of its executions) becomes a dead
    letter, with ``lastError`` saying an operator did it: nothing more is sent, and the
    workspace can still list and redrive them. Returns how many."""
    return services.store.write(
        lambda tx: outbox.dead_letter(tx, workspace_id, execution_id, services.clock.now(), OPERATOR_DEAD_LETTER)
    )


def purge_outbox(services: Services, workspace_id: str, execution_id: str | None = None) -> int:
    """Delete the workspace's undelivered deliveries (pending and dead), or one execution's:
    they are never sent and no longer listed; delivered ones stay as history. Returns how many."""
    return services.store.write(lambda tx: outbox.purge(tx, workspace_id, execution_id))
