"""Folders, documents and user groups of an organization, and their access state
(api-v2 §2.12, §3 "Access state changes", §4.17, §4.18; semantics §8)."""

from __future__ import annotations

from toolkit.model.access import (
    AddDocuments,
    AddFolders,
    AddUserGroups,
    AddUserGroupUsers,
    UpdateDisabledState,
    UpdateDocumentAccess,
    UpdateFolderAccess,
)
from toolkit.services.access.common import (
    V,
    ensure_organizations,
    existing,
    item,
    not_found,
    now_ms,
    ok,
    require_scope,
    users_by_id,
)
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace


def _ids(read, sql: str, params: list) -> set[str]:
    return {r[0] for r in read(sql, params).fetchall()}


def _present(read, table: str, column: str, workspace_id: str, organization_id: str, ids: list[str]) -> set[str]:
    """Which of ``ids`` already exist in the organization's ``table`` (keyed by ``column``)."""
    return _ids(
        read,
        f"SELECT {column} FROM {table} WHERE workspace_id = ? AND organization_id = ? AND {column} IN (SELECT {V})",
        [workspace_id, organization_id, ids],
    )


def _insert(
    tx, table: str, columns: tuple[str, ...], workspace_id: str, organization_id: str, rows: list[tuple], now: int
) -> None:
    """Insert ``rows`` (values of ``columns``) into the organization's ``table``: one statement."""
    if rows:
        tx.execute(
            f"INSERT INTO {table} (workspace_id, organization_id, {', '.join(columns)}, created_at, "
            f"updated_at) SELECT ?, ?, {', '.join([V] * len(columns))}, ?, ?",
            [workspace_id, organization_id, *[list(c) for c in zip(*rows)], now, now],
        )


def _add_new(
    tx,
    table: str,
    columns: tuple[str, ...],
    workspace_id: str,
    organization_id: str,
    rows: list[tuple],
    known: set[str],
    refused,
    added: str,
    now: int,
) -> dict:
    """Add the organization (when missing) and each row (its id first) that ``refused(row, known)``
    finds nothing wrong with; any other row fails its entry with that reason. ``known`` grows with
    each row accepted, so a later row may name an earlier one (a folder's parent)."""
    results, accepted = {}, []
    for row in rows:
        reason = refused(row, known)
        if reason is None:
            known.add(row[0])
            accepted.append(row)
        results[row[0]] = item(True, added) if reason is None else item(False, reason)
    ensure_organizations(tx, workspace_id, [organization_id], now)
    _insert(tx, table, columns, workspace_id, organization_id, accepted, now)
    return results


# ------------------------------------------------------------------ folders and documents


def add_folders(services: Services, workspace: Workspace, request: AddFolders) -> dict:
    """Create folders, each optionally inside a parent (an existing folder or one created
    earlier in the same request). The organization is created when missing unless
    ``createOrganization`` is ``false``. An existing folder or a missing parent fails its entry."""
    ws, org = workspace.workspace_id, request.organization_id

    def job(tx):
        now = now_ms(services)
        has_org, _, _ = existing(tx.execute, ws, org)
        if not has_org and request.create_organization is False:
            raise not_found("organization", org)
        rows = [(f.folder_id, f.folder_name, f.parent_folder_id) for f in request.folders]
        known = _present(
            tx.execute, "folders", "folder_id", ws, org, [r[0] for r in rows] + [r[2] for r in rows if r[2] is not None]
        )
        return _add_new(
            tx,
            "folders",
            ("folder_id", "folder_name", "parent_folder_id"),
            ws,
            org,
            rows,
            known,
            _folder_refused,
            "Folder added.",
            now,
        )

    return ok("Folders processed.", services.store.write(job))


def add_documents(services: Services, workspace: Workspace, request: AddDocuments) -> dict:
    """Create documents in the organization, optionally inside a folder (which must exist:
    ``NOT_FOUND`` otherwise). An existing document fails its entry."""
    ws, org = workspace.workspace_id, request.organization_id

    def job(tx):
        now = now_ms(services)
        has_org, _, has_folder = existing(tx.execute, ws, org, folder_id=request.folder_id)
        if not has_org and (request.create_organization is False or request.folder_id is not None):
            raise not_found("organization", org)
        if request.folder_id is not None and not has_folder:
            raise not_found("folder", request.folder_id, org)
        rows = [(d.document_id, d.document_name, request.folder_id) for d in request.documents]
        known = _present(tx.execute, "documents", "document_id", ws, org, [r[0] for r in rows])
        return _add_new(
            tx,
            "documents",
            ("document_id", "document_name", "folder_id"),
            ws,
            org,
            rows,
            known,
            _document_refused,
            "Document added.",
            now,
        )

    return ok("Documents processed.", services.store.write(job))


def _folder_refused(row: tuple, known: set[str]) -> str | None:
    folder_id, _, parent = row
    if folder_id in known:
        return f"folder {folder_id} already exists"
    if parent is not None and parent not in known:
        return f"parent folder {parent} not found"
    return None


def _document_refused(row: tuple, known: set[str]) -> str | None:
    return f"document {row[0]} already exists" if row[0] in known else None


