"""Comment annotations (migration 003): their rows, their read receipts, and the documents and
organizations they hang on. The count summary tables and the access facts are
:mod:`toolkit.store.annotation_counts`; the logic is :mod:`toolkit.services.annotations`.

Functions take ``read`` (``store.read`` or ``tx.execute``) or the write job's ``tx``. On a
shared store (PostgreSQL, several processes) a job runs in its own transaction beside
others: ``lock`` holds the annotations a job counts from ``FOR SHARE``, so a delete that
removes them waits for the job and then removes what it wrote too. DuckDB's single writer
orders every job already and needs no lock.
"""

from __future__ import annotations

from typing import NamedTuple

from toolkit.store.seam import Read, Writes
from toolkit.store.writer import Row

TERMINAL = "terminal"  # a status type: resolved / accepted
COLUMNS = (
    "workspace_id",
    "organization_id",
    "document_id",
    "annotation_id",
    "seq",
    "status_id",
    "status_type",
    "visibility_type",
    "visibility_org",
    "visibility_users",
    "authors",
    "location_id",
    "agent_ids",
    "agent_urls",
    "is_agent",
    "has_suggestion",
    "created_at",
    "last_updated",
    "body",
)
SEEN_COLUMNS = ("workspace_id", "organization_id", "document_id", "annotation_id", "user_id", "how", "seen_at")
# What the count tallies need of a stored annotation, after its id.
_COUNTED = "annotation_id, status_id, visibility_type, visibility_org, visibility_users"
_DOCUMENT = "workspace_id = ? AND organization_id = ? AND document_id = ?"

# Organizations in which $user holds any unexpired membership ($ws, $user, $now in Unix seconds).
MEMBER_ORGS_SQL = (
    "SELECT DISTINCT organization_id FROM memberships WHERE workspace_id = $ws AND user_id = $user "
    "AND (expires_at IS NULL OR expires_at > $now)"
)


def visible_sql(alias: str = "a") -> str:
    """SQL condition: annotation ``alias`` admits ``$user`` by its visibility (named parameters
    $ws, $user, $now)."""
    return (
        f"({alias}.visibility_type = 'public' "
        f"OR ({alias}.visibility_type = 'organizationPrivate' AND {alias}.visibility_org IN ({MEMBER_ORGS_SQL})) "
        f"OR ({alias}.visibility_type = 'restricted' AND list_contains({alias}.visibility_users, $user::VARCHAR)))"
    )


# ---------------------------------------------------------------- documents


def organization_exists(read: Read, workspace_id: str, organization_id: str) -> bool:
    return bool(
        read(
            "SELECT 1 FROM organizations WHERE workspace_id = ? AND organization_id = ?",
            [workspace_id, organization_id],
        )
    )


def document_exists(read: Read, workspace_id: str, organization_id: str, document_id: str) -> bool:
    return bool(read(f"SELECT 1 FROM documents WHERE {_DOCUMENT}", [workspace_id, organization_id, document_id]))


def create_organization(tx: Writes, workspace_id: str, organization_id: str, now: int) -> None:
    """The organization, unless another job created it first."""
    tx.execute(
        "INSERT INTO organizations (workspace_id, organization_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [workspace_id, organization_id, now, now],
    )


def create_document(tx: Writes, workspace_id: str, organization_id: str, document_id: str, now: int) -> None:
    """The document, unless another job created it first."""
    tx.execute(
        "INSERT INTO documents (workspace_id, organization_id, document_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [workspace_id, organization_id, document_id, now, now],
    )


# ---------------------------------------------------------------- annotations


def existing(read: Read, workspace_id: str, organization_id: str, document_id: str, ids: list[str]) -> set[str]:
    """Those of ``ids`` stored in the document."""
    return {
        r[0]
        for r in read(
            f"SELECT annotation_id FROM annotations WHERE {_DOCUMENT} "
            "AND annotation_id IN (SELECT unnest(?::VARCHAR[]))",
            [workspace_id, organization_id, document_id, ids],
        )
    }


def append(tx: Writes, rows: list[Row], seen: list[Row]) -> None:
    """Insert annotations (rows of :data:`COLUMNS`) and read receipts (:data:`SEEN_COLUMNS`),
    buffered: written with the job's other inserts."""
    tx.append("annotations", COLUMNS, rows)
    tx.append("annotation_seen", SEEN_COLUMNS, seen)


def counted(
    read: Read, workspace_id: str, organization_id: str, document_id: str, ids: list[str], *, lock: bool = False
) -> list[Row]:
    """``(annotation_id, status_id, visibility_type, visibility_org, visibility_users)`` of
    those of ``ids`` stored in the document; ``lock`` holds them ``FOR SHARE``."""
    return read(
        f"SELECT {_COUNTED} FROM annotations WHERE {_DOCUMENT} AND annotation_id IN (SELECT unnest(?::VARCHAR[]))"
        + (" FOR SHARE" if lock else ""),
        [workspace_id, organization_id, document_id, ids],
    ).fetchall()


