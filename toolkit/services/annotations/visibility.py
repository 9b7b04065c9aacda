"""Who may see which annotation (semantics §9), for many documents in two cheap steps.

A user sees an annotation when they have access to its document (effective access,
semantics §8) and its visibility admits them: ``public`` — everyone with access;
``organizationPrivate`` — users with any unexpired membership in that organization
(organization, folder or document level); ``restricted`` — only ``visibility.userIds``.

Effective access is defined by the access area (``toolkit.services.access.effective``). Its
``effective_role`` answers for one document with two or three statements, so counting 30
documents with it would cost up to 90. :func:`access_facts` instead fetches, in ONE plain
statement (:func:`toolkit.store.annotation_counts.facts`), the requested documents, the
user's live memberships and the organization's folders, then applies the access area's own decision
(``decide_role``, ``folder_access_type``) to each document in Python, walking folder chains
exactly as its recursive query does. ``benchmarks/collab_queries.py`` checks that the
result equals ``effective_role`` for every document of its workload; ``verifyUserPermissions``
(one document, its authors) calls ``effective_roles`` itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from toolkit.store import annotation_counts
from toolkit.store.annotation_counts import Read

MAX_FOLDER_DEPTH = 64  # as toolkit.services.access.effective: a parent cycle stops here


class Access(NamedTuple):
    roles: dict[str, str]  # accessible document id -> "editor" | "viewer"
    member_orgs: set[str]  # organizations where the user holds any live membership


def access_facts(
    read: Read, workspace_id: str, user_id: str, organization_id: str, document_ids: Iterable[str] | None, now_s: float
) -> Access:
    """The user's role on each accessible document of ``organization_id`` ('' for documents
    without organization) — the given ones, or all of them when ``document_ids`` is None —
    and the organizations they are a member of. One statement."""
    return decide(
        annotation_counts.facts(read, workspace_id, user_id, organization_id, document_ids, now_s), organization_id
    )


def decide(rows: Iterable[tuple], organization_id: str) -> Access:
    """:class:`Access` from the facts rows (:mod:`toolkit.store.annotation_counts`; rows of other kinds are skipped),
    by the access area's own decision rules."""
    from toolkit.services.access.effective import decide_role, folder_access_type

    org = organization_id
    documents, folders, held, member_orgs = [], {}, {}, set()
    for kind, key, a, b, _, flag, _ in rows:
        if kind == "document":
            documents.append((key, a, b, flag))
        elif kind == "folder":
            folders[key] = (a, b, flag)
        elif kind.startswith("membership:"):
            member_orgs.add(a)
            if a == org:
                held[(kind.removeprefix("membership:"), key)] = b
    roles: dict[str, str] = {}
    for document_id, folder_id, access_type, disabled in documents:
        if disabled:
            continue
        chain = _chain(folders, folder_id)
        counted = []
        for _, fid, _, inherits in chain:
            counted.append(fid)
            if not inherits:
                break
        effective_type = access_type if access_type != "organizationPrivate" else folder_access_type(chain)
        role = decide_role(held, document_id, org, counted, effective_type)
        if role is not None:
            roles[document_id] = role
    return Access(roles, member_orgs)


def _chain(folders: dict, folder_id: str | None) -> list[tuple]:
    """(depth, folder id, access type, inherits) from the document's folder up through its
    parents, as the access area's recursive query lists them."""
    chain, depth = [], 0
    while folder_id is not None and folder_id in folders and depth <= MAX_FOLDER_DEPTH:
        parent, access_type, inherits = folders[folder_id]
        chain.append((depth, folder_id, access_type, inherits))
        folder_id, depth = parent, depth + 1
    return chain


def document_roles(
    read: Read, workspace_id: str, user_id: str, organization_id: str, document_ids: Iterable[str] | None, now_s: float
) -> dict[str, str]:
    """``{documentId: "editor" | "viewer"}`` for the accessible documents (see :func:`access_facts`)."""
    return access_facts(read, workspace_id, user_id, organization_id, document_ids, now_s).roles


def effective_roles(
    read: Read, workspace_id: str, user_ids: Iterable[str], document_id: str, organization_id: str, now_s: float
) -> Mapping[str, str | None]:
    """Every user's role on one document, by the access area's own function
    (``verifyUserPermissions``). Imported late: that area is not needed to import this one."""
    from toolkit.services.access.effective import effective_roles as roles_of

    return roles_of(read, workspace_id, user_ids, document_id, organization_id, now_s)
