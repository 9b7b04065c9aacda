"""Add, update, delete and get users over real HTTP (api-v2 §2.2, §2.3, §4.3, §4.4; semantics §8):
every rule, every filter, paging, the error codes, bad input of each kind, workspace isolation."""

from __future__ import annotations

import pytest

from api.support import uid

UADD, UUPD, UDEL, UGET = "/v2/users/add", "/v2/users/update", "/v2/users/delete", "/v2/users/get"
PADD = "/v2/auth/permissions/add"
FADD, DADD = "/v2/folders/add", "/v2/documents/add"
GADD, GUADD = "/v2/organizations/usergroups/add", "/v2/organizations/usergroups/users/add"


def user(user_id: str, **extra) -> dict:
    return {"userId": user_id, "name": f"Name {user_id}", "email": f"{user_id}@example.com", **extra}


def add(api, org: str, users: list, **scope) -> dict:
    result = api.ok(UADD, {"organizationId": org, "users": users, **scope})
    assert result["status"] == "success" and isinstance(result["message"], str)
    return result["data"]


def get(api, org: str, **filters) -> dict:
    result = api.ok(UGET, {"organizationId": org, **filters})
    assert result["status"] == "success" and isinstance(result["message"], str)
    assert set(result) == {"status", "message", "data", "nextPageToken"}
    return result


def ids(api, org: str, **filters) -> list[str]:
    """Every user id of the query, following nextPageToken to the end."""
    out, token = [], None
    while True:
        page = get(api, org, **filters, **({"pageToken": token} if token else {}))
        out += [u["userId"] for u in page["data"]]
        token = page["nextPageToken"]
        if token is None:
            return out


def by_id(api, org: str, **filters) -> dict:
    return {u["userId"]: u for u in get(api, org, **filters)["data"]}


@pytest.fixture
def org():
    return uid("org")


# ---------------------------------------------------------------- add users


def test_add_users_to_the_organization(api, org):
    data = add(api, org, [user("ann", accessRole="viewer"), user("bob")])
    assert set(data) == {"ann", "bob"}
    for value in data.values():
        assert value["success"] is True and isinstance(value["message"], str)
        assert isinstance(value["id"], str) and value["id"]
    assert data["ann"]["id"] != data["bob"]["id"]
    users = by_id(api, org)
    assert users["ann"] == {
        "userId": "ann",
        "name": "Name ann",
        "email": "ann@example.com",
        "initial": "N",
        "accessRole": "viewer",
    }
    assert users["bob"]["accessRole"] == "editor"  # rule 6: the default role is editor


def test_rule_1_and_3_document_users_are_not_organization_users(api, org):
    add(api, org, [user("org-level")])
    add(api, org, [user("doc-level")], documentId="d1", createDocument=True)
    assert ids(api, org) == ["org-level"]
    assert ids(api, org, documentId="d1") == ["doc-level"]
    # To add them at organization level too, call again with only organizationId.
    add(api, org, [user("doc-level")])
    assert sorted(ids(api, org)) == ["doc-level", "org-level"]
    assert ids(api, org, documentId="d1") == ["doc-level"]


def test_rule_2_folder_users_are_added_to_the_folder_only(api, org):
    add(api, org, [user("f-user", accessRole="viewer")], folderId="f1", createFolder=True)
    assert ids(api, org) == []
    assert by_id(api, org, folderId="f1")["f-user"]["accessRole"] == "viewer"
    assert ids(api, org, allDocuments=True) == []


def test_rule_4_a_missing_organization_is_created(api, org):
    add(api, org, [user("u1")])
    assert ids(api, org) == ["u1"]
    other = uid("org")
    add(api, other, [user("u1")], createOrganization=True)
    assert ids(api, other) == ["u1"]


