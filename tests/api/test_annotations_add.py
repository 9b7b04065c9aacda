"""Add comment annotations over real HTTP (api-v2 §2.10, §4.13; semantics §8, §9): every field
stored and returned, per-item results, commentIds, duplicates, the create flags, documents
without organization, verifyUserPermissions, triggerActivities, bad input, isolation."""

from __future__ import annotations

import copy

import pytest

from api.support import uid

ADD, GET = "/v2/commentannotations/add", "/v2/commentannotations/get"
ACTIVITIES_GET = "/v2/activities/get"
USERS_ADD = "/v2/users/add"
DISABLE = "/v2/organizations/documents/access/disablestate/update"


def new_doc(api, org=None, doc=None, **annotation):
    """A fresh organization + document holding one annotation; returns (org, doc, result item)."""
    org, doc = org or uid("org"), doc or uid("doc")
    body = {"commentData": [{"commentText": "first"}], **annotation}
    result = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "createOrganization": True,
            "createDocument": True,
            "commentAnnotations": [body],
        },
    )
    (item,) = result["data"].values()
    return org, doc, item


def get_all(api, **data):
    return api.ok(GET, data)["data"]


# every field of api-v2 §4.13, with unusual values where the type allows them
FULL = {
    "annotationId": "full-1",
    "location": {"id": "loc-1", "locationName": "Chapter 1"},
    "targetElement": {"elementId": "p-7", "targetText": "teh quick fox", "occurrence": 2, "selectAllContent": False},
    "commentData": [
        {
            "commentId": 11,
            "commentText": "Spelling: 'teh'",
            "commentHtml": "<p>Spelling: <b>teh</b></p>",
            "context": {"anything": [1, {"deep": None}], "ünïcode": "✓"},
            "isCommentResolverUsed": True,
            "isCommentTextAvailable": True,
            "triggerNotification": False,
            "triggerActivities": False,
            "from": {
                "userId": "author-1",
                "name": "Ann Author",
                "email": "ann@example.com",
                "photoUrl": "https://p/x.png",
            },
            "createdAt": 1_700_000_000_000,
            "lastUpdated": 1_700_000_000_500,
            "taggedUserContacts": [{"userId": "bob", "contact": {"userId": "bob", "name": "Bob", "email": "b@x.io"}}],
            "agent": {
                "agentSource": "builtin",
                "agentId": "spell-check",
                "executionId": "ex_1",
                "agentName": "Spell",
                "url": "https://Docs.Example.com/guide#intro",
                "reason": {
                    "title": "Typo",
                    "description": "d",
                    "severity": "low",
                    "findingId": "f1",
                    "findingType": "spelling",
                    "issueType": "typo",
                    "suggestion": "the",
                    "suggestedFix": "the quick fox",
                    "htmlSnippet": "<p>teh</p>",
                    "htmlSelector": "#p-7",
                    "source": "dictionary",
                    "knowledgeSection": "style guide",
                    "confidence": 0.87,
                },
            },
        },
        {"commentText": "Agreed", "from": {"userId": "bob"}},
    ],
    "status": {
        "id": "IN_REVIEW",
        "name": "In review",
        "type": "ongoing",
        "color": "#f00",
        "lightColor": "#fee",
        "svg": "<svg/>",
        "iconUrl": "https://i/x.svg",
    },
    "assignedTo": {"userId": "carol", "free": {"form": True}},
    "context": {"page": 3},
    "createdAt": 1_700_000_000_000,
    "lastUpdated": 1_700_000_001_000,
    "priority": {"id": "P1", "color": "#c00", "name": "High", "lightColor": "#fcc"},
    "type": "comment",
    "suggestion": {
        "targetId": "p-7",
        "targetType": "paragraph",
        "oldValue": {"text": "teh"},
        "newValue": ["the", 1],
        "summary": {"words": 1},
        "driftDetected": False,
    },
    "commentType": "suggestion",
    "visibility": {"type": "public", "organizationId": "ignored-for-public", "userIds": []},
}


