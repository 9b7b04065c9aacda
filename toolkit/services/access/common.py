"""Helpers shared by the access services: results, errors, scopes and derived user fields.
The access statements are in :mod:`toolkit.store.access` and :mod:`toolkit.store.access_members`."""

from __future__ import annotations

from typing import Any

from toolkit.errors import ApiError, ErrorCode
from toolkit.os_random import token_hex
from toolkit.services.context import Services
from toolkit.store.access import existing
from toolkit.store.seam import Read


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


def new_internal_id() -> str:
    return "usr_" + token_hex(10)
