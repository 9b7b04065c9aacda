"""Effective access (semantics §8), table-driven, against a real DuckDB store.

One small world is written with SQL — organizations, a folder tree, documents of every access
type, users with memberships at every level (some expired) and a second workspace — and every
row of CASES asks ``effective_role`` one question and names the rule that answers it.
"""

from __future__ import annotations

import pytest

from toolkit.services.access.effective import effective_role, effective_roles
from toolkit.store import Store

WS, OTHER_WS, ORG = "ws_a", "ws_b", "acme"
NOW = 1_700_000_000  # Unix seconds

# folder id -> (parent, access_type, inherit_from_parent)
FOLDERS = {
    "top": (None, "organizationPrivate", False),
    "mid": ("top", None, True),
    "leaf": ("mid", None, True),  # leaf -> mid -> top: memberships of all three count
    "leaf-own": ("top", "organizationPrivate", False),  # does not inherit: top's members do not count
    "rtop": (None, "restricted", False),
    "rchild": ("rtop", None, True),  # inherits "restricted"
    "pubtop": (None, "public", False),
    "pubchild": ("pubtop", None, True),  # inherits "public"
    "orphan": (None, None, True),  # inherits, but has no parent: organizationPrivate
}

# document id -> (folder, access_type, disabled)
DOCUMENTS = {
    "plain": (None, "organizationPrivate", False),
    "restricted": (None, "restricted", False),
    "public": (None, "public", False),
    "disabled": (None, "organizationPrivate", True),
    "in-leaf": ("leaf", "organizationPrivate", False),
    "in-leaf-own": ("leaf-own", "organizationPrivate", False),
    "in-rchild": ("rchild", "organizationPrivate", False),
    "in-rchild-public": ("rchild", "public", False),  # its own type wins over the folder's
    "in-pubchild": ("pubchild", "organizationPrivate", False),
    "in-pubtop-restricted": ("pubtop", "restricted", False),  # its own type wins over the folder's
    "in-orphan": ("orphan", "organizationPrivate", False),
}

# (user, resource_type, resource_id, role, expires_at)
MEMBERSHIPS = [
    ("org-editor", "organization", ORG, "editor", None),
    ("org-viewer", "organization", ORG, "viewer", None),
    ("doc-beats-org", "organization", ORG, "editor", None),
    ("doc-beats-org", "document", "plain", "viewer", None),
    ("folder-beats-org", "organization", ORG, "editor", None),
    ("folder-beats-org", "folder", "top", "viewer", None),
    ("doc-beats-folder", "folder", "top", "editor", None),
    ("doc-beats-folder", "document", "in-leaf", "viewer", None),
    ("doc-only", "document", "plain", "editor", None),
    ("doc-only-restricted", "document", "restricted", "viewer", None),
    ("top-viewer", "folder", "top", "viewer", None),
    ("mid-editor", "folder", "mid", "editor", None),
    ("leaf-viewer-mid-editor", "folder", "leaf", "viewer", None),
    ("leaf-viewer-mid-editor", "folder", "mid", "editor", None),
    ("rtop-editor", "folder", "rtop", "editor", None),
    ("expired-org", "organization", ORG, "editor", NOW - 1),
    ("expires-now", "organization", ORG, "editor", NOW),
    ("expires-later", "organization", ORG, "viewer", NOW + 1),
    ("expired-doc-org-viewer", "document", "plain", "editor", NOW - 3600),
    ("expired-doc-org-viewer", "organization", ORG, "viewer", None),
    ("expired-folder", "folder", "top", "editor", NOW - 1),
    ("expired-only-membership", "document", "plain", "editor", NOW - 1),
    ("disabled-member", "document", "disabled", "editor", None),
    ("disabled-member", "organization", ORG, "editor", None),
]