def test_every_field_is_stored_and_returned(api):
    org, doc = uid("org"), uid("doc")
    result = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "createOrganization": True,
            "createDocument": True,
            "verifyUserPermissions": False,
            "commentAnnotations": [copy.deepcopy(FULL)],
        },
    )
    assert result["status"] == "success" and isinstance(result["message"], str)
    assert result["data"] == {
        "full-1": {
            "success": True,
            "annotationId": "full-1",
            "commentIds": [11, 12],
            "message": result["data"]["full-1"]["message"],
        }
    }
    (stored,) = get_all(api, organizationId=org, documentId=doc)
    # as added, plus annotationId, documentId, organizationId, createdAt, lastUpdated
    for key, value in FULL.items():
        if key != "commentData":
            assert stored[key] == value, key
    assert stored["documentId"] == doc and stored["organizationId"] == org
    first, second = stored["commentData"]
    assert first == FULL["commentData"][0]
    assert second["commentText"] == "Agreed" and second["from"] == {"userId": "bob"} and second["commentId"] == 12


def test_minimal_annotation_gets_defaults(api):
    org, doc, item = new_doc(api)
    assert item["success"] is True and item["commentIds"] == [1]
    assert item["annotationId"]  # generated
    (stored,) = get_all(api, organizationId=org, documentId=doc)
    assert stored["annotationId"] == item["annotationId"]
    assert stored["status"] == {"id": "OPEN", "name": "Open", "type": "default"}
    assert isinstance(stored["createdAt"], int) and stored["lastUpdated"] == stored["createdAt"]
    assert stored["commentData"][0]["commentId"] == 1


def test_null_times_and_status_are_filled_like_missing_ones(api):
    """annotationId, createdAt, lastUpdated and status sent as null (the schema allows it) are
    filled by the server, on the annotation and on its comments, as when they are left out (before: a 500 for
    the times, and a null status that broke the answer's schema)."""
    org, doc, item = new_doc(
        api,
        annotationId=None,
        status=None,
        createdAt=None,
        lastUpdated=None,
        commentData=[{"commentText": "first", "createdAt": None, "lastUpdated": None}],
    )
    assert item["success"] is True and item["annotationId"]
    (stored,) = get_all(api, organizationId=org, documentId=doc)
    assert stored["annotationId"] == item["annotationId"]  # a null id is generated, not stored as null
    assert isinstance(stored["createdAt"], int) and stored["lastUpdated"] == stored["createdAt"]
    assert stored["status"] == {"id": "OPEN", "name": "Open", "type": "default"}
    (comment,) = stored["commentData"]
    assert comment["createdAt"] == stored["createdAt"] and comment["lastUpdated"] == comment["createdAt"]


def test_comment_html_alone_is_enough_and_per_item_results_are_keyed_by_id(api):
    org, doc, _ = new_doc(api)
    result = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {"annotationId": "x1", "commentData": [{"commentHtml": "<i>hi</i>"}]},
                {"commentData": [{"commentText": "generated id"}]},
                {
                    "annotationId": "x3",
                    "commentData": [{"commentText": "t"}, {"commentText": "u"}, {"commentText": "v"}],
                },
            ],
        },
    )["data"]
    assert len(result) == 3
    assert result["x1"]["commentIds"] == [1] and result["x3"]["commentIds"] == [1, 2, 3]
    generated = [k for k in result if k not in ("x1", "x3")]
    assert len(generated) == 1 and result[generated[0]]["annotationId"] == generated[0]
    for value in result.values():
        assert set(value) == {"success", "annotationId", "commentIds", "message"} and value["success"]


@pytest.mark.parametrize(
    "given, expected",
    [
        ([None, None, None], [1, 2, 3]),
        ([5, None, None], [5, 6, 7]),
        ([None, 7, None], [8, 7, 9]),
        ([3, 1, 2], [3, 1, 2]),
        ([0, None], [0, 1]),
    ],
)
def test_comment_ids_are_unique_integers_in_order(api, given, expected):
    org, doc, _ = new_doc(api)
    comments = [
        {"commentText": f"c{i}"} if g is None else {"commentText": f"c{i}", "commentId": g} for i, g in enumerate(given)
    ]
    item = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [{"annotationId": "a", "commentData": comments}],
        },
    )["data"]["a"]
    assert item["commentIds"] == expected
    (stored,) = get_all(api, organizationId=org, documentId=doc, annotationIds=["a"])
    assert [c["commentId"] for c in stored["commentData"]] == expected
    assert [c["commentText"] for c in stored["commentData"]] == [f"c{i}" for i in range(len(given))]


