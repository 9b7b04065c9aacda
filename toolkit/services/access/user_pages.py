"""Get users (api-v2 §4.4; semantics §8): one page at a time, every filter combined with AND.

Every membership has a place in its list — the organization's contact list, or the members of
one folder or document: ``list_pos``, handed out 1, 2, 3 … as members are added and never
reused (migration 006). A list is paged by position, so paging returns everyone exactly once,
and a member added while a client pages comes after every page already served.

Speed (``benchmarks/collab_queries.py``): a list's positions are usually dense, so the page
after position ``p`` is the members at positions ``p+1 … p+n+1`` — a plain range scan of one
table, with no sort and no join (each membership carries a copy of its member's name, email
and initial). One more row than the page proves there is a next page. Only when that window
holds fewer live members (some left or expired, or the list ends in it) does the general query
run: the first ``n+1`` positions after ``p``, then their rows.

With ``allDocuments`` there is no single list: the document-level members of every document,
each user once in creation order, or per document (by document id, then position) with
``groupByDocumentId``.
"""

from __future__ import annotations

import base64
import json

from toolkit.errors import ApiError, ErrorCode
from toolkit.limits import MAX_CURSOR_KEY
from toolkit.model.access import GetUsers
from toolkit.services.access.common import now_s, ok, require_scope, scope_of
from toolkit.services.context import Services
from toolkit.services.statements import parsed
from toolkit.services.workspaces import Workspace

# Page tokens name the kind of query they continue: "p" a list ([position]), "d" all documents
# grouped ([document id, position]), "u" all documents once per user ([user seq]).
_KEY_TYPES = {"p": (int,), "d": (str, int), "u": (int,)}

_ROW = "m.list_pos, m.user_id, m.name, m.email, m.initial, m.access_role"
_LIVE = "(m.expires_at IS NULL OR m.expires_at > $now)"
_LIST = "m.workspace_id = $ws AND m.organization_id = $org AND m.resource_type = $rtype AND m.resource_id = $rid"

# The fast path: the window of positions right after the token's.
_WINDOW = f"SELECT {_ROW} FROM memberships m WHERE {_LIST} AND m.list_pos BETWEEN $first AND $last AND {_LIVE}"


def get_users(services: Services, workspace: Workspace, request: GetUsers) -> dict:
    """One page of users, and ``nextPageToken`` (``None`` on the last page).

    The base set is the organization's contact list (organization-level members), or the
    members of the given folder or document, or — with ``allDocuments`` — the document-level
    members of every document of the organization. ``userIds`` and
    ``organizationUserGroupIds`` narrow it; expired memberships are left out.
    """
    if not workspace.advanced_queries:
        raise ApiError(
            ErrorCode.FAILED_PRECONDITION,
            "get users requires the advancedQueries workspace setting; it is disabled for this workspace",
        )
    params: dict = {
        "ws": workspace.workspace_id,
        "org": request.organization_id,
        "now": now_s(services),
        "limit": request.page_size + 1,
    }
    if request.all_documents and request.group_by_document_id:
        rows, data = _grouped(services, request, params)
    elif request.all_documents:
        rows, data = _each_user_once(services, request, params)
    else:
        rows, data = _list_page(services, request, params)
    if not rows:
        require_scope(
            services.store.read, workspace.workspace_id, request.organization_id, request.document_id, request.folder_id
        )
    return ok("Users retrieved successfully.", data, nextPageToken=_next_token(request, rows))


def _filters(request: GetUsers, params: dict, alias: str = "m") -> str:
    """The ``userIds`` and ``organizationUserGroupIds`` conditions, or ''."""
    out = ""
    if request.user_ids is not None:
        out += f" AND {alias}.user_id IN (SELECT unnest($uids::VARCHAR[]))"
        params["uids"] = request.user_ids
    if request.organization_user_group_ids is not None:
        out += (
            f" AND {alias}.user_id IN (SELECT user_id FROM user_group_members WHERE workspace_id = $ws "
            "AND organization_id = $org AND group_id IN (SELECT unnest($gids::VARCHAR[])))"
        )
        params["gids"] = request.organization_user_group_ids
    return out


def _documents_where(request: GetUsers, params: dict) -> str:
    """The live document-level memberships of the organization that the filters admit."""
    return f"m.workspace_id = $ws AND m.organization_id = $org AND m.resource_type = 'document' AND {_LIVE}" + _filters(
        request, params
    )


