"""Get and count comment annotations over real HTTP (api-v2 §4.12; semantics §8, §9):
filters, paging, visibility by userId (public / organizationPrivate / restricted, and the
document access under it), unread and read receipts, statusIds, limits, isolation."""

from __future__ import annotations

import pytest

from api.support import uid

ADD, GET, COUNT = "/v2/commentannotations/add", "/v2/commentannotations/get", "/v2/commentannotations/count/get"
MARK_READ, DELETE = "/v2/commentannotations/markread", "/v2/commentannotations/delete"
USERS_ADD, PERMISSIONS_ADD = "/v2/users/add", "/v2/auth/permissions/add"
DOC_ACCESS = "/v2/organizations/documents/access/update"
DISABLE = "/v2/organizations/documents/access/disablestate/update"


def comment(text="x", author=None):
    c = {"commentText": text}
    if author is not None:
        c["from"] = {"userId": author}
    return c


def add(api, org, doc, *annotations, create=False):
    data = {"organizationId": org, "documentId": doc, "commentAnnotations": list(annotations)}
    if create:
        data.update(createOrganization=True, createDocument=True)
    result = api.ok(ADD, data)["data"]
    assert all(v["success"] for v in result.values()), result
    return result


def users(api, org, ids, role="editor", **scope):
    api.ok(
        USERS_ADD,
        {
            "organizationId": org,
            **scope,
            "users": [{"userId": u, "name": u, "email": f"{u}@x.io", "accessRole": role} for u in ids],
        },
    )


def ids_of(annotations):
    return sorted(a["annotationId"] for a in annotations)


def get_ids(api, **data):
    return ids_of(api.ok(GET, data)["data"])


def counts(api, org, docs, user, **extra):
    return api.ok(COUNT, {"organizationId": org, "documentIds": docs, "userId": user, **extra})["data"]


# ---------------------------------------------------------------- a small world


@pytest.fixture(scope="module")
def world(api):
    """Organization O with documents:
    plain (organizationPrivate): pub (public, by member), orgp (organizationPrivate),
        res (restricted to docuser, outsider), res-member (restricted to member)
    locked (restricted access type): pub-locked; lockeduser is a member of that document
    open (public access type): pub-open
    off (disabled): pub-off
    Users: member (organization editor), docuser (document viewer of `plain` only),
    lockeduser (document member of `locked` only), outsider (no membership), elsewhere (member
    of another organization), expired (organization membership that has expired)."""
    org, other_org = uid("org"), uid("org")
    docs = {name: uid(name) for name in ("plain", "locked", "open", "off")}
    add(
        api,
        org,
        docs["plain"],
        {"annotationId": "pub", "commentData": [comment("public", "member")]},
        {
            "annotationId": "orgp",
            "commentData": [comment("org only")],
            "visibility": {"type": "organizationPrivate", "organizationId": org},
        },
        {
            "annotationId": "res",
            "commentData": [comment("for docuser")],
            "visibility": {"type": "restricted", "userIds": ["docuser", "outsider"]},
        },
        {
            "annotationId": "res-member",
            "commentData": [comment("for member")],
            "visibility": {"type": "restricted", "userIds": ["member"]},
        },
        create=True,
    )
    for name in ("locked", "open", "off"):
        add(api, org, docs[name], {"annotationId": f"pub-{name}", "commentData": [comment(name)]}, create=True)
    users(api, org, ["member"])
    users(api, org, ["docuser"], role="viewer", documentId=docs["plain"])
    users(api, org, ["lockeduser"], documentId=docs["locked"])
    users(api, other_org, ["elsewhere"])
    api.ok(
        PERMISSIONS_ADD,
        {
            "userId": "expired",
            "permissions": {
                "resources": [{"type": "organization", "id": org, "accessRole": "editor", "expiresAt": 1_000_000}]
            },
        },
    )
    api.ok(DOC_ACCESS, {"organizationId": org, "documentIds": [docs["locked"]], "accessType": "restricted"})
    api.ok(DOC_ACCESS, {"organizationId": org, "documentIds": [docs["open"]], "accessType": "public"})
    api.ok(DISABLE, {"organizationId": org, "documentIds": [docs["off"]], "disabled": True})
    return org, docs


