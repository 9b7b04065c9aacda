"""Organizations, folders, documents and user groups (the access API's resources).

Every function takes ``read`` (``store.read``, or a write job's ``tx.execute``) or ``tx``.
A list parameter becomes rows with ``unnest(?::VARCHAR[])``; several in one SELECT zip
together, so a bulk write is one statement on either backend. Users and memberships:
:mod:`toolkit.store.access_members`.

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     store.write(lambda tx: insert_rows(tx, "folders", ("folder_id",), "ws", "org", [("f1",), ("f2",)], 0))
...     sorted(present(store.read, "folders", "ws", "org", ["f1", "f3"])), existing(store.read, "ws", "org")
(['f1'], (False, False, False))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from toolkit.store.seam import Read, Writes
from toolkit.store.writer import Row

V = "unnest(?::VARCHAR[])"

# The id column of each table a resource is added to.
_ID = {"folders": "folder_id", "documents": "document_id", "user_groups": "group_id"}


def existing(
    read: Read, workspace_id: str, organization_id: str, document_id: str | None = None, folder_id: str | None = None
) -> tuple[bool, bool, bool]:
    """(organization exists, document exists, folder exists) in one statement."""
    row = read(
        "SELECT EXISTS (SELECT 1 FROM organizations WHERE workspace_id = $ws AND organization_id = $org), "
        "EXISTS (SELECT 1 FROM documents WHERE workspace_id = $ws AND organization_id = $org AND document_id = $doc), "
        "EXISTS (SELECT 1 FROM folders WHERE workspace_id = $ws AND organization_id = $org AND folder_id = $folder)",
        {"ws": workspace_id, "org": organization_id, "doc": document_id, "folder": folder_id},
    )[0]
    return bool(row[0]), bool(row[1]), bool(row[2])


def present(read: Read, table: str, workspace_id: str, organization_id: str, ids: list[str]) -> set[str]:
    """Which of ``ids`` exist in the organization's ``table`` (folders, documents, user_groups)."""
    column = _ID[table]
    rows = read(
        f"SELECT {column} FROM {table} WHERE workspace_id = ? AND organization_id = ? AND {column} IN (SELECT {V})",
        [workspace_id, organization_id, ids],
    ).fetchall()
    return {r[0] for r in rows}


def insert_rows(
    tx: Writes, table: str, columns: tuple[str, ...], workspace_id: str, organization_id: str, rows: list[Row], now: int
) -> None:
    """Insert ``rows`` (values of ``columns``) into the organization's ``table``: one statement."""
    if rows:
        tx.execute(
            f"INSERT INTO {table} (workspace_id, organization_id, {', '.join(columns)}, created_at, "
            f"updated_at) SELECT ?, ?, {', '.join([V] * len(columns))}, ?, ?",
            [workspace_id, organization_id, *[list(c) for c in zip(*rows)], now, now],
        )


def ensure_organizations(tx: Writes, workspace_id: str, organization_ids: Iterable[str], now: int) -> None:
    ids = list(dict.fromkeys(organization_ids))
    if ids:
        tx.execute(
            "INSERT INTO organizations (workspace_id, organization_id, created_at, updated_at) "
            f"SELECT ?, {V}, ?, ? ON CONFLICT DO NOTHING",
            [workspace_id, ids, now, now],
        )


def set_folder_access(
    tx: Writes,
    workspace_id: str,
    organization_id: str,
    folder_ids: list[str],
    access_type: str | None,
    inherit: bool,
    now: int,
) -> None:
    tx.execute(
        f"UPDATE folders SET access_type = ?, inherit_from_parent = ?, updated_at = ? "
        f"WHERE workspace_id = ? AND organization_id = ? AND folder_id IN (SELECT {V})",
        [access_type, inherit, now, workspace_id, organization_id, folder_ids],
    )


# The document columns the access endpoints set.
DOCUMENT_STATE = ("access_type", "disabled")


