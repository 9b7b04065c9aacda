"""Adding, deleting and marking comment annotations read (api-v2 §4.13, §4.14; semantics §9).

Each request is one job on the writer: every check that can fail the whole request runs
before anything is written, per-item failures are answered in the result map, and the rows
go in with one bulk insert per table.
"""

from __future__ import annotations

import copy
from collections import Counter

from toolkit.errors import ApiError, ErrorCode
from toolkit.jsonio import dumps
from toolkit.model import annotations as m
from toolkit.os_random import token_hex
from toolkit.services import activities
from toolkit.services.annotations import tallies
from toolkit.services.annotations.common import bulk, describe, now_seconds, org_key, require_document
from toolkit.services.annotations.tallies import Counted
from toolkit.services.annotations.urls import normalise_page_url, page_urls
from toolkit.services.annotations.visibility import effective_roles
from toolkit.services.context import Services
from toolkit.services.workspaces import Workspace
from toolkit.store import annotation_counts, sequences
from toolkit.store import annotations as stored

DEFAULT_STATUS = {"id": "OPEN", "name": "Open", "type": "default"}


def new_annotation_id() -> str:
    return "ann_" + token_hex(10)


def comment_ids(annotation: m.CommentAnnotation) -> list[int]:
    """Each comment's id, in order: the client's where given; the others count up from the
    largest given id, so ids are unique within the annotation.

    >>> a = m.CommentAnnotation.model_validate({"commentData": [{"commentText": "a"}, {"commentId": 7}, {}]})
    >>> comment_ids(a)
    [8, 7, 9]
    """
    following = max((c.comment_id for c in annotation.comment_data if c.comment_id is not None), default=0) + 1
    ids = []
    for comment in annotation.comment_data:
        if comment.comment_id is not None:
            ids.append(comment.comment_id)
        else:
            ids.append(following)
            following += 1
    return ids


class _Item:
    """One annotation of an add request, ready to store."""

    __slots__ = ("annotation_id", "model", "body", "comment_ids", "authors")

    def __init__(self, model: m.CommentAnnotation, raw: dict, organization_id: str, document_id: str, now: int):
        self.model = model
        self.annotation_id = model.annotation_id or new_annotation_id()
        self.comment_ids = comment_ids(model)
        self.authors = list(
            dict.fromkeys(
                c.from_.user_id for c in model.comment_data if c.from_ is not None and c.from_.user_id is not None
            )
        )
        # An explicit null is the same as leaving the time out: the server stamps it.
        created = now if raw.get("createdAt") is None else raw["createdAt"]
        body = {
            **copy.deepcopy(raw),
            "annotationId": self.annotation_id,  # after the raw fields: an explicit null is given an id too
            "documentId": document_id,
            "organizationId": organization_id or None,
            "createdAt": created,
            "lastUpdated": created if raw.get("lastUpdated") is None else raw["lastUpdated"],
        }
        if body.get("status") is None:  # left out or null: the default status, as the views promise
            body["status"] = dict(DEFAULT_STATUS)
        for comment, comment_id in zip(body["commentData"], self.comment_ids):
            comment["commentId"] = comment_id
            if comment.get("createdAt") is None:
                comment["createdAt"] = created
            if comment.get("lastUpdated") is None:
                comment["lastUpdated"] = comment["createdAt"]
        self.body = body

    def counted(self, organization_id: str, document_id: str) -> Counted:
        status, vis = self.model.status, self.model.visibility
        vis_type = vis.type if vis is not None else "public"
        return Counted(
            document_id,
            status.id if status is not None else DEFAULT_STATUS["id"],
            vis_type,
            (vis.organization_id or organization_id) if vis is not None and vis_type == "organizationPrivate" else None,
            vis.user_ids if vis is not None and vis_type == "restricted" else None,
        )

    def row(self, workspace_id: str, organization_id: str, document_id: str, seq: int) -> tuple:
        """The stored row, in the order of :data:`toolkit.store.annotations.COLUMNS`."""
        a = self.model
        counted = self.counted(organization_id, document_id)
        agents = [c.agent for c in a.comment_data if c.agent is not None]
        return (
            workspace_id,
            organization_id,
            document_id,
            self.annotation_id,
            seq,
            counted.status_id,
            a.status.type if a.status is not None else DEFAULT_STATUS["type"],
            counted.visibility_type,
            counted.visibility_org,
            counted.visibility_users,
            self.authors,
            a.location.id if a.location is not None else None,
            list(dict.fromkeys(g.agent_id for g in agents if g.agent_id is not None)),
            page_urls([g.url for g in agents if g.url is not None]),
            bool(agents),
            a.suggestion is not None,
            self.body["createdAt"],
            self.body["lastUpdated"],
            dumps(self.body),
        )

    def activity_records(self, document_id: str) -> list[dict]:
        """An activity per comment with ``triggerActivities: true`` (semantics §9)."""
        records = []
        for comment, kept in zip(self.model.comment_data, self.body["commentData"]):
            if comment.trigger_activities:
                record: dict[str, object] = {
                    "id": activities.new_activity_id(),
                    "documentId": document_id,
                    "targetEntityId": self.annotation_id,
                    "featureType": "comment",
                    "actionType": "comment.add",
                }
                if "from" in kept:
                    record["actionUser"] = kept["from"]
                record["entityData"] = {"annotationId": self.annotation_id, **kept}
                records.append(record)
        return records


