"""Folders, documents, organization user groups and access state over real HTTP
(api-v2 §2.12, §3 "Access state changes", §4.17, §4.18; semantics §8): every rule, the error
codes, bad input of each kind, workspace isolation."""

from __future__ import annotations

import pytest

from api.support import uid

UADD, UGET = "/v2/users/add", "/v2/users/get"
FADD, DADD = "/v2/folders/add", "/v2/documents/add"
GADD, GUADD = "/v2/organizations/usergroups/add", "/v2/organizations/usergroups/users/add"
FACC = "/v2/organizations/folders/access/update"
DACC = "/v2/organizations/documents/access/update"
DDIS = "/v2/organizations/documents/access/disablestate/update"


@pytest.fixture
def org(api):
    """An organization with one member, folders top > child and documents d1 (in child), d2."""
    org = uid("org")
    api.ok(UADD, {"organizationId": org, "users": [{"userId": "ann"}]})
    api.ok(
        FADD,
        {
            "organizationId": org,
            "folders": [{"folderId": "top", "folderName": "Top"}, {"folderId": "child", "parentFolderId": "top"}],
        },
    )
    api.ok(DADD, {"organizationId": org, "folderId": "child", "documents": [{"documentId": "d1"}]})
    api.ok(DADD, {"organizationId": org, "documents": [{"documentId": "d2", "documentName": "Two"}]})
    return org


def envelope(result: dict) -> dict:
    assert result["status"] == "success" and isinstance(result["message"], str)
    for value in result["data"].values():
        assert isinstance(value["success"], bool) and isinstance(value["message"], str)
    return result["data"]


# ---------------------------------------------------------------- folders and documents


def test_add_folders(api):
    org = uid("org")
    data = envelope(
        api.ok(
            FADD,
            {
                "organizationId": org,
                "folders": [
                    {"folderId": "a"},
                    {"folderId": "b", "parentFolderId": "a", "folderName": "B"},
                    {"folderId": "c", "parentFolderId": "missing"},
                ],
            },
        )
    )
    assert data["a"]["success"] and data["b"]["success"]
    assert data["c"]["success"] is False and "missing" in data["c"]["message"]
    again = envelope(
        api.ok(FADD, {"organizationId": org, "folders": [{"folderId": "a"}, {"folderId": "c", "parentFolderId": "b"}]})
    )
    assert again["a"]["success"] is False and "exists" in again["a"]["message"]
    assert again["c"]["success"] is True
    # The folders exist: users can be listed for them.
    assert api.ok(UGET, {"organizationId": org, "folderId": "c"})["data"] == []


def test_add_folders_and_documents_organization_rules(api):
    org = uid("org")
    api.err(
        FADD, {"organizationId": org, "createOrganization": False, "folders": [{"folderId": "a"}]}, code="NOT_FOUND"
    )
    api.err(
        DADD, {"organizationId": org, "createOrganization": False, "documents": [{"documentId": "d"}]}, code="NOT_FOUND"
    )
    api.err(DADD, {"organizationId": org, "folderId": "f", "documents": [{"documentId": "d"}]}, code="NOT_FOUND")
    api.err(UGET, {"organizationId": org}, code="NOT_FOUND")
    api.ok(DADD, {"organizationId": org, "documents": [{"documentId": "d"}]})  # created with the organization
    assert api.ok(UGET, {"organizationId": org})["data"] == []


def test_add_documents(api, org):
    data = envelope(api.ok(DADD, {"organizationId": org, "documents": [{"documentId": "d2"}, {"documentId": "d3"}]}))
    assert data["d2"]["success"] is False and "exists" in data["d2"]["message"]
    assert data["d3"]["success"] is True
    assert "nope" in api.err(
        DADD, {"organizationId": org, "folderId": "nope", "documents": [{"documentId": "x"}]}, code="NOT_FOUND"
    )
    api.err(UGET, {"organizationId": org, "documentId": "x"}, code="NOT_FOUND")


