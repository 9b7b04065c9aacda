"""Workspaces and service authentication (semantics §2).

A workspace is one API key plus one or more auth tokens; both are stored only as SHA-256
hashes and compared in constant time. Authentication failures never say which header was
wrong. Rotating and revoking them: :mod:`toolkit.services.credentials`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import weakref
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


# What a lookup compares against when the key or the token is not stored: hashes no secret has.
_NO_KEY, _NO_TOKEN = "k" * 64, "t" * 64


_EPOCHS: "weakref.WeakKeyDictionary[Store, int]" = weakref.WeakKeyDictionary()


def credentials_changed(store: Store) -> None:
    """Say that a key, token or secret of this store changed (after its write committed):
    every :class:`Authenticator` on the store forgets the pairs it confirmed."""
    _EPOCHS[store] = _EPOCHS.get(store, 0) + 1


class Authenticator:
    """Maps the two service headers to a workspace.

    A lookup in the database does the same work whatever it finds: one statement with an
    index lookup for each hash, then three constant-time comparisons (against dummies when the
    key or the token is unknown), so the time taken tells neither whether the key exists nor
    which header was wrong. A pair the database confirmed is remembered (by its hashes) until
    :func:`credentials_changed` is called for the store — every change in
    :mod:`toolkit.services.credentials` calls it once committed — so a rotated key or a
    revoked token stops working with the next request. Only whole, valid pairs are
    remembered: a guess never is, and always takes the database path."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._confirmed: dict[tuple[str, str], tuple[int, Workspace]] = {}

    def remembered(self, api_key: str | None, auth_token: str | None) -> Workspace | None:
        """The workspace of a pair confirmed since the last credential change, else None
        (cheap: two SHA-256s and a dict lookup, no database)."""
        if not api_key or not auth_token:
            return None
        hit = self._confirmed.get((_hash(api_key), _hash(auth_token)))
        if hit is None or hit[0] != _EPOCHS.get(self.store, 0):
            return None
        return hit[1]

    def authenticate(self, api_key: str | None, auth_token: str | None) -> Workspace:
        known = self.remembered(api_key, auth_token)
        if known is not None:
            return known
        epoch = _EPOCHS.get(self.store, 0)  # read before the database: a change after it voids the entry
        key_hash, token_hash = _hash(api_key or ""), _hash(auth_token or "")
        # Two independent index lookups, each done whether or not the other finds anything,
        # in one statement that always answers one row.
        row = self.store.read(
            "SELECT w.workspace_id, w.label, w.dev, w.jwt_secret, w.advanced_queries, w.api_key_hash, "
            "t.workspace_id, t.token_hash FROM (SELECT 1) AS one "
            "LEFT JOIN (SELECT * FROM workspaces WHERE api_key_hash = ?) AS w ON true "
            "LEFT JOIN (SELECT * FROM auth_tokens WHERE token_hash = ?) AS t ON true",
            [key_hash, token_hash]).fetchone()
        key_ok = hmac.compare_digest(row[5] or _NO_KEY, key_hash)
        token_ok = hmac.compare_digest(row[7] or _NO_TOKEN, token_hash)
        same = hmac.compare_digest(row[0] or "key", row[6] or "token")  # the token is this workspace's
        if not (key_ok & token_ok & same) or not api_key or not auth_token:
            raise _unauthenticated()
        workspace = Workspace(*row[:5])
        self._confirmed[(key_hash, token_hash)] = (epoch, workspace)
        return workspace