# ---------------------------------------------------------------- visibility

VISIBLE = {
    # user: {document: visible annotation ids}
    "member": {"plain": ["orgp", "pub", "res-member"], "locked": [], "open": ["pub-open"], "off": []},
    "docuser": {"plain": ["orgp", "pub", "res"], "locked": [], "open": ["pub-open"], "off": []},
    "lockeduser": {"plain": [], "locked": ["pub-locked"], "open": ["pub-open"], "off": []},
    "outsider": {"plain": [], "locked": [], "open": [], "off": []},
    "elsewhere": {"plain": [], "locked": [], "open": [], "off": []},
    "expired": {"plain": [], "locked": [], "open": [], "off": []},
}


@pytest.mark.parametrize("user", sorted(VISIBLE))
def test_get_returns_only_what_the_user_may_see(api, world, user):
    org, docs = world
    for name, expected in VISIBLE[user].items():
        assert get_ids(api, organizationId=org, documentId=docs[name], userId=user) == expected, name
    every = sorted(a for visible in VISIBLE[user].values() for a in visible)
    assert get_ids(api, organizationId=org, userId=user) == every
    assert get_ids(api, organizationId=org, documentIds=list(docs.values()), userId=user) == every


@pytest.mark.parametrize("user", sorted(VISIBLE))
def test_count_total_is_what_the_user_may_see(api, world, user):
    org, docs = world
    result = counts(api, org, list(docs.values()), user)
    assert {name: result[doc]["total"] for name, doc in docs.items()} == {
        name: len(v) for name, v in VISIBLE[user].items()
    }


def test_get_without_user_id_sees_everything(api, world):
    org, docs = world
    assert get_ids(api, organizationId=org) == sorted(
        ["pub", "orgp", "res", "res-member", "pub-locked", "pub-open", "pub-off"]
    )
    assert get_ids(api, organizationId=org, documentId=docs["off"]) == ["pub-off"]


def test_organization_private_admits_members_at_any_level_of_that_organization(api):
    org, doc = uid("org"), uid("doc")
    other = uid("org")
    add(
        api,
        org,
        doc,
        {"annotationId": "own-org", "commentData": [comment()], "visibility": {"type": "organizationPrivate"}},
        {
            "annotationId": "other-org",
            "commentData": [comment()],
            "visibility": {"type": "organizationPrivate", "organizationId": other},
        },
        create=True,
    )
    users(api, org, ["doc-level"], documentId=doc)
    users(api, org, ["org-level"])
    users(api, other, ["other-member"])
    users(api, org, ["other-member"], documentId=doc)
    # `organizationPrivate` without organizationId means the annotation's organization
    assert get_ids(api, organizationId=org, documentId=doc, userId="doc-level") == ["own-org"]
    assert get_ids(api, organizationId=org, documentId=doc, userId="org-level") == ["own-org"]
    assert get_ids(api, organizationId=org, documentId=doc, userId="other-member") == ["other-org", "own-org"]


# ---------------------------------------------------------------- unread and read receipts


