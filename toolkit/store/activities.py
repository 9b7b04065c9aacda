"""Activity records (migration 003): the statements of the activities area.

A record is stored as its JSON (``body``) beside the columns that filters read; ``seq``
(from ``activity_seq``) is its creation order. The logic — ids, merging updates, paging
tokens — is :mod:`toolkit.services.activities`; these functions take ``read``
(``store.read`` or ``tx.execute``) or the write job's ``tx``.
"""

from __future__ import annotations

from toolkit.store.seam import Read, Writes
from toolkit.store.writer import Row

COLUMNS = (
    "workspace_id",
    "organization_id",
    "activity_id",
    "seq",
    "document_id",
    "target_entity_id",
    "created_at",
    "last_updated",
    "body",
)


def append(tx: Writes, rows: list[Row]) -> None:
    """Insert rows of :data:`COLUMNS` (buffered: written with the job's other inserts)."""
    tx.append("activities", COLUMNS, rows)


def bodies(read: Read, workspace_id: str, organization_id: str, ids: list[str]) -> dict[str, str]:
    """``{activity id: stored JSON}`` of those of ``ids`` that exist."""
    rows = read(
        "SELECT activity_id, body FROM activities WHERE workspace_id = ? AND organization_id = ? "
        "AND activity_id IN (SELECT unnest(?::VARCHAR[]))",
        [workspace_id, organization_id, ids],
    )
    return dict(rows.fetchall())


def newest_first(
    read: Read,
    workspace_id: str,
    organization_id: str,
    document_id: str | None,
    target_entity_id: str | None,
    before: int | None,
    limit: int,
) -> list[tuple[str, int]]:
    """Up to ``limit`` records ``(body, seq)``, newest first, older than ``before`` when given;
    ``document_id`` and ``target_entity_id`` filter when given."""
    where, params = _filters(workspace_id, organization_id, document_id, target_entity_id)
    if before is not None:
        where.append("seq < ?")
        params.append(before)
    return read(
        f"SELECT body, seq FROM activities WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT ?", [*params, limit]
    ).fetchall()


def update_bodies(
    tx: Writes, workspace_id: str, organization_id: str, now: int, changed: list[tuple[str, str]]
) -> None:
    """Replace the bodies of ``changed`` ``(activity id, JSON)`` and stamp ``last_updated``: one statement."""
    if changed:
        tx.execute(
            "UPDATE activities SET body = c.body, last_updated = ? FROM (SELECT "
            "unnest(?::VARCHAR[]) AS activity_id, unnest(?::VARCHAR[]) AS body) c "
            "WHERE activities.workspace_id = ? AND activities.organization_id = ? "
            "AND activities.activity_id = c.activity_id",
            [now, [c[0] for c in changed], [c[1] for c in changed], workspace_id, organization_id],
        )


def delete(
    tx: Writes,
    workspace_id: str,
    organization_id: str,
    document_id: str | None,
    target_entity_id: str | None,
    activity_ids: list[str] | None,
) -> list[str]:
    """Delete the records every given filter matches (filters intersect); their ids."""
    where, params = _filters(workspace_id, organization_id, document_id, target_entity_id)
    if activity_ids is not None:
        where.append("activity_id IN (SELECT unnest(?::VARCHAR[]))")
        params.append(activity_ids)
    return [
        r[0] for r in tx.execute(f"DELETE FROM activities WHERE {' AND '.join(where)} RETURNING activity_id", params)
    ]


def _filters(
    workspace_id: str, organization_id: str, document_id: str | None, target_entity_id: str | None
) -> tuple[list[str], list[object]]:
    where = ["workspace_id = ?", "organization_id = ?"]
    params: list[object] = [workspace_id, organization_id]
    for column, value in (("document_id", document_id), ("target_entity_id", target_entity_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    return where, params
