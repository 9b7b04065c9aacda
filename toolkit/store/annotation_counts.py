"""What counting comment annotations reads and keeps: the access facts of a user and the
count summary tables (migration 003).

Facts are rows ``(kind, key, a, b, c, flag, n)`` — the requested documents, the user's live
memberships (every organization) and the organization's folders (all of them: a plain scan
of a small table is cheaper than working out which chains the documents need) — from which
:mod:`toolkit.services.annotations.visibility` decides access in Python. Count adds, in the
same statement, the tally rows of the requested documents for the user.

The tallies (``annotation_tallies``, ``annotation_user_tallies``) are kept in step with
``annotations`` and ``annotation_seen`` by every write in its own transaction: deltas
computed in Python (:mod:`toolkit.services.annotations.tallies`), applied here with one
upsert per table. An upsert adds to the stored count, so writers in several processes never
lose each other's deltas; they take the rows in key order, so two of them cannot deadlock.

The hot statements are parsed once (:mod:`toolkit.store.statements`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from toolkit.store.seam import Writes
from toolkit.store.statements import parsed
from toolkit.store.writer import Row, Rows

Read = Callable[..., Rows]  # store.read or tx.execute: the hot statements are parsed ones

_DOCUMENTS = """
SELECT 'document' AS kind, document_id AS key, folder_id AS a, access_type AS b, NULL::VARCHAR AS c,
       disabled AS flag, NULL::BIGINT AS n