def test_create_organization_false_requires_an_existing_organization(api, org):
    message = api.err(
        UADD, {"organizationId": org, "createOrganization": False, "users": [user("u1")]}, code="NOT_FOUND"
    )
    assert org in message
    api.err(UGET, {"organizationId": org}, code="NOT_FOUND")  # nothing was written
    add(api, org, [user("u1")])
    add(api, org, [user("u2")], createOrganization=False)  # exists now
    assert sorted(ids(api, org)) == ["u1", "u2"]


def test_rule_5_initial_defaults_from_the_name(api, org):
    data = [
        {"userId": "z1", "name": "zoë Adams"},
        {"userId": "z2", "name": "Ann", "initial": "AX"},
        {"userId": "z3", "email": "quinn@example.com"},
        {"userId": "z4"},
    ]
    add(api, org, data)
    users = by_id(api, org)
    assert [users[u]["initial"] for u in ("z1", "z2", "z3", "z4")] == ["Z", "AX", "Q", "Z"]
    assert users["z4"]["name"] == "" and users["z4"]["email"] == ""
    add(api, org, [{"userId": "z1", "name": "Mia"}])  # a new name, no initial: derived again
    add(api, org, [{"userId": "z2", "name": "Bea"}])  # likewise, the old explicit initial is replaced
    users = by_id(api, org)
    assert users["z1"]["initial"] == "M" and users["z2"]["initial"] == "B"


def test_re_adding_updates_name_email_and_role_idempotently(api, org):
    first = add(api, org, [user("ann")])
    again = add(api, org, [user("ann")])
    assert again["ann"]["id"] == first["ann"]["id"]
    changed = add(api, org, [{"userId": "ann", "name": "Ann B", "email": "annb@example.com", "accessRole": "viewer"}])
    assert changed["ann"]["id"] == first["ann"]["id"]
    assert get(api, org)["data"] == [
        {"userId": "ann", "name": "Ann B", "email": "annb@example.com", "initial": "A", "accessRole": "viewer"}
    ]
    add(api, org, [{"userId": "ann"}])  # neither name nor email: both kept, role back to the default
    assert get(api, org)["data"][0] == {
        "userId": "ann",
        "name": "Ann B",
        "email": "annb@example.com",
        "initial": "A",
        "accessRole": "editor",
    }


def test_users_are_one_identity_across_organizations(api, org):
    other = uid("org")
    a = add(api, org, [user("shared")])
    b = add(api, other, [{"userId": "shared", "name": "Renamed"}])
    assert a["shared"]["id"] == b["shared"]["id"]
    assert by_id(api, org)["shared"]["name"] == "Renamed"


def test_missing_document_or_folder_without_the_create_flag_is_not_found(api, org):
    add(api, org, [user("u1")])
    message = api.err(UADD, {"organizationId": org, "documentId": "nope", "users": [user("u2")]}, code="NOT_FOUND")
    assert "nope" in message and "createDocument" in message
    api.err(
        UADD,
        {"organizationId": org, "documentId": "nope", "createDocument": False, "users": [user("u2")]},
        code="NOT_FOUND",
    )
    message = api.err(UADD, {"organizationId": org, "folderId": "nof", "users": [user("u2")]}, code="NOT_FOUND")
    assert "nof" in message and "createFolder" in message
    # createFolder does not create a document, nor the other way round.
    api.err(
        UADD,
        {"organizationId": org, "documentId": "nope", "createFolder": True, "users": [user("u2")]},
        code="NOT_FOUND",
    )
    api.err(UGET, {"organizationId": org, "documentId": "nope"}, code="NOT_FOUND")
    assert ids(api, org) == ["u1"]
    assert ids(api, org, userIds=["u2"]) == []


def test_a_missing_document_is_not_found_even_when_the_organization_was_missing(api, org):
    api.err(UADD, {"organizationId": org, "documentId": "d", "users": [user("u1")]}, code="NOT_FOUND")
    api.err(UGET, {"organizationId": org}, code="NOT_FOUND")  # the organization was not created either


