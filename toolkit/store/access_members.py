"""Users and memberships: who belongs to which organization, folder or document, in what role.

A user is a workspace-wide identity (``users``); what she may reach is her memberships, one
row per resource, each with its place in its list (``list_pos``, never reused) and a copy of
her name, email and initial, so that a page of members reads one table
(:mod:`toolkit.store.access_pages`).

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     def job(tx):
...         ids = upsert_users(tx, "ws", [("ann", "usr_1", "Ann", "a@x.io", "A")], 0, {})
...         grant(tx, "ws", [("ann", "organization", "acme", "acme", "editor", None, ids["ann"][1])], 0)
...     store.write(job)
...     members_at(store.read, "ws", "acme", "organization", "acme", ["ann", "bob"], 0)
{'ann'}
"""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.store.access import V
from toolkit.store.seam import Read, Writes
from toolkit.store.writer import Row, Tx


def users_by_id(read: Read, workspace_id: str, user_ids: Iterable[str]) -> dict[str, Row]:
    """user_id -> (id, name, email, initial, seq) of the users that exist."""
    rows = read(
        f"SELECT user_id, id, name, email, initial, seq FROM users WHERE workspace_id = ? AND user_id IN (SELECT {V})",
        [workspace_id, list(user_ids)],
    ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def upsert_users(
    tx: Writes, workspace_id: str, rows: list[tuple[str, str, str, str, str]], now: int, known: dict[str, Row]
) -> dict[str, Row]:
    """Insert or update users ``(user_id, id, name, email, initial)``; returns
    user_id -> (id, seq). ``id`` is only used for new users (an existing user keeps hers).
    ``known`` is :func:`users_by_id` of these users before the change: where an existing user's
    name, email or initial changes, her memberships' copies change with it."""
    if not rows:
        return {}
    cols = list(zip(*rows))
    returned = tx.execute(
        "INSERT INTO users (workspace_id, user_id, id, name, email, initial, created_at, updated_at) "
        f"SELECT ?, {V}, {V}, {V}, {V}, {V}, ?, ? "
        "ON CONFLICT (workspace_id, user_id) DO UPDATE SET name = excluded.name, email = excluded.email, "
        "initial = excluded.initial, updated_at = excluded.updated_at RETURNING user_id, id, seq",
        [workspace_id, list(cols[0]), list(cols[1]), list(cols[2]), list(cols[3]), list(cols[4]), now, now],
    ).fetchall()
    changed = [r for r in rows if r[0] in known and tuple(known[r[0]][1:4]) != tuple(r[2:5])]
    if changed:
        copies = [list(c) for c in zip(*changed)]
        tx.execute(
            f"UPDATE memberships SET name = c.name, email = c.email, initial = c.initial "
            f"FROM (SELECT {V} AS uid, {V} AS name, {V} AS email, {V} AS initial) c "
            f"WHERE memberships.workspace_id = ? AND memberships.user_id = c.uid",
            [copies[0], copies[2], copies[3], copies[4], workspace_id],
        )
    return {r[0]: (r[1], r[2]) for r in returned}


_GRANT = (
    "INSERT INTO memberships (workspace_id, user_id, resource_type, resource_id, organization_id, access_role, "
    "expires_at, user_seq, created_at, updated_at, list_pos, name, email, initial) "
    "SELECT $ws, r.uid, r.rtype, r.rid, r.org, r.role, r.expires, r.seq, $now, $now, "
    "coalesce(m.list_pos, coalesce(l.last_pos, 0) + row_number() OVER "
    "(PARTITION BY r.org, r.rtype, r.rid, m.list_pos IS NULL ORDER BY r.i)), u.name, u.email, u.initial "
    "FROM (SELECT unnest($uids::VARCHAR[]) AS uid, unnest($rtypes::VARCHAR[]) AS rtype, "
    "unnest($rids::VARCHAR[]) AS rid, unnest($orgs::VARCHAR[]) AS org, unnest($roles::VARCHAR[]) AS role, "
    "unnest($expires::FLOAT8[]) AS expires, unnest($seqs::BIGINT[]) AS seq, unnest($order::BIGINT[]) AS i) r "
    "JOIN users u ON u.workspace_id = $ws AND u.user_id = r.uid "
    "LEFT JOIN memberships m ON m.workspace_id = $ws AND m.user_id = r.uid AND m.resource_type = r.rtype "
    "AND m.organization_id = r.org AND m.resource_id = r.rid "
    "LEFT JOIN member_lists l ON l.workspace_id = $ws AND l.organization_id = r.org AND l.resource_type = r.rtype "
    "AND l.resource_id = r.rid "
    "ON CONFLICT (workspace_id, user_id, resource_type, organization_id, resource_id) "
    "DO UPDATE SET access_role = excluded.access_role, expires_at = excluded.expires_at, "
    "updated_at = excluded.updated_at"
)

# The lists' last positions, from the rows just written (positions are never handed out twice).
_LAST_POSITIONS = (
    "INSERT INTO member_lists (workspace_id, organization_id, resource_type, resource_id, last_pos) "
    "SELECT workspace_id, organization_id, resource_type, resource_id, max(list_pos) "
    "FROM memberships WHERE workspace_id = $ws AND resource_id IN (SELECT unnest($rids::VARCHAR[])) "
    "GROUP BY workspace_id, organization_id, resource_type, resource_id "
    "ON CONFLICT (workspace_id, organization_id, resource_type, resource_id) "
    "DO UPDATE SET last_pos = greatest(member_lists.last_pos, excluded.last_pos)"
)

# Another process may be adding members to the same lists: their rows are locked (made when
# missing) before positions are handed out, so two grants to one list take turns.
_LOCK_LISTS = (
    "INSERT INTO member_lists (workspace_id, organization_id, resource_type, resource_id, last_pos) "
    "SELECT ?, unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), 0 "
    "ON CONFLICT (workspace_id, organization_id, resource_type, resource_id) "
    "DO UPDATE SET last_pos = member_lists.last_pos"
)


def grant(tx: Writes, workspace_id: str, rows: list[Row], now: int) -> None:
    """Insert or replace memberships ``(user_id, resource_type, resource_id, organization_id,
    access_role, expires_at, user_seq)`` of existing users: a new grant replaces the role and
    the expiry and keeps the member's place in the list; a new member takes the next positions
    of its list (in the order given) and a copy of her name, email and initial."""
    if not rows:
        return
    cols = [list(c) for c in zip(*rows)]
    if not isinstance(tx, Tx):  # DuckDB's single writer already runs one grant at a time
        lists = sorted({(r[3], r[1], r[2]) for r in rows})
        tx.execute(_LOCK_LISTS, [workspace_id, *[list(c) for c in zip(*lists)]])
    tx.execute(
        _GRANT,
        {
            "ws": workspace_id,
            "now": now,
            "uids": cols[0],
            "rtypes": cols[1],
            "rids": cols[2],
            "orgs": cols[3],
            "roles": cols[4],
            "expires": cols[5],
            "seqs": cols[6],
            "order": list(range(len(rows))),
        },
    )
    tx.execute(_LAST_POSITIONS, {"ws": workspace_id, "rids": list(dict.fromkeys(cols[2]))})


def members_at(
    read: Read, workspace_id: str, organization_id: str, rtype: str, rid: str, user_ids: list[str], now_s: int
) -> set[str]:
    """Which of ``user_ids`` hold a live membership of the resource."""
    rows = read(
        f"SELECT user_id FROM memberships WHERE workspace_id = ? AND organization_id = ? AND resource_type = ? "
        f"AND resource_id = ? AND (expires_at IS NULL OR expires_at > ?) AND user_id IN (SELECT {V})",
        [workspace_id, organization_id, rtype, rid, now_s, user_ids],
    ).fetchall()
    return {r[0] for r in rows}


def set_roles(
    tx: Writes, workspace_id: str, organization_id: str, rtype: str, rid: str, roles: list[tuple[str, str]], now: int
) -> None:
    """Give each ``(user_id, role)`` that role in her membership of the resource."""
    if roles:
        tx.execute(
            f"UPDATE memberships SET access_role = r.role, updated_at = ? "
            f"FROM (SELECT {V} AS uid, {V} AS role) r "
            f"WHERE memberships.workspace_id = ? AND memberships.organization_id = ? "
            f"AND memberships.resource_type = ? AND memberships.resource_id = ? AND memberships.user_id = r.uid",
            [now, [u for u, _ in roles], [r for _, r in roles], workspace_id, organization_id, rtype, rid],
        )


def remove_members(
    tx: Writes, workspace_id: str, organization_id: str, scope: tuple[str, str] | None, user_ids: list[str]
) -> set[str]:
    """Delete the users' memberships of one resource ``scope`` ``(type, id)``, or with
    ``scope`` None every membership they hold in the organization; returns who had one."""
    where = "" if scope is None else " AND resource_type = ? AND resource_id = ?"
    rows = tx.execute(
        f"DELETE FROM memberships WHERE workspace_id = ? AND organization_id = ?{where} "
        f"AND user_id IN (SELECT {V}) RETURNING user_id",
        [workspace_id, organization_id, *(scope or ()), user_ids],
    ).fetchall()
    return {r[0] for r in rows}


def revoke(
    tx: Writes, workspace_id: str, user_id: str, resources: list[tuple[str, str, str | None]]
) -> set[tuple[str, str]]:
    """Delete the user's memberships of ``(type, id, organization_id)`` resources (an
    organization id None: in every organization); returns the ``(type, id)`` removed."""
    rows = tx.execute(
        "DELETE FROM memberships m USING (SELECT unnest(?::VARCHAR[]) AS t, unnest(?::VARCHAR[]) AS rid, "
        "unnest(?::VARCHAR[]) AS org) r "
        "WHERE m.workspace_id = ? AND m.user_id = ? AND m.resource_type = r.t AND m.resource_id = r.rid "
        "AND (r.org IS NULL OR m.organization_id = r.org) RETURNING m.resource_type, m.resource_id",
        [[r[0] for r in resources], [r[1] for r in resources], [r[2] for r in resources], workspace_id, user_id],
    ).fetchall()
    return {(r[0], r[1]) for r in rows}
