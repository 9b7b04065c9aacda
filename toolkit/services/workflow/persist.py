"""Writing one engine transition: the execution row with its engine state (version-checked;
the `steps` view reads steps from that state), its new events, their webhook deliveries and
the command that caused them — all inside the caller's transaction."""

from __future__ import annotations

from toolkit.engine import EXTERNAL_TYPES
from toolkit.jsonio import dumps
from toolkit.store import executions
from toolkit.store.executions import BIGINT_MAX
from toolkit.webhooks import payload


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
    # The list keys this write needs (the new execution's, one per outbox row), drawn at once:
    # on PostgreSQL that is one round trip, not one per key.
    external = [e for e in events if e.type in EXTERNAL_TYPES] if webhook_url is not None else []
    keys = tx.next_keys(len(external) + (version is None))
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
        list_key = keys.pop(0)
        executions.insert(
            tx,
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
            + (1, list_key),
        )
    else:
        executions.update(tx, (eid, version) + common + (new_version,))
    executions.append_events(
        tx,
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
    if external:
        executions.append_deliveries(
            tx,
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
                    key,
                )
                for e, key in zip(external, keys, strict=True)
            ],
        )
    kind, body = command
    executions.append_command(tx, (workspace_id, eid, new_version, at, kind, dumps(body)))
    return new_version
