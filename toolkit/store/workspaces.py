"""Workspaces and their credentials: API key hashes, auth token hashes, JWT signing secrets.

Only hashes of keys and tokens are stored; :mod:`toolkit.services.workspaces` hashes and
compares. ``read`` is ``store.read`` or a write job's ``tx.execute``.

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     store.write(lambda tx: insert_workspace(tx, "ws_1", "kh", "a", False, "s", "th", 0))
...     token_owner(store.read, "th"), workspace_by_key(store.read, "kh"), verification_secrets(store.read, "ws_1", 0)
('ws_1', 'ws_1', ['s'])
"""

from __future__ import annotations

from toolkit.store.seam import Read, Writes, count
from toolkit.store.writer import Row


def insert_workspace(
    tx: Writes, workspace_id: str, key_hash: str, label: str, dev: bool, jwt_secret: str, token_hash: str, now_ms: int
) -> None:
    """A new workspace with its one API key and its first auth token."""
    tx.execute(
        "INSERT INTO workspaces (workspace_id, api_key_hash, label, dev, jwt_secret, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [workspace_id, key_hash, label, dev, jwt_secret, now_ms],
    )
    add_token(tx, token_hash, workspace_id, now_ms)


def has_dev_workspace(read: Read) -> bool:
    return count(read, "SELECT count(*) FROM workspaces WHERE dev", []) > 0


def anchors(read: Read) -> tuple[str | None, str | None]:
    """A stored API key hash and a stored token hash (None where there is none)."""
    key = read("SELECT min(api_key_hash) FROM workspaces", [])[0][0]
    token = read("SELECT min(token_hash) FROM auth_tokens", [])[0][0]
    return key, token


def workspaces_by_key(read: Read, key_hash: str, anchor: str) -> list[Row]:
    """``(workspace_id, label, dev, jwt_secret, advanced_queries, api_key_hash)`` of the
    workspaces whose key hash is ``key_hash`` or ``anchor``."""
    return read(
        "SELECT workspace_id, label, dev, jwt_secret, advanced_queries, api_key_hash "
        "FROM workspaces WHERE api_key_hash IN (?, ?)",
        [key_hash, anchor],
    ).fetchall()


def tokens_by_hash(read: Read, token_hash: str, anchor: str) -> list[Row]:
    """``(workspace_id, token_hash)`` of the tokens whose hash is ``token_hash`` or ``anchor``."""
    return read(
        "SELECT workspace_id, token_hash FROM auth_tokens WHERE token_hash IN (?, ?)", [token_hash, anchor]
    ).fetchall()


def _one(read: Read, sql: str, params: list[str]) -> str | None:
    row = read(sql, params).fetchone()
    return None if row is None else str(row[0])


def workspace_by_id(read: Read, workspace_id: str) -> str | None:
    return _one(read, "SELECT workspace_id FROM workspaces WHERE workspace_id = ?", [workspace_id])


def workspace_by_key(read: Read, key_hash: str) -> str | None:
    return _one(read, "SELECT workspace_id FROM workspaces WHERE api_key_hash = ?", [key_hash])


def token_owner(read: Read, token_hash: str) -> str | None:
    """The workspace the token belongs to, or None."""
    return _one(read, "SELECT workspace_id FROM auth_tokens WHERE token_hash = ?", [token_hash])


def set_key(tx: Writes, workspace_id: str, key_hash: str) -> None:
    tx.execute("UPDATE workspaces SET api_key_hash = ? WHERE workspace_id = ?", [key_hash, workspace_id])
    raise_credential_epoch(tx)


def add_token(tx: Writes, token_hash: str, workspace_id: str, now_ms: int) -> None:
    tx.execute(
        "INSERT INTO auth_tokens (token_hash, workspace_id, created_at) VALUES (?, ?, ?)",
        [token_hash, workspace_id, now_ms],
    )


def lock_workspace(tx: Writes, workspace_id: str) -> None:
    """Hold the workspace's row until the job commits: another process changing its
    credentials at the same moment waits, then reads what this job wrote (a no-op update,
    because DuckDB has no ``SELECT … FOR UPDATE``; its single writer needs no lock anyway)."""
    tx.execute("UPDATE workspaces SET label = label WHERE workspace_id = ?", [workspace_id])


def token_count(read: Read, workspace_id: str) -> int:
    return count(read, "SELECT count(*) FROM auth_tokens WHERE workspace_id = ?", [workspace_id])


def delete_token(tx: Writes, token_hash: str) -> None:
    tx.execute("DELETE FROM auth_tokens WHERE token_hash = ?", [token_hash])
    raise_credential_epoch(tx)


def replace_secret(tx: Writes, workspace_id: str, secret: str, now_ms: int, accepted_until: int) -> None:
    """Make ``secret`` the workspace's signing secret; the one it replaces stays accepted
    until ``accepted_until``, and retired secrets already past theirs are dropped."""
    lock_workspace(tx, workspace_id)  # two rotations at once: the second retires the first's secret
    ((old,),) = tx.execute("SELECT jwt_secret FROM workspaces WHERE workspace_id = ?", [workspace_id])
    tx.execute(
        "INSERT INTO retired_secrets (workspace_id, jwt_secret, retired_at, accepted_until) VALUES (?, ?, ?, ?)",
        [workspace_id, old, now_ms, accepted_until],
    )
    tx.execute("UPDATE workspaces SET jwt_secret = ? WHERE workspace_id = ?", [secret, workspace_id])
    tx.execute("DELETE FROM retired_secrets WHERE workspace_id = ? AND accepted_until <= ?", [workspace_id, now_ms])
    raise_credential_epoch(tx)


def advanced_queries(read: Read, workspace_id: str) -> bool:
    ((on,),) = read("SELECT advanced_queries FROM workspaces WHERE workspace_id = ?", [workspace_id]).fetchall()
    return bool(on)


def set_advanced_queries(tx: Writes, workspace_id: str, on: bool) -> None:
    """Switch the workspace's ``advancedQueries`` setting. Servers keep the setting with the
    credentials they confirmed, so the change raises the credential epoch like one."""
    tx.execute("UPDATE workspaces SET advanced_queries = ? WHERE workspace_id = ?", [on, workspace_id])
    raise_credential_epoch(tx)


def raise_credential_epoch(tx: Writes) -> None:
    """Count one credential change, in the transaction that makes it: a reader of
    :func:`credential_epoch` sees the new count exactly when it sees the change."""
    tx.execute("UPDATE credential_epoch SET n = n + 1", [])


def credential_epoch(read: Read) -> int:
    """How many credential changes (key rotations, token revocations, secret rotations, and
    settings changes, which servers keep with the credentials) the database has committed."""
    return count(read, "SELECT n FROM credential_epoch", [])


def verification_secrets(read: Read, workspace_id: str, now_ms: int) -> list[str]:
    """The current secret first, then retired ones accepted at ``now_ms``, newest first."""
    rows = read(
        "SELECT jwt_secret FROM (SELECT jwt_secret, 9223372036854775807 AS k FROM workspaces WHERE workspace_id = ? "
        "UNION ALL SELECT jwt_secret, retired_at FROM retired_secrets WHERE workspace_id = ? AND accepted_until > ?) "
        "AS s ORDER BY k DESC",
        [workspace_id, workspace_id, now_ms],
    ).fetchall()
    return [secret for (secret,) in rows]
