"""Workspaces and service authentication (semantics §2).

A workspace is one API key plus one or more auth tokens; both are stored only as SHA-256
hashes and compared in constant time. Authentication failures never say which header was
wrong.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from toolkit.errors import ApiError, ErrorCode
from toolkit.store import Store

DEV_LABEL = "development (not for production)"


@dataclass(frozen=True)
class Workspace:
    workspace_id: str
    label: str
    dev: bool
    jwt_secret: str
    advanced_queries: bool


@dataclass(frozen=True)
class Credentials:
    workspace_id: str
    api_key: str
    auth_token: str

    def to_json(self) -> dict:
        return {"apiKey": self.api_key, "authToken": self.auth_token}


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_workspace(store: Store, label: str = "default", *, dev: bool = False, now_ms: int) -> Credentials:
    """Create a workspace; the only time its key and token exist in clear text is the return value."""
    workspace_id = "ws_" + secrets.token_hex(8)
    api_key = "ak_" + secrets.token_urlsafe(24)
    auth_token = "at_" + secrets.token_urlsafe(32)

    def job(tx):
        tx.execute(
            "INSERT INTO workspaces (workspace_id, api_key_hash, label, dev, jwt_secret, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [workspace_id, _hash(api_key), DEV_LABEL if dev else label, dev, secrets.token_urlsafe(48), now_ms],
        )
        tx.execute("INSERT INTO auth_tokens (token_hash, workspace_id, created_at) VALUES (?, ?, ?)",
                   [_hash(auth_token), workspace_id, now_ms])

    store.write(job)
    return Credentials(workspace_id, api_key, auth_token)


def has_dev_workspace(store: Store) -> bool:
    return store.read("SELECT count(*) FROM workspaces WHERE dev").fetchone()[0] > 0


def _unauthenticated() -> ApiError:
    return ApiError(ErrorCode.UNAUTHENTICATED,
                    "missing or invalid service credentials (x-service-api-key, x-service-auth-token)")


class Authenticator:
    """Maps the two service headers to a workspace. Successful lookups are remembered by
    hash, so a request costs two SHA-256s and a dict lookup."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._known: dict[tuple[str, str], Workspace] = {}

    def authenticate(self, api_key: str | None, auth_token: str | None) -> Workspace:
        if not api_key or not auth_token:
            raise _unauthenticated()
        key_hash, token_hash = _hash(api_key), _hash(auth_token)
        known = self._known.get((key_hash, token_hash))
        if known is not None:
            return known
        row = self.store.read(
            "SELECT workspace_id, label, dev, jwt_secret, advanced_queries FROM workspaces WHERE api_key_hash = ?",
            [key_hash]).fetchone()
        tokens = [] if row is None else [t for (t,) in self.store.read(
            "SELECT token_hash FROM auth_tokens WHERE workspace_id = ?", [row[0]]).fetchall()]
        # Compare against every stored token (and a dummy when the key is unknown) so the
        # time taken does not tell a wrong key from a wrong token.
        matched = False
        for stored in tokens or ["0" * 64]:
            matched |= hmac.compare_digest(stored, token_hash)
        if row is None or not matched:
            raise _unauthenticated()
        workspace = Workspace(*row)
        self._known[(key_hash, token_hash)] = workspace
        return workspace
