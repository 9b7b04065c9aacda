"""Workflow definitions: one row per definition (its current version and status) and every
version's body as sent.

Each function takes ``read`` (``store.read``, or ``tx.execute`` inside a write job) or ``tx``.
The ``lock`` arguments matter on a shared store (PostgreSQL, several processes), where a job
runs in its own transaction beside others: ``FOR SHARE`` lets dispatches of one definition
run together but not beside a change of it, ``FOR UPDATE`` orders the changes. DuckDB's single
writer orders everything already and needs neither.
"""

from __future__ import annotations

from toolkit.store import executions, seam
from toolkit.store.paging import Filters, keyset
from toolkit.store.seam import Read, Writes
from toolkit.store.writer import Row

# (level, organization_id, document_id)
Scope = tuple[str, str | None, str | None]

COLUMNS = "definition_id, version, status, scope_level, organization_id, document_id, created_at, updated_at, list_key"

_WHERE = " FROM definitions WHERE workspace_id = ? AND definition_id = ?"
_HEAD = "SELECT version, status, scope_level, organization_id, document_id" + _WHERE
_ROW = f"SELECT {COLUMNS}" + _WHERE


def head(read: Read, workspace_id: str, definition_id: str, *, lock: bool = False) -> Row | None:
    """``(version, status, scope_level, organization_id, document_id)`` — what a dispatch needs —
    or None. ``lock`` holds the row ``FOR SHARE`` until the transaction ends."""
    return read(_HEAD + " FOR SHARE" if lock else _HEAD, [workspace_id, definition_id]).fetchone()


def row(read: Read, workspace_id: str, definition_id: str, *, lock: bool = False) -> Row | None:
    """The definition's row (:data:`COLUMNS`), or None; ``lock`` holds it ``FOR UPDATE``."""
    return read(_ROW + " FOR UPDATE" if lock else _ROW, [workspace_id, definition_id]).fetchone()


def version_of(read: Read, workspace_id: str, definition_id: str) -> int | None:
    found = read("SELECT version" + _WHERE, [workspace_id, definition_id]).fetchone()
    return None if found is None else found[0]


def body(read: Read, workspace_id: str, definition_id: str, version: int) -> str | None:
    """One version's body as sent (JSON text), or None."""
    found = read(
        "SELECT body FROM definition_versions WHERE workspace_id = ? AND definition_id = ? AND version = ?",
        [workspace_id, definition_id, version],
    ).fetchone()
    return None if found is None else found[0]


def count(read: Read, workspace_id: str, *, lock: bool = False) -> int:
    """Definitions the workspace stores, deleted ones included; ``lock``:
    :func:`~toolkit.store.executions.hold_workspace` first."""
    if lock:
        executions.hold_workspace(read, workspace_id)
    return seam.count(read, "SELECT count(*) FROM definitions WHERE workspace_id = ?", [workspace_id])


def create(
    tx: Writes, workspace_id: str, definition_id: str, body_json: str, now: int, scope: Scope, tags: list[str] | None
) -> None:
    """Version 1 of a new definition, active; ``scope`` is ``(level, organization_id, document_id)``."""
    tx.execute(
        "INSERT INTO definition_versions (workspace_id, definition_id, version, body, created_at) "
        "VALUES (?, ?, 1, ?, ?)",
        [workspace_id, definition_id, body_json, now],
    )
    tx.execute(
        "INSERT INTO definitions VALUES (?, ?, 1, 'active', ?, ?, ?, ?, ?, ?, ?)",
        [workspace_id, definition_id, *scope, tags, now, now, tx.next_key()],
    )


def add_version(
    tx: Writes,
    workspace_id: str,
    definition_id: str,
    version: int,
    body_json: str,
    now: int,
    scope: Scope,
    tags: list[str] | None,
) -> None:
    """Store ``version`` and make it the current one."""
    tx.execute(
        "INSERT INTO definition_versions (workspace_id, definition_id, version, body, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [workspace_id, definition_id, version, body_json, now],
    )
    tx.execute(
        "UPDATE definitions SET version = ?, scope_level = ?, organization_id = ?, document_id = ?, "
        "tags = ?, updated_at = ? WHERE workspace_id = ? AND definition_id = ?",
        [version, *scope, tags, now, workspace_id, definition_id],
    )


def tombstone(tx: Writes, workspace_id: str, definition_id: str, now: int) -> None:
    tx.execute(
        "UPDATE definitions SET status = 'tombstoned', updated_at = ? WHERE workspace_id = ? AND definition_id = ?",
        [now, workspace_id, definition_id],
    )


def page(
    read: Read,
    workspace_id: str,
    status: str,
    scope: tuple[str | None, str | None, str | None] | None,
    tags: list[str] | None,
    after: int | None,
    limit: int,
) -> list[Row]:
    """Up to ``limit`` rows (:data:`COLUMNS`) in creation order after list key ``after``;
    ``scope`` is ``(level, organization_id, document_id)``, each None for any."""
    filters = Filters("workspace_id = ?", workspace_id).add("status = ?", status)
    if scope is not None:
        level, organization_id, document_id = scope
        filters.equal(scope_level=level, organization_id=organization_id, document_id=document_id)
    if tags:
        filters.add("list_has_all(tags, ?)", tags)
    return keyset(read, f"{COLUMNS} FROM definitions", filters, "list_key", after, limit)
