"""What the annotation services share: addressing a document, the stored columns, results."""

from __future__ import annotations

from toolkit.errors import ApiError, ErrorCode
from toolkit.store import annotations as stored


def org_key(organization_id: str | None) -> str:
    """How an organization is stored: '' for a document without organization (semantics §8)."""
    return organization_id or ""


def describe(organization_id: str, document_id: str) -> str:
    if organization_id:
        return f"document {document_id} of organization {organization_id}"
    return f"document {document_id} (without organization)"


def require_document(read, workspace_id: str, organization_id: str, document_id: str) -> None:
    if not stored.document_exists(read, workspace_id, organization_id, document_id):
        hint = "" if organization_id else " (give organizationId for a document of an organization)"
        raise ApiError(ErrorCode.NOT_FOUND, f"{describe(organization_id, document_id)} not found{hint}")


def bulk(message: str, data) -> dict:
    """The result of a non-workflow endpoint: ``{status, message, data}``."""
    return {"status": "success", "message": message, "data": data}


def now_seconds(now_ms: int) -> float:
    """Membership expiry is in Unix seconds (semantics §1)."""
    return now_ms / 1000