def _list_page(services: Services, request: GetUsers, params: dict) -> tuple[list, list]:
    read = services.store.read
    rtype, rid = scope_of(request.organization_id, request.document_id, request.folder_id)
    after = _decode_token(request.page_token, "p")
    params.update(rtype=rtype, rid=rid, after=after[0] if after else 0)
    filters = _filters(request, params)
    rows = None
    if not filters:
        params.update(first=params["after"] + 1, last=params["after"] + request.page_size + 1)
        window = read(parsed(_WINDOW), {k: params[k] for k in ("ws", "org", "rtype", "rid", "first", "last", "now")})
        if len(window) == params["limit"]:
            rows = window
    if rows is None:
        # The first `limit` live positions after the token's (integers only), then their rows.
        rows = read(
            parsed(
                f"SELECT {_ROW} FROM memberships m WHERE {_LIST}{filters} AND m.list_pos IN ("
                f"SELECT m.list_pos FROM memberships m WHERE {_LIST} AND m.list_pos > $after AND {_LIVE}{filters} "
                "ORDER BY m.list_pos LIMIT $limit)"
            ),
            {k: v for k, v in params.items() if k not in ("first", "last")},
        )
    rows.sort()
    return rows, [
        {"userId": r[1], "name": r[2], "email": r[3], "initial": r[4], "accessRole": r[5]}
        for r in rows[: request.page_size]
    ]


def _grouped(services: Services, request: GetUsers, params: dict) -> tuple[list, dict]:
    after = _decode_token(request.page_token, "d")
    where = _documents_where(request, params)
    if after is not None:
        where += " AND (m.resource_id > $after_doc OR (m.resource_id = $after_doc AND m.list_pos > $after_pos))"
        params.update(after_doc=after[0], after_pos=after[1])
    rows = services.store.read(
        f"SELECT m.resource_id, {_ROW} FROM memberships m JOIN (SELECT m.resource_id AS doc, m.list_pos AS pos "
        f"FROM memberships m WHERE {where} ORDER BY m.resource_id, m.list_pos LIMIT $limit) k "
        "ON m.resource_id = k.doc AND m.list_pos = k.pos "
        "WHERE m.workspace_id = $ws AND m.organization_id = $org AND m.resource_type = 'document'",
        params,
    )
    rows.sort()
    data: dict = {}
    for r in rows[: request.page_size]:
        data.setdefault(r[0], []).append(
            {"userId": r[2], "name": r[3], "email": r[4], "initial": r[5], "accessRole": r[6]}
        )
    return rows, data


def _each_user_once(services: Services, request: GetUsers, params: dict) -> tuple[list, list]:
    after = _decode_token(request.page_token, "u")
    where = _documents_where(request, params)
    if after is not None:
        where += " AND m.user_seq > $after_seq"
        params["after_seq"] = after[0]
    # A top-N over integers (a user with many documents counts once), then the users' rows.
    rows = services.store.read(
        f"SELECT k.user_seq, u.user_id, u.name, u.email, u.initial FROM (SELECT m.user_seq FROM memberships m "
        f"WHERE {where} GROUP BY m.user_seq ORDER BY m.user_seq LIMIT $limit) k "
        "JOIN users u ON u.workspace_id = $ws AND u.seq = k.user_seq",
        params,
    )
    rows.sort()
    return rows, [{"userId": r[1], "name": r[2], "email": r[3], "initial": r[4]} for r in rows[: request.page_size]]


def _next_token(request: GetUsers, rows: list) -> str | None:
    if len(rows) <= request.page_size:
        return None
    last = rows[request.page_size - 1]
    if not request.all_documents:
        return _encode_token("p", [last[0]])
    if request.group_by_document_id:
        return _encode_token("d", [last[0], last[1]])
    return _encode_token("u", [last[0]])


def _encode_token(kind: str, key: list) -> str:
    text = json.dumps([kind, *key], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _decode_token(token: str | None, kind: str) -> list | None:
    if token is None:
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode())
        if not isinstance(value, list) or not value or value[0] != kind:
            raise ValueError
        key = value[1:]
        if len(key) != len(_KEY_TYPES[kind]) or any(type(v) is not t for v, t in zip(key, _KEY_TYPES[kind])):
            raise ValueError
        if any(type(v) is int and not 0 <= v <= MAX_CURSOR_KEY for v in key):
            raise ValueError  # no position a list holds: the database could not even compare it
        return key
    except (ValueError, UnicodeDecodeError, TypeError):
        raise ApiError(
            ErrorCode.INVALID_ARGUMENT, "data.pageToken: not a page token this API returned for this query"
        ) from None
