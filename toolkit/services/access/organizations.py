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
        wanted = [f.folder_id for f in request.folders] + [f.parent_folder_id for f in request.folders
                                                           if f.parent_folder_id is not None]
        known = _ids(tx.execute, f"SELECT folder_id FROM folders WHERE workspace_id = ? AND organization_id = ? "
                                 f"AND folder_id IN (SELECT {V})", [ws, org, wanted])
        results, rows = {}, []
        for f in request.folders:
            if f.folder_id in known:
                results[f.folder_id] = item(False, f"folder {f.folder_id} already exists")
            elif f.parent_folder_id is not None and f.parent_folder_id not in known:
                results[f.folder_id] = item(False, f"parent folder {f.parent_folder_id} not found")
            else:
                known.add(f.folder_id)
                rows.append((f.folder_id, f.folder_name, f.parent_folder_id))
                results[f.folder_id] = item(True, "Folder added.")
        ensure_organizations(tx, ws, [org], now)
        if rows:
            cols = [list(c) for c in zip(*rows)]
            tx.execute(f"INSERT INTO folders (workspace_id, organization_id, folder_id, folder_name, parent_folder_id, "
                       f"created_at, updated_at) SELECT ?, ?, {V}, {V}, {V}, ?, ?",
                       [ws, org, *cols, now, now])
        return results

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
        ids = [d.document_id for d in request.documents]
        known = _ids(tx.execute, f"SELECT document_id FROM documents WHERE workspace_id = ? AND organization_id = ? "
                                 f"AND document_id IN (SELECT {V})", [ws, org, ids])
        results, rows = {}, []
        for d in request.documents:
            if d.document_id in known:
                results[d.document_id] = item(False, f"document {d.document_id} already exists")
            else:
                rows.append((d.document_id, d.document_name))
                results[d.document_id] = item(True, "Document added.")
        ensure_organizations(tx, ws, [org], now)
        if rows:
            cols = [list(c) for c in zip(*rows)]
            tx.execute(f"INSERT INTO documents (workspace_id, organization_id, document_id, document_name, folder_id, "
                       f"created_at, updated_at) SELECT ?, ?, {V}, {V}, ?, ?, ?",
                       [ws, org, *cols, request.folder_id, now, now])
        return results

    return ok("Documents processed.", services.store.write(job))


def update_folder_access(services: Services, workspace: Workspace, request: UpdateFolderAccess) -> dict:
    """Set each folder's ``accessType`` (default ``public``), or with ``inheritFromParent: true``
    make it inherit its parent's settings (``accessType`` then ignored and shown as null). A
    missing folder, or a top-level folder asked to inherit, fails its entry."""
    ws, org = workspace.workspace_id, request.organization_id
    inherit = request.inherit_from_parent is True
    access_type = None if inherit else (request.access_type or "public")
    extra = {} if request.inherit_from_parent is None else {"inheritFromParent": inherit}

    def job(tx):
        now = now_ms(services)
        require_scope(tx.execute, ws, org)
        folders = {r[0]: r[1] for r in tx.execute(
            f"SELECT folder_id, parent_folder_id FROM folders WHERE workspace_id = ? AND organization_id = ? "
            f"AND folder_id IN (SELECT {V})", [ws, org, request.folder_ids]).fetchall()}
        results, changed = {}, []
        for fid in request.folder_ids:
            if fid not in folders:
                results[fid] = item(False, f"folder {fid} not found", accessType=None, **extra)
            elif inherit and folders[fid] is None:
                results[fid] = item(False, f"folder {fid} has no parent folder to inherit from", accessType=None,
                                    **extra)
            else:
                changed.append(fid)
                results[fid] = item(True, "Folder access updated.", accessType=access_type, **extra)
        if changed:
            tx.execute(f"UPDATE folders SET access_type = ?, inherit_from_parent = ?, updated_at = ? "
                       f"WHERE workspace_id = ? AND organization_id = ? AND folder_id IN (SELECT {V})",
                       [access_type, inherit, now, ws, org, changed])
        return results

    return ok("Folder access processed.", services.store.write(job))