def test_create_flags_create_document_and_folder_once(api, org):
    add(api, org, [user("a")], documentId="d", createDocument=True)
    add(api, org, [user("b")], documentId="d", createDocument=True)  # exists now: no error
    assert sorted(ids(api, org, documentId="d")) == ["a", "b"]
    add(api, org, [user("c")], folderId="f", createFolder=True)
    add(api, org, [user("d")], folderId="f")
    assert sorted(ids(api, org, folderId="f")) == ["c", "d"]


@pytest.mark.parametrize(
    "data, field",
    [
        ({"users": [{"userId": "a"}]}, "data.organizationId"),
        ({"organizationId": "o"}, "data.users"),
        ({"organizationId": "o", "users": []}, "data.users"),
        ({"organizationId": "o", "users": {"userId": "a"}}, "data.users"),
        ({"organizationId": "o", "users": [{"name": "A"}]}, "data.users[0].userId"),
        ({"organizationId": "o", "users": [{"userId": ""}]}, "data.users[0].userId"),
        ({"organizationId": "o", "users": [{"userId": 7}]}, "data.users[0].userId"),
        ({"organizationId": "o", "users": [{"userId": "a", "accessRole": "owner"}]}, "data.users[0].accessRole"),
        ({"organizationId": "o", "users": [{"userId": "a", "email": "not-an-email"}]}, "data.users[0].email"),
        ({"organizationId": "o", "users": [{"userId": "a", "name": ""}]}, "data.users[0].name"),
        ({"organizationId": "o", "users": [{"userId": "a", "name": 5}]}, "data.users[0].name"),
        ({"organizationId": "o", "users": [{"userId": "a", "initial": ""}]}, "data.users[0].initial"),
        ({"organizationId": "o", "users": [{"userId": "a", "isAdmin": True}]}, "data.users[0].isAdmin"),
        ({"organizationId": "o", "users": [{"userId": "a"}, {"userId": "a"}]}, "data.users"),
        ({"organizationId": "o", "users": ["a"]}, "data.users[0]"),
        ({"organizationId": "", "users": [{"userId": "a"}]}, "data.organizationId"),
        ({"organizationId": 5, "users": [{"userId": "a"}]}, "data.organizationId"),
        (
            {"organizationId": "o", "createDocument": "yes", "documentId": "d", "users": [{"userId": "a"}]},
            "data.createDocument",
        ),
        ({"organizationId": "o", "documentId": "d", "folderId": "f", "users": [{"userId": "a"}]}, "data.folderId"),
        ({"organizationId": "o", "users": [{"userId": "a"}], "organisationId": "typo"}, "data.organisationId"),
        ({"organizationId": "o", "users": [{"userId": f"u{i}"} for i in range(1001)]}, "data.users"),
    ],
)
def test_add_users_bad_input(api, data, field):
    message = api.err(UADD, data)
    assert message.startswith(field), message


# ---------------------------------------------------------------- update users


def test_update_users_at_organization_level(api, org):
    added = add(api, org, [user("ann"), user("bob")])
    result = api.ok(
        UUPD,
        {
            "organizationId": org,
            "users": [
                {"userId": "ann", "name": "Annie", "accessRole": "viewer"},
                {"userId": "bob", "email": "robert@example.com", "initial": "R"},
                {"userId": "ghost", "name": "Nobody"},
            ],
        },
    )
    assert result["status"] == "success"
    data = result["data"]
    assert data["ann"] == {"success": True, "message": data["ann"]["message"], "id": added["ann"]["id"]}
    assert data["bob"]["success"] is True
    assert data["ghost"]["success"] is False and "ghost" in data["ghost"]["message"]
    users = by_id(api, org)
    assert users["ann"] == {
        "userId": "ann",
        "name": "Annie",
        "email": "ann@example.com",
        "initial": "A",
        "accessRole": "viewer",
    }
    assert users["bob"] == {
        "userId": "bob",
        "name": "Name bob",
        "email": "robert@example.com",
        "initial": "R",
        "accessRole": "editor",
    }
    assert "ghost" not in ids(api, org)


