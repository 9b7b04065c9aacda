"""Who may see which annotation (semantics §9), for many documents in two cheap steps.

A user sees an annotation when they have access to its document (effective access,
semantics §8) and its visibility admits them: ``public`` — everyone with access;
``organizationPrivate`` — users with any unexpired membership in that organization
(organization, folder or document level); ``restricted`` — only ``visibility.userIds``.

Effective access is defined by the access area (``toolkit.services.access.effective``). Its
``effective_role`` answers for one document with two or three statements, so counting 30
documents with it would cost up to 90. :func:`access_facts` instead fetches, in ONE plain
statement, the requested documents, the user's live memberships and the organization's
folders, then applies the access area's own decision
(``decide_role``, ``folder_access_type``) to each document in Python, walking folder chains
exactly as its recursive query does. ``benchmarks/collab_queries.py`` checks that the
result equals ``effective_role`` for every document of its workload; ``verifyUserPermissions``
(one document, its authors) calls ``effective_roles`` itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from toolkit.services.statements import parsed
from toolkit.store.writer import Rows

Read = Callable[..., Rows]  # Store.read or Tx.execute
MAX_FOLDER_DEPTH = 64  # as toolkit.services.access.effective: a parent cycle stops here

# Rows (kind, key, a, b, c, flag, n) — the documents, the user's live memberships (every
# organization), and the organization's folders (all of them: a plain scan of a small table
# is cheaper than working out which chains the documents need). Statements that need more
# facts (count) append rows of other kinds with UNION ALL.
_DOCUMENTS = """
SELECT 'document' AS kind, document_id AS key, folder_id AS a, access_type AS b, NULL::VARCHAR AS c,
       disabled AS flag, NULL::BIGINT AS n
FROM documents
WHERE workspace_id = $ws AND organization_id = $org AND {which}
"""
_MEMBERSHIPS_AND_FOLDERS = """
UNION ALL
SELECT 'membership:' || resource_type, resource_id, organization_id, access_role, NULL, NULL, NULL FROM memberships
WHERE workspace_id = $ws AND user_id = $user AND (expires_at IS NULL OR expires_at > $now)
UNION ALL
SELECT 'folder', folder_id, parent_folder_id, access_type, NULL, inherit_from_parent, NULL FROM folders
WHERE workspace_id = $ws AND organization_id = $org
"""
# $docs: the documents, or NULL for every document of the organization
FACTS_SQL = (
    _DOCUMENTS.format(which="($docs IS NULL OR list_contains($docs::VARCHAR[], document_id))")
    + _MEMBERSHIPS_AND_FOLDERS
)
# $docs: the documents (not NULL) — a semi-join on the list, cheaper than a list_contains per row
GIVEN_FACTS_SQL = _DOCUMENTS.format(which="document_id IN (SELECT unnest($docs::VARCHAR[]))") + _MEMBERSHIPS_AND_FOLDERS


class Access(NamedTuple):
    roles: dict[str, str]  # accessible document id -> "editor" | "viewer"
    member_orgs: set[str]  # organizations where the user holds any live membership


def facts_params(
    workspace_id: str, user_id: str, organization_id: str, document_ids: Iterable[str] | None, now_s: float
) -> dict:
    return {
        "ws": workspace_id,
        "org": organization_id,
        "user": user_id,
        "now": now_s,
        "docs": None if document_ids is None else list(document_ids),
    }


def access_facts(
    read: Read, workspace_id: str, user_id: str, organization_id: str, document_ids: Iterable[str] | None, now_s: float
) -> Access:
    """The user's role on each accessible document of ``organization_id`` ('' for documents
    without organization) — the given ones, or all of them when ``document_ids`` is None —
    and the organizations they are a member of. One statement."""
    sql = FACTS_SQL if document_ids is None else GIVEN_FACTS_SQL
    rows = read(parsed(sql), facts_params(workspace_id, user_id, organization_id, document_ids, now_s)).fetchall()
    return decide(rows, organization_id)


def decide(rows: Iterable[tuple], organization_id: str) -> Access:
    """:class:`Access` from the rows of :data:`FACTS_SQL` (rows of other kinds are skipped),
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


# Organizations in which the user holds any unexpired membership. Parameters: $ws, $user, $now.
MEMBER_ORGS_SQL = (
    "SELECT DISTINCT organization_id FROM memberships WHERE workspace_id = $ws AND user_id = $user "
    "AND (expires_at IS NULL OR expires_at > $now)"
)


def visible_sql(alias: str = "a") -> str:
    """SQL condition: annotation ``alias`` admits ``$user`` by its visibility (named parameters
    $ws, $user, $now)."""
    return (
        f"({alias}.visibility_type = 'public' "
        f"OR ({alias}.visibility_type = 'organizationPrivate' AND {alias}.visibility_org IN ({MEMBER_ORGS_SQL})) "
        f"OR ({alias}.visibility_type = 'restricted' AND list_contains({alias}.visibility_users, $user)))"
    )