def test_unread_counts_visible_annotations_neither_authored_nor_read(api):
    org, doc = uid("org"), uid("doc")
    add(
        api,
        org,
        doc,
        {"annotationId": "mine", "commentData": [comment("by me", "reader")]},
        {"annotationId": "replied", "commentData": [comment("by other", "writer"), comment("reply", "reader")]},
        {"annotationId": "theirs-1", "commentData": [comment("by other", "writer")]},
        {"annotationId": "theirs-2", "commentData": [comment("by other", "writer")]},
        {
            "annotationId": "hidden",
            "commentData": [comment("not for reader", "writer")],
            "visibility": {"type": "restricted", "userIds": ["writer"]},
        },
        create=True,
    )
    users(api, org, ["reader", "writer"])
    assert counts(api, org, [doc], "reader")[doc] == {"total": 4, "unread": 2}
    assert counts(api, org, [doc], "writer")[doc] == {"total": 5, "unread": 1}
    marked = api.ok(
        MARK_READ, {"organizationId": org, "documentId": doc, "userId": "reader", "annotationIds": ["theirs-1", "nope"]}
    )
    assert marked["status"] == "success"
    assert marked["data"]["theirs-1"]["success"] is True
    assert marked["data"]["nope"]["success"] is False
    assert counts(api, org, [doc], "reader")[doc] == {"total": 4, "unread": 1}
    # marking twice changes nothing; read receipts are per user
    api.ok(MARK_READ, {"organizationId": org, "documentId": doc, "userId": "reader", "annotationIds": ["theirs-1"]})
    assert counts(api, org, [doc], "reader")[doc] == {"total": 4, "unread": 1}
    assert counts(api, org, [doc], "writer")[doc] == {"total": 5, "unread": 1}
    # reading a hidden annotation does not make it count
    api.ok(MARK_READ, {"organizationId": org, "documentId": doc, "userId": "reader", "annotationIds": ["hidden"]})
    assert counts(api, org, [doc], "reader")[doc] == {"total": 4, "unread": 1}
    # a deleted annotation leaves both numbers
    api.ok(DELETE, {"organizationId": org, "documentId": doc, "annotationIds": ["theirs-2"]})
    assert counts(api, org, [doc], "reader")[doc] == {"total": 3, "unread": 0}


def test_mark_read_errors(api, api_b):
    org, doc = uid("org"), uid("doc")
    add(api, org, doc, {"annotationId": "a", "commentData": [comment()]}, create=True)
    api.err(
        MARK_READ, {"organizationId": org, "documentId": uid("doc"), "userId": "u", "annotationIds": ["a"]}, "NOT_FOUND"
    )
    for bad, field in (
        ({"documentId": doc, "annotationIds": ["a"]}, "data.userId"),
        ({"documentId": doc, "userId": "u"}, "data.annotationIds"),
        ({"documentId": doc, "userId": "u", "annotationIds": []}, "data.annotationIds"),
        ({"userId": "u", "annotationIds": ["a"]}, "data.documentId"),
        ({"documentId": doc, "userId": "u", "annotationIds": ["a"], "x": 1}, "data.x"),
    ):
        assert field in api.err(MARK_READ, {"organizationId": org, **bad})
    api_b.err(MARK_READ, {"organizationId": org, "documentId": doc, "userId": "u", "annotationIds": ["a"]}, "NOT_FOUND")


# ---------------------------------------------------------------- count details


def test_count_filters_by_status_ids(api):
    org, doc = uid("org"), uid("doc")
    add(
        api,
        org,
        doc,
        {"annotationId": "open", "commentData": [comment()]},
        {"annotationId": "review", "commentData": [comment()], "status": {"id": "IN_REVIEW", "type": "ongoing"}},
        {"annotationId": "done", "commentData": [comment()], "status": {"id": "RESOLVED", "type": "terminal"}},
        create=True,
    )
    users(api, org, ["u"])
    assert counts(api, org, [doc], "u")[doc]["total"] == 3
    assert counts(api, org, [doc], "u", statusIds=["OPEN"])[doc]["total"] == 1
    assert counts(api, org, [doc], "u", statusIds=["IN_REVIEW", "RESOLVED"])[doc]["total"] == 2
    assert counts(api, org, [doc], "u", statusIds=["NONE"])[doc] == {"total": 0, "unread": 0}
    assert get_ids(api, organizationId=org, documentId=doc, statusIds=["RESOLVED", "OPEN"]) == ["done", "open"]


def test_count_answers_every_requested_document(api):
    org, doc = uid("org"), uid("doc")
    add(api, org, doc, {"commentData": [comment()]}, {"commentData": [comment()]}, create=True)
    users(api, org, ["u"])
    missing = uid("nodoc")
    result = counts(api, org, [doc, missing, doc], "u")
    assert result == {doc: {"total": 2, "unread": 2}, missing: {"total": 0, "unread": 0}}
    thirty = [doc] + [f"d{i}" for i in range(29)]
    assert len(counts(api, org, thirty, "u")) == 30
    assert "data.documentIds" in api.err(COUNT, {"organizationId": org, "documentIds": thirty + ["d99"], "userId": "u"})


