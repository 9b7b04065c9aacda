"""What effective access (:mod:`toolkit.services.access.effective`) reads: a document, its
folder chain, and the memberships that may count. Every statement is a ``SELECT``, so a write
job may pass ``tx.execute`` as ``read``."""

from __future__ import annotations

from toolkit.store.seam import Read
from toolkit.store.writer import Row

MAX_FOLDER_DEPTH = 64

_DOCUMENT = (
    "SELECT disabled, access_type, folder_id FROM documents "
    "WHERE workspace_id = ? AND organization_id = ? AND document_id = ?"
)

_CHAIN = """
SELECT depth, folder_id, access_type, inherit_from_parent FROM (
    WITH RECURSIVE chain(depth, folder_id, parent_folder_id, access_type, inherit_from_parent) AS (
        SELECT 0, folder_id, parent_folder_id, access_type, inherit_from_parent FROM folders
        WHERE workspace_id = $ws AND organization_id = $org AND folder_id = $folder
        UNION ALL
        SELECT c.depth + 1, f.folder_id, f.parent_folder_id, f.access_type, f.inherit_from_parent
        FROM chain c JOIN folders f ON f.workspace_id = $ws AND f.organization_id = $org
                                    AND f.folder_id = c.parent_folder_id
        WHERE c.depth < $max_depth
    )
    SELECT * FROM chain
) AS chain ORDER BY depth
"""

_MEMBERSHIPS = """
SELECT user_id, resource_type, resource_id, access_role FROM memberships
WHERE workspace_id = $ws AND organization_id = $org AND user_id IN (SELECT unnest($users::VARCHAR[]))
  AND (expires_at IS NULL OR expires_at > $now)
  AND (resource_type = 'organization'
       OR (resource_type = 'document' AND resource_id = $doc)
       OR (resource_type = 'folder' AND list_contains($folders::VARCHAR[], resource_id))
       OR $any_membership)
"""


def document(read: Read, workspace_id: str, organization_id: str, document_id: str) -> Row | None:
    """``(disabled, access_type, folder_id)`` of the document, or None."""
    return read(_DOCUMENT, [workspace_id, organization_id, document_id]).fetchone()


def folder_chain(read: Read, workspace_id: str, organization_id: str, folder_id: str) -> list[Row]:
    """``(depth, folder_id, access_type, inherit_from_parent)`` of the folder and its
    ancestors, nearest first (at most :data:`MAX_FOLDER_DEPTH` up)."""
    return read(
        _CHAIN, {"ws": workspace_id, "org": organization_id, "folder": folder_id, "max_depth": MAX_FOLDER_DEPTH}
    ).fetchall()


def counted_memberships(
    read: Read,
    workspace_id: str,
    organization_id: str,
    user_ids: list[str],
    now_s: float,
    document_id: str,
    folder_ids: list[str],
    any_membership: bool,
) -> list[Row]:
    """``(user_id, resource_type, resource_id, access_role)`` of the users' live memberships
    of the organization, the document and the folders given (of any resource of the
    organization with ``any_membership``)."""
    return read(
        _MEMBERSHIPS,
        {
            "ws": workspace_id,
            "org": organization_id,
            "users": user_ids,
            "now": now_s,
            "doc": document_id,
            "folders": folder_ids,
            "any_membership": any_membership,
        },
    ).fetchall()
