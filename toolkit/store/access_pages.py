"""Pages of members for get users (:mod:`toolkit.services.access.user_pages`).

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

Each function returns at most ``limit`` rows, sorted by its paging key (first column).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolkit.store.statements import parsed
from toolkit.store.writer import Row, Rows

Read = Callable[..., Rows]  # store.read: these pass it parsed statements as well as text

_ROW = "m.list_pos, m.user_id, m.name, m.email, m.initial, m.access_role"
_LIVE = "(m.expires_at IS NULL OR m.expires_at > $now)"
_LIST = "m.workspace_id = $ws AND m.organization_id = $org AND m.resource_type = $rtype AND m.resource_id = $rid"

# The fast path: the window of positions right after the token's.
_WINDOW = f"SELECT {_ROW} FROM memberships m WHERE {_LIST} AND m.list_pos BETWEEN $first AND $last AND {_LIVE}"


@dataclass(frozen=True)
class Page:
    """What every page query shares: whose members, live at ``now_s``, how many rows, and the
    ``userIds`` / ``organizationUserGroupIds`` filters (None: no filter)."""

    workspace_id: str
    organization_id: str
    now_s: int
    limit: int
    user_ids: list[str] | None = None
    group_ids: list[str] | None = None

    def params(self) -> dict[str, Any]:
        return {"ws": self.workspace_id, "org": self.organization_id, "now": self.now_s, "limit": self.limit}

    def filters(self, params: dict[str, Any]) -> str:
        """The filter conditions (their values added to ``params``), or ''."""
        out = ""
        if self.user_ids is not None:
            out += " AND m.user_id IN (SELECT unnest($uids::VARCHAR[]))"
            params["uids"] = self.user_ids
        if self.group_ids is not None:
            out += (
                " AND m.user_id IN (SELECT user_id FROM user_group_members WHERE workspace_id = $ws "
                "AND organization_id = $org AND group_id IN (SELECT unnest($gids::VARCHAR[])))"
            )
            params["gids"] = self.group_ids
        return out

    def documents_where(self, params: dict[str, Any]) -> str:
        """The live document-level memberships of the organization that the filters admit."""
        return (
            f"m.workspace_id = $ws AND m.organization_id = $org AND m.resource_type = 'document' AND {_LIVE}"
            + self.filters(params)
        )


def list_page(read: Read, page: Page, rtype: str, rid: str, after: int) -> list[Row]:
    """``(list_pos, user_id, name, email, initial, access_role)`` of the live members of one
    list after position ``after``."""
    params = {**page.params(), "rtype": rtype, "rid": rid, "after": after}
    filters = page.filters(params)
    if not filters:
        window = read(
            parsed(_WINDOW),
            {k: params[k] for k in ("ws", "org", "rtype", "rid", "now")}
            | {"first": after + 1, "last": after + page.limit},
        )
        if len(window) == page.limit:
            return sorted(window)
    # The first `limit` live positions after the token's (integers only), then their rows.
    rows = read(
        parsed(
            f"SELECT {_ROW} FROM memberships m WHERE {_LIST}{filters} AND m.list_pos IN ("
            f"SELECT m.list_pos FROM memberships m WHERE {_LIST} AND m.list_pos > $after AND {_LIVE}{filters} "
            "ORDER BY m.list_pos LIMIT $limit)"
        ),
        params,
    )
    return sorted(rows)


def grouped_page(read: Read, page: Page, after: tuple[str, int] | None) -> list[Row]:
    """``(document_id, list_pos, user_id, name, email, initial, access_role)`` of document-level
    members, by document then position, after ``(document_id, list_pos)``."""
    params = page.params()
    where = page.documents_where(params)
    if after is not None:
        where += " AND (m.resource_id > $after_doc OR (m.resource_id = $after_doc AND m.list_pos > $after_pos))"
        params.update(after_doc=after[0], after_pos=after[1])
    rows = read(
        f"SELECT m.resource_id, {_ROW} FROM memberships m JOIN (SELECT m.resource_id AS doc, m.list_pos AS pos "
        f"FROM memberships m WHERE {where} ORDER BY m.resource_id, m.list_pos LIMIT $limit) k "
        "ON m.resource_id = k.doc AND m.list_pos = k.pos "
        "WHERE m.workspace_id = $ws AND m.organization_id = $org AND m.resource_type = 'document'",
        params,
    )
    return sorted(rows)


def users_once_page(read: Read, page: Page, after: int | None) -> list[Row]:
    """``(user_seq, user_id, name, email, initial)`` of the users with a live document-level
    membership, each once, in creation order after ``after``."""
    params = page.params()
    where = page.documents_where(params)
    if after is not None:
        where += " AND m.user_seq > $after_seq"
        params["after_seq"] = after
    # A top-N over integers (a user with many documents counts once), then the users' rows.
    rows = read(
        f"SELECT k.user_seq, u.user_id, u.name, u.email, u.initial FROM (SELECT m.user_seq FROM memberships m "
        f"WHERE {where} GROUP BY m.user_seq ORDER BY m.user_seq LIMIT $limit) k "
        "JOIN users u ON u.workspace_id = $ws AND u.seq = k.user_seq",
        params,
    )
    return sorted(rows)