@pytest.mark.parametrize(
    "data, field",
    [
        ({"documentIds": ["d"], "userId": "u"}, "data.organizationId"),
        ({"organizationId": "o", "userId": "u"}, "data.documentIds"),
        ({"organizationId": "o", "documentIds": [], "userId": "u"}, "data.documentIds"),
        ({"organizationId": "o", "documentIds": "d", "userId": "u"}, "data.documentIds"),
        ({"organizationId": "o", "documentIds": [1], "userId": "u"}, "data.documentIds[0]"),
        ({"organizationId": "o", "documentIds": ["d"]}, "data.userId"),
        ({"organizationId": "o", "documentIds": ["d"], "userId": ""}, "data.userId"),
        ({"organizationId": "o", "documentIds": ["d"], "userId": "u", "statusIds": "OPEN"}, "data.statusIds"),
        ({"organizationId": "o", "documentIds": ["d"], "userId": "u", "statusIds": []}, "data.statusIds"),
        ({"organizationId": "o", "documentIds": ["d"], "userId": "u", "unread": True}, "data.unread"),
    ],
)
def test_count_bad_input(api, data, field):
    assert field in api.err(COUNT, data)


# ---------------------------------------------------------------- get: filters and paging


def test_get_pages_every_item_exactly_once_in_creation_order(api):
    org, doc = uid("org"), uid("doc")
    add(api, org, doc, *[{"annotationId": f"p{i:02d}", "commentData": [comment()]} for i in range(7)], create=True)
    add(api, org, doc, *[{"annotationId": f"q{i:02d}", "commentData": [comment()]} for i in range(4)])
    seen, token = [], None
    while True:
        data = {"organizationId": org, "documentId": doc, "pageSize": 3}
        if token is not None:
            data["pageToken"] = token
        page = api.ok(GET, data)
        assert len(page["data"]) <= 3
        seen += [a["annotationId"] for a in page["data"]]
        token = page["nextPageToken"]
        if token is None:
            break
    assert seen == [f"p{i:02d}" for i in range(7)] + [f"q{i:02d}" for i in range(4)]
    full = api.ok(GET, {"organizationId": org, "documentId": doc, "pageSize": 11})
    assert len(full["data"]) == 11 and full["nextPageToken"] is None


def test_get_filters_combine(api):
    org = uid("org")
    d1, d2, d3 = uid("doc"), uid("doc"), uid("doc")
    add(
        api,
        org,
        d1,
        {"annotationId": "a", "commentData": [comment()]},
        {"annotationId": "b", "commentData": [comment()], "status": {"id": "DONE"}},
        create=True,
    )
    add(api, org, d2, {"annotationId": "a", "commentData": [comment()]}, create=True)
    add(api, org, d3, {"annotationId": "c", "commentData": [comment()]}, create=True)
    assert get_ids(api, organizationId=org) == ["a", "a", "b", "c"]
    assert get_ids(api, organizationId=org, documentIds=[d1, d2]) == ["a", "a", "b"]
    assert get_ids(api, organizationId=org, annotationIds=["a"]) == ["a", "a"]
    assert get_ids(api, organizationId=org, documentIds=[d1, d3], annotationIds=["a", "c"]) == ["a", "c"]
    assert get_ids(api, organizationId=org, statusIds=["DONE"]) == ["b"]
    assert get_ids(api, organizationId=org, documentId=d2, statusIds=["DONE"]) == []
    assert get_ids(api, organizationId=org, documentId=uid("none")) == []
    docs = {a["annotationId"] + "@" + a["documentId"] for a in api.ok(GET, {"organizationId": org})["data"]}
    assert docs == {f"a@{d1}", f"b@{d1}", f"a@{d2}", f"c@{d3}"}


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "data.organizationId"),
        ({"organizationId": "o", "documentId": "d", "documentIds": ["d"]}, "data.documentIds"),
        ({"organizationId": "o", "documentIds": []}, "data.documentIds"),
        ({"organizationId": "o", "documentIds": [f"d{i}" for i in range(31)]}, "data.documentIds"),
        ({"organizationId": "o", "pageSize": 0}, "data.pageSize"),
        ({"organizationId": "o", "pageSize": 1001}, "data.pageSize"),
        ({"organizationId": "o", "pageSize": "10"}, "data.pageSize"),
        ({"organizationId": "o", "pageToken": "not-a-token"}, "data.pageToken"),
        ({"organizationId": "o", "pageToken": 5}, "data.pageToken"),
        ({"organizationId": "o", "annotationIds": "a"}, "data.annotationIds"),
        ({"organizationId": "o", "userId": 7}, "data.userId"),
        ({"organizationId": "o", "limit": 7}, "data.limit"),
    ],
)
def test_get_bad_input(api, data, field):
    assert field in api.err(GET, data)


