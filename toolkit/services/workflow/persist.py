"""Writing one engine transition: the execution row with its engine state (version-checked;
the `steps` view reads steps from that state), its new events, their webhook deliveries and
the command that caused them — all inside the caller's transaction."""

from __future__ import annotations

from toolkit.engine import EXTERNAL_TYPES
from toolkit.jsonio import dumps
from toolkit.webhooks import payload

BIGINT_MAX = 2**63 - 1


_EVENT_COLUMNS = (
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
_COMMAND_COLUMNS = ("workspace_id", "execution_id", "version", "applied_at", "kind", "payload")
_NEW_COLUMNS = (
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
_OUTBOX_COLUMNS = (
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
_UPDATE_COLUMNS = (
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


# DuckDB looks a row up through an index only when the key's equality is the whole filter; any
# other condition beside it turns the lookup into a scan of the table, whose cost grows with
# every execution ever stored. So: find by id alone, and check the workspace in Python (or, for
# events, behind a materialised CTE the optimiser does not push the other conditions into).
BY_EXECUTION_ID = "SELECT {columns} FROM executions WHERE execution_id = ?"


def save(
    tx,
    workspace_id: str,
    state,
    events: list,
    command: tuple[str, dict],
    at: int,
    version: int | None,
    extra: dict | None = None,
    webhook_url: str | None = None,
) -> int:
    """Persist a transition (buffered: the writer flushes each table in bulk at commit).
    ``version`` is the execution version the caller loaded (None for a new execution); the
    update only applies if it is still current. With a ``webhook_url``, each external event
    also gets a pending delivery, due at once. Returns the new version."""
    eid = state.execution_id
    new_version = 1 if version is None else version + 1
    deadline = state.next_deadline()
    if deadline is not None and deadline > BIGINT_MAX:
        deadline = BIGINT_MAX  # an slaMs so large it never fires must not overflow the BIGINT column
    common = (
        state.status,
        state.failure_reason,
        state.completed_at,
        state.cancelled_at,
        deadline,
        dumps(state.to_dict()),
    )
    if version is None:
        extra = extra or {}
        list_key = tx.next_key()
        tx.append(
            "executions",
            _NEW_COLUMNS,
            [
                (
                    workspace_id,
                    eid,
                    state.definition_id,
                    state.definition_version,
                    state.correlation_id,
                    state.idempotency_key,
                    extra.get("organization_id"),
                    extra.get("document_id"),
                    extra.get("webhook_url"),
                    extra.get("webhook_secret"),
                    state.started_at,
                )
                + common
                + (1, list_key)
            ],
        )
    else:
        tx.update("executions", _UPDATE_COLUMNS, (eid, version) + common + (new_version,))
    tx.append(
        "events",
        _EVENT_COLUMNS,
        [
            (
                workspace_id,
                eid,
                e.seq,
                e.event_id,
                e.type,
                e.step_id,
                e.timestamp,
                e.correlation_id,
                e.type in EXTERNAL_TYPES,
                dumps(e.data),
            )
            for e in events
        ],
    )
    if webhook_url is not None:
        tx.append(
            "outbox",
            _OUTBOX_COLUMNS,
            [
                (
                    e.event_id,
                    workspace_id,
                    eid,
                    e.seq,
                    webhook_url,
                    payload(e, state.definition_id),
                    "pending",
                    0,
                    0,
                    at,
                    at,
                    tx.next_key(),
                )
                for e in events
                if e.type in EXTERNAL_TYPES
            ],
        )
    kind, body = command
    tx.append("commands", _COMMAND_COLUMNS, [(workspace_id, eid, new_version, at, kind, dumps(body))])
    return new_version
