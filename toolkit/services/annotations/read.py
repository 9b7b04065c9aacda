"""Reading comment annotations: get (semantics §9) and count (api-v2 §4.12).

Both answer only what the requesting ``userId`` may see (:mod:`.visibility`); get without a
``userId`` is the trusted server caller and sees everything.

Count is ONE statement (:func:`toolkit.store.annotation_counts.facts_and_tallies`): the facts
that decide the user's access to the requested documents together with the rows of the count summary tables
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
from toolkit.services.annotations.visibility import decide, document_roles
from toolkit.services.context import Services
from toolkit.services.paging import decode_cursor, encode_cursor, fitting
from toolkit.services.workspaces import Workspace
from toolkit.store import annotation_counts
from toolkit.store import annotations as stored


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
    which = stored.Page(annotation_ids=request.annotation_ids, status_ids=request.status_ids)
    if request.user_id is not None:
        now_s = now_seconds(services.clock.now())
        documents = list(document_roles(read, ws, request.user_id, org, documents, now_s))
        if not documents:
            return _page([], None)
        which = which._replace(user_id=request.user_id, now_s=now_s)
    which = which._replace(document_ids=documents)
    after = decode_cursor(request.page_token, "pageToken")
    rows = stored.page(read, ws, org, which, after, request.page_size + 1)
    size = fitting(len(body) for _, body in rows[: request.page_size])  # PAGE_MAX_BYTES, as stored JSON
    more = len(rows) > size
    rows = rows[:size]
    return _page([json.loads(body) for _, body in rows], encode_cursor(rows[-1][0]) if more else None)


def _page(annotations: list[dict], token: str | None) -> dict:
    result = bulk(f"{len(annotations)} comment annotations", annotations)
    result["nextPageToken"] = token
    return result


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
    facts: list[tuple] = []
    tallies: list[tuple] = []
    rows = annotation_counts.facts_and_tallies(
        services.store.read,
        workspace.workspace_id,
        request.user_id,
        org,
        wanted,
        now_seconds(services.clock.now()),
        request.status_ids,
    )
    for row in rows:
        (tallies if row[0] in annotation_counts.TALLY_KINDS else facts).append(row)
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