def set_documents(
    tx: Writes, workspace_id: str, organization_id: str, document_ids: list[str], column: str, value: Any, now: int
) -> set[str]:
    """Set one column (of :data:`DOCUMENT_STATE`) of each document; returns the ids changed."""
    assert column in DOCUMENT_STATE
    rows = tx.execute(
        f"UPDATE documents SET {column} = ?, updated_at = ? WHERE workspace_id = ? "
        f"AND organization_id = ? AND document_id IN (SELECT {V}) RETURNING document_id",
        [value, now, workspace_id, organization_id, document_ids],
    ).fetchall()
    return {r[0] for r in rows}


def existing_pairs(
    read: Read, workspace_id: str, docs: set[tuple[str, str]], folders: set[tuple[str, str]]
) -> set[tuple[str, str, str]]:
    """{(type, organization_id, id)} of the given (organization_id, id) documents and folders that exist."""
    if not docs and not folders:
        return set()
    d, f = sorted(docs), sorted(folders)
    rows = read(
        "SELECT 'document', d.organization_id, d.document_id FROM documents d "
        "JOIN (SELECT unnest(?::VARCHAR[]) AS o, unnest(?::VARCHAR[]) AS i) k "
        "ON d.organization_id = k.o AND d.document_id = k.i WHERE d.workspace_id = ? "
        "UNION ALL SELECT 'folder', f.organization_id, f.folder_id FROM folders f "
        "JOIN (SELECT unnest(?::VARCHAR[]) AS o, unnest(?::VARCHAR[]) AS i) k "
        "ON f.organization_id = k.o AND f.folder_id = k.i WHERE f.workspace_id = ?",
        [[o for o, _ in d], [i for _, i in d], workspace_id, [o for o, _ in f], [i for _, i in f], workspace_id],
    ).fetchall()
    return {tuple(r) for r in rows}


# ------------------------------------------------------------------ user groups


def upsert_user_groups(
    tx: Writes, workspace_id: str, organization_id: str, groups: list[tuple[str, str]], now: int
) -> None:
    """Add ``(group_id, group_name)`` groups; an existing group is renamed."""
    tx.execute(
        f"INSERT INTO user_groups (workspace_id, organization_id, group_id, group_name, created_at, "
        f"updated_at) SELECT ?, ?, {V}, {V}, ?, ? "
        f"ON CONFLICT (workspace_id, organization_id, group_id) "
        f"DO UPDATE SET group_name = excluded.group_name, updated_at = excluded.updated_at",
        [workspace_id, organization_id, [g[0] for g in groups], [g[1] for g in groups], now, now],
    )


def group_members(read: Read, workspace_id: str, organization_id: str, group_id: str, user_ids: list[str]) -> set[str]:
    """Which of ``user_ids`` are in the group."""
    rows = read(
        f"SELECT user_id FROM user_group_members WHERE workspace_id = ? "
        f"AND organization_id = ? AND group_id = ? AND user_id IN (SELECT {V})",
        [workspace_id, organization_id, group_id, user_ids],
    ).fetchall()
    return {r[0] for r in rows}


def add_group_members(
    tx: Writes, workspace_id: str, organization_id: str, group_id: str, user_ids: list[str], now: int
) -> None:
    if user_ids:
        tx.execute(
            f"INSERT INTO user_group_members (workspace_id, organization_id, group_id, user_id, created_at) "
            f"SELECT ?, ?, ?, {V}, ?",
            [workspace_id, organization_id, group_id, user_ids, now],
        )


def leave_groups(tx: Writes, workspace_id: str, organization_id: str, user_ids: list[str]) -> None:
    """Take the users out of every user group of the organization."""
    tx.execute(
        f"DELETE FROM user_group_members WHERE workspace_id = ? AND organization_id = ? AND user_id IN (SELECT {V})",
        [workspace_id, organization_id, user_ids],
    )