def _ensure_document(services, tx, workspace_id: str, request: m.AddAnnotations, org: str) -> None:
    """Check (and with the create flags, create) the organization and the document.
    Raises NOT_FOUND before writing anything."""
    document_id = request.document_id
    org_missing = bool(org) and not stored.organization_exists(tx.execute, workspace_id, org)
    if org_missing and not request.create_organization:
        raise ApiError(
            ErrorCode.NOT_FOUND, f"organization {org} not found (send createOrganization: true to create it)"
        )
    doc_missing = org_missing or not stored.document_exists(tx.execute, workspace_id, org, document_id)
    if doc_missing and not request.create_document:
        raise ApiError(
            ErrorCode.NOT_FOUND,
            f"{describe(org, document_id)} not found (send createDocument: true "
            "to create it" + ("" if org else ", or give its organizationId") + ")",
        )
    now = services.clock.now()
    if org_missing:
        stored.create_organization(tx, workspace_id, org, now)
    if doc_missing:
        stored.create_document(tx, workspace_id, org, document_id, now)


def add_annotations(services: Services, workspace: Workspace, data: dict) -> dict:
    request = m.validate_add(data)
    ws, org, document_id = workspace.workspace_id, org_key(request.organization_id), request.document_id
    raws = data["commentAnnotations"]

    def job(tx):
        tx.flush()  # annotations added earlier in this commit group count as existing
        _ensure_document(services, tx, ws, request, org)
        now = services.clock.now()
        items = [_Item(a, raw, org, document_id, now) for a, raw in zip(request.comment_annotations, raws)]
        existing = stored.existing(tx.execute, ws, org, document_id, [i.annotation_id for i in items])
        editors: dict[str, bool] = {}
        if request.verify_user_permissions:
            authors = [u for i in items for u in i.authors]
            roles = effective_roles(tx.execute, ws, authors, document_id, org, now_seconds(now))
            editors = {user_id: role == "editor" for user_id, role in roles.items()}
        out, added = {}, []
        for item in items:
            denied = [u for u in item.authors if not editors.get(u, True)]
            if item.annotation_id in existing:
                message, ok = f"annotation {item.annotation_id} already exists in this document", False
            elif denied:
                message, ok = (f"user {denied[0]} does not have editor access to {describe(org, document_id)}", False)
            else:
                message, ok = "annotation added", True
                added.append(item)
            out[item.annotation_id] = {
                "success": ok,
                "annotationId": item.annotation_id,
                "commentIds": item.comment_ids if ok else [],
                "message": message,
            }
        if added:
            scope = activities.page_scope(services, ws, org)
            seqs = sequences.next_keys(tx, "annotation_seq", len(added), scope)
            stored.append(
                tx,
                [i.row(ws, org, document_id, s) for i, s in zip(added, seqs)],
                # the authors have seen their own annotations; the count tallies follow
                [(ws, org, document_id, i.annotation_id, u, "authored", now) for i in added for u in i.authors],
            )
            doc_tally, user_tally = Counter(), Counter()
            counted = [(i.counted(org, document_id), i) for i in added]
            tallies.annotation_deltas((c for c, _ in counted), 1, doc_tally, user_tally)
            tallies.seen_deltas(((c, u) for c, i in counted for u in i.authors), 1, user_tally)
            annotation_counts.apply(tx, ws, org, doc_tally, user_tally)
            records = [r for i in added for r in i.activity_records(document_id)]
            activities.append_rows(tx, activities.activity_rows(tx, ws, org, records, now, scope))
        return out

    out = services.store.write(job)
    added = sum(1 for v in out.values() if v["success"])
    return bulk(f"{added} of {len(out)} comment annotations added", out)