def test_update_users_role_at_document_and_folder_scope(api, org):
    add(api, org, [user("ann")])
    add(api, org, [user("ann")], documentId="d", createDocument=True)
    add(api, org, [user("ann")], folderId="f", createFolder=True)
    api.ok(UUPD, {"organizationId": org, "documentId": "d", "users": [{"userId": "ann", "accessRole": "viewer"}]})
    assert by_id(api, org, documentId="d")["ann"]["accessRole"] == "viewer"
    assert by_id(api, org)["ann"]["accessRole"] == "editor"
    assert by_id(api, org, folderId="f")["ann"]["accessRole"] == "editor"
    api.ok(UUPD, {"organizationId": org, "folderId": "f", "users": [{"userId": "ann", "accessRole": "viewer"}]})
    assert by_id(api, org, folderId="f")["ann"]["accessRole"] == "viewer"


def test_update_users_who_are_not_members_there_fail(api, org):
    add(api, org, [user("doc-only")], documentId="d", createDocument=True)
    data = api.ok(UUPD, {"organizationId": org, "users": [{"userId": "doc-only", "name": "X"}]})["data"]
    assert data["doc-only"]["success"] is False and "not a member" in data["doc-only"]["message"]
    assert by_id(api, org, documentId="d")["doc-only"]["name"] == "Name doc-only"  # nothing changed


def test_update_users_unknown_scope_is_not_found(api, org):
    api.err(UUPD, {"organizationId": org, "users": [{"userId": "a"}]}, code="NOT_FOUND")
    add(api, org, [user("a")])
    api.err(UUPD, {"organizationId": org, "documentId": "nope", "users": [{"userId": "a"}]}, code="NOT_FOUND")
    api.err(UUPD, {"organizationId": org, "folderId": "nope", "users": [{"userId": "a"}]}, code="NOT_FOUND")


@pytest.mark.parametrize(
    "data, field",
    [
        ({"users": [{"userId": "a"}]}, "data.organizationId"),
        ({"organizationId": "o"}, "data.users"),
        ({"organizationId": "o", "users": []}, "data.users"),
        ({"organizationId": "o", "users": [{"userId": "a", "accessRole": "admin"}]}, "data.users[0].accessRole"),
        ({"organizationId": "o", "users": [{"userId": "a", "email": "@"}]}, "data.users[0].email"),
        ({"organizationId": "o", "users": [{"userId": "a"}, {"userId": "a"}]}, "data.users"),
        ({"organizationId": "o", "documentId": "d", "folderId": "f", "users": [{"userId": "a"}]}, "data.folderId"),
        ({"organizationId": "o", "users": [{"userId": "a", "extra": 1}]}, "data.users[0].extra"),
    ],
)
def test_update_users_bad_input(api, data, field):
    assert api.err(UUPD, data).startswith(field)


# ---------------------------------------------------------------- delete users


def test_delete_users_from_the_organization_removes_every_membership_in_it(api, org):
    other = uid("org")
    add(api, org, [user("ann"), user("bob")])
    add(api, org, [user("ann")], documentId="d", createDocument=True)
    add(api, org, [user("ann")], folderId="f", createFolder=True)
    add(api, other, [user("ann")])
    api.ok(GADD, {"organizationId": org, "organizationUserGroups": [{"groupId": "g", "groupName": "G"}]})
    api.ok(GUADD, {"organizationId": org, "organizationUserGroupId": "g", "userIds": ["ann", "bob"]})
    result = api.ok(UDEL, {"organizationId": org, "userIds": ["ann", "ghost"]})
    assert result["status"] == "success"
    assert result["data"]["ann"]["success"] is True
    assert result["data"]["ghost"]["success"] is False and "ghost" in result["data"]["ghost"]["message"]
    assert ids(api, org) == ["bob"]
    assert ids(api, org, documentId="d") == [] and ids(api, org, folderId="f") == []
    assert ids(api, org, organizationUserGroupIds=["g"]) == ["bob"]
    assert ids(api, other) == ["ann"]  # other organizations are untouched
    # Added back, she is not silently back in the group.
    add(api, org, [user("ann")])
    assert ids(api, org, organizationUserGroupIds=["g"]) == ["bob"]