def update_folder_access(services: Services, workspace: Workspace, request: UpdateFolderAccess) -> dict:
    """Set each folder's ``accessType`` (default ``public``), or with ``inheritFromParent: true``
    make it inherit its parent's settings (``accessType`` then ignored and shown as null). A
    top-level folder's parent is its organization: inheriting gives it the organization default
    (``organizationPrivate``, organization members by their organization role). A missing
    folder fails its entry."""
    ws, org = workspace.workspace_id, request.organization_id
    inherit = request.inherit_from_parent is True
    access_type = None if inherit else (request.access_type or "public")
    extra = {} if request.inherit_from_parent is None else {"inheritFromParent": inherit}

    def job(tx):
        now = now_ms(services)
        require_scope(tx.execute, ws, org)
        folders = {
            r[0]
            for r in tx.execute(
                f"SELECT folder_id FROM folders WHERE workspace_id = ? AND organization_id = ? "
                f"AND folder_id IN (SELECT {V})",
                [ws, org, request.folder_ids],
            ).fetchall()
        }
        results, changed = {}, []
        for fid in request.folder_ids:
            if fid not in folders:
                results[fid] = item(False, f"folder {fid} not found", accessType=None, **extra)
            else:
                changed.append(fid)
                results[fid] = item(True, "Folder access updated.", accessType=access_type, **extra)
        if changed:
            tx.execute(
                f"UPDATE folders SET access_type = ?, inherit_from_parent = ?, updated_at = ? "
                f"WHERE workspace_id = ? AND organization_id = ? AND folder_id IN (SELECT {V})",
                [access_type, inherit, now, ws, org, changed],
            )
        return results

    return ok("Folder access processed.", services.store.write(job))


def update_document_access(services: Services, workspace: Workspace, request: UpdateDocumentAccess) -> dict:
    """Set each document's ``accessType``; a missing document fails its entry."""
    return _set_documents(
        services,
        workspace,
        request.organization_id,
        request.document_ids,
        "access_type",
        request.access_type,
        "Document access updated.",
        "Document access processed.",
    )


def update_disabled_state(services: Services, workspace: Workspace, request: UpdateDisabledState) -> dict:
    """Disable (no read or write access for anyone) or enable each document."""
    return _set_documents(
        services,
        workspace,
        request.organization_id,
        request.document_ids,
        "disabled",
        request.disabled,
        "Document disabled." if request.disabled else "Document enabled.",
        "Disabled state processed.",
    )


# A document column these endpoints set -> the result field that echoes it.
_DOCUMENT_STATE = {"access_type": "accessType", "disabled": "disabled"}


def _set_documents(
    services: Services,
    workspace: Workspace,
    organization_id: str,
    document_ids: list[str],
    column: str,
    value,
    done: str,
    summary: str,
) -> dict:
    """Set one column of each document in one statement; every entry echoes the value it now
    has (``null`` for a document that does not exist, which fails its entry)."""
    ws, field = workspace.workspace_id, _DOCUMENT_STATE[column]

    def job(tx):
        require_scope(tx.execute, ws, organization_id)
        changed = _ids(
            tx.execute,
            f"UPDATE documents SET {column} = ?, updated_at = ? WHERE workspace_id = ? "
            f"AND organization_id = ? AND document_id IN (SELECT {V}) RETURNING document_id",
            [value, now_ms(services), ws, organization_id, document_ids],
        )
        return {
            d: item(True, done, **{field: value})
            if d in changed
            else item(False, f"document {d} not found", **{field: None})
            for d in document_ids
        }

    return ok(summary, services.store.write(job))


# ------------------------------------------------------------------ user groups


def add_user_groups(services: Services, workspace: Workspace, request: AddUserGroups) -> dict:
    """Create organization user groups; adding an existing group renames it."""
    ws, org = workspace.workspace_id, request.organization_id
    groups = request.organization_user_groups

    def job(tx):
        now = now_ms(services)
        require_scope(tx.execute, ws, org)
        known = _present(tx.execute, "user_groups", "group_id", ws, org, [g.group_id for g in groups])
        tx.execute(
            f"INSERT INTO user_groups (workspace_id, organization_id, group_id, group_name, created_at, "
            f"updated_at) SELECT ?, ?, {V}, {V}, ?, ? "
            f"ON CONFLICT DO UPDATE SET group_name = excluded.group_name, updated_at = excluded.updated_at",
            [ws, org, [g.group_id for g in groups], [g.group_name for g in groups], now, now],
        )
        return {
            g.group_id: item(True, "User group updated." if g.group_id in known else "User group added.")
            for g in groups
        }

    return ok("User groups processed.", services.store.write(job))


def add_user_group_users(services: Services, workspace: Workspace, request: AddUserGroupUsers) -> dict:
    """Add users (known in the workspace) to an organization user group; an unknown user
    fails its entry, a user already in the group succeeds unchanged."""
    ws, org, group = workspace.workspace_id, request.organization_id, request.organization_user_group_id

    def job(tx):
        now = now_ms(services)
        require_scope(tx.execute, ws, org)
        if not tx.execute(
            "SELECT count(*) FROM user_groups WHERE workspace_id = ? AND organization_id = ? AND group_id = ?",
            [ws, org, group],
        ).fetchone()[0]:
            raise not_found("user group", group, org)
        known = users_by_id(tx.execute, ws, request.user_ids)
        members = _ids(
            tx.execute,
            f"SELECT user_id FROM user_group_members WHERE workspace_id = ? "
            f"AND organization_id = ? AND group_id = ? AND user_id IN (SELECT {V})",
            [ws, org, group, request.user_ids],
        )
        new = [u for u in request.user_ids if u in known and u not in members]
        if new:
            tx.execute(
                f"INSERT INTO user_group_members (workspace_id, organization_id, group_id, user_id, created_at) "
                f"SELECT ?, ?, ?, {V}, ?",
                [ws, org, group, new, now],
            )
        return {
            u: item(False, f"user {u} not found")
            if u not in known
            else item(True, "User already in the group." if u in members else "User added to the group.")
            for u in request.user_ids
        }

    return ok("User group members processed.", services.store.write(job))