def test_second_add_with_the_same_id_fails_that_item_and_overwrites_nothing(api):
    org, doc, _ = new_doc(api, annotationId="dup", commentData=[{"commentText": "original"}])
    result = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {"annotationId": "dup", "commentData": [{"commentText": "replacement"}]},
                {"annotationId": "fresh", "commentData": [{"commentText": "new"}]},
            ],
        },
    )
    assert result["status"] == "success"
    assert result["data"]["dup"]["success"] is False and "exists" in result["data"]["dup"]["message"]
    assert result["data"]["dup"]["commentIds"] == []
    assert result["data"]["fresh"]["success"] is True
    stored = {a["annotationId"]: a for a in get_all(api, organizationId=org, documentId=doc)}
    assert stored["dup"]["commentData"][0]["commentText"] == "original"
    assert set(stored) == {"dup", "fresh"}


def test_same_annotation_id_in_another_document_is_fine(api):
    org, doc, _ = new_doc(api, annotationId="shared")
    other = uid("doc")
    item = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": other,
            "createDocument": True,
            "commentAnnotations": [{"annotationId": "shared", "commentData": [{"commentText": "x"}]}],
        },
    )["data"]["shared"]
    assert item["success"] is True


def test_repeated_id_within_one_request_is_invalid(api):
    org, doc, _ = new_doc(api)
    message = api.err(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {"annotationId": "same", "commentData": [{"commentText": "1"}]},
                {"annotationId": "same", "commentData": [{"commentText": "2"}]},
            ],
        },
    )
    assert "data.commentAnnotations[1].annotationId" in message
    assert get_all(api, organizationId=org, documentId=doc, annotationIds=["same"]) == []


def test_repeated_comment_id_is_invalid(api):
    org, doc, _ = new_doc(api)
    message = api.err(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {"commentData": [{"commentText": "1", "commentId": 4}, {"commentText": "2", "commentId": 4}]}
            ],
        },
    )
    assert "data.commentAnnotations[0].commentData[1].commentId" in message


# ---------------------------------------------------------------- organizations and documents


def test_missing_organization_or_document_without_create_flags_is_not_found(api):
    org, doc = uid("org"), uid("doc")
    body = {"commentAnnotations": [{"commentData": [{"commentText": "x"}]}]}
    assert "organization" in api.err(ADD, {"organizationId": org, "documentId": doc, **body}, "NOT_FOUND")
    # createDocument alone does not create the organization
    api.err(ADD, {"organizationId": org, "documentId": doc, "createDocument": True, **body}, "NOT_FOUND")
    # createOrganization alone does not create the document — and nothing was created
    assert "document" in api.err(
        ADD, {"organizationId": org, "documentId": doc, "createOrganization": True, **body}, "NOT_FOUND"
    )
    api.err(ADD, {"organizationId": org, "documentId": doc, "createDocument": True, **body}, "NOT_FOUND")
    # both flags: created
    api.ok(ADD, {"organizationId": org, "documentId": doc, "createOrganization": True, "createDocument": True, **body})
    # now both exist: no flags needed, and the flags are harmless
    api.ok(ADD, {"organizationId": org, "documentId": doc, **body})
    api.ok(ADD, {"organizationId": org, "documentId": doc, "createOrganization": True, "createDocument": True, **body})
    assert len(get_all(api, organizationId=org, documentId=doc)) == 3
    # a new document of an existing organization needs only createDocument
    other = uid("doc")
    api.err(ADD, {"organizationId": org, "documentId": other, **body}, "NOT_FOUND")
    api.ok(ADD, {"organizationId": org, "documentId": other, "createDocument": True, **body})


def test_document_without_organization_is_addressed_by_document_id_alone(api):
    doc = uid("loose")
    body = {"commentAnnotations": [{"annotationId": "n1", "commentData": [{"commentText": "x"}]}]}
    assert "organizationId" in api.err(ADD, {"documentId": doc, **body}, "NOT_FOUND")
    api.ok(ADD, {"documentId": doc, "createDocument": True, **body})
    (stored,) = get_all(api, documentId=doc)
    assert stored["organizationId"] is None and stored["documentId"] == doc
    # later calls need no flag; the same annotation id is a duplicate there
    again = api.ok(ADD, {"documentId": doc, **body})["data"]["n1"]
    assert again["success"] is False
    api.ok(
        ADD, {"documentId": doc, "commentAnnotations": [{"annotationId": "n2", "commentData": [{"commentText": "y"}]}]}
    )
    assert [a["annotationId"] for a in get_all(api, documentId=doc)] == ["n1", "n2"]
    # it is not a document of any organization
    org = uid("org")
    api.err(ADD, {"organizationId": org, "documentId": doc, "createOrganization": True, **body}, "NOT_FOUND")
    assert get_all(api, organizationId=org, documentId=doc) == []


