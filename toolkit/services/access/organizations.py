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
from toolkit.services.access.common import item, not_found, now_ms, ok, require_scope
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace
from toolkit.store.access import (
    add_group_members,
    ensure_organizations,
    existing,
    group_members,
    insert_rows,
    present,
    set_documents,
    set_folder_access,
    upsert_user_groups,
)
from toolkit.store.access_members import users_by_id


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
    insert_rows(tx, table, columns, workspace_id, organization_id, accepted, now)
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
        known = present(tx.execute, "folders", ws, org, [r[0] for r in rows] + [r[2] for r in rows if r[2] is not None])
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
        known = present(tx.execute, "documents", ws, org, [r[0] for r in rows])
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
        folders = present(tx.execute, "folders", ws, org, request.folder_ids)
        results, changed = {}, []
        for fid in request.folder_ids:
            if fid not in folders:
                results[fid] = item(False, f"folder {fid} not found", accessType=None, **extra)
            else:
                changed.append(fid)
                results[fid] = item(True, "Folder access updated.", accessType=access_type, **extra)
        if changed:
            set_folder_access(tx, ws, org, changed, access_type, inherit, now)
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
        changed = set_documents(tx, ws, organization_id, document_ids, column, value, now_ms(services))
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
        known = present(tx.execute, "user_groups", ws, org, [g.group_id for g in groups])
        upsert_user_groups(tx, ws, org, [(g.group_id, g.group_name) for g in groups], now)
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
        if not present(tx.execute, "user_groups", ws, org, [group]):
            raise not_found("user group", group, org)
        known = users_by_id(tx.execute, ws, request.user_ids)
        members = group_members(tx.execute, ws, org, group, request.user_ids)
        add_group_members(tx, ws, org, group, [u for u in request.user_ids if u in known and u not in members], now)
        return {
            u: item(False, f"user {u} not found")
            if u not in known
            else item(True, "User already in the group." if u in members else "User added to the group.")
            for u in request.user_ids
        }

    return ok("User group members processed.", services.store.write(job))
