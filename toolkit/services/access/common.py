"""Helpers shared by the access services: results, existence checks and the bulk upserts
of users, organizations and memberships (every write is one set-based statement)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from typing import Any

from toolkit.errors import ApiError, ErrorCode
from toolkit.services.context import Services

Read = Callable[..., Any]  # store.read or tx.execute: (sql, params) -> fetched rows

# A list parameter as rows: several in one SELECT zip together (one statement per bulk write).
V = "unnest(?::VARCHAR[])"


def ok(message: str, data: Any, **extra: Any) -> dict:
    """The result of a non-workflow endpoint: ``{status: success, message, data}``."""
    return {"status": "success", "message": message, "data": data, **extra}


def item(success: bool, message: str, **fields: Any) -> dict:
    return {"success": success, "message": message, **fields}


def now_ms(services: Services) -> int:
    return int(services.clock.now())


def now_s(services: Services) -> int:
    """The service clock in Unix seconds (membership expiry and JWT times)."""
    return int(services.clock.now()) // 1000


def not_found(kind: str, resource_id: str, organization_id: str | None = None) -> ApiError:
    where = f" in organization {organization_id}" if organization_id and kind != "organization" else ""
    return ApiError(ErrorCode.NOT_FOUND, f"{kind} {resource_id} not found{where}")


def existing(
    read: Read, workspace_id: str, organization_id: str, document_id: str | None = None, folder_id: str | None = None
) -> tuple[bool, bool, bool]:
    """(organization exists, document exists, folder exists) in one statement."""
    row = read(
        "SELECT EXISTS (SELECT 1 FROM organizations WHERE workspace_id = $ws AND organization_id = $org), "
        "EXISTS (SELECT 1 FROM documents WHERE workspace_id = $ws AND organization_id = $org AND document_id = $doc), "
        "EXISTS (SELECT 1 FROM folders WHERE workspace_id = $ws AND organization_id = $org AND folder_id = $folder)",
        {"ws": workspace_id, "org": organization_id, "doc": document_id, "folder": folder_id},
    ).fetchone()
    return bool(row[0]), bool(row[1]), bool(row[2])


def require_scope(
    read: Read, workspace_id: str, organization_id: str, document_id: str | None = None, folder_id: str | None = None
) -> None:
    """NOT_FOUND unless the organization (and the document or folder, when given) exist."""
    org, doc, folder = existing(read, workspace_id, organization_id, document_id, folder_id)
    if not org:
        raise not_found("organization", organization_id)
    if document_id is not None and not doc:
        raise not_found("document", document_id, organization_id)
    if folder_id is not None and not folder:
        raise not_found("folder", folder_id, organization_id)


def scope_of(organization_id: str, document_id: str | None, folder_id: str | None) -> tuple[str, str]:
    """(resource_type, resource_id) of the membership a scoped request addresses."""
    if document_id is not None:
        return "document", document_id
    if folder_id is not None:
        return "folder", folder_id
    return "organization", organization_id


def derive_initial(name: str, email: str = "", user_id: str = "") -> str:
    """The first letter or digit of the name (else of the email, else of the user id), upper-cased.

    >>> derive_initial("ann lee"), derive_initial("", "bob@example.com"), derive_initial("  ", "", "42")
    ('A', 'B', '4')
    """
    for text in (name, email, user_id):
        for char in text:
            if char.isalnum():
                return char.upper()
    return ""


def users_by_id(read: Read, workspace_id: str, user_ids: Iterable[str]) -> dict[str, tuple]:
    """user_id -> (id, name, email, initial, seq) of the users that exist."""
    rows = read(
        f"SELECT user_id, id, name, email, initial, seq FROM users WHERE workspace_id = ? AND user_id IN (SELECT {V})",
        [workspace_id, list(user_ids)],
    ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def new_internal_id() -> str:
    return "usr_" + secrets.token_hex(10)


def upsert_users(
    tx, workspace_id: str, rows: list[tuple[str, str, str, str, str]], now: int, known: dict[str, tuple]
) -> dict[str, tuple]:
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
        "ON CONFLICT DO UPDATE SET name = excluded.name, email = excluded.email, initial = excluded.initial, "
        "updated_at = excluded.updated_at RETURNING user_id, id, seq",
        [workspace_id, list(cols[0]), list(cols[1]), list(cols[2]), list(cols[3]), list(cols[4]), now, now],
    ).fetchall()
    changed = [r for r in rows if r[0] in known and tuple(known[r[0]][1:4]) != tuple(r[2:5])]
    if changed:
        cols = [list(c) for c in zip(*changed)]
        tx.execute(
            f"UPDATE memberships SET name = c.name, email = c.email, initial = c.initial "
            f"FROM (SELECT {V} AS uid, {V} AS name, {V} AS email, {V} AS initial) c "
            f"WHERE memberships.workspace_id = ? AND memberships.user_id = c.uid",
            [cols[0], cols[2], cols[3], cols[4], workspace_id],
        )
    return {r[0]: (r[1], r[2]) for r in returned}


def ensure_organizations(tx, workspace_id: str, organization_ids: Iterable[str], now: int) -> None:
    ids = list(dict.fromkeys(organization_ids))
    if ids:
        tx.execute(
            "INSERT INTO organizations (workspace_id, organization_id, created_at, updated_at) "
            f"SELECT ?, {V}, ?, ? ON CONFLICT DO NOTHING",
            [workspace_id, ids, now, now],
        )


def grant(tx, workspace_id: str, rows: list[tuple], now: int) -> None:
    """Insert or replace memberships ``(user_id, resource_type, resource_id, organization_id,
    access_role, expires_at, user_seq)`` of existing users: a new grant replaces the role and
    the expiry and keeps the member's place in the list; a new member takes the next positions
    of its list (in the order given) and a copy of her name, email and initial."""
    if not rows:
        return
    cols = [list(c) for c in zip(*rows)]
    tx.execute(
        "INSERT INTO memberships (workspace_id, user_id, resource_type, resource_id, organization_id, access_role, "
        "expires_at, user_seq, created_at, updated_at, list_pos, name, email, initial) "
        "SELECT $ws, r.uid, r.rtype, r.rid, r.org, r.role, r.expires, r.seq, $now, $now, "
        "coalesce(m.list_pos, coalesce(l.last_pos, 0) + row_number() OVER "
        "(PARTITION BY r.org, r.rtype, r.rid, m.list_pos IS NULL ORDER BY r.i)), u.name, u.email, u.initial "
        "FROM (SELECT unnest($uids::VARCHAR[]) AS uid, unnest($rtypes::VARCHAR[]) AS rtype, "
        "unnest($rids::VARCHAR[]) AS rid, unnest($orgs::VARCHAR[]) AS org, unnest($roles::VARCHAR[]) AS role, "
        "unnest($expires::DOUBLE[]) AS expires, unnest($seqs::BIGINT[]) AS seq, unnest(range($n)) AS i) r "
        "JOIN users u ON u.workspace_id = $ws AND u.user_id = r.uid "
        "LEFT JOIN memberships m ON m.workspace_id = $ws AND m.user_id = r.uid AND m.resource_type = r.rtype "
        "AND m.organization_id = r.org AND m.resource_id = r.rid "
        "LEFT JOIN member_lists l ON l.workspace_id = $ws AND l.organization_id = r.org AND l.resource_type = r.rtype "
        "AND l.resource_id = r.rid "
        "ON CONFLICT DO UPDATE SET access_role = excluded.access_role, expires_at = excluded.expires_at, "
        "updated_at = excluded.updated_at",
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
            "n": len(rows),
        },
    )
    # The lists' last positions, from the rows just written (positions are never handed out twice).
    tx.execute(
        "INSERT INTO member_lists SELECT workspace_id, organization_id, resource_type, resource_id, max(list_pos) "
        "FROM memberships WHERE workspace_id = $ws AND resource_id IN (SELECT unnest($rids::VARCHAR[])) GROUP BY ALL "
        "ON CONFLICT DO UPDATE SET last_pos = greatest(last_pos, excluded.last_pos)",
        {"ws": workspace_id, "rids": list(dict.fromkeys(cols[2]))},
    )