def test_delete_users_from_a_document_or_folder_only(api, org):
    add(api, org, [user("ann")])
    add(api, org, [user("ann")], documentId="d", createDocument=True)
    add(api, org, [user("ann")], folderId="f", createFolder=True)
    data = api.ok(UDEL, {"organizationId": org, "documentId": "d", "userIds": ["ann"]})["data"]
    assert data["ann"]["success"] is True
    assert ids(api, org, documentId="d") == [] and ids(api, org) == ["ann"] and ids(api, org, folderId="f") == ["ann"]
    again = api.ok(UDEL, {"organizationId": org, "documentId": "d", "userIds": ["ann"]})["data"]
    assert again["ann"]["success"] is False
    api.ok(UDEL, {"organizationId": org, "folderId": "f", "userIds": ["ann"]})
    assert ids(api, org, folderId="f") == [] and ids(api, org) == ["ann"]


def test_delete_users_unknown_scope_is_not_found(api, org):
    api.err(UDEL, {"organizationId": org, "userIds": ["a"]}, code="NOT_FOUND")
    add(api, org, [user("a")])
    api.err(UDEL, {"organizationId": org, "documentId": "x", "userIds": ["a"]}, code="NOT_FOUND")
    api.err(UDEL, {"organizationId": org, "folderId": "x", "userIds": ["a"]}, code="NOT_FOUND")
    assert ids(api, org) == ["a"]


@pytest.mark.parametrize(
    "data, field",
    [
        ({"userIds": ["a"]}, "data.organizationId"),
        ({"organizationId": "o"}, "data.userIds"),
        ({"organizationId": "o", "userIds": []}, "data.userIds"),
        ({"organizationId": "o", "userIds": "a"}, "data.userIds"),
        ({"organizationId": "o", "userIds": [""]}, "data.userIds[0]"),
        ({"organizationId": "o", "userIds": ["a", "a"]}, "data.userIds"),
        ({"organizationId": "o", "userIds": ["a"], "documentId": "d", "folderId": "f"}, "data.folderId"),
    ],
)
def test_delete_users_bad_input(api, data, field):
    assert api.err(UDEL, data).startswith(field)


# ---------------------------------------------------------------- get users


def test_get_users_pages_return_everyone_exactly_once(api, org):
    everyone = [f"u{i:04d}" for i in range(2500)]
    for start in range(0, 2500, 1000):
        add(api, org, [{"userId": u, "name": u} for u in everyone[start : start + 1000]])
    first = get(api, org)
    assert len(first["data"]) == 1000 and isinstance(first["nextPageToken"], str)  # default pageSize 1000
    assert ids(api, org) == everyone  # in the order they were added
    out, token, pages = [], None, 0
    while True:
        page = get(api, org, pageSize=333, **({"pageToken": token} if token else {}))
        assert len(page["data"]) <= 333
        out += [u["userId"] for u in page["data"]]
        pages += 1
        token = page["nextPageToken"]
        if token is None:
            break
    assert out == everyone and pages == 8
    last = get(api, org, pageSize=500, userIds=everyone[-3:])
    assert [u["userId"] for u in last["data"]] == everyone[-3:] and last["nextPageToken"] is None


def test_get_users_an_exact_multiple_of_the_page_size_ends_without_an_empty_page(api, org):
    add(api, org, [user(f"u{i}") for i in range(4)])
    first = get(api, org, pageSize=2)
    second = get(api, org, pageSize=2, pageToken=first["nextPageToken"])
    assert len(second["data"]) == 2 and second["nextPageToken"] is None


def test_get_users_paging_while_users_are_added(api, org):
    """Pages follow the order members joined the list: users that were there when paging began
    are each returned once; a brand-new user added meanwhile comes last."""
    before = [uid("early") for _ in range(5)]
    add(api, org, [user(u) for u in before])
    first = get(api, org, pageSize=3)
    late = uid("late")
    add(api, org, [user(late)])
    rest = get(api, org, pageSize=10, pageToken=first["nextPageToken"])
    assert [u["userId"] for u in first["data"] + rest["data"]] == before + [late]


