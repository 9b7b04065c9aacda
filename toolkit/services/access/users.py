"""Users of organizations, folders and documents: add, update, delete (api-v2 §4.3;
semantics §8). Get users is :mod:`.user_pages`.

A user is a workspace-wide identity (``users``); what she may reach is her memberships
(``memberships``): one row per organization, folder or document she was added to.
"""

from __future__ import annotations

from toolkit.errors import ApiError, ErrorCode
from toolkit.model.access import AddUsers, DeleteUsers, UpdateUsers
from toolkit.services.access.common import (
    derive_initial,
    item,
    new_internal_id,
    not_found,
    now_ms,
    ok,
    require_scope,
    scope_of,
)
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace
from toolkit.store.access import ensure_organizations, existing, insert_rows, leave_groups
from toolkit.store.access_members import grant, members_at, remove_members, set_roles, upsert_users, users_by_id


def add_users(services: Services, workspace: Workspace, request: AddUsers) -> dict:
    """Add (or re-add) users to the organization, or to one folder or document of it.

    The organization is created when missing (unless ``createOrganization`` is ``false``); a
    missing document or folder is created only with ``createDocument`` / ``createFolder``,
    else ``NOT_FOUND``. Re-adding a user updates her name, email, initial and role.
    """
    ws, org = workspace.workspace_id, request.organization_id
    rtype, rid = scope_of(org, request.document_id, request.folder_id)

    def job(tx):
        now = now_ms(services)
        has_org, has_doc, has_folder = existing(tx.execute, ws, org, request.document_id, request.folder_id)
        if not has_org and request.create_organization is False:
            raise not_found("organization", org)
        if request.document_id is not None and not has_doc and not request.create_document:
            raise ApiError(
                ErrorCode.NOT_FOUND,
                f"document {request.document_id} not found in organization {org} (set createDocument to create it)",
            )
        if request.folder_id is not None and not has_folder and not request.create_folder:
            raise ApiError(
                ErrorCode.NOT_FOUND,
                f"folder {request.folder_id} not found in organization {org} (set createFolder to create it)",
            )
        known = users_by_id(tx.execute, ws, [u.user_id for u in request.users])
        rows = []
        for u in request.users:
            internal, name, email, initial, _ = known.get(u.user_id, (new_internal_id(), "", "", "", None))
            name = u.name if u.name is not None else name
            email = u.email if u.email is not None else email
            if u.initial is not None:
                initial = u.initial
            elif u.name is not None or not initial:
                initial = derive_initial(name, email, u.user_id)
            rows.append((u.user_id, internal, name, email, initial))
        # Everything is checked: from here on, write.
        ensure_organizations(tx, ws, [org], now)
        if request.document_id is not None and not has_doc:
            insert_rows(tx, "documents", ("document_id",), ws, org, [(request.document_id,)], now)
        if request.folder_id is not None and not has_folder:
            insert_rows(tx, "folders", ("folder_id",), ws, org, [(request.folder_id,)], now)
        ids = upsert_users(tx, ws, rows, now, known)
        grant(
            tx, ws, [(u.user_id, rtype, rid, org, u.access_role, None, ids[u.user_id][1]) for u in request.users], now
        )
        return {u.user_id: item(True, f"User added to {rtype} {rid}.", id=ids[u.user_id][0]) for u in request.users}

    return ok("Users added successfully.", services.store.write(job))


def update_users(services: Services, workspace: Workspace, request: UpdateUsers) -> dict:
    """Change name, email, initial (workspace-wide) and the role at the addressed scope of
    users who are members there; anyone else fails (``success: false``)."""
    ws, org = workspace.workspace_id, request.organization_id
    rtype, rid = scope_of(org, request.document_id, request.folder_id)

    def job(tx):
        now = now_ms(services)
        require_scope(tx.execute, ws, org, request.document_id, request.folder_id)
        user_ids = [u.user_id for u in request.users]
        known = users_by_id(tx.execute, ws, user_ids)
        members = members_at(tx.execute, ws, org, rtype, rid, user_ids, now // 1000)
        results, rows, roles = {}, [], []
        for u in request.users:
            if u.user_id not in known:
                results[u.user_id] = item(False, f"user {u.user_id} not found")
                continue
            internal, name, email, initial, _ = known[u.user_id]
            if u.user_id not in members:
                results[u.user_id] = item(False, f"user {u.user_id} is not a member of {rtype} {rid}", id=internal)
                continue
            name = u.name if u.name is not None else name
            email = u.email if u.email is not None else email
            if u.initial is not None:
                initial = u.initial
            elif u.name is not None:
                initial = derive_initial(name, email, u.user_id)
            rows.append((u.user_id, internal, name, email, initial))
            if u.access_role is not None:
                roles.append((u.user_id, u.access_role))
            results[u.user_id] = item(True, "User updated.", id=internal)
        upsert_users(tx, ws, rows, now, known)
        set_roles(tx, ws, org, rtype, rid, roles, now)
        return results

    return ok("Users processed.", services.store.write(job))


def delete_users(services: Services, workspace: Workspace, request: DeleteUsers) -> dict:
    """Remove users from the organization (every membership they hold in it, organization,
    folder and document level, and its user groups), or from one folder or document of it.
    The user records themselves stay: users are workspace-wide."""
    ws, org = workspace.workspace_id, request.organization_id
    rtype, rid = scope_of(org, request.document_id, request.folder_id)
    whole_org = rtype == "organization"

    def job(tx):
        require_scope(tx.execute, ws, org, request.document_id, request.folder_id)
        removed = remove_members(tx, ws, org, None if whole_org else (rtype, rid), request.user_ids)
        if whole_org:
            leave_groups(tx, ws, org, request.user_ids)
        return {
            u: item(True, f"User removed from {rtype} {rid}.")
            if u in removed
            else item(False, f"user {u} is not a member of {rtype} {rid}")
            for u in request.user_ids
        }

    return ok("Users processed.", services.store.write(job))