FROM documents
WHERE workspace_id = $ws AND organization_id = $org AND {which}
"""
_MEMBERSHIPS_AND_FOLDERS = """
UNION ALL
SELECT 'membership:' || resource_type, resource_id, organization_id, access_role, NULL, NULL, NULL FROM memberships
WHERE workspace_id = $ws AND user_id = $user AND (expires_at IS NULL OR expires_at > $now)
UNION ALL
SELECT 'folder', folder_id, parent_folder_id, access_type, NULL, inherit_from_parent, NULL FROM folders
WHERE workspace_id = $ws AND organization_id = $org
"""
# $docs: the documents, or NULL for every document of the organization
_FACTS = _DOCUMENTS.format(which="($docs::VARCHAR[] IS NULL OR list_contains($docs::VARCHAR[], document_id))")
# $docs: the documents (not NULL) — a semi-join on the list, cheaper than a list_contains per row
_GIVEN_FACTS = _DOCUMENTS.format(which="document_id IN (SELECT unnest($docs::VARCHAR[]))")
FACTS = parsed(_FACTS + _MEMBERSHIPS_AND_FOLDERS)
GIVEN_FACTS = parsed(_GIVEN_FACTS + _MEMBERSHIPS_AND_FOLDERS)

# The facts and every tally row of the requested documents for this user: ('tally' |
# 'user:audience' | 'user:seen', documentId, NULL, visibility type, visibility organization,
# NULL, n) — the status only filters, so it is not sent back.
_COUNT = (
    _GIVEN_FACTS
    + _MEMBERSHIPS_AND_FOLDERS
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
COUNT = parsed(_COUNT.format(statuses=""))
COUNT_BY_STATUS = parsed(_COUNT.format(statuses="\n  AND list_contains($statuses::VARCHAR[], status_id)"))
TALLY_KINDS = frozenset({"tally", "user:audience", "user:seen"})


def _params(
    workspace_id: str, user_id: str, organization_id: str, documents: Iterable[str] | None, now_s: float
) -> dict[str, object]:
    return {
        "ws": workspace_id,
        "org": organization_id,
        "user": user_id,
        "now": now_s,
        "docs": None if documents is None else list(documents),
    }


def facts(
    read: Read, workspace_id: str, user_id: str, organization_id: str, documents: Iterable[str] | None, now_s: float
) -> list[Row]:
    """The access facts of ``user_id`` for the given documents of ``organization_id`` ('' for
    documents without organization), or all of them when ``documents`` is None. One statement."""
    statement = FACTS if documents is None else GIVEN_FACTS
    return read(statement, _params(workspace_id, user_id, organization_id, documents, now_s)).fetchall()


def facts_and_tallies(
    read: Read,
    workspace_id: str,
    user_id: str,
    organization_id: str,
    documents: list[str],
    now_s: float,
    statuses: list[str] | None,
) -> list[Row]:
    """The access facts and the tally rows (kinds :data:`TALLY_KINDS`) of ``documents`` for
    ``user_id``, of the given statuses only when ``statuses`` is not None. One statement."""
    params = _params(workspace_id, user_id, organization_id, documents, now_s)
    if statuses is not None:
        params["statuses"] = statuses
    return read(COUNT if statuses is None else COUNT_BY_STATUS, params).fetchall()


_UPSERT_DOC = (
    "INSERT INTO annotation_tallies SELECT ?, ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
    "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::BIGINT[]) "
    "ON CONFLICT (workspace_id, organization_id, document_id, status_id, visibility_type, visibility_org) "
    "DO UPDATE SET n = annotation_tallies.n + excluded.n"
)
_UPSERT_USER = (
    "INSERT INTO annotation_user_tallies SELECT ?, ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
    "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::BIGINT[]) "
    "ON CONFLICT (workspace_id, organization_id, user_id, document_id, kind, status_id, visibility_type, "
    "visibility_org) DO UPDATE SET n = annotation_user_tallies.n + excluded.n"
)


def apply(
    tx: Writes,
    workspace_id: str,
    organization_id: str,
    doc: Mapping[tuple[str, ...], int],
    user: Mapping[tuple[str, ...], int],
) -> None:
    """Add the non-zero deltas: ``doc`` by (document, status, visibility type, visibility
    organization or ''), ``user`` by (user, document, kind, status, visibility type,
    visibility organization or ''). One statement per table that changes."""
    for sql, deltas in ((_UPSERT_DOC, doc), (_UPSERT_USER, user)):
        changed = sorted((k, v) for k, v in deltas.items() if v)
        if changed:
            columns = list(zip(*(k for k, _ in changed)))
            tx.execute(sql, [workspace_id, organization_id, *map(list, columns), [v for _, v in changed]])


_REBUILD = [
    "DELETE FROM annotation_tallies WHERE workspace_id = $ws",
    "INSERT INTO annotation_tallies SELECT workspace_id, organization_id, document_id, status_id, visibility_type, "
    "coalesce(visibility_org, ''), count(*) FROM annotations "
    "WHERE workspace_id = $ws AND visibility_type <> 'restricted' "
    "GROUP BY workspace_id, organization_id, document_id, status_id, visibility_type, coalesce(visibility_org, '')",
    "DELETE FROM annotation_user_tallies WHERE workspace_id = $ws",
    "INSERT INTO annotation_user_tallies "
    "SELECT workspace_id, organization_id, user_id, document_id, 'audience', status_id, 'restricted', '', count(*) "
    "FROM (SELECT DISTINCT workspace_id, organization_id, document_id, annotation_id, status_id, "
    "      unnest(visibility_users) AS user_id FROM annotations "
    "      WHERE workspace_id = $ws AND visibility_type = 'restricted') AS audience "
    "GROUP BY workspace_id, organization_id, user_id, document_id, status_id "
    "UNION ALL "
    "SELECT a.workspace_id, a.organization_id, s.user_id, a.document_id, 'seen', a.status_id, a.visibility_type, "
    "coalesce(a.visibility_org, ''), count(*) FROM annotation_seen s "
    "JOIN annotations a USING (workspace_id, organization_id, document_id, annotation_id) "
    "WHERE a.workspace_id = $ws "
    "AND (a.visibility_type <> 'restricted' OR list_contains(a.visibility_users, s.user_id)) "
    "GROUP BY a.workspace_id, a.organization_id, s.user_id, a.document_id, a.status_id, a.visibility_type, "
    "coalesce(a.visibility_org, '')",
]


def rebuild(tx: Writes, workspace_id: str) -> None:
    """Recompute a workspace's tallies from ``annotations`` and ``annotation_seen`` (after a
    bulk load straight into those tables, or to repair)."""
    for sql in _REBUILD:
        tx.execute(sql, {"ws": workspace_id})
