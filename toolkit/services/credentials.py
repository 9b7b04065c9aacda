"""Rotating and revoking a workspace's credentials (issue 13): its API key, its auth tokens
and the secret that signs its user tokens.

Each function is one write through the store, then
:func:`~toolkit.services.workspaces.credentials_changed`, which makes every
:class:`~toolkit.services.workspaces.Authenticator` on that store forget the pairs it
confirmed: a rotated key or a revoked token stops working with the next request. A rotated signing secret stays
accepted by :func:`verify_workspace_token` for a grace period (``retired_secrets``), so user
tokens issued just before the rotation keep working until they would have expired anyway.

The ``collab workspace rotate-key | revoke-token | rotate-secret`` commands call these on the
database file of a stopped server (DuckDB lets one process open the file for writing).
"""

from __future__ import annotations

import secrets
from typing import Any

from toolkit.services.workspaces import _hash, credentials_changed
from toolkit.store import Store
from toolkit.tokens import LIFETIME_S, UserTokenError, verify_user_token

DEFAULT_GRACE_MS = LIFETIME_S * 1000  # every token signed with the old secret expires within it


class CredentialError(ValueError):
    """The workspace or token named does not exist, or the change would lock the workspace out."""


def find_workspace(store: Store, *, workspace_id: str | None = None, api_key: str | None = None) -> str:
    """The id of the workspace named by its id or by its current API key."""
    if (workspace_id is None) == (api_key is None):
        raise CredentialError("name the workspace by its id or by its API key (one of the two)")
    if workspace_id is not None:
        row = store.read("SELECT workspace_id FROM workspaces WHERE workspace_id = ?", [workspace_id]).fetchone()
    else:
        row = store.read("SELECT workspace_id FROM workspaces WHERE api_key_hash = ?", [_hash(api_key)]).fetchone()
    if row is None:
        raise CredentialError("no such workspace" if api_key is None else "no workspace has this API key")
    return row[0]


def token_workspace(store: Store, auth_token: str) -> str:
    """The id of the workspace an auth token belongs to."""
    row = store.read("SELECT workspace_id FROM auth_tokens WHERE token_hash = ?", [_hash(auth_token)]).fetchone()
    if row is None:
        raise CredentialError("no workspace has this auth token")
    return row[0]


def rotate_key(store: Store, workspace_id: str) -> str:
    """A new API key for the workspace, returned once; the old one stops working at once."""
    api_key = "ak_" + secrets.token_urlsafe(24)
    store.write(
        lambda tx: tx.execute(
            "UPDATE workspaces SET api_key_hash = ? WHERE workspace_id = ?", [_hash(api_key), workspace_id]
        )
    )
    credentials_changed(store)
    return api_key


def issue_token(store: Store, workspace_id: str, *, now_ms: int) -> str:
    """One more auth token for the workspace, returned once."""
    auth_token = "at_" + secrets.token_urlsafe(32)
    store.write(
        lambda tx: tx.execute(
            "INSERT INTO auth_tokens (token_hash, workspace_id, created_at) VALUES (?, ?, ?)",
            [_hash(auth_token), workspace_id, now_ms],
        )
    )
    return auth_token


def revoke_token(store: Store, auth_token: str, *, allow_last: bool = False) -> str:
    """Delete an auth token (it stops working at once); returns its workspace id. Revoking a
    workspace's last token is refused unless ``allow_last`` (issue a new one first)."""
    token_hash = _hash(auth_token)

    def job(tx):
        row = tx.execute("SELECT workspace_id FROM auth_tokens WHERE token_hash = ?", [token_hash]).fetchone()
        if row is None:
            raise CredentialError("no workspace has this auth token")
        (left,) = tx.execute("SELECT count(*) FROM auth_tokens WHERE workspace_id = ?", [row[0]]).fetchone()
        if left == 1 and not allow_last:
            raise CredentialError(
                f"this is the last auth token of workspace {row[0]}: issue a new one first "
                "(or revoke it anyway, leaving the workspace without access)"
            )
        tx.execute("DELETE FROM auth_tokens WHERE token_hash = ?", [token_hash])
        return row[0]

    workspace_id = store.write(job)
    credentials_changed(store)
    return workspace_id


def rotate_secret(store: Store, workspace_id: str, *, now_ms: int, grace_ms: int = DEFAULT_GRACE_MS) -> dict:
    """A new signing secret for the workspace's user tokens; the old one is still accepted by
    :func:`verify_workspace_token` until ``now_ms + grace_ms``. Returns the new secret (for
    applications that verify tokens) and that moment."""
    if grace_ms < 0:
        raise CredentialError("the grace period must be 0 or more")
    secret = secrets.token_urlsafe(48)
    until = now_ms + grace_ms

    def job(tx):
        (old,) = tx.execute("SELECT jwt_secret FROM workspaces WHERE workspace_id = ?", [workspace_id]).fetchone()
        tx.execute("INSERT INTO retired_secrets VALUES (?, ?, ?, ?)", [workspace_id, old, now_ms, until])
        tx.execute("UPDATE workspaces SET jwt_secret = ? WHERE workspace_id = ?", [secret, workspace_id])
        # Secrets past their grace are of no use to anyone: do not keep them.
        tx.execute("DELETE FROM retired_secrets WHERE workspace_id = ? AND accepted_until <= ?", [workspace_id, now_ms])

    store.write(job)
    credentials_changed(store)  # the remembered workspaces carry the old secret
    return {"jwtSecret": secret, "previousAcceptedUntil": until}


def verification_secrets(store: Store, workspace_id: str, *, now_ms: int) -> list[str]:
    """The secrets a user token of this workspace may be signed with at ``now_ms``: the
    current one first, then retired ones still in their grace period, newest first."""
    rows = store.read(
        "SELECT jwt_secret FROM (SELECT jwt_secret, 9223372036854775807 AS k FROM workspaces WHERE workspace_id = ? "
        "UNION ALL SELECT jwt_secret, retired_at FROM retired_secrets WHERE workspace_id = ? AND accepted_until > ?) "
        "ORDER BY k DESC",
        [workspace_id, workspace_id, now_ms],
    ).fetchall()
    return [secret for (secret,) in rows]


def verify_workspace_token(store: Store, workspace_id: str, token: str, *, now_ms: int) -> dict[str, Any]:
    """The claims of a user token of this workspace, checked against every secret it may be
    signed with now (:func:`verification_secrets`); :class:`UserTokenError` otherwise."""
    found = verification_secrets(store, workspace_id, now_ms=now_ms)
    if not found:
        raise UserTokenError("invalid user token: no such workspace")
    return verify_user_token(token, found, now_s=now_ms / 1000)