def mark_seen(
    tx: Writes, workspace_id: str, organization_id: str, document_id: str, ids: list[str], user_id: str, now: int
) -> list[str]:
    """Record that ``user_id`` read these annotations; those not already seen by them."""
    return [
        r[0]
        for r in tx.execute(
            "INSERT INTO annotation_seen SELECT ?, ?, ?, unnest(?::VARCHAR[]), ?, 'read', ? "
            "ON CONFLICT DO NOTHING RETURNING annotation_id",
            [workspace_id, organization_id, document_id, ids, user_id, now],
        )
    ]


class Match(NamedTuple):
    """Which annotations of a document a delete takes: every filter given (not None / True) must match."""

    annotation_ids: list[str] | None = None
    location_ids: list[str] | None = None
    user_ids: list[str] | None = None  # any of them authored it
    agent_id: str | None = None
    agent_suggestions: bool = False  # agent suggestions not yet resolved
    pages: list[str] | None = None  # normalised page URLs an agent annotation was written for

    def sql(self) -> tuple[list[str], list[object]]:
        """The conditions of the filters given, and their parameters.

        >>> Match(user_ids=["ann"], agent_id="spell-check").sql()
        (['list_has_any(authors, ?::VARCHAR[])', 'list_contains(agent_ids, ?::VARCHAR)'], [['ann'], 'spell-check'])
        """
        where: list[str] = []
        params: list[object] = []
        if self.annotation_ids is not None:
            where.append("annotation_id IN (SELECT unnest(?::VARCHAR[]))")
            params.append(self.annotation_ids)
        if self.location_ids is not None:
            where.append("location_id IN (SELECT unnest(?::VARCHAR[]))")
            params.append(self.location_ids)
        if self.user_ids is not None:
            where.append("list_has_any(authors, ?::VARCHAR[])")
            params.append(self.user_ids)
        if self.agent_id is not None:
            where.append("list_contains(agent_ids, ?::VARCHAR)")
            params.append(self.agent_id)
        if self.agent_suggestions:
            where.append(f"is_agent AND has_suggestion AND coalesce(status_type, '') <> '{TERMINAL}'")
        if self.pages is not None:
            where.append("is_agent AND list_has_any(agent_urls, ?::VARCHAR[])")
            params.append(self.pages)
        return where, params


def delete(tx: Writes, workspace_id: str, organization_id: str, document_id: str, match: Match) -> list[Row]:
    """Delete what ``match`` takes (every annotation of the document when it gives no
    filter); the deleted annotations as :func:`counted` rows. Their read receipts go with
    :func:`delete_seen`."""
    filters, params = match.sql()
    return tx.execute(
        f"DELETE FROM annotations WHERE {' AND '.join([_DOCUMENT, *filters])} RETURNING {_COUNTED}",
        [workspace_id, organization_id, document_id, *params],
    ).fetchall()


def delete_seen(tx: Writes, workspace_id: str, organization_id: str, document_id: str, ids: list[str]) -> list[Row]:
    """Delete the read receipts of these annotations: ``(annotation_id, user_id)`` of each."""
    return tx.execute(
        f"DELETE FROM annotation_seen WHERE {_DOCUMENT} AND annotation_id IN (SELECT unnest(?::VARCHAR[])) "
        "RETURNING annotation_id, user_id",
        [workspace_id, organization_id, document_id, ids],
    ).fetchall()


class Page(NamedTuple):
    """What a page of annotations is filtered by (None: no filter)."""

    document_ids: list[str] | None = None
    annotation_ids: list[str] | None = None
    status_ids: list[str] | None = None
    user_id: str | None = None  # only what this user's visibility admits (at ``now_s``)
    now_s: float = 0.0


def page(read: Read, workspace_id: str, organization_id: str, which: Page, after: int | None, limit: int) -> list[Row]:
    """Up to ``limit`` annotations ``(seq, body)`` in creation order, after ``seq`` ``after``."""
    where = ["a.workspace_id = $ws", "a.organization_id = $org"]
    params: dict[str, object] = {"ws": workspace_id, "org": organization_id, "limit": limit}
    if which.user_id is not None:
        where.append(visible_sql("a"))
        params.update(user=which.user_id, now=which.now_s)
    for column, name, values in (
        ("document_id", "docs", which.document_ids),
        ("annotation_id", "ids", which.annotation_ids),
        ("status_id", "statuses", which.status_ids),
    ):
        if values is not None:
            where.append(f"a.{column} IN (SELECT unnest(${name}::VARCHAR[]))")
            params[name] = values
    if after is not None:
        where.append("a.seq > $after")
        params["after"] = after
    return read(
        f"SELECT a.seq, a.body FROM annotations a WHERE {' AND '.join(where)} ORDER BY a.seq LIMIT $limit", params
    ).fetchall()