# ---------------------------------------------------------------- verifyUserPermissions


def _users(api, org, users, document_id=None):
    data = {"organizationId": org, "users": users}
    if document_id is not None:
        data["documentId"] = document_id
    result = api.ok(USERS_ADD, data)
    assert all(v["success"] for v in result["data"].values()), result


def test_verify_user_permissions_requires_editor_access_per_item(api):
    org, doc, _ = new_doc(api)
    _users(
        api,
        org,
        [
            {"userId": "org-editor", "name": "E", "email": "e@x.io", "accessRole": "editor"},
            {"userId": "org-viewer", "name": "V", "email": "v@x.io", "accessRole": "viewer"},
        ],
    )
    _users(api, org, [{"userId": "doc-editor", "name": "D", "email": "d@x.io", "accessRole": "editor"}], doc)
    result = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "verifyUserPermissions": True,
            "commentAnnotations": [
                {
                    "annotationId": "by-org-editor",
                    "commentData": [{"commentText": "a", "from": {"userId": "org-editor"}}],
                },
                {
                    "annotationId": "by-doc-editor",
                    "commentData": [{"commentText": "a", "from": {"userId": "doc-editor"}}],
                },
                {"annotationId": "by-viewer", "commentData": [{"commentText": "a", "from": {"userId": "org-viewer"}}]},
                {"annotationId": "by-stranger", "commentData": [{"commentText": "a", "from": {"userId": "stranger"}}]},
                {
                    "annotationId": "mixed",
                    "commentData": [
                        {"commentText": "a", "from": {"userId": "org-editor"}},
                        {"commentText": "b", "from": {"userId": "org-viewer"}},
                    ],
                },
            ],
        },
    )
    data = result["data"]
    assert result["status"] == "success"
    assert data["by-org-editor"]["success"] and data["by-doc-editor"]["success"]
    for denied, who in (("by-viewer", "org-viewer"), ("by-stranger", "stranger"), ("mixed", "org-viewer")):
        assert data[denied]["success"] is False and who in data[denied]["message"]
        assert data[denied]["commentIds"] == []
    stored = {a["annotationId"] for a in get_all(api, organizationId=org, documentId=doc)}
    assert {"by-org-editor", "by-doc-editor"} <= stored
    assert not stored & {"by-viewer", "by-stranger", "mixed"}
    # without the flag, anyone may be named as author
    item = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {"annotationId": "by-stranger", "commentData": [{"commentText": "a", "from": {"userId": "stranger"}}]}
            ],
        },
    )
    assert item["data"]["by-stranger"]["success"] is True


def test_verify_user_permissions_on_a_disabled_document_fails_every_item(api):
    org, doc, _ = new_doc(api)
    _users(api, org, [{"userId": "ed", "name": "E", "email": "e@x.io", "accessRole": "editor"}])
    api.ok(DISABLE, {"organizationId": org, "documentIds": [doc], "disabled": True})
    item = api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "verifyUserPermissions": True,
            "commentAnnotations": [
                {"annotationId": "z", "commentData": [{"commentText": "a", "from": {"userId": "ed"}}]}
            ],
        },
    )["data"]["z"]
    assert item["success"] is False


def test_verify_user_permissions_needs_from_user_id(api):
    org, doc, _ = new_doc(api)
    message = api.err(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "verifyUserPermissions": True,
            "commentAnnotations": [{"commentData": [{"commentText": "a", "from": {"name": "N"}}]}],
        },
    )
    assert "data.commentAnnotations[0].commentData[0].from.userId" in message


# ---------------------------------------------------------------- triggerActivities


