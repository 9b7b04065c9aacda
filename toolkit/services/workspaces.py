"""Workspaces and service authentication (semantics §2).

A workspace is one API key plus one or more auth tokens; both are stored only as SHA-256
hashes and compared in constant time. Authentication failures never say which header was
wrong. Rotating and revoking them: :mod:`toolkit.services.credentials`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import weakref
from dataclasses import dataclass

from toolkit.errors import ApiError, ErrorCode
from toolkit.services.fresh_read import FreshRead
from toolkit.store import AnyStore
from toolkit.store import workspaces as stored

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


def create_workspace(store: AnyStore, label: str = "default", *, dev: bool = False, now_ms: int) -> Credentials:
    """Create a workspace; the only time its key and token exist in clear text is the return value."""
    workspace_id = "ws_" + secrets.token_hex(8)
    api_key = "ak_" + secrets.token_urlsafe(24)
    auth_token = "at_" + secrets.token_urlsafe(32)

    label = DEV_LABEL if dev else label
    secret = secrets.token_urlsafe(48)
    store.write(
        lambda tx: stored.insert_workspace(
            tx, workspace_id, _hash(api_key), label, dev, secret, _hash(auth_token), now_ms
        )
    )
    credentials_changed(store)
    return Credentials(workspace_id, api_key, auth_token)


def has_dev_workspace(store: AnyStore) -> bool:
    return stored.has_dev_workspace(store.read)


def unauthenticated() -> ApiError:
    """The one answer to wrong service credentials: it does not say which header was wrong."""
    return ApiError(
        ErrorCode.UNAUTHENTICATED, "missing or invalid service credentials (x-service-api-key, x-service-auth-token)"
    )


# What a lookup compares against when the key or the token is not stored: hashes no secret has.
_NO_KEY, _NO_TOKEN = "k" * 64, "t" * 64


_EPOCHS: weakref.WeakKeyDictionary[AnyStore, int] = weakref.WeakKeyDictionary()


def credentials_changed(store: AnyStore) -> None:
    """Say that a key, token or secret of this store changed (after its write committed):
    every :class:`Authenticator` on the store forgets the pairs it confirmed."""
    _EPOCHS[store] = _EPOCHS.get(store, 0) + 1


class Authenticator:
    """Maps the two service headers to a workspace.

    A lookup in the database does the same work whatever it finds: two lookups, one per
    hash, each fetching a row whether or not the hash is stored (see ``_anchors``), then
    constant-time comparisons (against dummies when the key or the token is unknown), so the
    time taken tells neither whether the key exists nor which header was wrong. Only whole,
    valid pairs are remembered (by their hashes): a guess never is, and always takes the
    database path. A remembered pair is forgotten when :func:`credentials_changed` is called
    for the store — every change in :mod:`toolkit.services.credentials` calls it once
    committed — so a key rotated or a token revoked through this process stops working with
    the next request. On a shared store (``store.shared``: other processes change credentials
    too) that is not enough: every change also raises the database's credential epoch in its
    own transaction (:func:`toolkit.store.workspaces.credential_epoch`), and a remembered pair
    is used only while the epoch read for this request is the one it was confirmed under, so a
    change acknowledged by any process stops the old credential here with the next request."""

    def __init__(self, store: AnyStore) -> None:
        self.store = store
        self.shared = store.shared
        self._confirmed: dict[tuple[str, str], tuple[int, int, Workspace]] = {}
        self._anchor = (_NO_KEY, _NO_TOKEN)
        self._anchored: tuple[int, int] | None = None
        # For an event loop serving many requests: one epoch read shared by those that arrive together.
        self.current_epoch = FreshRead(self.stored_epoch)

    def stored_epoch(self) -> int:
        """The database's credential epoch (a read; 0 on a store only this process writes)."""
        return stored.credential_epoch(self.store.read) if self.shared else 0

    def _anchors(self, epochs: tuple[int, int]) -> tuple[str, str]:
        """A stored key hash and a stored token hash (dummies when there are none), read again
        after every credential change."""
        if self._anchored != epochs:
            key, token = stored.anchors(self.store.read)
            self._anchor = (key or _NO_KEY, token or _NO_TOKEN)
            self._anchored = epochs
        return self._anchor

    def remembered(
        self, api_key: str | None, auth_token: str | None, stored_epoch: int | None = None
    ) -> Workspace | None:
        """The workspace of a pair confirmed since the last credential change, else None
        (cheap: two SHA-256s and a dict lookup, no database). On a shared store only with
        ``stored_epoch``, the :meth:`stored_epoch` read after this request arrived."""
        if not api_key or not auth_token or (self.shared and stored_epoch is None):
            return None
        hit = self._confirmed.get((_hash(api_key), _hash(auth_token)))
        if hit is None or hit[0] != _EPOCHS.get(self.store, 0) or hit[1] != (stored_epoch or 0):
            return None
        return hit[2]

    async def identify(self, api_key: str | None, auth_token: str | None) -> Workspace | None:
        """The workspace of the service headers, or None when they are missing or wrong; for
        an event loop. A remembered pair costs no thread (on a shared store, one epoch read
        shared with the requests arriving alongside); a new one is looked up in a thread, under
        that same epoch. Raises ``UNAVAILABLE`` when the database cannot be reached."""
        if not api_key or not auth_token:
            return None
        epoch = await self.current_epoch() if self.shared else None
        known = self.remembered(api_key, auth_token, epoch)
        if known is not None:
            return known
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(None, self.authenticate, api_key, auth_token, epoch)
        except ApiError as exc:
            if exc.code is ErrorCode.UNAVAILABLE:
                raise
            return None

    def authenticate(self, api_key: str | None, auth_token: str | None, stored_epoch: int | None = None) -> Workspace:
        """The workspace of the service headers, else ``UNAUTHENTICATED``; ``stored_epoch``: the
        credential epoch already read for this request (read here when None)."""
        # Both taken before the credentials are read: a change after this voids the entry.
        local = _EPOCHS.get(self.store, 0)
        epochs = (local, self.stored_epoch() if stored_epoch is None else stored_epoch)
        known = self.remembered(api_key, auth_token, epochs[1])
        if known is not None:
            return known
        key_hash, token_hash = _hash(api_key or ""), _hash(auth_token or "")
        key_anchor, token_anchor = self._anchors(epochs)
        # Two lookups, both run whatever the first finds, each by its hash and by an anchor: a
        # hash some row has. A row is fetched whether or not the caller's hash is stored (a
        # fetched row costs DuckDB far more than a miss), so a known key takes no longer.
        keys = stored.workspaces_by_key(self.store.read, key_hash, key_anchor)
        tokens = stored.tokens_by_hash(self.store.read, token_hash, token_anchor)
        row: tuple = (None,) * 6
        for candidate in keys:
            if hmac.compare_digest(candidate[5], key_hash):
                row = candidate
        token: tuple = (None, None)
        for candidate in tokens:
            if hmac.compare_digest(candidate[1], token_hash):
                token = candidate
        row = (*row, *token)
        key_ok = hmac.compare_digest(row[5] or _NO_KEY, key_hash)
        token_ok = hmac.compare_digest(row[7] or _NO_TOKEN, token_hash)
        same = hmac.compare_digest(row[0] or "key", row[6] or "token")  # the token is this workspace's
        if not (key_ok & token_ok & same) or not api_key or not auth_token:
            self._confirmed.pop((key_hash, token_hash), None)  # a pair revoked elsewhere
            raise unauthenticated()
        workspace = Workspace(*row[:5])
        self._confirmed[(key_hash, token_hash)] = (*epochs, workspace)
        return workspace


def workspace_settings(
    store: AnyStore, workspace_id: str, *, advanced_queries: bool | None = None
) -> dict[str, object]:
    """The workspace's settings after switching those given (semantics §2: ``advancedQueries``).
    Every server on the store applies a change from its next request, like a rotated key."""
    if advanced_queries is not None:
        on = advanced_queries
        store.write(lambda tx: stored.set_advanced_queries(tx, workspace_id, on))
        credentials_changed(store)
    return {"workspaceId": workspace_id, "advancedQueries": stored.advanced_queries(store.read, workspace_id)}
