"""The operator's endpoints (outside ``/v2``, ``server.admin``): who may call them and what they do.

They span workspaces, so workspace credentials do not open them: the server is started with an
operator token (``--admin-token`` / ``COLLAB_ADMIN_TOKEN``) and a request carries it as
``authorization: Bearer <token>``. Without a token configured they do not exist (404).

>>> authorise("s3cret", "Bearer s3cret", "/admin/backup")
>>> authorise("s3cret", "Bearer guess", "/admin/backup")
Traceback (most recent call last):
...
toolkit.errors.ApiError: authorization: the operator token (Bearer) is missing or wrong
>>> authorise(None, "Bearer s3cret", "/admin/backup")
Traceback (most recent call last):
...
toolkit.errors.ApiError: no endpoint at /admin/backup
"""

from __future__ import annotations

import hmac
import logging
from pathlib import Path

from toolkit.errors import ApiError, ErrorCode
from toolkit.store import AnyStore, Store
from toolkit.store.backup import backup_beside

log = logging.getLogger("collab.admin")


def authorise(token: str | None, authorization: str, path: str) -> None:
    """Pass a request whose ``authorization`` header carries the operator ``token``; else
    ``NOT_FOUND`` (no token configured) or ``UNAUTHENTICATED``. Compared in constant time."""
    if not token:
        raise ApiError(ErrorCode.NOT_FOUND, f"no endpoint at {path}")
    if not hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode()):
        raise ApiError(ErrorCode.UNAUTHENTICATED, "authorization: the operator token (Bearer) is missing or wrong")


def backup(store: AnyStore) -> Path:
    """A consistent copy of the server's DuckDB database, in a new file beside it that the caller
    sends and removes. On PostgreSQL ``FAILED_PRECONDITION`` (``pg_dump`` is the backup there);
    a copy that fails (a full disk, say) is ``UNAVAILABLE`` with the reason, and the server
    carries on."""
    if not isinstance(store, Store):
        message = "backup: the database is PostgreSQL; back it up with pg_dump (README, Backups)"
        raise ApiError(ErrorCode.FAILED_PRECONDITION, message)
    try:
        return backup_beside(store)
    except Exception as exc:
        log.exception("backup failed")
        raise ApiError(ErrorCode.UNAVAILABLE, f"backup failed: {type(exc).__name__}: {exc}") from exc