@pytest.mark.parametrize(
    "path, data, field",
    [
        (FADD, {"folders": [{"folderId": "a"}]}, "data.organizationId"),
        (FADD, {"organizationId": "o"}, "data.folders"),
        (FADD, {"organizationId": "o", "folders": []}, "data.folders"),
        (FADD, {"organizationId": "o", "folders": [{"folderName": "x"}]}, "data.folders[0].folderId"),
        (
            FADD,
            {"organizationId": "o", "folders": [{"folderId": "a", "accessType": "public"}]},
            "data.folders[0].accessType",
        ),
        (FADD, {"organizationId": "o", "folders": [{"folderId": "a"}, {"folderId": "a"}]}, "data.folders"),
        (
            FADD,
            {"organizationId": "o", "folders": [{"folderId": "a", "parentFolderId": 3}]},
            "data.folders[0].parentFolderId",
        ),
        (DADD, {"organizationId": "o"}, "data.documents"),
        (DADD, {"organizationId": "o", "documents": [{"documentId": ""}]}, "data.documents[0].documentId"),
        (DADD, {"organizationId": "o", "documents": [{"documentId": "a"}, {"documentId": "a"}]}, "data.documents"),
        (
            DADD,
            {"organizationId": "o", "documents": [{"documentId": "a"}], "createOrganization": 1},
            "data.createOrganization",
        ),
    ],
)
def test_add_folders_and_documents_bad_input(api, path, data, field):
    assert api.err(path, data).startswith(field)


# ---------------------------------------------------------------- folder access


def test_update_folder_access_sets_the_access_type(api, org):
    data = envelope(api.ok(FACC, {"organizationId": org, "folderIds": ["top", "child"], "accessType": "restricted"}))
    assert data == {
        f: {"success": True, "accessType": "restricted", "message": data[f]["message"]} for f in ("top", "child")
    }
    for access_type in ("organizationPrivate", "public"):
        data = envelope(api.ok(FACC, {"organizationId": org, "folderIds": ["top"], "accessType": access_type}))
        assert data["top"]["accessType"] == access_type


def test_update_folder_access_defaults_to_public(api, org):
    data = envelope(api.ok(FACC, {"organizationId": org, "folderIds": ["top"]}))
    assert data["top"]["success"] is True and data["top"]["accessType"] == "public"
    assert "inheritFromParent" not in data["top"]


def test_update_folder_access_inherit_from_parent(api, org):
    data = envelope(api.ok(FACC, {"organizationId": org, "folderIds": ["child"], "inheritFromParent": True}))
    assert data["child"] == {
        "success": True,
        "accessType": None,
        "inheritFromParent": True,
        "message": data["child"]["message"],
    }
    # accessType given with inheritFromParent true is ignored: the folder inherits.
    data = envelope(
        api.ok(
            FACC, {"organizationId": org, "folderIds": ["child"], "accessType": "restricted", "inheritFromParent": True}
        )
    )
    assert data["child"]["accessType"] is None and data["child"]["inheritFromParent"] is True
    # inheritFromParent false sets the folder's own access type again.
    data = envelope(
        api.ok(
            FACC,
            {"organizationId": org, "folderIds": ["child"], "accessType": "restricted", "inheritFromParent": False},
        )
    )
    assert data["child"] == {
        "success": True,
        "accessType": "restricted",
        "inheritFromParent": False,
        "message": data["child"]["message"],
    }


def test_update_folder_access_item_failures(api, org):
    data = envelope(api.ok(FACC, {"organizationId": org, "folderIds": ["top", "ghost"], "inheritFromParent": True}))
    assert data["top"]["success"] is True  # a top-level folder inherits from its organization
    assert data["ghost"]["success"] is False and "ghost" in data["ghost"]["message"]
    data = envelope(api.ok(FACC, {"organizationId": org, "folderIds": ["ghost", "child"], "accessType": "public"}))
    assert data["ghost"]["success"] is False and data["child"]["success"] is True