def test_trigger_activities_records_one_activity_per_flagged_comment(api):
    org, doc = uid("org"), uid("doc")
    api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "createOrganization": True,
            "createDocument": True,
            "commentAnnotations": [
                {
                    "annotationId": "act-1",
                    "commentData": [
                        {"commentText": "logged", "triggerActivities": True, "from": {"userId": "ann"}},
                        {"commentText": "not logged", "triggerActivities": False},
                        {"commentText": "not logged either"},
                    ],
                },
                {"annotationId": "act-2", "commentData": [{"commentText": "quiet"}]},
            ],
        },
    )
    records = api.ok(ACTIVITIES_GET, {"organizationId": org})["data"]
    assert len(records) == 1
    (record,) = records
    assert record["featureType"] == "comment" and record["actionType"] == "comment.add"
    assert record["targetEntityId"] == "act-1" and record["documentId"] == doc
    assert record["organizationId"] == org and record["actionUser"]["userId"] == "ann"
    assert record["entityData"]["commentText"] == "logged" and record["entityData"]["commentId"] == 1
    # a failed item records nothing
    api.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "commentAnnotations": [
                {"annotationId": "act-1", "commentData": [{"commentText": "dup", "triggerActivities": True}]}
            ],
        },
    )
    assert len(api.ok(ACTIVITIES_GET, {"organizationId": org})["data"]) == 1


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "data, path",
    [
        ({}, "data.documentId"),
        ({"documentId": "d"}, "data.commentAnnotations"),
        ({"documentId": "d", "commentAnnotations": []}, "data.commentAnnotations"),
        ({"documentId": "d", "commentAnnotations": {}}, "data.commentAnnotations"),
        ({"documentId": 5, "commentAnnotations": [{"commentData": [{"commentText": "x"}]}]}, "data.documentId"),
        ({"documentId": "", "commentAnnotations": [{"commentData": [{"commentText": "x"}]}]}, "data.documentId"),
        (
            {
                "documentId": "d",
                "organizationId": ["o"],
                "commentAnnotations": [{"commentData": [{"commentText": "x"}]}],
            },
            "data.organizationId",
        ),
        (
            {
                "documentId": "d",
                "createDocument": "true",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}]}],
            },
            "data.createDocument",
        ),
        (
            {
                "documentId": "d",
                "verifyUserPermissions": 1,
                "commentAnnotations": [{"commentData": [{"commentText": "x"}]}],
            },
            "data.verifyUserPermissions",
        ),
        (
            {"documentId": "d", "bogus": 1, "commentAnnotations": [{"commentData": [{"commentText": "x"}]}]},
            "data.bogus",
        ),
        ({"documentId": "d", "commentAnnotations": [{}]}, "data.commentAnnotations[0].commentData"),
        ({"documentId": "d", "commentAnnotations": [{"commentData": []}]}, "data.commentAnnotations[0].commentData"),
        ({"documentId": "d", "commentAnnotations": [{"commentData": [{}]}]}, "data.commentAnnotations[0].commentData"),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": ""}]}]},
            "data.commentAnnotations[0].commentData",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x", "commentId": "1"}]}]},
            "data.commentAnnotations[0].commentData[0].commentId",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x", "commentId": 1.5}]}]},
            "data.commentAnnotations[0].commentData[0].commentId",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x", "commentId": -1}]}]},
            "data.commentAnnotations[0].commentData[0].commentId",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x", "mood": "happy"}]}]},
            "data.commentAnnotations[0].commentData[0].mood",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x", "agent": {"agentId": 3}}]}],
            },
            "data.commentAnnotations[0].commentData[0].agent.agentId",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [
                    {"commentData": [{"commentText": "x", "agent": {"reason": {"confidence": "high"}}}]}
                ],
            },
            "data.commentAnnotations[0].commentData[0].agent.reason.confidence",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x", "agent": {"reason": {"extra": 1}}}]}],
            },
            "data.commentAnnotations[0].commentData[0].agent.reason.extra",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [
                    {
                        "commentData": [
                            {"commentText": "x", "taggedUserContacts": [{"userId": "u", "contact": {"phone": "1"}}]}
                        ]
                    }
                ],
            },
            "data.commentAnnotations[0].commentData[0].taggedUserContacts[0].contact.phone",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x", "from": "ann"}]}]},
            "data.commentAnnotations[0].commentData[0].from",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x", "createdAt": "now"}]}]},
            "data.commentAnnotations[0].commentData[0].createdAt",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}], "status": {"name": "No id"}}],
            },
            "data.commentAnnotations[0].status.id",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x"}], "status": {"id": 1}}]},
            "data.commentAnnotations[0].status.id",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}], "visibility": {"type": "secret"}}],
            },
            "data.commentAnnotations[0].visibility.type",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}], "visibility": {"type": "restricted"}}],
            },
            "data.commentAnnotations[0].visibility.userIds",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [
                    {"commentData": [{"commentText": "x"}], "visibility": {"type": "organizationPrivate"}}
                ],
            },
            "data.commentAnnotations[0].visibility.organizationId",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}], "targetElement": {"occurrence": "2"}}],
            },
            "data.commentAnnotations[0].targetElement.occurrence",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x"}], "location": {"x": 1}}]},
            "data.commentAnnotations[0].location.x",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x"}], "priority": "high"}]},
            "data.commentAnnotations[0].priority",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}], "suggestion": {"driftDetected": "no"}}],
            },
            "data.commentAnnotations[0].suggestion.driftDetected",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}], "suggestion": {"summary": "text"}}],
            },
            "data.commentAnnotations[0].suggestion.summary",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x"}], "assignedTo": []}]},
            "data.commentAnnotations[0].assignedTo",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x"}], "annotationId": ""}]},
            "data.commentAnnotations[0].annotationId",
        ),
        (
            {
                "documentId": "d",
                "commentAnnotations": [{"commentData": [{"commentText": "x"}], "annotationId": "a" * 257}],
            },
            "data.commentAnnotations[0].annotationId",
        ),
        (
            {"documentId": "d", "commentAnnotations": [{"commentData": [{"commentText": "x"}]}] * 501},
            "data.commentAnnotations",
        ),
    ],
)
def test_bad_input_is_invalid_argument_naming_the_field(api, data, path):
    message = api.err(ADD, data)
    assert path in message, message


