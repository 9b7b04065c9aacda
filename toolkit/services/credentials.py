"""Rotating and revoking a workspace's credentials (issue 13): its API key, its auth tokens
and the secret that signs its user tokens.

Each function is one write through the store (statements in :mod:`toolkit.store.workspaces`),
then :func:`~toolkit.services.workspaces.credentials_changed`, which makes every
:class:`~toolkit.services.workspaces.Authenticator` on that store forget the pairs it
confirmed: a rotated key or a revoked token stops working with the next request. On a shared
store every change also raises the stored credential epoch in its own transaction, which every
process reads with each request: there too the old credential stops at once. A rotated signing
secret stays accepted by :func:`verify_workspace_token` for a grace period (``retired_secrets``),
so user tokens issued just before the rotation keep working until they would have expired anyway.

The ``collab workspace rotate-key | revoke-token | rotate-secret`` commands call these: on a
DuckDB file with its server stopped (DuckDB lets one process open the file for writing), on
PostgreSQL while the servers run.
"""

from __future__ import annotations

import secrets
from typing import Any

from toolkit.services.workspaces import _hash, credentials_changed
from toolkit.store import AnyStore, workspaces
from toolkit.tokens import LIFETIME_S, UserTokenError, verify_user_token

DEFAULT_GRACE_MS = LIFETIME_S * 1000  # every token signed with the old secret expires within it


class CredentialError(ValueError):
    """The workspace or token named does not exist, or the change would lock the workspace out."""


def find_workspace(store: AnyStore, *, workspace_id: str | None = None, api_key: str | None = None) -> str:
    """The id of the workspace named by its id or by its current API key."""
    if (workspace_id is None) == (api_key is None):
        raise CredentialError("name the workspace by its id or by its API key (one of the two)")
    if workspace_id is not None:
        found = workspaces.workspace_by_id(store.read, workspace_id)
    else:
        found = workspaces.workspace_by_key(store.read, _hash(api_key or ""))
    if found is None:
        raise CredentialError("no such workspace" if api_key is None else "no workspace has this API key")
    return found


def token_workspace(store: AnyStore, auth_token: str) -> str:
    """The id of the workspace an auth token belongs to."""
    found = workspaces.token_owner(store.read, _hash(auth_token))
    if found is None:
        raise CredentialError("no workspace has this auth token")
    return found


def rotate_key(store: AnyStore, workspace_id: str) -> str:
    """A new API key for the workspace, returned once; the old one stops working at once."""
    api_key = "ak_" + secrets.token_urlsafe(24)
    store.write(lambda tx: workspaces.set_key(tx, workspace_id, _hash(api_key)))
    credentials_changed(store)
    return api_key


def issue_token(store: AnyStore, workspace_id: str, *, now_ms: int) -> str:
    """One more auth token for the workspace, returned once."""
    auth_token = "at_" + secrets.token_urlsafe(32)
    store.write(lambda tx: workspaces.add_token(tx, _hash(auth_token), workspace_id, now_ms))
    return auth_token


def revoke_token(store: AnyStore, auth_token: str, *, allow_last: bool = False) -> str:
    """Delete an auth token (it stops working at once); returns its workspace id. Revoking a
    workspace's last token is refused unless ``allow_last`` (issue a new one first)."""
    token_hash = _hash(auth_token)

    def job(tx):
        owner = workspaces.token_owner(tx.execute, token_hash)
        if owner is None:
            raise CredentialError("no workspace has this auth token")
        workspaces.lock_workspace(tx, owner)  # two revocations at once must not both see a second token
        if workspaces.token_count(tx.execute, owner) == 1 and not allow_last:
            raise CredentialError(
                f"this is the last auth token of workspace {owner}: issue a new one first "
                "(or revoke it anyway, leaving the workspace without access)"
            )
        workspaces.delete_token(tx, token_hash)
        return owner

    workspace_id = store.write(job)
    credentials_changed(store)
    return workspace_id


def rotate_secret(store: AnyStore, workspace_id: str, *, now_ms: int, grace_ms: int = DEFAULT_GRACE_MS) -> dict:
    """A new signing secret for the workspace's user tokens; the old one is still accepted by
    :func:`verify_workspace_token` until ``now_ms + grace_ms``. Returns the new secret (for
    applications that verify tokens) and that moment."""
    if grace_ms < 0:
        raise CredentialError("the grace period must be 0 or more")
    secret = secrets.token_urlsafe(48)
    until = now_ms + grace_ms

    store.write(lambda tx: workspaces.replace_secret(tx, workspace_id, secret, now_ms, until))
    credentials_changed(store)  # the remembered workspaces carry the old secret
    return {"jwtSecret": secret, "previousAcceptedUntil": until}


def verification_secrets(store: AnyStore, workspace_id: str, *, now_ms: int) -> list[str]:
    """The secrets a user token of this workspace may be signed with at ``now_ms``: the
    current one first, then retired ones still in their grace period, newest first."""
    return workspaces.verification_secrets(store.read, workspace_id, now_ms)


def verify_workspace_token(store: AnyStore, workspace_id: str, token: str, *, now_ms: int) -> dict[str, Any]:
    """The claims of a user token of this workspace, checked against every secret it may be
    signed with now (:func:`verification_secrets`); :class:`UserTokenError` otherwise."""
    found = verification_secrets(store, workspace_id, now_ms=now_ms)
    if not found:
        raise UserTokenError("invalid user token: no such workspace")
    return verify_user_token(token, found, now_s=now_ms / 1000)