def test_a_top_level_folder_inherits_the_organization_default(api):
    """A top-level folder's parent is its organization: inheriting gives its documents the
    organization default, organizationPrivate (organization members read by their organization
    role; a member of another folder only does while the folder is public)."""
    org = uid("org")
    api.ok(FADD, {"organizationId": org, "folders": [{"folderId": "top"}, {"folderId": "other"}]})
    api.ok(DADD, {"organizationId": org, "folderId": "top", "documents": [{"documentId": "d"}]})
    api.ok(UADD, {"organizationId": org, "users": [{"userId": "org-member"}]})
    api.ok(UADD, {"organizationId": org, "folderId": "other", "users": [{"userId": "elsewhere"}]})
    api.ok(
        "/v2/commentannotations/add",
        {
            "organizationId": org,
            "documentId": "d",
            "commentAnnotations": [{"annotationId": "a", "commentData": [{"commentText": "x"}]}],
        },
    )

    def readers():
        return {
            u
            for u in ("org-member", "elsewhere")
            if api.ok("/v2/commentannotations/get", {"organizationId": org, "documentId": "d", "userId": u})["data"]
        }

    for access_type, expected in (("public", {"org-member", "elsewhere"}), ("restricted", set())):
        api.ok(FACC, {"organizationId": org, "folderIds": ["top"], "accessType": access_type})
        assert readers() == expected, access_type
    data = envelope(api.ok(FACC, {"organizationId": org, "folderIds": ["top"], "inheritFromParent": True}))
    assert data["top"] == {
        "success": True,
        "accessType": None,
        "inheritFromParent": True,
        "message": data["top"]["message"],
    }
    assert readers() == {"org-member"}


def test_update_folder_access_unknown_organization(api):
    assert "nowhere" in api.err(FACC, {"organizationId": "nowhere-" + uid("x"), "folderIds": ["f"]}, code="NOT_FOUND")


@pytest.mark.parametrize(
    "data, field",
    [
        ({"folderIds": ["f"]}, "data.organizationId"),
        ({"organizationId": "o"}, "data.folderIds"),
        ({"organizationId": "o", "folderIds": []}, "data.folderIds"),
        ({"organizationId": "o", "folderIds": "f"}, "data.folderIds"),
        ({"organizationId": "o", "folderIds": ["f", "f"]}, "data.folderIds"),
        ({"organizationId": "o", "folderIds": ["f"], "accessType": "private"}, "data.accessType"),
        ({"organizationId": "o", "folderIds": ["f"], "inheritFromParent": "true"}, "data.inheritFromParent"),
        ({"organizationId": "o", "folderIds": [f"f{i}" for i in range(1001)]}, "data.folderIds"),
    ],
)
def test_update_folder_access_bad_input(api, data, field):
    assert api.err(FACC, data).startswith(field)


# ---------------------------------------------------------------- document access and disabled state


def test_update_document_access(api, org):
    for access_type in ("restricted", "public", "organizationPrivate"):
        data = envelope(
            api.ok(DACC, {"organizationId": org, "documentIds": ["d1", "d2", "ghost"], "accessType": access_type})
        )
        assert data["d1"] == {"success": True, "accessType": access_type, "message": data["d1"]["message"]}
        assert data["d2"]["success"] is True
        assert data["ghost"]["success"] is False and "ghost" in data["ghost"]["message"]


def test_update_disabled_state(api, org):
    data = envelope(api.ok(DDIS, {"organizationId": org, "documentIds": ["d1", "ghost"], "disabled": True}))
    assert data["d1"] == {"success": True, "disabled": True, "message": data["d1"]["message"]}
    assert data["ghost"]["success"] is False and "ghost" in data["ghost"]["message"]
    data = envelope(api.ok(DDIS, {"organizationId": org, "documentIds": ["d1"], "disabled": False}))
    assert data["d1"]["disabled"] is False
    data = envelope(api.ok(DDIS, {"organizationId": org, "documentIds": ["d1"]}))  # default false
    assert data["d1"]["disabled"] is False and data["d1"]["success"] is True


