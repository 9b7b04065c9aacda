"""The count summary tables (migration 003): deltas computed in Python, applied with one
upsert per table.

Every write that adds or removes annotations, or marks them seen, calls :func:`apply` in the
same job, so the tallies always agree with ``annotations`` and ``annotation_seen``:

- ``annotation_tallies``: +1 per public / organizationPrivate annotation at (document,
  status, visibility type, visibility organization);
- ``annotation_user_tallies`` ``audience``: +1 per restricted annotation for each user it names;
- ``annotation_user_tallies`` ``seen``: +1 per (annotation, user) in ``annotation_seen`` whose
  visibility admits the user apart from organization membership (which is checked when
  counting, since memberships change).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import NamedTuple


class Counted(NamedTuple):
    """What the tallies need of one annotation."""

    document_id: str
    status_id: str
    visibility_type: str
    visibility_org: str | None
    visibility_users: list[str] | None


def annotation_deltas(annotations: Iterable[Counted], sign: int, doc: Counter, user: Counter) -> None:
    """Add (``sign`` 1) or remove (-1) annotations: their document and audience tallies."""
    for a in annotations:
        if a.visibility_type == "restricted":
            for user_id in dict.fromkeys(a.visibility_users or ()):
                user[(user_id, a.document_id, "audience", a.status_id, "restricted", "")] += sign
        else:
            doc[(a.document_id, a.status_id, a.visibility_type, a.visibility_org or "")] += sign


def seen_deltas(pairs: Iterable[tuple[Counted, str]], sign: int, user: Counter) -> None:
    """Add or remove (annotation, user) ``seen`` pairs."""
    for a, user_id in pairs:
        if a.visibility_type != "restricted" or user_id in (a.visibility_users or ()):
            user[(user_id, a.document_id, "seen", a.status_id, a.visibility_type, a.visibility_org or "")] += sign


def apply(tx, workspace_id: str, organization_id: str, doc: Mapping[tuple, int], user: Mapping[tuple, int]) -> None:
    """Upsert the non-zero deltas: one statement per table that changes."""
    doc = {k: v for k, v in doc.items() if v}
    user = {k: v for k, v in user.items() if v}
    if doc:
        columns = list(zip(*doc))
        tx.execute(
            "INSERT INTO annotation_tallies SELECT ?, ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
            "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::BIGINT[]) "
            "ON CONFLICT DO UPDATE SET n = n + excluded.n",
            [workspace_id, organization_id, *map(list, columns), list(doc.values())],
        )
    if user:
        columns = list(zip(*user))
        tx.execute(
            "INSERT INTO annotation_user_tallies SELECT ?, ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
            "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
            "unnest(?::BIGINT[]) ON CONFLICT DO UPDATE SET n = n + excluded.n",
            [workspace_id, organization_id, *map(list, columns), list(user.values())],
        )


REBUILD_SQL = [
    "DELETE FROM annotation_tallies WHERE workspace_id = $ws",
    "INSERT INTO annotation_tallies SELECT workspace_id, organization_id, document_id, status_id, visibility_type, "
    "coalesce(visibility_org, ''), count(*) FROM annotations "
    "WHERE workspace_id = $ws AND visibility_type <> 'restricted' GROUP BY ALL",
    "DELETE FROM annotation_user_tallies WHERE workspace_id = $ws",
    "INSERT INTO annotation_user_tallies "
    "SELECT workspace_id, organization_id, user_id, document_id, 'audience', status_id, 'restricted', '', count(*) "
    "FROM (SELECT DISTINCT workspace_id, organization_id, document_id, annotation_id, status_id, "
    "      unnest(visibility_users) AS user_id FROM annotations "
    "      WHERE workspace_id = $ws AND visibility_type = 'restricted') GROUP BY ALL "
    "UNION ALL "
    "SELECT a.workspace_id, a.organization_id, s.user_id, a.document_id, 'seen', a.status_id, a.visibility_type, "
    "coalesce(a.visibility_org, ''), count(*) FROM annotation_seen s "
    "JOIN annotations a USING (workspace_id, organization_id, document_id, annotation_id) "
    "WHERE a.workspace_id = $ws "
    "AND (a.visibility_type <> 'restricted' OR list_contains(a.visibility_users, s.user_id)) "
    "GROUP BY ALL",
]


def rebuild(tx, workspace_id: str) -> None:
    """Recompute a workspace's tallies from ``annotations`` and ``annotation_seen`` (after a
    bulk load straight into those tables, or to repair)."""
    for sql in REBUILD_SQL:
        tx.execute(sql, {"ws": workspace_id})