CASES = [
    # (user, document, organization, expected, rule)
    ("stranger", "plain", ORG, None, "no membership at all"),
    ("org-editor", "nope", ORG, None, "a document that does not exist"),
    ("org-editor", "plain", "other-org", None, "the document is looked up in the organization given"),
    # rule 1: disabled
    ("disabled-member", "disabled", ORG, None, "disabled beats an explicit document membership"),
    ("org-editor", "disabled", ORG, None, "disabled beats organization membership"),
    # rule 2: explicit document membership
    ("doc-only", "plain", ORG, "editor", "explicit document membership"),
    ("doc-beats-org", "plain", ORG, "viewer", "document membership beats organization membership"),
    ("doc-beats-folder", "in-leaf", ORG, "viewer", "document membership beats folder membership"),
    ("doc-only-restricted", "restricted", ORG, "viewer", "restricted does not hide a document from its members"),
    # rule 3: folder membership, walking inherited parents
    ("top-viewer", "in-leaf", ORG, "viewer", "the leaf inherits from mid which inherits from top"),
    ("mid-editor", "in-leaf", ORG, "editor", "membership of an inherited parent"),
    ("leaf-viewer-mid-editor", "in-leaf", ORG, "viewer", "the nearest folder decides"),
    ("top-viewer", "in-leaf-own", ORG, None, "a folder that does not inherit stops the walk"),
    ("folder-beats-org", "in-leaf", ORG, "viewer", "folder membership beats organization membership"),
    ("rtop-editor", "in-rchild", ORG, "editor", "folder members reach documents of a restricted folder"),
    ("top-viewer", "plain", ORG, None, "folder membership says nothing about documents outside it"),
    # rule 4: organization membership unless restricted
    ("org-editor", "plain", ORG, "editor", "organization membership"),
    ("org-viewer", "plain", ORG, "viewer", "organization membership keeps its role"),
    ("org-editor", "restricted", ORG, None, "a restricted document is excluded from organization access"),
    ("org-editor", "in-rchild", ORG, None, "a document inheriting restricted from its folders"),
    ("org-editor", "in-rchild-public", ORG, "editor", "a document's own access type beats its folder's"),
    ("org-editor", "in-pubtop-restricted", ORG, None, "a restricted document in a public folder"),
    ("org-editor", "in-leaf-own", ORG, "editor", "organization membership reaches documents in folders"),
    ("org-editor", "in-orphan", ORG, "editor", "inheriting with no parent ends at organizationPrivate"),
    # rule 5: public -> viewer for any organization member
    ("org-editor", "public", ORG, "editor", "organization members keep their role on public documents"),
    ("doc-only", "public", ORG, "viewer", "a document-level member of the organization views public documents"),
    ("top-viewer", "public", ORG, "viewer", "a folder-level member of the organization views public documents"),
    ("doc-only", "in-pubchild", ORG, "viewer", "public inherited from the folder chain"),
    ("doc-only", "restricted", ORG, None, "restricted documents are not public"),
    ("doc-only", "in-leaf-own", ORG, None, "organizationPrivate needs organization membership"),
    ("stranger", "public", ORG, None, "public is for organization members only"),
    ("expired-only-membership", "public", ORG, None, "an expired membership does not make one a member"),
    # expiry: expired memberships count as absent
    ("expired-org", "plain", ORG, None, "expired organization membership"),
    ("expires-now", "plain", ORG, None, "a membership expiring at this very second is expired"),
    ("expires-later", "plain", ORG, "viewer", "a membership expiring later still counts"),
    ("expired-doc-org-viewer", "plain", ORG, "viewer", "expired document membership falls back to the organization"),
    ("expired-folder", "in-leaf", ORG, None, "expired folder membership"),
    # documents without an organization
    ("noorg-member", "loose", "", "viewer", "a document without an organization: explicit membership"),
    ("noorg-member", "loose", None, "viewer", "None is the same as '' for the organization"),
    ("org-editor", "loose", "", None, "organization membership never reaches a document without one"),
    # workspace isolation
    ("other-ws-editor", "plain", ORG, None, "memberships of another workspace count for nothing"),
]


