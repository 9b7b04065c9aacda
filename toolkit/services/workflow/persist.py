"""Writing one engine transition: the execution row (version-checked), its steps, its new
events and the command that caused them — all inside the caller's transaction."""

from __future__ import annotations

from toolkit.engine import EXTERNAL_TYPES
from toolkit.jsonio import dumps
from toolkit.simulate.records import source_of

BIGINT_MAX = 2 ** 63 - 1


def _step_rows(workspace_id: str, state, version: int, step_ids) -> list[tuple]:
    steps = state.steps
    rows = []
    for step_id in step_ids:
        step = steps[step_id]
        output = step.output
        decision = output.get("decision") if output else None
        rows.append((workspace_id, state.execution_id, version, step.step_id, step.node_id, step.node_type,
                     step.status, step.group_id, step.iteration, step.started_at, step.completed_at,
                     decision if isinstance(decision, str) else None, source_of(step.step_id, steps),
                     dumps(output if output is not None else {})))
    return rows


_STEP_COLUMNS = ("workspace_id", "execution_id", "version", "step_id", "node_id", "node_type", "status", "group_id",
                 "iteration", "started_at", "completed_at", "decision", "source_node_id", "output")
_EVENT_COLUMNS = ("workspace_id", "execution_id", "seq", "event_id", "type", "step_id", "timestamp",
                  "correlation_id", "external", "data")
_COMMAND_COLUMNS = ("workspace_id", "execution_id", "version", "applied_at", "kind", "payload")
_NEW_COLUMNS = ("workspace_id", "execution_id", "definition_id", "definition_version", "correlation_id",
                "idempotency_key", "organization_id", "document_id", "webhook_url", "webhook_secret", "started_at",
                "status", "failure_reason", "completed_at", "cancelled_at", "next_deadline", "state", "version",
                "list_key")
_UPDATE_COLUMNS = ("execution_id", "expected_version", "status", "failure_reason", "completed_at", "cancelled_at",
                   "next_deadline", "state", "version")


def save(tx, workspace_id: str, state, events: list, command: tuple[str, dict], at: int, version: int | None,
         extra: dict | None = None) -> int:
    """Persist a transition (buffered: the writer flushes each table in bulk at commit).
    ``version`` is the execution version the caller loaded (None for a new execution); the
    update only applies if it is still current. Returns the new version."""
    eid = state.execution_id
    new_version = 1 if version is None else version + 1
    deadline = state.next_deadline()
    if deadline is not None and deadline > BIGINT_MAX:
        deadline = BIGINT_MAX  # an slaMs so large it never fires must not overflow the BIGINT column
    common = (state.status, state.failure_reason, state.completed_at, state.cancelled_at, deadline,
              dumps(state.to_dict()))
    if version is None:
        extra = extra or {}
        list_key = tx.execute("SELECT nextval('list_keys')").fetchone()[0]
        tx.append("executions", _NEW_COLUMNS, [(
            workspace_id, eid, state.definition_id, state.definition_version, state.correlation_id,
            state.idempotency_key, extra.get("organization_id"), extra.get("document_id"), extra.get("webhook_url"),
            extra.get("webhook_secret"), state.started_at) + common + (1, list_key)])
    else:
        tx.update("executions", _UPDATE_COLUMNS, (eid, version) + common + (new_version,))
    touched = dict.fromkeys(e.step_id for e in events if e.step_id is not None)
    tx.append("step_versions", _STEP_COLUMNS, _step_rows(workspace_id, state, new_version, touched))
    tx.append("events", _EVENT_COLUMNS, [
        (workspace_id, eid, e.seq, e.event_id, e.type, e.step_id, e.timestamp, e.correlation_id,
         e.type in EXTERNAL_TYPES, dumps(e.data)) for e in events])
    kind, payload = command
    tx.append("commands", _COMMAND_COLUMNS, [(workspace_id, eid, new_version, at, kind, dumps(payload))])
    return new_version