# ---------------------------------------------------------------- delete


def delete_annotations(services: Services, workspace: Workspace, request: m.DeleteAnnotations) -> dict:
    """Delete what every given filter matches (filters intersect); no filter at all deletes
    every annotation of the document (semantics §9)."""
    pages = None
    if request.agent_urls is not None:
        pages = page_urls(request.agent_urls)
        if not pages:
            raise ApiError(
                ErrorCode.INVALID_ARGUMENT,
                "data.agentUrls: no entry is a page URL (absolute http or "
                "https, not blank or fragment-only); nothing was deleted",
            )
    if request.uses_agent_filters and not workspace.advanced_queries:
        raise ApiError(
            ErrorCode.NOT_FOUND,
            "agent filters (agentId, agentSuggestions, agentUrls) need the "
            "advancedQueries workspace setting; nothing was deleted",
        )
    ws, org, document_id = workspace.workspace_id, org_key(request.organization_id), request.document_id
    match = stored.Match(
        request.annotation_ids,
        request.location_ids,
        request.user_ids,
        request.agent_id,
        bool(request.agent_suggestions),
        pages,
    )

    def job(tx):
        tx.flush()
        require_document(tx.execute, ws, org, document_id)
        rows = stored.delete(tx, ws, org, document_id, match)
        deleted = [r[0] for r in rows]
        missing = [a for a in request.annotation_ids or () if a not in set(deleted)]
        present = set()
        if missing and len(match.sql()[0]) > 1:  # tell "absent" from "not matched by the other filters"
            present = stored.existing(tx.execute, ws, org, document_id, missing)
        if deleted:
            counted = {r[0]: Counted(document_id, *r[1:]) for r in rows}
            seen = stored.delete_seen(tx, ws, org, document_id, deleted)
            doc_tally, user_tally = Counter(), Counter()
            tallies.annotation_deltas(counted.values(), -1, doc_tally, user_tally)
            tallies.seen_deltas(((counted[a], u) for a, u in seen), -1, user_tally)
            annotation_counts.apply(tx, ws, org, doc_tally, user_tally)
        return deleted, missing, present

    deleted, missing, present = services.store.write(job)
    out = {a: {"success": True, "id": a, "message": "annotation deleted"} for a in deleted}
    for annotation_id in missing:
        reason = "does not match the other filters" if annotation_id in present else "not found in this document"
        out[annotation_id] = {"success": False, "id": annotation_id, "message": f"annotation {annotation_id} {reason}"}
    return bulk(f"{len(deleted)} comment annotations deleted", out)


# ---------------------------------------------------------------- read receipts


def mark_read(services: Services, workspace: Workspace, request: m.MarkRead) -> dict:
    """Record that ``userId`` has read these annotations: they stop counting as unread for them."""
    ws, org, document_id = workspace.workspace_id, org_key(request.organization_id), request.document_id
    wanted = list(dict.fromkeys(request.annotation_ids))

    def job(tx):
        tx.flush()
        require_document(tx.execute, ws, org, document_id)
        # held on a shared store until the commit: a delete of them then also removes these receipts
        rows = stored.counted(tx.execute, ws, org, document_id, wanted, lock=services.store.shared)
        counted = {r[0]: Counted(document_id, *r[1:]) for r in rows}
        if counted:
            new = stored.mark_seen(tx, ws, org, document_id, list(counted), request.user_id, services.clock.now())
            user_tally = Counter()
            tallies.seen_deltas(((counted[a], request.user_id) for a in new), 1, user_tally)
            annotation_counts.apply(tx, ws, org, Counter(), user_tally)
        return set(counted)

    found = services.store.write(job)
    out = {
        a: {"success": a in found, "message": "marked read" if a in found else f"annotation {a} not found"}
        for a in wanted
    }
    return bulk(f"{len(found)} comment annotations marked read", out)


__all__ = ["add_annotations", "delete_annotations", "mark_read", "normalise_page_url"]
