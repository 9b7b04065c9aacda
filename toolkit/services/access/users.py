"""Users of organizations, folders and documents: add, update, delete, get (api-v2 §4.3,
§4.4; semantics §8).

A user is a workspace-wide identity (``users``); what she may reach is her memberships
(``memberships``): one row per organization, folder or document she was added to.
"""

from __future__ import annotations

import base64
import json

from toolkit.errors import ApiError, ErrorCode
from toolkit.model.access import AddUsers, DeleteUsers, GetUsers, UpdateUsers
from toolkit.services.access.common import (
    V,
    derive_initial,
    ensure_organizations,
    existing,
    grant,
    item,
    new_internal_id,
    not_found,
    now_ms,
    now_s,
    ok,
    require_scope,
    scope_of,
    upsert_users,
    users_by_id,
)
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace


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
            raise ApiError(ErrorCode.NOT_FOUND, f"document {request.document_id} not found in organization {org} "
                                                "(set createDocument to create it)")
        if request.folder_id is not None and not has_folder and not request.create_folder:
            raise ApiError(ErrorCode.NOT_FOUND, f"folder {request.folder_id} not found in organization {org} "
                                                "(set createFolder to create it)")
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
            tx.execute("INSERT INTO documents (workspace_id, organization_id, document_id, created_at, updated_at) "
                       "VALUES (?, ?, ?, ?, ?)", [ws, org, request.document_id, now, now])
        if request.folder_id is not None and not has_folder:
            tx.execute("INSERT INTO folders (workspace_id, organization_id, folder_id, created_at, updated_at) "
                       "VALUES (?, ?, ?, ?, ?)", [ws, org, request.folder_id, now, now])
        ids = upsert_users(tx, ws, rows, now)
        grant(tx, ws, [(u.user_id, rtype, rid, org, u.access_role, None, ids[u.user_id][1]) for u in request.users],
              now)
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
        members = {r[0] for r in tx.execute(
            f"SELECT user_id FROM memberships WHERE workspace_id = ? AND organization_id = ? AND resource_type = ? "
            f"AND resource_id = ? AND (expires_at IS NULL OR expires_at > ?) AND user_id IN (SELECT {V})",
            [ws, org, rtype, rid, now // 1000, user_ids]).fetchall()}
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
        upsert_users(tx, ws, rows, now)
        if roles:
            tx.execute(
                f"UPDATE memberships SET access_role = r.role, updated_at = ? "
                f"FROM (SELECT {V} AS uid, {V} AS role) r "
                f"WHERE memberships.workspace_id = ? AND memberships.organization_id = ? "
                f"AND memberships.resource_type = ? AND memberships.resource_id = ? AND memberships.user_id = r.uid",
                [now, [u for u, _ in roles], [r for _, r in roles], ws, org, rtype, rid])
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
        scope = "" if whole_org else " AND resource_type = ? AND resource_id = ?"
        removed = {r[0] for r in tx.execute(
            f"DELETE FROM memberships WHERE workspace_id = ? AND organization_id = ?{scope} "
            f"AND user_id IN (SELECT {V}) RETURNING user_id",
            [ws, org, *([] if whole_org else [rtype, rid]), request.user_ids]).fetchall()}
        if whole_org:
            tx.execute(f"DELETE FROM user_group_members WHERE workspace_id = ? AND organization_id = ? "
                       f"AND user_id IN (SELECT {V})", [ws, org, request.user_ids])
        return {u: item(True, f"User removed from {rtype} {rid}.") if u in removed
                else item(False, f"user {u} is not a member of {rtype} {rid}") for u in request.user_ids}

    return ok("Users processed.", services.store.write(job))


# ------------------------------------------------------------------ get users

def get_users(services: Services, workspace: Workspace, request: GetUsers) -> dict:
    """One page of users; every filter given narrows the result (AND).

    The base set is the organization's contact list (organization-level members), or the
    members of the given folder or document, or — with ``allDocuments`` — the document-level
    members of every document of the organization (each user once, or per document with
    ``groupByDocumentId``). ``userIds`` and ``organizationUserGroupIds`` narrow it. Pages
    follow the order users were first created; a page token continues where the last page
    ended, so paging returns everyone exactly once.
    """
    if not workspace.advanced_queries:
        raise ApiError(ErrorCode.FAILED_PRECONDITION, "get users requires the advancedQueries workspace setting; "
                                                      "it is disabled for this workspace")
    ws, org = workspace.workspace_id, request.organization_id
    read = services.store.read
    grouped = request.all_documents and request.group_by_document_id
    mode = "g" if grouped else "u"
    after = _decode_token(request.page_token, mode)

    where = ["m.workspace_id = $ws", "m.organization_id = $org", "(m.expires_at IS NULL OR m.expires_at > $now)"]
    params: dict = {"ws": ws, "org": org, "now": now_s(services), "limit": request.page_size + 1}
    if request.all_documents:
        where.append("m.resource_type = 'document'")
    else:
        rtype, rid = scope_of(org, request.document_id, request.folder_id)
        where += ["m.resource_type = $rtype", "m.resource_id = $rid"]
        params.update(rtype=rtype, rid=rid)
    if request.user_ids is not None:
        where.append("m.user_id IN (SELECT unnest($uids::VARCHAR[]))")
        params["uids"] = request.user_ids
    if request.organization_user_group_ids is not None:
        where.append("m.user_id IN (SELECT user_id FROM user_group_members WHERE workspace_id = $ws "
                     "AND organization_id = $org AND group_id IN (SELECT unnest($gids::VARCHAR[])))")
        params["gids"] = request.organization_user_group_ids
    # The page's keys are a top-N over integers (no strings carried through the sort); the join
    # on `seq` then lets DuckDB push the keys into the users scan, which skips the rest of the
    # table. One statement, one snapshot.
    if grouped:
        if after is not None:
            where.append("(m.resource_id > $after_doc OR (m.resource_id = $after_doc AND m.user_seq > $after_seq))")
            params.update(after_doc=after[0], after_seq=after[1])
        keys = (f"SELECT m.resource_id AS doc, m.user_seq, m.access_role FROM memberships m "
                f"WHERE {' AND '.join(where)} ORDER BY m.resource_id, m.user_seq LIMIT $limit")
        order = "k.doc, k.user_seq"
    else:
        if after is not None:
            where.append("m.user_seq > $after_seq")
            params["after_seq"] = after[0]
        if request.all_documents:  # each user once, whatever the number of their documents
            keys = (f"SELECT NULL AS doc, m.user_seq, NULL AS access_role FROM memberships m "
                    f"WHERE {' AND '.join(where)} GROUP BY m.user_seq ORDER BY m.user_seq LIMIT $limit")
        else:
            keys = (f"SELECT NULL AS doc, m.user_seq, m.access_role FROM memberships m "
                    f"WHERE {' AND '.join(where)} ORDER BY m.user_seq LIMIT $limit")
        order = "k.user_seq"
    rows = read(f"SELECT k.doc, k.user_seq, u.user_id, u.name, u.email, u.initial, k.access_role FROM ({keys}) k "
                f"JOIN users u ON u.workspace_id = $ws AND u.seq = k.user_seq ORDER BY {order}", params).fetchall()
    if not rows:
        require_scope(read, ws, org, request.document_id, request.folder_id)
    more = len(rows) > request.page_size
    rows = rows[: request.page_size]
    token = None
    if more:
        last = rows[-1]
        token = _encode_token(mode, [last[0], last[1]] if grouped else [last[1]])
    if grouped:
        data: dict | list = {}
        for row in rows:
            data.setdefault(row[0], []).append(_user(row))
    elif request.all_documents:
        data = [{"userId": r[2], "name": r[3], "email": r[4], "initial": r[5]} for r in rows]
    else:
        data = [{"userId": r[2], "name": r[3], "email": r[4], "initial": r[5], "accessRole": r[6]} for r in rows]
    return ok("Users retrieved successfully.", data, nextPageToken=token)


def _user(row: tuple) -> dict:
    return {"userId": row[2], "name": row[3], "email": row[4], "initial": row[5], "accessRole": row[6]}


def _encode_token(mode: str, key: list) -> str:
    text = json.dumps([mode, *key], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode_token(token: str | None, mode: str) -> list | None:
    if token is None:
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode())
        if not isinstance(value, list) or not value or value[0] != mode:
            raise ValueError
        key = value[1:]
        if mode == "u" and not (len(key) == 1 and type(key[0]) is int):
            raise ValueError
        if mode == "g" and not (len(key) == 2 and isinstance(key[0], str) and type(key[1]) is int):
            raise ValueError
        return key
    except (ValueError, UnicodeDecodeError, TypeError):
        raise ApiError(ErrorCode.INVALID_ARGUMENT,
                       "data.pageToken: not a page token this API returned for this query") from None
