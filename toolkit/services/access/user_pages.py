"""Get users (api-v2 §4.4; semantics §8): one page at a time, every filter combined with AND.

A list (the organization's contact list, or the members of one folder or document) is paged by
each member's position in it, so paging returns everyone exactly once, and a member added
while a client pages comes after every page already served (:mod:`toolkit.store.access_pages`).
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
from toolkit.services.workspaces import Workspace
from toolkit.store.access_pages import Page, grouped_page, list_page, users_once_page

# Page tokens name the kind of query they continue: "p" a list ([position]), "d" all documents
# grouped ([document id, position]), "u" all documents once per user ([user seq]).
_KEY_TYPES = {"p": (int,), "d": (str, int), "u": (int,)}


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
    page = Page(
        workspace.workspace_id,
        request.organization_id,
        now_s(services),
        request.page_size + 1,
        request.user_ids,
        request.organization_user_group_ids,
    )
    read = services.store.read
    if request.all_documents and request.group_by_document_id:
        after = _decode_token(request.page_token, "d")
        rows = grouped_page(read, page, None if after is None else (after[0], after[1]))
        data: list | dict = _by_document(rows[: request.page_size])
    elif request.all_documents:
        after = _decode_token(request.page_token, "u")
        rows = users_once_page(read, page, None if after is None else after[0])
        data = [{"userId": r[1], "name": r[2], "email": r[3], "initial": r[4]} for r in rows[: request.page_size]]
    else:
        after = _decode_token(request.page_token, "p")
        rtype, rid = scope_of(request.organization_id, request.document_id, request.folder_id)
        rows = list_page(read, page, rtype, rid, after[0] if after else 0)
        data = [
            {"userId": r[1], "name": r[2], "email": r[3], "initial": r[4], "accessRole": r[5]}
            for r in rows[: request.page_size]
        ]
    if not rows:
        require_scope(
            services.store.read, workspace.workspace_id, request.organization_id, request.document_id, request.folder_id
        )
    return ok("Users retrieved successfully.", data, nextPageToken=_next_token(request, rows))


def _by_document(rows: list[tuple]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(
            {"userId": r[2], "name": r[3], "email": r[4], "initial": r[5], "accessRole": r[6]}
        )
    return out


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