def test_get_users_order_is_joining_order_whenever_the_user_was_created(api, org):
    """A user created long ago (in another organization) who joins while a client pages is not
    skipped: she comes after every page already served. Leaving and coming back puts a member
    at the end; being added again without leaving keeps her place."""
    veteran = uid("veteran")
    add(api, uid("elsewhere"), [user(veteran)], createOrganization=True)
    members = [uid("member") for _ in range(4)]
    add(api, org, [user(u) for u in members])
    first = get(api, org, pageSize=2)
    add(api, org, [user(veteran)])
    add(api, org, [user(members[3], name="Renamed")])  # again, without leaving: same place
    rest = get(api, org, pageSize=10, pageToken=first["nextPageToken"])
    assert [u["userId"] for u in first["data"] + rest["data"]] == members + [veteran]
    assert rest["data"][1]["name"] == "Renamed"
    api.ok(UDEL, {"organizationId": org, "userIds": [members[0]]})
    add(api, org, [user(members[0])])  # left and came back: last
    assert ids(api, org) == members[1:] + [veteran, members[0]]
    # pages around the gap it left are full, and everyone still comes once
    out, token = [], None
    while True:
        page = get(api, org, pageSize=2, **({"pageToken": token} if token else {}))
        assert len(page["data"]) == 2 or page["nextPageToken"] is None
        out += [u["userId"] for u in page["data"]]
        token = page["nextPageToken"]
        if token is None:
            break
    assert out == members[1:] + [veteran, members[0]]


def test_get_users_filters_combine_with_and(api, org):
    add(api, org, [user(u) for u in ("ann", "bob", "cid", "dan")])
    add(api, org, [user("eve")], documentId="d", createDocument=True)
    api.ok(
        GADD,
        {
            "organizationId": org,
            "organizationUserGroups": [{"groupId": "g1", "groupName": "One"}, {"groupId": "g2", "groupName": "Two"}],
        },
    )
    api.ok(GUADD, {"organizationId": org, "organizationUserGroupId": "g1", "userIds": ["ann", "bob", "eve"]})
    api.ok(GUADD, {"organizationId": org, "organizationUserGroupId": "g2", "userIds": ["cid"]})
    assert ids(api, org, userIds=["bob", "dan", "nobody"]) == ["bob", "dan"]
    assert ids(api, org, organizationUserGroupIds=["g1"]) == ["ann", "bob"]  # eve is not org-level
    assert ids(api, org, organizationUserGroupIds=["g1", "g2"]) == ["ann", "bob", "cid"]
    assert ids(api, org, userIds=["bob", "cid"], organizationUserGroupIds=["g1"]) == ["bob"]
    assert ids(api, org, organizationUserGroupIds=["no-such-group"]) == []
    assert ids(api, org, documentId="d", organizationUserGroupIds=["g1"]) == ["eve"]
    assert ids(api, org, documentId="d", userIds=["ann"]) == []


def test_get_users_all_documents(api, org):
    add(api, org, [user("org-only")])
    add(api, org, [user("ann"), user("bob", accessRole="viewer")], documentId="d1", createDocument=True)
    add(api, org, [user("ann", accessRole="viewer"), user("cid")], documentId="d2", createDocument=True)
    add(api, org, [user("fio")], folderId="f", createFolder=True)
    plain = get(api, org, allDocuments=True)
    assert [u["userId"] for u in plain["data"]] == ["ann", "bob", "cid"]  # each once, no org or folder users
    assert all("accessRole" not in u for u in plain["data"])  # a role per document: see groupByDocumentId
    grouped = get(api, org, allDocuments=True, groupByDocumentId=True)["data"]
    assert {d: [(u["userId"], u["accessRole"]) for u in users] for d, users in grouped.items()} == {
        "d1": [("ann", "editor"), ("bob", "viewer")],
        "d2": [("ann", "viewer"), ("cid", "editor")],
    }
    assert ids(api, org, allDocuments=True, userIds=["cid", "org-only"]) == ["cid"]
    # groupByDocumentId is only effective with allDocuments.
    assert isinstance(get(api, org, groupByDocumentId=True)["data"], list)