def test_free_form_objects_keep_any_keys(api):
    org, doc, item = new_doc(
        api,
        context={"a": {"b": [1, 2]}},
        assignedTo={"team": "x", "n": 3},
        suggestion={"summary": {"any": {"thing": True}}},
        commentData=[
            {"commentText": "x", "context": {"k": None}, "from": {"userId": "u", "color": "#fff", "isAdmin": False}}
        ],
    )
    (stored,) = get_all(api, organizationId=org, documentId=doc)
    assert stored["assignedTo"] == {"team": "x", "n": 3}
    assert stored["commentData"][0]["from"] == {"userId": "u", "color": "#fff", "isAdmin": False}


# ---------------------------------------------------------------- isolation


def test_workspace_isolation(api, api_b):
    org, doc, item = new_doc(api, annotationId="iso")
    # workspace B sees neither the organization nor the document
    api_b.err(
        ADD,
        {"organizationId": org, "documentId": doc, "commentAnnotations": [{"commentData": [{"commentText": "x"}]}]},
        "NOT_FOUND",
    )
    assert api_b.ok(GET, {"organizationId": org, "documentId": doc})["data"] == []
    # the same ids in B are independent
    api_b.ok(
        ADD,
        {
            "organizationId": org,
            "documentId": doc,
            "createOrganization": True,
            "createDocument": True,
            "commentAnnotations": [{"annotationId": "iso", "commentData": [{"commentText": "from B"}]}],
        },
    )
    (mine,) = get_all(api, organizationId=org, documentId=doc)
    (theirs,) = api_b.ok(GET, {"organizationId": org, "documentId": doc})["data"]
    assert mine["commentData"][0]["commentText"] == "first"
    assert theirs["commentData"][0]["commentText"] == "from B"


# ---------------------------------------------------------------- concurrency and re-adding


def test_concurrent_adds_of_one_id_succeed_exactly_once(api):
    from concurrent.futures import ThreadPoolExecutor

    org, doc, _ = new_doc(api)

    def attempt(i):
        return api.ok(
            ADD,
            {
                "organizationId": org,
                "documentId": doc,
                "commentAnnotations": [
                    {"annotationId": "race", "commentData": [{"commentText": f"attempt {i}"}]},
                    {"annotationId": f"own-{i}", "commentData": [{"commentText": "x"}]},
                ],
            },
        )["data"]

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(attempt, range(32)))
    assert sum(r["race"]["success"] for r in results) == 1
    assert all(r[f"own-{i}"]["success"] for i, r in enumerate(results))
    stored = get_all(api, organizationId=org, documentId=doc)
    assert len(stored) == 1 + 1 + 32
    assert sum(a["annotationId"] == "race" for a in stored) == 1


def test_a_deleted_annotation_id_can_be_added_again(api):
    org, doc, _ = new_doc(api, annotationId="again")
    for round_ in range(3):
        api.ok("/v2/commentannotations/delete", {"organizationId": org, "documentId": doc, "annotationIds": ["again"]})
        item = api.ok(
            ADD,
            {
                "organizationId": org,
                "documentId": doc,
                "commentAnnotations": [{"annotationId": "again", "commentData": [{"commentText": f"round {round_}"}]}],
            },
        )["data"]["again"]
        assert item["success"] is True
    (stored,) = get_all(api, organizationId=org, documentId=doc)
    assert stored["commentData"][0]["commentText"] == "round 2"