def update_document_access(services: Services, workspace: Workspace, request: UpdateDocumentAccess) -> dict:
    """Set each document's ``accessType``; a missing document fails its entry."""
    ws, org = workspace.workspace_id, request.organization_id

    def job(tx):
        require_scope(tx.execute, ws, org)
        done = _ids(tx.execute, f"UPDATE documents SET access_type = ?, updated_at = ? WHERE workspace_id = ? "
                                f"AND organization_id = ? AND document_id IN (SELECT {V}) RETURNING document_id",
                    [request.access_type, now_ms(services), ws, org, request.document_ids])
        return {d: item(True, "Document access updated.", accessType=request.access_type) if d in done
                else item(False, f"document {d} not found", accessType=None) for d in request.document_ids}

    return ok("Document access processed.", services.store.write(job))


def update_disabled_state(services: Services, workspace: Workspace, request: UpdateDisabledState) -> dict:
    """Disable (no read or write access for anyone) or enable each document."""
    ws, org = workspace.workspace_id, request.organization_id

    def job(tx):
        require_scope(tx.execute, ws, org)
        done = _ids(tx.execute, f"UPDATE documents SET disabled = ?, updated_at = ? WHERE workspace_id = ? "
                                f"AND organization_id = ? AND document_id IN (SELECT {V}) RETURNING document_id",
                    [request.disabled, now_ms(services), ws, org, request.document_ids])
        return {d: item(True, "Document disabled." if request.disabled else "Document enabled.",
                        disabled=request.disabled) if d in done
                else item(False, f"document {d} not found", disabled=None) for d in request.document_ids}

    return ok("Disabled state processed.", services.store.write(job))


# ------------------------------------------------------------------ user groups

def add_user_groups(services: Services, workspace: Workspace, request: AddUserGroups) -> dict:
    """Create organization user groups; adding an existing group renames it."""
    ws, org = workspace.workspace_id, request.organization_id
    groups = request.organization_user_groups

    def job(tx):
        now = now_ms(services)
        require_scope(tx.execute, ws, org)
        known = _ids(tx.execute, f"SELECT group_id FROM user_groups WHERE workspace_id = ? AND organization_id = ? "
                                 f"AND group_id IN (SELECT {V})", [ws, org, [g.group_id for g in groups]])
        tx.execute(f"INSERT INTO user_groups (workspace_id, organization_id, group_id, group_name, created_at, "
                   f"updated_at) SELECT ?, ?, {V}, {V}, ?, ? "
                   f"ON CONFLICT DO UPDATE SET group_name = excluded.group_name, updated_at = excluded.updated_at",
                   [ws, org, [g.group_id for g in groups], [g.group_name for g in groups], now, now])
        return {g.group_id: item(True, "User group updated." if g.group_id in known else "User group added.")
                for g in groups}

    return ok("User groups processed.", services.store.write(job))


def add_user_group_users(services: Services, workspace: Workspace, request: AddUserGroupUsers) -> dict:
    """Add users (known in the workspace) to an organization user group; an unknown user
    fails its entry, a user already in the group succeeds unchanged."""
    ws, org, group = workspace.workspace_id, request.organization_id, request.organization_user_group_id

    def job(tx):
        now = now_ms(services)
        require_scope(tx.execute, ws, org)
        if not tx.execute("SELECT count(*) FROM user_groups WHERE workspace_id = ? AND organization_id = ? "
                          "AND group_id = ?", [ws, org, group]).fetchone()[0]:
            raise not_found("user group", group, org)
        known = users_by_id(tx.execute, ws, request.user_ids)
        members = _ids(tx.execute, f"SELECT user_id FROM user_group_members WHERE workspace_id = ? "
                                   f"AND organization_id = ? AND group_id = ? AND user_id IN (SELECT {V})",
                       [ws, org, group, request.user_ids])
        new = [u for u in request.user_ids if u in known and u not in members]
        if new:
            tx.execute(f"INSERT INTO user_group_members (workspace_id, organization_id, group_id, user_id, created_at) "
                       f"SELECT ?, ?, ?, {V}, ?", [ws, org, group, new, now])
        return {u: item(False, f"user {u} not found") if u not in known
                else item(True, "User already in the group." if u in members else "User added to the group.")
                for u in request.user_ids}

    return ok("User group members processed.", services.store.write(job))