def test_get_users_grouped_paging_covers_every_pair_once(api, org):
    for d in ("d1", "d2", "d3"):
        add(api, org, [user(f"{d}-u{i}") for i in range(3)] + [user("all")], documentId=d, createDocument=True)
    pairs, token = [], None
    while True:
        page = get(
            api, org, allDocuments=True, groupByDocumentId=True, pageSize=5, **({"pageToken": token} if token else {})
        )
        assert sum(len(v) for v in page["data"].values()) <= 5
        pairs += [(d, u["userId"]) for d, users in page["data"].items() for u in users]
        token = page["nextPageToken"]
        if token is None:
            break
    assert len(pairs) == 12 and len(set(pairs)) == 12
    assert pairs == sorted(pairs, key=lambda p: p[0]) and {d for d, _ in pairs} == {"d1", "d2", "d3"}
    plain = get(api, org, allDocuments=True, pageSize=4)
    rest = ids(api, org, allDocuments=True, pageSize=4)
    assert len(plain["data"]) == 4 and len(rest) == 10 == len(set(rest))


def test_get_users_unknown_organization_document_or_folder_is_not_found(api, org):
    assert org in api.err(UGET, {"organizationId": org}, code="NOT_FOUND")
    add(api, org, [user("a")])
    assert "nope" in api.err(UGET, {"organizationId": org, "documentId": "nope"}, code="NOT_FOUND")
    assert "nope" in api.err(UGET, {"organizationId": org, "folderId": "nope"}, code="NOT_FOUND")
    api.ok(DADD, {"organizationId": org, "documents": [{"documentId": "empty"}]})
    assert get(api, org, documentId="empty")["data"] == []


def test_get_users_excludes_expired_permissions(api, org):
    add(api, org, [user("current")])
    api.ok(
        PADD,
        {
            "userId": "expired",
            "permissions": {"resources": [{"type": "organization", "id": org, "expiresAt": 1_000_000_000}]},
        },
    )
    api.ok(
        PADD,
        {
            "userId": "later",
            "permissions": {"resources": [{"type": "organization", "id": org, "expiresAt": 4_000_000_000}]},
        },
    )
    assert ids(api, org) == ["current", "later"]


def test_get_users_page_token_must_be_one_the_api_returned(api, org):
    add(api, org, [user(f"u{i}") for i in range(3)])
    add(api, org, [user("x")], documentId="d", createDocument=True)
    for bad in ("garbage", "!!!", "eyJ4IjoxfQ", "WyJ1IiwiYSJd"):
        assert api.err(UGET, {"organizationId": org, "pageToken": bad}).startswith("data.pageToken")
    token = get(api, org, pageSize=1)["nextPageToken"]
    grouped_token = get(api, org, allDocuments=True, groupByDocumentId=True, pageSize=1)
    assert grouped_token["nextPageToken"] is None  # one pair only
    assert api.err(
        UGET, {"organizationId": org, "allDocuments": True, "groupByDocumentId": True, "pageToken": token}
    ).startswith("data.pageToken")


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "data.organizationId"),
        ({"organizationId": ""}, "data.organizationId"),
        ({"organizationId": ["o"]}, "data.organizationId"),
        ({"organizationId": "o", "userIds": [f"u{i}" for i in range(31)]}, "data.userIds"),
        (
            {"organizationId": "o", "organizationUserGroupIds": [f"g{i}" for i in range(31)]},
            "data.organizationUserGroupIds",
        ),
        ({"organizationId": "o", "userIds": []}, "data.userIds"),
        ({"organizationId": "o", "userIds": "u1"}, "data.userIds"),
        ({"organizationId": "o", "pageSize": 0}, "data.pageSize"),
        ({"organizationId": "o", "pageSize": 1001}, "data.pageSize"),
        ({"organizationId": "o", "pageSize": "10"}, "data.pageSize"),
        ({"organizationId": "o", "pageSize": 2.5}, "data.pageSize"),
        ({"organizationId": "o", "pageSize": True}, "data.pageSize"),
        ({"organizationId": "o", "pageToken": ""}, "data.pageToken"),
        ({"organizationId": "o", "pageToken": 5}, "data.pageToken"),
        ({"organizationId": "o", "allDocuments": "true"}, "data.allDocuments"),
        ({"organizationId": "o", "documentId": "d", "folderId": "f"}, "data.folderId"),
        ({"organizationId": "o", "allDocuments": True, "documentId": "d"}, "data.documentId"),
        ({"organizationId": "o", "allDocuments": True, "folderId": "f"}, "data.folderId"),
        ({"organizationId": "o", "sortBy": "name"}, "data.sortBy"),
    ],
)
def test_get_users_bad_input(api, data, field):
    assert api.err(UGET, data).startswith(field)