def test_document_updates_unknown_organization(api):
    missing = uid("org")
    api.err(DACC, {"organizationId": missing, "documentIds": ["d"], "accessType": "public"}, code="NOT_FOUND")
    api.err(DDIS, {"organizationId": missing, "documentIds": ["d"], "disabled": True}, code="NOT_FOUND")


@pytest.mark.parametrize(
    "path, data, field",
    [
        (DACC, {"documentIds": ["d"], "accessType": "public"}, "data.organizationId"),
        (DACC, {"organizationId": "o", "accessType": "public"}, "data.documentIds"),
        (DACC, {"organizationId": "o", "documentIds": ["d"]}, "data.accessType"),
        (DACC, {"organizationId": "o", "documentIds": ["d"], "accessType": "hidden"}, "data.accessType"),
        (DACC, {"organizationId": "o", "documentIds": [], "accessType": "public"}, "data.documentIds"),
        (DACC, {"organizationId": "o", "documentIds": ["d", "d"], "accessType": "public"}, "data.documentIds"),
        (DACC, {"organizationId": "o", "documentIds": [1], "accessType": "public"}, "data.documentIds[0]"),
        (DDIS, {"documentIds": ["d"], "disabled": True}, "data.organizationId"),
        (DDIS, {"organizationId": "o", "disabled": True}, "data.documentIds"),
        (DDIS, {"organizationId": "o", "documentIds": ["d"], "disabled": "yes"}, "data.disabled"),
        (DDIS, {"organizationId": "o", "documentIds": ["d"], "disabled": 1}, "data.disabled"),
        (DDIS, {"organizationId": "o", "documentIds": ["d"], "disabled": None}, "data.disabled"),
        (DDIS, {"organizationId": "o", "documentIds": ["d"], "disabled": True, "reason": "x"}, "data.reason"),
    ],
)
def test_document_updates_bad_input(api, path, data, field):
    assert api.err(path, data).startswith(field)


# ---------------------------------------------------------------- user groups


def test_add_user_groups_and_members(api, org):
    data = envelope(
        api.ok(
            GADD,
            {
                "organizationId": org,
                "organizationUserGroups": [
                    {"groupId": "eng", "groupName": "Engineering"},
                    {"groupId": "ops", "groupName": "Ops"},
                ],
            },
        )
    )
    assert data["eng"]["success"] is True and data["ops"]["success"] is True
    renamed = envelope(
        api.ok(
            GADD, {"organizationId": org, "organizationUserGroups": [{"groupId": "eng", "groupName": "Engineering 2"}]}
        )
    )
    assert renamed["eng"]["success"] is True  # re-adding renames, idempotently
    api.ok(UADD, {"organizationId": org, "users": [{"userId": "bob"}]})
    data = envelope(
        api.ok(GUADD, {"organizationId": org, "organizationUserGroupId": "eng", "userIds": ["ann", "bob", "ghost"]})
    )
    assert data["ann"]["success"] and data["bob"]["success"]
    assert data["ghost"]["success"] is False and "ghost" in data["ghost"]["message"]
    again = envelope(api.ok(GUADD, {"organizationId": org, "organizationUserGroupId": "eng", "userIds": ["ann"]}))
    assert again["ann"]["success"] is True
    listed = api.ok(UGET, {"organizationId": org, "organizationUserGroupIds": ["eng"]})["data"]
    assert [u["userId"] for u in listed] == ["ann", "bob"]
    assert api.ok(UGET, {"organizationId": org, "organizationUserGroupIds": ["ops"]})["data"] == []


def test_user_group_errors(api, org):
    missing = uid("org")
    api.err(
        GADD,
        {"organizationId": missing, "organizationUserGroups": [{"groupId": "g", "groupName": "G"}]},
        code="NOT_FOUND",
    )
    api.err(GUADD, {"organizationId": missing, "organizationUserGroupId": "g", "userIds": ["ann"]}, code="NOT_FOUND")
    assert "nogroup" in api.err(
        GUADD, {"organizationId": org, "organizationUserGroupId": "nogroup", "userIds": ["ann"]}, code="NOT_FOUND"
    )


