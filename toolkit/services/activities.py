"""Activity logs: add, get, update, delete (api-v2 §4.15, §4.16; semantics §10).

A record is stored as its JSON (``body``) beside the columns that filters read. Records are
created by ``/v2/activities/add`` and by comments with ``triggerActivities``
(:func:`activity_row`); ``id`` is the client's when given, else generated. Reads are newest
first (creation order, reversed) and page with an opaque token.
"""

from __future__ import annotations

import json

from toolkit.jsonio import dumps
from toolkit.model import activities as m
from toolkit.os_random import token_hex
from toolkit.services.context import Services
from toolkit.services.paging import decode_cursor, encode_cursor, fitting
from toolkit.services.workspaces import Workspace
from toolkit.store import activities as stored
from toolkit.store import sequences

# the fields an update may change (api-v2 §4.15), wire name -> Python attribute
UPDATABLE = {
    "changes": "changes",
    "entityData": "entity_data",
    "entityTargetData": "entity_target_data",
    "displayMessageTemplate": "display_message_template",
    "displayMessageTemplateData": "display_message_template_data",
    "actionIcon": "action_icon",
}


def bulk(message: str, data) -> dict:
    """The result of a non-workflow endpoint: ``{status, message, data}``."""
    return {"status": "success", "message": message, "data": data}


def new_activity_id() -> str:
    return "act_" + token_hex(10)


def activity_rows(
    tx, workspace_id: str, organization_id: str, records: list[dict], now: int, scope: str | None
) -> list[tuple]:
    """Rows for :func:`append_rows`; each record is the wire-form record with its ``id``.
    Adds ``organizationId`` (null without organization), ``createdAt`` and ``lastUpdated``.
    ``scope`` is :func:`page_scope`'s."""
    rows = []
    for seq, record in zip(sequences.next_keys(tx, "activity_seq", len(records), scope), records):
        record = {**record, "organizationId": organization_id or None, "createdAt": now, "lastUpdated": now}
        rows.append(
            (
                workspace_id,
                organization_id,
                record["id"],
                seq,
                record.get("documentId"),
                record.get("targetEntityId"),
                now,
                now,
                dumps(record),
            )
        )
    return rows


def page_scope(services: Services, workspace_id: str, organization_id: str) -> str | None:
    """What pages of records of this organization are read within, when keys must be handed out
    in commit order there (several processes: :mod:`toolkit.store.sequences`); None otherwise."""
    return f"{workspace_id}:{organization_id}" if services.store.shared else None


def append_rows(tx, rows: list[tuple]) -> None:
    stored.append(tx, rows)


def add_activities(services: Services, workspace: Workspace, request: m.AddActivities) -> dict:
    m.unique_ids(request.activities)
    ws, org = workspace.workspace_id, request.organization_id
    items = [(item.id or new_activity_id(), item) for item in request.activities]

    def job(tx):
        tx.flush()  # records added earlier in this commit group must be seen as existing
        existing = stored.bodies(tx.execute, ws, org, [i for i, _ in items])
        now = services.clock.now()
        records, out = [], {}
        for activity_id, item in items:
            if activity_id in existing:
                out[activity_id] = {
                    "success": False,
                    "id": activity_id,
                    "message": f"activity {activity_id} already exists",
                }
                continue
            records.append({**item.dump(), "id": activity_id})  # an explicit "id": null gets one too
            out[activity_id] = {"success": True, "id": activity_id, "message": "activity added"}
        append_rows(tx, activity_rows(tx, ws, org, records, now, page_scope(services, ws, org)))
        return out

    out = services.store.write(job)
    added = sum(1 for v in out.values() if v["success"])
    return bulk(f"{added} of {len(out)} activities added", out)


def get_activities(services: Services, workspace: Workspace, request: m.GetActivities) -> dict:
    """Newest first, a page at a time; one row more than the page tells whether another follows."""
    rows = stored.newest_first(
        services.store.read,
        workspace.workspace_id,
        request.organization_id or "",
        request.document_id,
        request.target_entity_id,
        decode_cursor(request.page_token, "pageToken"),
        request.page_size + 1,
    )
    size = fitting(len(body) for body, _ in rows[: request.page_size])  # PAGE_MAX_BYTES, as stored JSON
    more = len(rows) > size
    rows = rows[:size]
    result = bulk(f"{len(rows)} activities", [json.loads(body) for body, _ in rows])
    result["nextPageToken"] = encode_cursor(rows[-1][1]) if more else None
    return result


def update_activities(services: Services, workspace: Workspace, request: m.UpdateActivities) -> dict:
    """Merge only the fields each item gives; ``lastUpdated`` moves. A missing id is
    ``success: false`` for that item; the call still succeeds."""
    m.unique_ids(request.activities)
    ws, org = workspace.workspace_id, request.organization_id

    def job(tx):
        tx.flush()
        existing = stored.bodies(tx.execute, ws, org, [item.id for item in request.activities])
        now = services.clock.now()
        changed, out = [], {}
        for item in request.activities:
            if item.id not in existing:
                out[item.id] = {"success": False, "message": f"activity {item.id} not found"}
                continue
            given = item.dump()
            record = json.loads(existing[item.id])
            record.update({wire: given[wire] for wire in UPDATABLE if wire in given})
            record["lastUpdated"] = now
            changed.append((item.id, dumps(record)))
            out[item.id] = {"success": True, "message": "activity updated"}
        stored.update_bodies(tx, ws, org, now, changed)
        return out

    out = services.store.write(job)
    updated = sum(1 for v in out.values() if v["success"])
    return bulk(f"{updated} of {len(out)} activities updated", out)


def delete_activities(services: Services, workspace: Workspace, request: m.DeleteActivities) -> dict:
    """Delete the records every given filter matches (filters intersect)."""
    ws, org = workspace.workspace_id, request.organization_id

    def job(tx):
        tx.flush()
        return stored.delete(tx, ws, org, request.document_id, request.target_entity_id, request.activity_ids)

    deleted = services.store.write(job)
    out = {activity_id: {"success": True, "message": "activity deleted"} for activity_id in deleted}
    filtered = request.document_id is not None or request.target_entity_id is not None
    for activity_id in request.activity_ids or ():
        if activity_id not in out:
            out[activity_id] = {
                "success": False,
                "message": f"activity {activity_id} not found"
                + (" among the activities the other filters match" if filtered else ""),
            }
    return bulk(f"{len(deleted)} activities deleted", out)