def test_get_users_thirty_ids_is_the_limit(api, org):
    add(api, org, [user(f"u{i}") for i in range(40)])
    assert len(ids(api, org, userIds=[f"u{i}" for i in range(30)])) == 30
    groups = [{"groupId": f"g{i}", "groupName": f"G{i}"} for i in range(30)]
    api.ok(GADD, {"organizationId": org, "organizationUserGroups": groups})
    assert ids(api, org, organizationUserGroupIds=[g["groupId"] for g in groups]) == []


# ---------------------------------------------------------------- workspace isolation


def test_users_are_isolated_between_workspaces(api, api_b, org):
    add(api, org, [user("ann")], documentId="d", createDocument=True)
    add(api, org, [user("ann")])
    b = api_b
    b.err(UGET, {"organizationId": org}, code="NOT_FOUND")
    b.err(UUPD, {"organizationId": org, "users": [{"userId": "ann", "name": "Hacked"}]}, code="NOT_FOUND")
    b.err(UDEL, {"organizationId": org, "userIds": ["ann"]}, code="NOT_FOUND")
    b.err(UADD, {"organizationId": org, "documentId": "d", "users": [user("mallory")]}, code="NOT_FOUND")
    # The same organization id in B is B's own organization.
    b.ok(UADD, {"organizationId": org, "users": [{"userId": "ann", "name": "B's Ann"}]})
    assert [u["name"] for u in b.ok(UGET, {"organizationId": org})["data"]] == ["B's Ann"]
    b.ok(UDEL, {"organizationId": org, "userIds": ["ann"]})
    assert by_id(api, org)["ann"]["name"] == "Name ann"
    assert ids(api, org, documentId="d") == ["ann"]


# ---------------------------------------------------------------- concurrency


def test_concurrent_adds_of_overlapping_users_keep_one_identity_each(api, org):
    """Requests that land in one group commit (the writer batches them) must neither fail nor
    split a user into two identities."""
    from concurrent.futures import ThreadPoolExecutor

    people = [uid("p") for _ in range(6)]

    def add_some(i: int) -> dict:
        scope = {} if i % 3 else {"documentId": "d", "createDocument": True}
        return api.ok(
            UADD,
            {
                "organizationId": org,
                "users": [user(p, accessRole="viewer" if i % 2 else "editor") for p in people[i % 3 :]],
                **scope,
            },
        )["data"]

    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(add_some, range(24)))
    internal = {}
    for data in results:
        for user_id, value in data.items():
            assert value["success"] is True
            assert internal.setdefault(user_id, value["id"]) == value["id"]
    assert len(internal) == len(people)
    assert sorted(ids(api, org)) == sorted(people[1:])  # organization-level adds start at people[1]
    assert sorted(ids(api, org, documentId="d")) == sorted(people)