@pytest.fixture(scope="module")
def store():
    store = Store(":memory:")

    def job(tx):
        tx.execute(
            "INSERT INTO organizations (workspace_id, organization_id) VALUES (?, ?), (?, ?)", [WS, ORG, OTHER_WS, ORG]
        )
        for fid, (parent, access, inherit) in FOLDERS.items():
            tx.execute(
                "INSERT INTO folders (workspace_id, organization_id, folder_id, parent_folder_id, access_type, "
                "inherit_from_parent) VALUES (?, ?, ?, ?, ?, ?)",
                [WS, ORG, fid, parent, access, inherit],
            )
        for did, (folder, access, disabled) in DOCUMENTS.items():
            tx.execute(
                "INSERT INTO documents (workspace_id, organization_id, document_id, folder_id, access_type, "
                "disabled) VALUES (?, ?, ?, ?, ?, ?)",
                [WS, ORG, did, folder, access, disabled],
            )
        tx.execute("INSERT INTO documents (workspace_id, organization_id, document_id) VALUES (?, '', 'loose')", [WS])
        # The other workspace: the same organization and document ids, its own member.
        tx.execute(
            "INSERT INTO documents (workspace_id, organization_id, document_id) VALUES (?, ?, 'plain')", [OTHER_WS, ORG]
        )
        rows = [(WS, u, t, r, "" if u == "noorg-member" else ORG, role, exp) for u, t, r, role, exp in MEMBERSHIPS]
        rows.append((WS, "noorg-member", "document", "loose", "", "viewer", None))
        rows.append((OTHER_WS, "other-ws-editor", "organization", ORG, ORG, "editor", None))
        for i, row in enumerate(rows):
            tx.execute(
                "INSERT INTO memberships (workspace_id, user_id, resource_type, resource_id, organization_id, "
                "access_role, expires_at, user_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [*row, i],
            )

    store.write(job)
    yield store
    store.close()


@pytest.mark.parametrize("user, document, organization, expected, rule", CASES, ids=[c[4] for c in CASES])
def test_effective_role(store, user, document, organization, expected, rule):
    assert effective_role(store.read, WS, user, document, organization, NOW) == expected, rule


def test_bulk_variant_agrees_with_single_calls(store):
    users = sorted({c[0] for c in CASES})
    for document in DOCUMENTS:
        bulk = effective_roles(store.read, WS, users, document, ORG, NOW)
        assert bulk == {u: effective_role(store.read, WS, u, document, ORG, NOW) for u in users}


def test_bulk_variant_of_nobody_reads_nothing():
    def read(sql, params=None):  # pragma: no cover - must not be called
        raise AssertionError("no statement expected")

    assert effective_roles(read, WS, [], "plain", ORG, NOW) == {}


def test_every_statement_is_a_select(store):
    """So a writer job may pass ``tx.execute`` (which counts anything else as a write)."""
    seen = []

    def read(sql, params=None):
        seen.append(sql)
        return store.read(sql, params)

    effective_roles(read, WS, ["org-editor", "doc-only"], "in-leaf", ORG, NOW)
    assert seen and all(sql.lstrip().upper().startswith("SELECT") for sql in seen)


def test_inside_a_writer_job(store):
    assert store.write(lambda tx: effective_role(tx.execute, WS, "mid-editor", "in-leaf", ORG, NOW)) == "editor"


def test_a_folder_cycle_does_not_loop_forever():
    with Store(":memory:") as s:

        def job(tx):
            tx.execute(
                "INSERT INTO folders (workspace_id, organization_id, folder_id, parent_folder_id, access_type, "
                "inherit_from_parent) VALUES (?, ?, 'a', 'b', NULL, true), (?, ?, 'b', 'a', NULL, true)",
                [WS, ORG, WS, ORG],
            )
            tx.execute(
                "INSERT INTO documents (workspace_id, organization_id, document_id, folder_id) "
                "VALUES (?, ?, 'doc', 'a')",
                [WS, ORG],
            )
            tx.execute(
                "INSERT INTO memberships (workspace_id, user_id, resource_type, resource_id, organization_id, "
                "access_role, user_seq) VALUES (?, 'u', 'organization', ?, ?, 'viewer', 1), "
                "(?, 'f', 'folder', 'b', ?, 'editor', 2)",
                [WS, ORG, ORG, WS, ORG],
            )

        s.write(job)
        assert effective_role(s.read, WS, "u", "doc", ORG, NOW) == "viewer"
        assert effective_role(s.read, WS, "f", "doc", ORG, NOW) == "editor"
