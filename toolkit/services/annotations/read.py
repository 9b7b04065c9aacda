"""Reading comment annotations: get (semantics §9) and count (api-v2 §4.12).

Both answer only what the requesting ``userId`` may see (:mod:`.visibility`); get without a
``userId`` is the trusted server caller and sees everything.

Count is ONE statement: the facts that decide the user's access to the requested documents
(:data:`~.visibility.GIVEN_FACTS_SQL`) together with the rows of the count summary tables
(:mod:`.tallies`) for those documents — a few rows per document, however many annotations it
holds — summed in Python for the documents the user may access:

- total  = public + organizationPrivate (when the user is a member of that organization)
  annotations from ``annotation_tallies``, + restricted annotations naming the user
  (``audience``);
- unread = total − the visible annotations the user has seen (authored or marked read:
  ``seen``).
"""

from __future__ import annotations

import json

from toolkit.errors import ApiError, ErrorCode
from toolkit.model import annotations as m
from toolkit.services.annotations.common import bulk, now_seconds, org_key
from toolkit.services.annotations.visibility import (
    GIVEN_FACTS_SQL,
    decide,
    document_roles,
    facts_params,
    visible_sql,
)
from toolkit.services.context import Services
from toolkit.services.paging import decode_cursor, encode_cursor, fitting
from toolkit.services.statements import parsed
from toolkit.services.workspaces import Workspace


def get_annotations(services: Services, workspace: Workspace, request: m.GetAnnotations) -> dict:
    """Stored annotations in creation order, a page at a time."""
    ws, org = workspace.workspace_id, org_key(request.organization_id)
    read = services.store.read
    documents = (
        [request.document_id]
        if request.document_id is not None
        else list(dict.fromkeys(request.document_ids))
        if request.document_ids is not None
        else None
    )
    where = ["a.workspace_id = $ws", "a.organization_id = $org"]
    params: dict = {"ws": ws, "org": org}
    if request.user_id is not None:
        now_s = now_seconds(services.clock.now())
        documents = list(document_roles(read, ws, request.user_id, org, documents, now_s))
        if not documents:
            return _page([], None)
        where.append(visible_sql("a"))
        params.update(user=request.user_id, now=now_s)
    if documents is not None:
        where.append("a.document_id IN (SELECT unnest($docs::VARCHAR[]))")
        params["docs"] = documents
    if request.annotation_ids is not None:
        where.append("a.annotation_id IN (SELECT unnest($ids::VARCHAR[]))")
        params["ids"] = request.annotation_ids
    if request.status_ids is not None:
        where.append("a.status_id IN (SELECT unnest($statuses::VARCHAR[]))")
        params["statuses"] = request.status_ids
    after = decode_cursor(request.page_token, "pageToken")
    if after is not None:
        where.append("a.seq > $after")
        params["after"] = after
    params["limit"] = request.page_size + 1
    rows = read(
        f"SELECT a.seq, a.body FROM annotations a WHERE {' AND '.join(where)} ORDER BY a.seq LIMIT $limit", params
    ).fetchall()
    size = fitting(len(body) for _, body in rows[: request.page_size])  # PAGE_MAX_BYTES, as stored JSON
    more = len(rows) > size
    rows = rows[:size]
    return _page([json.loads(body) for _, body in rows], encode_cursor(rows[-1][0]) if more else None)


def _page(annotations: list[dict], token: str | None) -> dict:
    result = bulk(f"{len(annotations)} comment annotations", annotations)
    result["nextPageToken"] = token
    return result


# The access facts and, in the same statement, every tally row of the requested documents
# for this user: ('tally' | 'user:audience' | 'user:seen', documentId, NULL, visibility type,
# visibility organization, NULL, n) — the status only filters, so it is not sent back.
_COUNT_SQL = (
    GIVEN_FACTS_SQL
    + """
UNION ALL
SELECT 'tally', document_id, NULL, visibility_type, visibility_org, NULL, n FROM annotation_tallies
WHERE workspace_id = $ws AND organization_id = $org AND document_id IN (SELECT unnest($docs::VARCHAR[])){statuses}
UNION ALL
SELECT 'user:' || kind, document_id, NULL, visibility_type, visibility_org, NULL, n FROM annotation_user_tallies
WHERE workspace_id = $ws AND organization_id = $org AND user_id = $user
  AND document_id IN (SELECT unnest($docs::VARCHAR[])){statuses}
"""
)
# Without statusIds the statement has no status condition at all (cheaper than one that is
# always true); with them, $statuses lists them.
COUNT_SQL = _COUNT_SQL.format(statuses="")
COUNT_BY_STATUS_SQL = _COUNT_SQL.format(statuses="\n  AND list_contains($statuses::VARCHAR[], status_id)")

_TALLY_KINDS = frozenset({"tally", "user:audience", "user:seen"})


def count_annotations(services: Services, workspace: Workspace, request: m.CountAnnotations) -> dict:
    """``{documentId: {total, unread}}`` for each requested document: the annotations the user
    may see, and those of them the user neither authored nor read. One statement."""
    if not workspace.advanced_queries:
        raise ApiError(
            ErrorCode.FAILED_PRECONDITION,
            "counting comment annotations needs the advancedQueries workspace setting, which is off for this workspace",
        )
    org = request.organization_id
    wanted = list(dict.fromkeys(request.document_ids))
    params = facts_params(workspace.workspace_id, request.user_id, org, wanted, now_seconds(services.clock.now()))
    if request.status_ids is not None:
        params["statuses"] = request.status_ids
    facts: list[tuple] = []
    tallies: list[tuple] = []
    for row in services.store.read(parsed(COUNT_SQL if request.status_ids is None else COUNT_BY_STATUS_SQL), params):
        (tallies if row[0] in _TALLY_KINDS else facts).append(row)
    access = decide(facts, org)
    total = dict.fromkeys(wanted, 0)
    seen = dict.fromkeys(wanted, 0)
    for kind, document_id, _, visibility_type, visibility_org, _, n in tallies:
        if document_id not in access.roles:
            continue
        if kind == "user:audience":  # restricted annotations naming the user
            total[document_id] += n
        elif visibility_type == "organizationPrivate" and visibility_org not in access.member_orgs:
            continue
        elif kind == "tally":
            total[document_id] += n
        else:  # user:seen
            seen[document_id] += n
    data = {d: {"total": total[d], "unread": total[d] - seen[d]} for d in wanted}
    return bulk("comment annotation counts", data)