@pytest.mark.parametrize(
    "path, data, field",
    [
        (GADD, {"organizationUserGroups": [{"groupId": "g", "groupName": "G"}]}, "data.organizationId"),
        (GADD, {"organizationId": "o"}, "data.organizationUserGroups"),
        (GADD, {"organizationId": "o", "organizationUserGroups": []}, "data.organizationUserGroups"),
        (
            GADD,
            {"organizationId": "o", "organizationUserGroups": [{"groupId": "g"}]},
            "data.organizationUserGroups[0].groupName",
        ),
        (
            GADD,
            {"organizationId": "o", "organizationUserGroups": [{"groupName": "G"}]},
            "data.organizationUserGroups[0].groupId",
        ),
        (
            GADD,
            {"organizationId": "o", "organizationUserGroups": [{"groupId": "g", "groupName": ""}]},
            "data.organizationUserGroups[0].groupName",
        ),
        (
            GADD,
            {
                "organizationId": "o",
                "organizationUserGroups": [{"groupId": "g", "groupName": "G"}, {"groupId": "g", "groupName": "H"}],
            },
            "data.organizationUserGroups",
        ),
        (GUADD, {"organizationId": "o", "userIds": ["a"]}, "data.organizationUserGroupId"),
        (GUADD, {"organizationId": "o", "organizationUserGroupId": "g"}, "data.userIds"),
        (GUADD, {"organizationId": "o", "organizationUserGroupId": "g", "userIds": []}, "data.userIds"),
        (GUADD, {"organizationId": "o", "organizationUserGroupId": "g", "userIds": ["a", "a"]}, "data.userIds"),
        (
            GUADD,
            {"organizationId": "o", "organizationUserGroupId": ["g"], "userIds": ["a"]},
            "data.organizationUserGroupId",
        ),
    ],
)
def test_user_groups_bad_input(api, path, data, field):
    assert api.err(path, data).startswith(field)


# ---------------------------------------------------------------- workspace isolation


def test_organizations_are_isolated_between_workspaces(api, api_b, org):
    api.ok(GADD, {"organizationId": org, "organizationUserGroups": [{"groupId": "g", "groupName": "G"}]})
    b = api_b
    b.err(FACC, {"organizationId": org, "folderIds": ["top"], "accessType": "restricted"}, code="NOT_FOUND")
    b.err(DACC, {"organizationId": org, "documentIds": ["d1"], "accessType": "restricted"}, code="NOT_FOUND")
    b.err(DDIS, {"organizationId": org, "documentIds": ["d1"], "disabled": True}, code="NOT_FOUND")
    b.err(GUADD, {"organizationId": org, "organizationUserGroupId": "g", "userIds": ["ann"]}, code="NOT_FOUND")
    b.err(DADD, {"organizationId": org, "folderId": "top", "documents": [{"documentId": "x"}]}, code="NOT_FOUND")
    # B's organization of the same id is its own: A's folders and documents are not in it.
    b.ok(UADD, {"organizationId": org, "users": [{"userId": "mallory"}]})
    data = b.ok(FACC, {"organizationId": org, "folderIds": ["top"], "accessType": "restricted"})["data"]
    assert data["top"]["success"] is False
    data = b.ok(DDIS, {"organizationId": org, "documentIds": ["d1"], "disabled": True})["data"]
    assert data["d1"]["success"] is False
    assert b.ok(FADD, {"organizationId": org, "folders": [{"folderId": "top"}]})["data"]["top"]["success"] is True
    assert b.ok(DADD, {"organizationId": org, "documents": [{"documentId": "d1"}]})["data"]["d1"]["success"] is True
    # A's state is untouched: its folder still exists (re-adding fails), its group still has no members.
    assert api.ok(FADD, {"organizationId": org, "folders": [{"folderId": "top"}]})["data"]["top"]["success"] is False
    assert api.ok(UGET, {"organizationId": org, "organizationUserGroupIds": ["g"]})["data"] == []