# ---------------------------------------------------------------- isolation


def test_reads_are_isolated_per_workspace(api, api_b, world):
    org, docs = world
    assert api_b.ok(GET, {"organizationId": org})["data"] == []
    assert api_b.ok(GET, {"organizationId": org, "userId": "member"})["data"] == []
    result = api_b.ok(COUNT, {"organizationId": org, "documentIds": list(docs.values()), "userId": "member"})["data"]
    assert all(v == {"total": 0, "unread": 0} for v in result.values())


# ---------------------------------------------------------------- access through folders


def test_visibility_follows_folder_memberships_inheritance_and_access_types(api):
    """top (public) <- mid (inherits) <- leaf (inherits); solo (restricted). One public
    annotation in a document of top, of leaf and of solo (semantics §8: folder memberships
    count up the chain while folders inherit; a document takes its folder's access type)."""
    org = uid("org")
    api.ok(
        "/v2/folders/add",
        {
            "organizationId": org,
            "createOrganization": True,
            "folders": [
                {"folderId": "top"},
                {"folderId": "mid", "parentFolderId": "top"},
                {"folderId": "leaf", "parentFolderId": "mid"},
                {"folderId": "solo"},
            ],
        },
    )
    folder_access = "/v2/organizations/folders/access/update"
    api.ok(folder_access, {"organizationId": org, "folderIds": ["mid", "leaf"], "inheritFromParent": True})
    api.ok(folder_access, {"organizationId": org, "folderIds": ["top"], "accessType": "public"})
    api.ok(folder_access, {"organizationId": org, "folderIds": ["solo"], "accessType": "restricted"})
    docs = {}
    for folder in ("top", "leaf", "solo"):
        docs[folder] = uid(folder)
        api.ok(
            "/v2/documents/add",
            {"organizationId": org, "folderId": folder, "documents": [{"documentId": docs[folder]}]},
        )
        add(api, org, docs[folder], {"annotationId": f"in-{folder}", "commentData": [comment()]})
    users(api, org, ["top-member"], role="viewer", folderId="top")
    users(api, org, ["leaf-member"], folderId="leaf")
    users(api, org, ["solo-member"], folderId="solo")
    users(api, org, ["org-member"])
    expected = {
        "top-member": ["in-leaf", "in-top"],  # its folder, and leaf through inheritance
        "leaf-member": ["in-leaf", "in-top"],  # its folder; top is public to members
        "solo-member": ["in-leaf", "in-solo", "in-top"],  # its folder; public ones
        "org-member": ["in-leaf", "in-top"],  # not the restricted folder's document
        "outsider": [],
    }
    for user, visible in expected.items():
        assert get_ids(api, organizationId=org, userId=user) == visible, user
        result = counts(api, org, list(docs.values()), user)
        assert sorted(f"in-{f}" for f, d in docs.items() if result[d]["total"] == 1) == visible, user
    # the role does not matter for reading; verifyUserPermissions needs editor
    item = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": docs["leaf"],
            "verifyUserPermissions": True,
            "commentAnnotations": [
                {"annotationId": "by-top", "commentData": [comment("x", "top-member")]},
                {"annotationId": "by-leaf", "commentData": [comment("x", "leaf-member")]},
            ],
        },
    )["data"]
    assert item["by-top"]["success"] is False and item["by-leaf"]["success"] is True
