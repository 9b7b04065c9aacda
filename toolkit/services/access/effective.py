"""Effective access of a user to a document (semantics §8).

The rules, in order (the first that applies decides):

1. a document that does not exist, or is disabled → no access (``None``);
2. an explicit membership on the document → its role;
3. a membership on the document's folder → its role; while a folder inherits from its parent
   (``inheritFromParent``), the parent's memberships count too, up the chain;
4. an organization-level membership → its role, unless the document is ``restricted``;
5. a ``public`` document → ``viewer`` for any member of the organization (a membership at
   organization, folder or document level);
6. otherwise → ``None``.

Expired memberships (``expires_at`` at or before ``now_s``) count as absent.

The access type of a document is its own when it is ``restricted`` or ``public``; a document
left at the default ``organizationPrivate`` takes the access type of its folder (a folder that
inherits takes its parent's, up the chain; a chain that inherits to the top ends at
``organizationPrivate``).

``read`` is ``store.read`` or a write job's ``tx.execute`` (every statement it runs is a
``SELECT``, from :mod:`toolkit.store.access_effective`, so a writer job may still raise an
``ApiError`` afterwards). Two to three statements per call, whatever the number of users.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from toolkit.store.access_effective import counted_memberships, document, folder_chain

Role = Literal["editor", "viewer"]


def effective_roles(
    read: Callable,
    workspace_id: str,
    user_ids: Iterable[str],
    document_id: str,
    organization_id: str | None,
    now_s: float,
) -> dict[str, Role | None]:
    """user id -> ``"editor"``, ``"viewer"`` or ``None`` for every user in ``user_ids``.

    ``organization_id`` is ``''`` (or ``None``) for a document without an organization.
    """
    users = list(dict.fromkeys(user_ids))
    out: dict[str, Role | None] = {u: None for u in users}
    org = organization_id or ""
    if not users:
        return out
    doc = document(read, workspace_id, org, document_id)
    if doc is None or doc[0]:
        return out
    _, doc_type, folder_id = doc
    chain = [] if folder_id is None else folder_chain(read, workspace_id, org, folder_id)
    # Folders whose memberships count: the document's folder, then parents while a folder inherits.
    counted: list[str] = []
    for _, fid, _, inherits in chain:
        counted.append(fid)
        if not inherits:
            break
    access_type = doc_type if doc_type != "organizationPrivate" else folder_access_type(chain)
    rows = counted_memberships(read, workspace_id, org, users, now_s, document_id, counted, access_type == "public")
    by_user: dict[str, dict[tuple[str, str], str]] = {}
    for user_id, rtype, rid, role in rows:
        by_user.setdefault(user_id, {})[(rtype, rid)] = role
    for user_id, held in by_user.items():
        out[user_id] = decide_role(held, document_id, org, counted, access_type)
    return out


def effective_role(
    read: Callable, workspace_id: str, user_id: str, document_id: str, organization_id: str | None, now_s: float
) -> Role | None:
    """``"editor"``, ``"viewer"`` or ``None``: what ``user_id`` may do on the document."""
    return effective_roles(read, workspace_id, [user_id], document_id, organization_id, now_s)[user_id]


def folder_access_type(chain: list[tuple]) -> str:
    for _, _, access_type, inherits in chain:
        if not inherits:
            return access_type or "organizationPrivate"
    return "organizationPrivate"


def decide_role(
    held: dict[tuple[str, str], str], document_id: str, org: str, counted: list[str], access_type: str
) -> Role | None:
    role = held.get(("document", document_id))
    if role is not None:
        return role  # type: ignore[return-value]
    for folder_id in counted:
        role = held.get(("folder", folder_id))
        if role is not None:
            return role  # type: ignore[return-value]
    role = held.get(("organization", org)) if org else None
    if role is not None and access_type != "restricted":
        return role  # type: ignore[return-value]
    if access_type == "public" and org and held:
        return "viewer"
    return None
